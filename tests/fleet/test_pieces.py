"""Large pods dumps read in pieces where the fleet is read on a cluster or a
pool: each piece indexed by itself, the pieces of a dump taken together; a
dump whose pieces cannot be read so (another layout, a pod in two pieces,
damage) is read whole, as in one process. Either way the report is the one
of one process."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet import podscan
from podnuma.fleet.execute import _holder, routed_partition, run_serial
from podnuma.fleet.inputs import Scan, load_fleet
from podnuma.fleet.podscan import Piece, cut_pieces, index_piece, index_pod_file
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if
from podnuma.render.serialize import dump_json

WHAT_IFS = [parse_what_if("pod-level,scope=pod,restart")]
#: small pieces, so that the test fleet's dumps (about 35 KiB) are cut in
#: many, some of them smaller than a pod (no item begins in those)
SMALL = 1536


class _Mapper:
    """Runs the reading here, one batch after the other, as a cluster would
    (not an executor of this process: the dumps are cut into pieces); counts
    the pieces read and the dumps read whole after their pieces."""

    def __init__(self) -> None:
        self.pieces = 0
        self.unread = 0

    def __call__(self, fn: Callable[[Sequence[Any]], list[Scan]], args: Sequence[Sequence[Any]], *,
                 arrived: Callable[[int, list[Scan]], None] | None = None) -> list[list[Scan]]:
        out = []
        for i, batch in enumerate(args):
            scans = fn(batch)
            self.pieces += sum(isinstance(w, Piece) for w in batch)
            self.unread += sum(not s.piece_read for s in scans)
            out.append(scans)
            if arrived is not None:
                arrived(i, scans)
        return out


def _report(d: Path, mapper: _Mapper | None = None) -> str:
    fleet = load_fleet([d], map_files=mapper, parts=4, runners=2) if mapper else load_fleet([d])
    return dump_json(fleet_report(fleet, run_serial(fleet.nodes, WHAT_IFS), [w.label for w in WHAT_IFS]))


def _pod_files(d: Path) -> list[Path]:
    return sorted((d / "pods").glob("*.json"))


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(podscan, "PIECE_BYTES", SMALL)


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The dumps read whole by the process that takes the pieces together
    (a pods dump given alone, by its name, to the reading)."""
    got: list[str] = []
    plain = inputs_mod.scan_files

    def spy(paths: Sequence[Any], *args: Any, **kwargs: Any) -> list[Scan]:
        if len(paths) == 1 and isinstance(paths[0], str) and "/pods/" in paths[0]:
            got.append(paths[0])
        return plain(paths, *args, **kwargs)

    monkeypatch.setattr(inputs_mod, "scan_files", spy)
    return got


def _rewrite(d: Path, small_fleet: Path, write: Callable[[dict[str, Any]], str]) -> None:
    shutil.copytree(small_fleet, d)
    for f in _pod_files(d):
        f.write_bytes(write(json.loads(f.read_text())).encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("layout", ["indent 2", "indent 4 (kubectl)", "tabs", "CRLF", "items first"])
def test_pieces_give_the_report_of_one_process(
    small_fleet: Path, tmp_path: Path, small_pieces: None, whole_reads: list[str], layout: str
) -> None:
    def write(doc: dict[str, Any]) -> str:
        if layout == "indent 2":
            return json.dumps(doc, indent=2)
        if layout == "indent 4 (kubectl)":
            return json.dumps({"apiVersion": doc.get("apiVersion", "v1"), "items": doc["items"],
                               "kind": "List", "metadata": {"resourceVersion": ""}}, indent=4) + "\n"
        if layout == "tabs":
            return json.dumps(doc, indent="\t")
        if layout == "CRLF":
            return json.dumps(doc, indent=2).replace("\n", "\r\n")
        # the list's end followed by more values with brackets of their own
        return json.dumps({"items": doc["items"], "kind": "PodList",
                           "metadata": {"x": [[1], {"y": [2]}], "z": "]"}}, indent=2)

    d = tmp_path / "fleet"
    _rewrite(d, small_fleet, write)
    serial = _report(d)
    whole_reads.clear()
    mapper = _Mapper()
    assert _report(d, mapper) == serial
    sizes = [f.stat().st_size for f in _pod_files(d)]
    assert mapper.pieces >= sum(s // SMALL for s in sizes) and mapper.unread == 0
    assert whole_reads == []


def test_the_pieces_are_the_items_of_the_whole_dump(small_fleet: Path, small_pieces: None) -> None:
    """The pieces of a dump, indexed one by one, give its pods (each in one
    piece), the same counts and, joined, the same bytes of pods as the
    dump indexed whole; some pieces hold no item's start."""
    f = str(_pod_files(small_fleet)[0])
    whole = index_pod_file(Path(f))
    pieces = cut_pieces(f)
    assert whole is not None and pieces is not None and len(pieces) >= 10
    assert [(p.lo, p.hi) for p in pieces] == [(p.lo, p.hi) for p in pieces if p.lo < p.hi]
    assert pieces[0].lo == 0 and pieces[-1].hi == os.path.getsize(f)
    assert all(a.hi == b.lo for a, b in zip(pieces, pieces[1:], strict=False))
    indexes = [index_piece(p) for p in pieces]
    assert all(i is not None for i in indexes)
    assert any(i is not None and i.pods == 0 for i in indexes)
    assert sum(i.pods for i in indexes if i) == whole.pods
    counts: dict[str, int] = {}
    for i in indexes:
        assert i is not None
        for node, n in i.counts.items():
            counts[node] = counts.get(node, 0) + n
    assert counts == whole.counts
    data = Path(f).read_bytes()

    def items(ranges: list[tuple[str, int, int]]) -> list[Any]:
        return [p for r in sorted(ranges, key=lambda r: r[1])
                for p in json.loads(b"[" + data[r[1]:r[2]] + b"]")]

    for node, ranges in whole.ranges.items():
        mine = [r for i in indexes if i for r in i.ranges.get(node, [])]
        assert items(mine) == items(ranges)
        # every range begins in the piece that gave it
        for p, i in zip(pieces, indexes, strict=True):
            assert i is not None and all(p.lo <= r[1] < p.hi for r in i.ranges.get(node, []))


def _insert_in_items(doc: dict[str, Any], text: str, at: int | None) -> str:
    """The dump (indent 2) with ``text`` put in the ``at``-th item's
    metadata (as the first field: ``"name": ...`` follows); every item's,
    with ``None``."""
    out = json.dumps(doc, indent=2)
    for item in doc["items"] if at is None else [doc["items"][at]]:
        name = json.dumps(item["metadata"]["name"])
        i = out.index(f'"name": {name}')
        out = out[:i] + text + out[i:]
    return out


DAMAGE: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    # an object inside the items, laid out like an item: a piece that begins
    # there is not a run of whole items
    ("an item's layout inside the items", lambda doc: _insert_in_items(
        doc, '"x": [1,\n    {"a": 1}],\n', None)),
    # the first "items" of the file is not the list of the dump
    ("another items list first", lambda doc: json.dumps(
        {"x": {"items": [{"kind": "Pod"}]}, **doc}, indent=2)),
    # not a list of pods: the whole dump's reader refuses it too
    ("not a list", lambda doc: json.dumps({**doc, "kind": "Pod"}, indent=2)),
    # a pod in two pieces, bound to two nodes: the dump read whole counts
    # its first only
    ("a pod twice", lambda doc: json.dumps({**doc, "items": [
        *doc["items"], {**doc["items"][0], "spec": {**doc["items"][0]["spec"],
                                                    "nodeName": doc["items"][-1]["spec"]["nodeName"]}}]},
        indent=2)),
    ("not UTF-8", lambda doc: _insert_in_items(doc, '"x": "\udcff",\n', len(doc["items"]) // 2)),
    ("cut short", lambda doc: json.dumps(doc, indent=2)[: len(json.dumps(doc, indent=2)) * 2 // 3]),
    ("garbage after the dump", lambda doc: json.dumps(doc, indent=2) + "\n]"),
    # an "items" before the list that the whole dump's decoders refuse
    # (msgspec checks each, the last one kept)
    ("an items before the list", lambda doc: '{"items": null,' + json.dumps(doc, indent=2)[1:]),
    ("an items of other things before the list", lambda doc: (
        '{"items": [\n    {"spec": 5}\n  ],' + json.dumps(doc, indent=2)[1:])),
    ("a pod that is not a mapping", lambda doc: json.dumps(
        {**doc, "items": [*doc["items"][:-3], 7, *doc["items"][-3:]]}, indent=2)),
]


@pytest.mark.parametrize(("name", "damage"), DAMAGE, ids=[n for n, _ in DAMAGE])
def test_a_dump_whose_pieces_cannot_be_read_alone_is_read_whole(
    small_fleet: Path, tmp_path: Path, small_pieces: None, whole_reads: list[str],
    name: str, damage: Callable[[dict[str, Any]], str],
) -> None:
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    f.write_bytes(damage(json.loads(f.read_text())).encode("utf-8", "surrogateescape"))
    serial = _report(d)
    whole_reads.clear()
    mapper = _Mapper()
    assert _report(d, mapper) == serial
    assert mapper.pieces > 0
    assert whole_reads == [str(f)]  # that dump, and no other


def test_a_piece_of_a_dump_changed_since_it_was_cut_is_not_read(
    small_fleet: Path, tmp_path: Path, small_pieces: None
) -> None:
    f = tmp_path / "pods.json"
    shutil.copy(_pod_files(small_fleet)[0], f)
    pieces = cut_pieces(str(f))
    assert pieces is not None and index_piece(pieces[1]) is not None
    f.write_bytes(f.read_bytes().replace(b'"Running"', b'"Pending"'))  # same size, written again
    os.utime(f, ns=(0, pieces[1].mtime_ns + 1_000_000))
    assert index_piece(pieces[1]) is None
    f.unlink()
    assert index_piece(pieces[1]) is None


def test_dumps_not_cut(small_fleet: Path, tmp_path: Path, small_pieces: None) -> None:
    src = _pod_files(small_fleet)[0]
    doc = json.loads(src.read_text())
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(doc))  # one line: cut by its items' opening (test_compact_damaged_dumps)
    yaml_file = tmp_path / "pods.yaml"
    shutil.copy(src, yaml_file)
    small = tmp_path / "small.json"
    small.write_text(json.dumps({**doc, "items": doc["items"][:1]}, indent=2))
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(100)]}, indent=2))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    dot = tmp_path / "dot" / ".json"  # (no suffix: the whole dump's reader does not take it either)
    dot.parent.mkdir()
    shutil.copy(src, dot)
    for p in (yaml_file, small, nodes, fifo, tmp_path / "missing.json", dot):
        assert cut_pieces(str(p)) is None, p
    assert cut_pieces(str(src)) is not None and cut_pieces(str(compact)) is not None


def test_a_range_goes_to_the_worker_that_keeps_its_piece() -> None:
    from podnuma.fleet.model import NodeSpec

    holders = {"a.json": [(0, "tcp://x"), (1000, "tcp://y"), (2000, "tcp://x")]}
    assert [_holder(holders, ("a.json", s, s + 10)) for s in (0, 999, 1000, 1999, 2000, 10**9)] == [
        "tcp://x", "tcp://x", "tcp://y", "tcp://y", "tcp://x", "tcp://x"]
    assert _holder(holders, ("b.json", 0, 10)) is None
    assert _holder({"a.json": [(500, "tcp://x")]}, ("a.json", 10, 20)) is None
    nodes = [NodeSpec(name=f"n{i}", pods_bound=10, pod_ranges=(("a.json", i * 100, i * 100 + 50),))
             for i in range(30)]
    parts, hints = routed_partition(nodes, holders, runners=2)
    for part, (where, _) in zip(parts, hints, strict=True):
        if where is not None:
            assert {_holder(holders, n.pod_ranges[0]) for n in part} == {where}
    assert sorted(n.name for p in parts for n in p) == sorted(n.name for n in nodes)


def test_on_dask_the_workers_keep_the_pieces_they_read_and_replay_their_nodes(
    small_fleet: Path, small_pieces: None, dask_client: Any
) -> None:
    """Each worker keeps the pods of the pieces it read; the partitions of
    a node go to the worker that keeps the piece its first range begins
    in; the report is the one of one process and nothing is kept after."""
    from podnuma.fleet.execute import DaskExecutor

    def held() -> list[tuple[str, int]]:
        return sorted((f, len(h.spans)) for f, h in podscan._HELD.items())

    ex = DaskExecutor(dask_client)
    fleet = load_fleet([small_fleet], map_files=ex.map, parts=ex.parts, runners=ex.runners)
    (dump,) = (str(f) for f in _pod_files(small_fleet))
    pieces = ex.holders[dump]
    workers = {w for _, w in pieces}
    assert len(pieces) > 10 and len(workers) == 2  # (two workers, each took some pieces)
    assert [lo for lo, _ in pieces] == sorted(lo for lo, _ in pieces)
    kept = dask_client.run(held)
    assert {w for w, h in kept.items() if h} == workers
    routed = {}
    for n in fleet.nodes:
        for r in n.pod_ranges:
            routed[r] = next(w for lo, w in reversed(pieces) if lo <= r[1])
    # every range kept by exactly one worker: the spans kept are the ranges
    assert sum(n for h in kept.values() for _, n in h) == len(routed)
    results = ex.replay(fleet.nodes, WHAT_IFS)
    assert all(h == [] for h in dask_client.run(held).values())
    serial = load_fleet([small_fleet])
    assert dump_json(fleet_report(fleet, results, [w.label for w in WHAT_IFS])) == dump_json(
        fleet_report(serial, run_serial(serial.nodes, WHAT_IFS), [w.label for w in WHAT_IFS]))


def test_a_fleet_generated_in_one_dump_is_the_same_fleet(tmp_path: Path) -> None:
    """``fleet generate --nodes-per-pods-file 0`` writes the pods of every
    node in one ``pods/pods.json``: the bytes of the list of all the pods
    written at once, every other file as with a dump per 100 nodes (the
    default); written by the command, it is read in pieces."""
    from click.testing import CliRunner

    from podnuma.cli import cli
    from podnuma.fleet.generate import generate_fleet

    many, one = tmp_path / "many", tmp_path / "one"
    generate_fleet(many, nodes=230, pods_per_node=5, seed=3)
    result = CliRunner().invoke(cli, ["fleet", "generate", "--nodes", "230", "--pods-per-node", "5",
                                      "--seed", "3", "--nodes-per-pods-file", "0", "--output-dir", str(one)])
    assert result.exit_code == 0, result.output
    assert "230 nodes, 1150 pods in" in result.output
    dumps = _pod_files(many)
    assert [f.name for f in dumps] == ["pods-0000.json", "pods-0001.json", "pods-0002.json"]
    assert [f.name for f in _pod_files(one)] == ["pods.json"]
    docs = [json.loads(f.read_text()) for f in dumps]
    whole = {**{k: v for k, v in docs[0].items() if k != "items"}, "items": [p for d in docs for p in d["items"]]}
    assert (one / "pods" / "pods.json").read_text() == json.dumps(whole, indent=2) + "\n"
    assert oct((one / "pods" / "pods.json").stat().st_mode & 0o777) == "0o644"
    assert sorted(str(p.relative_to(one)) for p in one.rglob("*") if p.is_file() and p.parent.name != "pods") == \
        sorted(str(p.relative_to(many)) for p in many.rglob("*") if p.is_file() and p.parent.name != "pods")
    assert (one / "nodes.json").read_bytes() == (many / "nodes.json").read_bytes()
    a, b = (json.loads(_report(d).replace(str(d), "DIR")) for d in (one, many))
    assert a == b and a["fleet"]["podsReplayed"] == 1150
    assert cut_pieces(str(one / "pods" / "pods.json")) is not None or (
        (one / "pods" / "pods.json").stat().st_size < 2 * podscan.PIECE_BYTES)


def test_a_dump_replaced_by_a_pipe_after_it_was_read_is_not_waited_on(
    small_fleet: Path, tmp_path: Path, small_pieces: None
) -> None:
    """Its ranges are read back for the replay: a named pipe there now
    (no writer) is refused at once, an issue of its nodes; the run ends."""
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    for mapper in (_Mapper(), None):
        fleet = load_fleet([d], map_files=mapper, parts=4, runners=2) if mapper else load_fleet([d])
        text = f.read_bytes()
        f.unlink()
        os.mkfifo(f)
        try:
            results = run_serial(fleet.nodes, WHAT_IFS)
        finally:
            f.unlink()
            f.write_bytes(text)
        messages = {i["message"] for r in results for i in r.get("issues", [])}
        assert any("not a regular file any more" in m for m in messages), messages


def test_pods_kept_from_pieces_of_a_dump_changed_since_are_not_given(
    small_fleet: Path, tmp_path: Path, small_pieces: None
) -> None:
    """A worker kept the pods of the pieces it read; the dump is written
    again (same size) before the replay: its ranges are read back from the
    file as it is now, not given from the pods kept (which may be of
    another reading than the ranges: the dump read whole, anew, when a
    later piece found it changed)."""
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = str(_pod_files(d)[0])
    pieces = cut_pieces(f)
    assert pieces is not None
    podscan.release_held()
    try:
        indexes = [index_piece(p, hold=True) for p in pieces]
        assert all(indexes) and podscan.is_held(f)
        ranges = sorted(r for i in indexes if i for rs in i.ranges.values() for r in rs)
        taken = podscan._take_held(ranges[0])
        assert taken  # as read
        text = Path(f).read_bytes()
        Path(f).write_bytes(text.replace(b'"Running"', b'"Pending"'))  # same size
        os.utime(f, ns=(0, pieces[0].mtime_ns + 10**9))
        assert podscan._take_held(ranges[1]) is None
    finally:
        podscan.release_held()


def test_a_pod_refused_in_a_range_is_left_out_alone(small_fleet: Path, tmp_path: Path, small_pieces: None) -> None:
    """A pod the index takes but whose reading is refused (nested past the
    limit in a field the index skips): it alone is left out, with its
    error, not the run of its node's pods it is in, so that the pods read
    do not depend on where the runs are cut (at a piece's end on a
    cluster)."""
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    doc = json.loads(f.read_text())
    deep: Any = 1
    for _ in range(150):
        deep = [deep]
    for i in (3, 4, len(doc["items"]) // 2):
        doc["items"][i]["metadata"]["namespace"] = 5  # (read by the general decoding)
        doc["items"][i]["x"] = deep
    f.write_text(json.dumps(doc, indent=2))
    serial = _report(d)
    assert _report(d, _Mapper()) == serial
    report = json.loads(serial)
    assert report["fleet"]["podsReplayed"] == report["fleet"]["podsInDumps"] - 3  # those three only
    warned = [i for n in report["nodes"] for i in n.get("issues", [])
              if i["message"].endswith("nested more than 100 levels deep")]
    assert warned and all(i["severity"] == "warning" for i in warned)
