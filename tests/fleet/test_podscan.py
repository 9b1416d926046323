"""The fast reading of pods dumps (byte ranges, typed decoding) against the
general reader: the same pods, the same report; a dump it does not take as
a clean list of pods is left to the general reader and its wording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet.execute import run_serial
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.podscan import index_pod_file, read_ranges
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if

WHAT_IFS = [parse_what_if("pod-level")]


def _report(d: Path, what_ifs: list[Any] = WHAT_IFS) -> dict[str, Any]:
    fleet = load_fleet([d])
    return fleet_report(fleet, run_serial(fleet.nodes, what_ifs), [w.label for w in what_ifs])


def _pod_files(d: Path) -> list[Path]:
    return sorted((d / "pods").glob("*.json"))


def test_indexed_reading_gives_the_general_readers_report(
    small_fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _report(small_fleet)
    assert fast["fleet"]["podsReplayed"] == 240
    assert all(n.pod_ranges and not n.pod_files for n in load_fleet([small_fleet]).nodes)
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert all(n.pod_files and not n.pod_ranges for n in load_fleet([small_fleet]).nodes)
    assert _report(small_fleet) == fast


def test_scanned_pods_give_the_general_readers_report_under_every_what_if(
    small_fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pods scanned from byte ranges (documents built only when a
    what-if asks for them) give the same report text as the general
    reader's documents, whatever the what-ifs do with the pods: rewrite
    them, replay a restart of them, turn the gates on."""
    from podnuma.render.serialize import dump_json

    what_ifs = [parse_what_if(w) for w in ("pod-level,scope=pod,restart", "gates", "restart",
                                           "pod-level,shared-pool-cpus=1")]
    fast = dump_json(_report(small_fleet, what_ifs))
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert dump_json(_report(small_fleet, what_ifs)) == fast
    summary = json.loads(fast)["summary"]
    assert summary["pod-level,scope=pod,restart"]["rewrittenPods"] > 0  # the documents were asked for


def test_any_layout_of_the_json_is_indexed_the_same(small_fleet: Path, tmp_path: Path) -> None:
    """Compact JSON, and items whose separators differ, give the ranges
    of the same pods (kubectl and json.dumps write other layouts)."""
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    for i, f in enumerate(_pod_files(d)):
        doc = json.loads(f.read_text())
        if i % 2:
            f.write_text(json.dumps(doc, separators=(",", ":")))
        else:  # every item on its own line, a blank line now and then
            items = [json.dumps(p) for p in doc["items"]]
            body = "".join(t + (",\n\n" if k % 3 == 0 else " ,\n") for k, t in enumerate(items[:-1]))
            f.write_text('{"kind": "List", "items": [\n' + body + items[-1] + "\n]}\n")
        index = index_pod_file(f)
        assert index is not None and index.pods == len(doc["items"])
        got = [p for _, items_ in read_ranges([r for rs in index.ranges.values() for r in rs])
               for p in items_]  # type: ignore[union-attr]
        assert sorted(p["metadata"]["uid"] for p in got) == sorted(
            p["metadata"]["uid"] for p in doc["items"])
    moved = json.dumps(_report(d)["nodes"]).replace(str(d), str(small_fleet))
    assert moved == json.dumps(_report(small_fleet)["nodes"])


@pytest.mark.parametrize("body", [
    b'[{"a": 1}, {"b": 22}, {"c": 333}]',  # one separator throughout
    b'[{"a": 1},\n  {"b": 22} ,{"c": 333}]',  # separators that differ
    b'[ {"a": 1},{"b": 22},{"c": 333} ]',
])
def test_item_starts_are_where_each_item_is(body: bytes) -> None:
    """Where each item of a list begins, as the decoder's items are found
    in the file's bytes, whatever the separators."""
    from podnuma.fleet.podscan import _item_starts
    from podnuma.inputs.msgspec_import import msgspec

    data = b'{"items": ' + body + b"}"
    items = msgspec.json.decode(body, type=list[msgspec.Raw])
    pos = data.index(b"[") + 1
    starts = _item_starts(data, pos, items, [len(i) for i in items])
    assert starts == [data.index(bytes(i)) for i in items]


def test_item_starts_refuse_items_not_where_the_file_has_them() -> None:
    """Items that are not the file's bytes at their place (the same
    lengths, other bytes) give ``None``: the general reader reads it."""
    from podnuma.fleet.podscan import _item_starts
    from podnuma.inputs.msgspec_import import msgspec

    data = b'[{"a": 1}, {"b": 2}, {"c": 3}]'
    other = [msgspec.Raw(t) for t in (b'{"a": 1}', b'{"x": 2}', b'{"c": 3}')]
    assert _item_starts(data, 1, other, [8, 8, 8]) is None
    last = [msgspec.Raw(t) for t in (b'{"a": 1}', b'{"b": 2}', b'{"c": 4}')]
    assert _item_starts(data, 1, last, [8, 8, 8]) is None
    # each item in place, but not a separator between two of them
    same = [msgspec.Raw(t) for t in (b'{"a": 1}', b'{"b": 2}', b'{"c": 3}')]
    assert _item_starts(b'[{"a": 1}, {"b": 2}x {"c": 3}]', 1, same, [8, 8, 8]) is None
    assert _item_starts(data, 1, same, [8, 8, 8]) == [1, 11, 21]


@pytest.mark.parametrize(("name", "damage"), [
    ("NaN", lambda t: t.replace('"cpu": "100m"', '"cpu": NaN', 1)),
    ("lone surrogate", lambda t: t.replace('"name": "', '"name": "\\udc80', 1)),
    ("not UTF-8", lambda t: t.replace("node-exporter", "node-\udcffexporter", 1)),
    ("truncated", lambda t: t[: len(t) // 2]),
    ("a Node in the list", lambda t: t.replace('"kind": "Pod"', '"kind": "Node"', 1)),
    ("duplicate key", lambda t: t.replace('"kind": "Pod",', '"kind": "Pod", "kind": "Pod",', 1)),
])
def test_a_dump_the_fast_path_does_not_take_is_read_by_the_general_reader(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, damage: Any
) -> None:
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    text = damage(f.read_text())
    f.write_bytes(text.encode("utf-8", "surrogateescape"))
    fast = _report(d)
    if name == "lone surrogate":  # a damaged pod: its items indexed one by one, that pod left out
        index = index_pod_file(f)
        assert index is not None and [i.path for i in index.issues] == ["items[0].metadata.name"]
    elif name != "duplicate key":  # msgspec keeps the last duplicate, as Go and the general reader do
        assert index_pod_file(f) is None
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert _report(d) == fast
    issues = [i for i in fast["issues"] if i["file"] == str(f)]
    if name in ("NaN", "not UTF-8", "truncated"):
        assert issues, name  # named by the general reader, one line each
        assert all("\n" not in i["message"] for i in issues)


def _varied(small_fleet: Path, d: Path) -> Path:
    """A copy of the fleet whose first pods dump also holds the shapes a
    dump can give: no namespace, no owner, two owners, a finished pod, no
    start time, no status, labels that are not all strings, a pod dumped
    twice."""
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    doc = json.loads(f.read_text())
    items = doc["items"]
    items[0]["metadata"].pop("namespace", None)
    items[1]["metadata"].pop("ownerReferences", None)
    items[2]["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": "web-abcde", "controller": False},
        {"kind": "StatefulSet", "name": "db", "controller": True}]
    items[3]["status"]["phase"] = "Succeeded"
    items[4]["status"].pop("startTime", None)
    items[5].pop("status", None)
    items[6]["metadata"]["labels"] = {"a": 1}
    items[7]["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "api-7d9f8c6b5d"}]
    items[7]["metadata"]["labels"] = {}
    items.append(json.loads(json.dumps(items[8])))
    f.write_text(json.dumps(doc, indent=2))
    return f


def test_scanned_pods_are_the_compact_pods(small_fleet: Path, tmp_path: Path) -> None:
    """What the replay reads of a pod scanned from a range (its node,
    identity, start key, workload, the key of its spec) and the document
    it stands for are those of the compact pod the general decoding of the
    same range gives."""
    from podnuma.fleet.pods import _key, start_key, with_ranged_pods
    from podnuma.fleet.podscan import ScannedPod, pods_of_ranges
    from podnuma.fleet.replay import workload_of

    f = _varied(small_fleet, tmp_path / "fleet")
    index = index_pod_file(f)
    assert index is not None
    compact, errors = pods_of_ranges(index.ranges)
    scanned, errors2 = pods_of_ranges(index.ranges, scanned=True)
    assert not errors and not errors2
    seen = 0
    for node in index.ranges:
        want = with_ranged_pods(node, [], compact[node])
        got = with_ranged_pods(node, [], scanned[node])
        assert all(type(p) is ScannedPod for p in got)
        assert [dict(p) for p in got] == want
        for p, c in zip(got, want, strict=True):
            assert p.start == start_key(c) and p.ident == _key(c)
            assert workload_of(p) == workload_of(c)
            assert p.key == c["spec"].key
            seen += 1
    assert seen == index.pods - 2  # the finished pod is not replayed, the copy is one pod


def test_the_index_keys_pods_as_pod_key(small_fleet: Path, tmp_path: Path) -> None:
    """The index's key of each pod (a pod in two dumps is counted once) is
    :func:`pod_key`, which the general reader uses for the other files."""
    from podnuma.fleet.podscan import pod_key

    f = _varied(small_fleet, tmp_path / "fleet")
    seen: dict[bytes, str] = {}
    index = index_pod_file(f, seen)
    assert index is not None and index.duplicated == 1
    items = json.loads(f.read_text())["items"]
    assert set(seen) == {pod_key(p["metadata"].get("namespace"), p["metadata"].get("name"),
                                 p["metadata"].get("uid")) for p in items}


def _report_here(d: Path, what_ifs: list[Any]) -> dict[str, Any]:
    """The report as ``fleet analyze`` makes it in one process: the dumps
    read and the nodes replayed by the same in-process executor (the pods
    decoded when their dump is indexed are kept for the replay)."""
    from podnuma.fleet.execute import open_executor

    with open_executor() as ex:
        fleet = load_fleet([d], map_files=ex.map, parts=ex.parts)
        return fleet_report(fleet, ex.replay(fleet.nodes, what_ifs), [w.label for w in what_ifs])


def test_pods_kept_from_the_index_give_the_report_of_ranges_read_back(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the replay runs in the process that indexed the dumps, each
    dump is decoded once and its pods kept until their node is replayed:
    the same report as the ranges read back and decoded again, every
    what-if; nothing is kept once the nodes are replayed. A dump with a pod
    the API server would not serve (a status that is not a mapping) is not
    the fast reader's: the general reader reads it, its pod reported, with
    the same report either way."""
    import podnuma.fleet.podscan as podscan
    from podnuma.render.serialize import dump_json

    what_ifs = [parse_what_if(w) for w in ("pod-level,scope=pod,restart", "gates")]
    d = tmp_path / "fleet"
    f = _varied(small_fleet, d)
    want = dump_json(_report(d, what_ifs))
    held: list[int] = []
    take = podscan._take_held

    def counting(r: Any, idents: Any = None) -> Any:
        got = take(r, idents)
        held.append(got is not None)
        return got

    monkeypatch.setattr(podscan, "_take_held", counting)
    assert dump_json(_report_here(d, what_ifs)) == want
    assert held and all(held)  # every range's pods were the ones kept
    assert not podscan._HELD and podscan._held_bytes[0] == 0

    doc = json.loads(f.read_text())
    doc["items"][9]["status"] = "Running"
    f.write_text(json.dumps(doc, indent=2))
    # (the whole dump's decoding declines it: indexed item by item, that pod
    # left out in the general reader's words, nothing held)
    index = index_pod_file(f, {}, None, True)
    assert index is not None and [(i.severity, i.path) for i in index.issues] == [("warning", "items[9].status")]
    assert str(f) not in podscan._HELD
    want = dump_json(_report(d, what_ifs))
    assert "items[9].status" in want  # (the pod said left out, where it is)
    assert dump_json(_report_here(d, what_ifs)) == want
    assert not podscan._HELD and podscan._held_bytes[0] == 0


def test_pods_kept_are_frozen_only_in_a_process_that_lives_for_one_run(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a process that said it lives for one run
    (:func:`~podnuma.fleet.podscan.freeze_kept_pods`: the command's own, the
    Dask client process and its forked workers), the pods kept for the
    replay are frozen out of the collector's passes (``gc.freeze``) once
    kept: in one process after the reading, on a worker after each batch it
    reads. Anywhere else (this test process, a server, a ``dask worker``)
    nothing is frozen. Either way the report is the one of the ranges read
    back, and nothing is kept once the replay in this process has ended,
    not even the pods of a node missing from the nodes dump."""
    import gc

    import podnuma.fleet.execute as execute
    import podnuma.fleet.podscan as podscan
    from podnuma.render.serialize import dump_json

    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    f = _pod_files(d)[0]
    doc = json.loads(f.read_text())
    ghost = json.loads(json.dumps(doc["items"][0]))
    ghost["metadata"]["name"] += "-ghost"
    ghost["metadata"]["uid"] = "ghost-uid"
    ghost["spec"]["nodeName"] = "not-in-the-nodes-dump"
    doc["items"].append(ghost)
    f.write_text(json.dumps(doc))
    want = dump_json(_report(d))
    files = [str(p) for p in _pod_files(d)]

    earlier = gc.get_freeze_count()
    gc.unfreeze()  # (this test process's own: frozen again at the end)
    try:
        seen: list[int] = []
        take = podscan._take_held

        def counting(r: Any, idents: Any = None) -> Any:
            seen.append(gc.get_freeze_count())
            return take(r, idents)

        monkeypatch.setattr(podscan, "_take_held", counting)
        monkeypatch.setattr(execute, "_worker_address", lambda: "tcp://127.0.0.1:1")

        # a process that goes on: nothing frozen, nothing kept after
        assert dump_json(_report_here(d, WHAT_IFS)) == want
        assert seen and not any(seen) and gc.get_freeze_count() == 0
        assert not podscan._HELD and podscan._held_bytes[0] == 0
        execute.scan_kept((files[:1], "run-1"))
        assert podscan.is_held(files[0]) and gc.get_freeze_count() == 0
        podscan.release_held()

        # a process that lives for one run
        monkeypatch.setattr(podscan, "_FREEZE", [True])
        seen.clear()
        assert dump_json(_report_here(d, WHAT_IFS)) == want
        assert seen and all(n > 0 for n in seen)  # frozen while kept
        assert not podscan._HELD and podscan._held_bytes[0] == 0
        gc.unfreeze()
        where, kept, _ = execute.scan_kept((files[:1], "run-2"))
        assert where == "tcp://127.0.0.1:1" and kept == [(files[0], 0)]
        assert gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        podscan.release_held()
        gc.unfreeze()
        if earlier:
            gc.freeze()


def test_pods_are_kept_up_to_the_limit(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet with more than :data:`HOLD_BYTES` of JSON files keeps no
    pod: its ranges are read back. Under it, each dump is kept as long as
    the dumps kept so far stay under it. The same report either way."""
    import podnuma.fleet.podscan as podscan
    from podnuma.render.serialize import dump_json

    what_ifs = [parse_what_if("pod-level")]
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    for f in _pod_files(d):  # each dump cut in two
        doc = json.loads(f.read_text())
        items = doc["items"]
        for i, part in enumerate((items[: len(items) // 2], items[len(items) // 2:])):
            f.with_name(f"{f.stem}-{i}.json").write_text(json.dumps({**doc, "items": part}, indent=2))
        f.unlink()
    want = dump_json(_report(d, what_ifs))
    sizes = sorted(p.stat().st_size for p in _pod_files(d))
    total = sum(p.stat().st_size for p in d.rglob("*.json"))
    kept: list[int] = []
    real = podscan._Held

    def noting(pods: Any, spans: Any, size: int, ident: Any = None) -> Any:
        kept.append(size)
        return real(pods, spans, size, ident)

    monkeypatch.setattr(podscan, "_Held", noting)
    for limit, count in ((total - 1, 0), (total, len(sizes))):
        kept.clear()
        monkeypatch.setattr(podscan, "HOLD_BYTES", limit)
        assert dump_json(_report_here(d, what_ifs)) == want
        assert len(kept) == count, limit
        assert not podscan._HELD and podscan._held_bytes[0] == 0
    # one dump at a time: past the bytes kept so far, a dump is read back
    monkeypatch.setattr(podscan, "HOLD_BYTES", sizes[-1])
    kept.clear()
    for f in _pod_files(d):
        assert index_pod_file(f, {}, None, True) is not None
    assert len(kept) == 1
    podscan.release_held()
    assert not podscan._HELD and podscan._held_bytes[0] == 0


def test_a_dump_of_many_small_pods_counts_them_against_the_limit(tmp_path: Path) -> None:
    """Holding a dump costs memory by its pods as well as by its bytes: a
    dump of small pods counts :data:`HOLD_POD_BYTES` a pod, so one whose
    bytes fit the limit but whose pods do not is read back, not kept."""
    import podnuma.fleet.podscan as podscan

    items = [{"kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"nodeName": f"n{i % 7}"}}
             for i in range(2000)]
    f = tmp_path / "pods.json"
    f.write_text(json.dumps({"kind": "PodList", "items": items}))
    size = f.stat().st_size
    assert size < 2000 * podscan.HOLD_POD_BYTES
    old = podscan.HOLD_BYTES
    try:
        podscan.HOLD_BYTES = size  # the bytes fit, the pods do not
        assert index_pod_file(f, {}, None, True) is not None
        assert str(f) not in podscan._HELD
        podscan.HOLD_BYTES = 2000 * podscan.HOLD_POD_BYTES
        assert index_pod_file(f, {}, None, True) is not None
        assert str(f) in podscan._HELD
        assert podscan._held_bytes[0] == 2000 * podscan.HOLD_POD_BYTES
    finally:
        podscan.HOLD_BYTES = old
        podscan.release_held()
    assert not podscan._HELD and podscan._held_bytes[0] == 0
