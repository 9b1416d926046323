"""The API server's own ``PodList`` (``kubectl get --raw /api/v1/pods``: its
items say no ``kind``, often all on one line) is cut into pieces for the
workers as kubectl's ``List`` is, whatever the order of its members (the
items before or after ``kind`` and ``metadata``), its white space and its
escapes: each piece read by itself where the fleet is read on a cluster or
a pool, and the report the same bytes as one process's. A damaged one, or
one that only seems a ``PodList``, is read whole, with the words of one
process, in every mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet.podscan import cut_pieces, index_piece, index_pod_file

from .conftest import need
from .test_pieces import SMALL, _Mapper, _report, small_pieces, whole_reads  # noqa: F401 (fixtures)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], env=env, capture_output=True,
                          timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fleet written by ``podnuma fleet generate`` (the pods of 12 nodes
    in two dumps)."""
    d = tmp_path_factory.mktemp("raw") / "fleet"
    p = _cli("fleet", "generate", "--nodes", "12", "--pods-per-node", "20", "--seed", "5",
             "--nodes-per-pods-file", "6", "--output-dir", str(d), cwd=d.parent)
    assert p.returncode == 0, p.stderr
    assert len(list((d / "pods").glob("*.json"))) == 2
    return d


def _items(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The dump's pods as the API server lists them: no ``kind`` nor
    ``apiVersion`` in them."""
    return [{k: v for k, v in it.items() if k not in ("kind", "apiVersion")} for it in doc["items"]]


def _go_escapes(text: str) -> str:
    """JSON text with ``<``, ``>`` and ``&`` escaped as Go's encoder
    escapes them in strings (they appear in no key or number here)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _marked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pod with an annotation holding what a JSON string escapes
    (quotes, backslashes, a line break, markup, non-ASCII text)."""
    for i, it in enumerate(items):
        it["metadata"].setdefault("annotations", {})["example.com/note"] = (
            f'a "quoted" \\ path\nline <b>&{i}</b> caf\u00e9 \u65e5\u672c ],{{"metadata":')
    return items


def _raw(doc: dict[str, Any], layout: str) -> str:
    items = _items(doc)
    meta = {"resourceVersion": "4242"}
    head = {"kind": "PodList", "apiVersion": "v1", "metadata": meta}
    if layout == "one line (the API server's)":
        return _go_escapes(json.dumps({**head, "items": _marked(items)}, separators=(",", ":"),
                                      ensure_ascii=False)) + "\n"
    if layout == "one line, items first":
        return json.dumps({"items": items, **head}, separators=(",", ":"))
    if layout == "one line, items between":
        return json.dumps({"kind": "PodList", "items": items, "apiVersion": "v1", "metadata": meta},
                          separators=(",", ":"))
    if layout == "one line, spaces, ASCII escapes":
        return json.dumps({**head, "items": _marked(items)})
    if layout == "pretty (jq .)":
        return json.dumps({**head, "items": items}, indent=2) + "\n"
    if layout == "pretty, items first, CRLF":
        return json.dumps({"items": _marked(items), **head}, indent=4).replace("\n", "\r\n")
    raise AssertionError(layout)


LAYOUTS = ["one line (the API server's)", "one line, items first", "one line, items between",
           "one line, spaces, ASCII escapes", "pretty (jq .)", "pretty, items first, CRLF"]


def _pod_files(d: Path) -> list[Path]:
    return sorted((d / "pods").glob("*.json"))


def _rewrite(src: Path, d: Path, write: Callable[[dict[str, Any]], str]) -> list[Path]:
    shutil.copytree(src, d)
    files = _pod_files(d)
    for f in files:
        f.write_bytes(write(json.loads(f.read_text())).encode("utf-8", "surrogateescape"))
    return files


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_raw_pod_list_is_cut_into_pieces_that_are_its_items(
    generated: Path, tmp_path: Path, small_pieces: None, layout: str,  # noqa: F811
) -> None:
    """The pieces of a raw PodList, indexed one by one, are its pods: the
    same counts and, joined, the same bytes of pods per node as the dump
    indexed whole."""
    f = tmp_path / "pods.json"
    f.write_text(_raw(json.loads(_pod_files(generated)[0].read_text()), layout))
    assert b'"kind":"Pod"' not in f.read_bytes().replace(b" ", b"")  # (its items say no kind)
    whole = index_pod_file(f)
    pieces = cut_pieces(str(f))
    assert whole is not None and whole.pods == 120
    assert pieces is not None and len(pieces) >= f.stat().st_size // SMALL > 1
    indexes = [index_piece(p) for p in pieces]
    assert all(i is not None for i in indexes)
    assert sum(1 for i in indexes if i is not None and i.pods) > 1
    assert sum(i.pods for i in indexes if i) == whole.pods
    data = f.read_bytes()

    def items(ranges: list[tuple[str, int, int]]) -> list[Any]:
        return [p for r in sorted(ranges, key=lambda r: r[1]) for p in json.loads(b"[" + data[r[1]:r[2]] + b"]")]

    assert set(whole.ranges) == {n for i in indexes if i for n in i.ranges}
    for node, ranges in whole.ranges.items():
        assert items([r for i in indexes if i for r in i.ranges.get(node, [])]) == items(ranges)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pieces_of_a_raw_pod_list_give_the_report_of_one_process(
    generated: Path, tmp_path: Path, small_pieces: None, whole_reads: list[str], layout: str,  # noqa: F811
) -> None:
    files = _rewrite(generated, tmp_path / "fleet", lambda doc: _raw(doc, layout))
    d = tmp_path / "fleet"
    serial = _report(d)
    assert json.loads(serial)["fleet"]["podsInDumps"] == 240
    whole_reads.clear()
    mapper = _Mapper()
    assert _report(d, mapper) == serial
    assert mapper.pieces >= sum(f.stat().st_size // SMALL for f in files) and mapper.unread == 0
    assert whole_reads == []


def _kindless_list(doc: dict[str, Any]) -> str:
    return json.dumps({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": _items(doc)},
                      separators=(",", ":"))


#: damaged raw PodLists, and lists that only seem PodLists to a piece: the
#: dump is read whole (its words those of one process)
DAMAGE: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("cut short", lambda doc: _raw(doc, "one line (the API server's)")[:-5000]),
    ("a syntax error in the middle", lambda doc: (lambda t, at: t[:at] + "," + t[at:])(
        _raw(doc, "one line (the API server's)"), _raw(doc, "one line (the API server's)").index(
            '},{"metadata":', 60000) + 1)),
    ("an item that is not a mapping", lambda doc: json.dumps(
        {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [*_items(doc)[:-2], 7, *_items(doc)[-2:]]},
        separators=(",", ":"))),
    ("an item of another kind", lambda doc: json.dumps(
        {"kind": "PodList", "apiVersion": "v1", "metadata": {},
         "items": [*_items(doc)[:50], {**_items(doc)[50], "kind": "Node"}, *_items(doc)[51:]]},
        separators=(",", ":"))),
    ("a lone surrogate in a pod", lambda doc: _raw(doc, "one line, items first").replace(
        '"name":"' + doc["items"][60]["metadata"]["name"] + '"', '"name":"\\ud800x"', 1)),
    # items without a kind in a plain List: their kind cannot be known
    ("a List whose items say no kind", _kindless_list),
    # the items first, and a PodList kind in the tail that is not the list's
    ("items first, PodList only inside the metadata", lambda doc: json.dumps(
        {"items": _items(doc), "kind": "List", "metadata": {"x": {"kind": "PodList"}}}, separators=(",", ":"))),
    ("PodList given twice, List last", lambda doc: _raw(doc, "one line (the API server's)").rstrip("\n")[:-1]
     + ',"kind":"List"}'),
    ("garbage after the list", lambda doc: _raw(doc, "one line, items first") + "]"),
]


#: not even cut: nothing in its first or last bytes says its items are pods
NOT_CUT = ("a List whose items say no kind",)


@pytest.mark.parametrize(("name", "damage"), DAMAGE, ids=[n for n, _ in DAMAGE])
def test_a_damaged_raw_pod_list_is_read_whole_with_the_words_of_one_process(
    generated: Path, tmp_path: Path, small_pieces: None, whole_reads: list[str],  # noqa: F811
    name: str, damage: Callable[[dict[str, Any]], str],
) -> None:
    d = tmp_path / "fleet"
    shutil.copytree(generated, d)
    f = _pod_files(d)[0]
    f.write_bytes(damage(json.loads(f.read_text())).encode("utf-8", "surrogateescape"))
    serial = _report(d)
    whole_reads.clear()
    mapper = _Mapper()
    assert _report(d, mapper) == serial
    assert mapper.pieces > 0
    if name in NOT_CUT:  # (read whole by a worker, as any dump not cut)
        assert cut_pieces(str(f)) is None and whole_reads == []
    else:  # (cut, and read whole by this process after its pieces)
        assert cut_pieces(str(f)) is not None and whole_reads == [str(f)]


#: the command run with the dumps cut into pieces of ``argv[1]`` bytes; the
#: pieces cut and the dumps read whole after their pieces (by this
#: process) written to ``argv[2]``
DRIVER = """
import atexit, json, sys

if __name__ == "__main__":
    from podnuma.fleet import inputs, podscan

    podscan.PIECE_BYTES = int(sys.argv[1])
    log = {"pieces": 0, "whole": []}
    cut, scan = inputs.cut_pieces, inputs.scan_files

    def counted(path):
        got = cut(path)
        log["pieces"] += len(got or [])
        return got

    def spied(paths, *args, **kwargs):
        if len(paths) == 1 and isinstance(paths[0], str) and "/pods/" in paths[0]:
            log["whole"].append(paths[0])
        return scan(paths, *args, **kwargs)

    # (the reading sent to the workers names it: they are to find theirs)
    spied.__module__, spied.__qualname__ = scan.__module__, scan.__qualname__
    inputs.cut_pieces, inputs.scan_files = counted, spied
    atexit.register(lambda: open(sys.argv[2], "w").write(json.dumps(log)))
    from podnuma.cli import cli

    cli(sys.argv[3:], prog_name="podnuma")
"""


@pytest.mark.parametrize("damaged", [False, True], ids=["clean", "damaged"])
def test_every_mode_gives_the_same_bytes(generated: Path, tmp_path: Path, damaged: bool) -> None:
    """``podnuma fleet analyze`` of raw PodLists (on one line, the items
    after the metadata in one dump and before it in the other): the same
    output, errors and exit status in one process, ``--workers 2`` and
    ``--dask local:2``; cut into pieces in the last two, each read by
    itself (clean), or the damaged dump read whole after its pieces."""
    need("distributed")
    d = tmp_path / "fleet"
    files = _rewrite(generated, d, lambda doc: _raw(doc, "one line (the API server's)"))
    files[1].write_text(_raw(json.loads((generated / "pods" / files[1].name).read_text()), "one line, items first"))
    if damaged:
        files[0].write_text(files[0].read_text()[:-3000])  # (cut short)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    logs = []
    for k, mode in enumerate(([], ["--workers", "2"], ["--dask", "local:2"])):
        log = tmp_path / f"log{k}.json"
        p = subprocess.run([sys.executable, str(driver), str(SMALL * 4), str(log), "fleet", "analyze", str(d),
                            "-o", "json", *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        got.append((p.returncode, p.stdout, p.stderr))
        logs.append(json.loads(log.read_text()))
    assert got[0][0] == 0, got[0][2]
    assert got[1] == got[0] and got[2] == got[0]
    report = json.loads(got[0][1])
    pods = report["fleet"]["podsInDumps"]
    assert pods == 240 if not damaged else 120 < pods < 240  # (the dump cut short: read up to its last pod)
    said = [i["message"] for i in report["issues"] if i.get("file") == str(files[0])]
    assert bool([m for m in said if "truncated dump" in m]) == damaged
    assert logs[0]["pieces"] == 0  # (one process: no piece)
    for log in logs[1:]:
        assert log["pieces"] >= sum(f.stat().st_size // (SMALL * 4) for f in files) > 2
        assert log["whole"] == ([str(files[0])] if damaged else [])
