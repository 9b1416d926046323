"""White space between the items of a one-line (compact) pods dump.

Valid JSON allows any run of white space after the comma between two
items. A piece of a dump looks for the mark that ends it from a little
before its end, and a piece reads again 64 KiB before where it had read:
a mark longer than that could be seen by one piece and missed by the
next, leaving a pod in no piece. The one-line mark takes at most 1 KiB of
white space (``podscan._MARK_SPACE``): a longer run is no mark for any
piece, the items around it are read as one, and no pod is lost in pieces
(``--workers 2``, ``--dask``) that one process keeps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from podnuma.fleet.podscan import cut_pieces, index_piece, index_pod_file

from .test_pieces import SMALL, _Mapper, _report, small_pieces  # noqa: F401 (fixtures)

#: white space between two items: more than a piece's first look past its
#: end (64 KiB), less than what its second read covers
GAP = 100 * 1024


def _gap_dump(doc: Any, k: int, gap: int) -> bytes:
    """``doc`` on one line (``jq -c``), ``gap`` spaces after the comma that
    follows item ``k``."""
    head = json.dumps({key: v for key, v in doc.items() if key != "items"}, separators=(",", ":"))[:-1]
    items = [json.dumps(p, separators=(",", ":")).encode() for p in doc["items"]]
    return (head.encode() + b',"items":[' + b",".join(items[: k + 1]) + b"," + b" " * gap
            + b",".join(items[k + 1:]) + b"]}")


def _straddling(doc: Any, k: int) -> bytes | None:
    """A dump of ``doc`` with a run of about :data:`GAP` spaces after item
    ``k``, such that item ``k`` begins in a piece and its comma lies at or
    past that piece's end (the piece reads past its end to find the next
    item's mark); ``None`` when no length near :data:`GAP` gives that."""
    for gap in range(GAP, GAP + SMALL, 7):
        data = _gap_dump(doc, k, gap)
        comma = data.index(b"," + b" " * gap)
        start = data.rindex(b'{"apiVersion"', 0, comma)
        n = -(-len(data) // SMALL)
        cuts = [len(data) * j // n for j in range(n + 1)]
        if any(start < c <= comma for c in cuts):
            return data
    return None


def test_a_long_run_of_white_space_between_items_loses_no_pod(
    small_fleet: Path, tmp_path: Path, small_pieces: None,  # noqa: F811
) -> None:
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    files = sorted((d / "pods").glob("*.json"))
    for f in files:  # every dump on one line
        f.write_text(json.dumps(json.loads(f.read_text()), separators=(",", ":")))
    f = files[0]
    doc = json.loads(f.read_text())
    data = _straddling(doc, len(doc["items"]) // 2)
    assert data is not None
    f.write_bytes(data)
    assert json.loads(data) == doc  # (the same dump: only white space added)
    whole = index_pod_file(f)
    assert whole is not None and whole.pods == len(doc["items"])
    pieces = cut_pieces(str(f))
    assert pieces is not None
    indexes = [index_piece(p) for p in pieces]
    if all(i is not None for i in indexes):  # (else the dump is read whole: no pod lost)
        assert sum(i.pods for i in indexes if i is not None) == whole.pods
    # the report where the dump is read in pieces is the one of one process
    serial = _report(d)
    assert json.loads(serial)["fleet"]["podsInDumps"] == sum(
        len(json.loads(p.read_text())["items"]) for p in files)
    assert _report(d, _Mapper()) == serial


def test_the_same_at_the_pieces_own_size(tmp_path: Path) -> None:
    """At the size pieces are cut (4 MiB): a run of white space longer than
    a piece, its comma just past a piece's end (valid JSON, as
    ``json.loads`` reads it); the item after it begins in no piece."""
    from podnuma.fleet.generate import generate_fleet
    from podnuma.fleet.podscan import PIECE_BYTES

    d = tmp_path / "fleet"
    generate_fleet(d, nodes=120, pods_per_node=100, seed=3, nodes_per_pods_file=0)
    f = d / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    items = [json.dumps(p, separators=(",", ":")).encode() for p in doc["items"]]
    size = 4 * PIECE_BYTES - 1000  # (4 pieces)
    hi = size // 4  # the first piece's end
    head = b'{"apiVersion":"v1","kind":"List","items":['
    out, pos, k = [head + items[0]], len(head) + len(items[0]), 1
    while pos < hi:  # the items up to just past the first piece's end
        out.append(b"," + items[k])
        pos += 1 + len(items[k])
        k += 1
    # the next item's ``{`` 96 KiB past the second piece's end
    gap = 2 * hi + 96 * 1024 - pos - 1
    out.append(b"," + b" " * gap + items[k])
    pos += 1 + gap + len(items[k])
    k += 1
    while pos + 1 + len(items[k]) + 2 < size:
        out.append(b"," + items[k])
        pos += 1 + len(items[k])
        k += 1
    out.append(b" " * (size - pos - 2) + b"]}")
    data = b"".join(out)
    assert len(data) == size and len(json.loads(data)["items"]) == k
    f.write_bytes(data)
    whole = index_pod_file(f)
    assert whole is not None and whole.pods == k
    pieces = cut_pieces(str(f))
    assert pieces is not None and len(pieces) == 4
    indexes = [index_piece(p) for p in pieces]
    if all(i is not None for i in indexes):  # (else the dump is read whole: no pod lost)
        assert sum(i.pods for i in indexes if i is not None) == whole.pods
