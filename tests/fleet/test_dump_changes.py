"""A pods dump written again while the fleet is read: the run uses one
version of it, or says in one line naming the file that it changed, never
a traceback and never another version's bytes read as the index's pods.

Each rewrite here keeps the dump's length and layout (two nodes' names
swapped, byte for byte): its items are where the index says, and decode,
so only the dump's identity (size, modification time, inode) tells. The
rewrite is timed by hooks around the real reading: between the index and
the replay, between two pieces, during a piece's or a whole file's read,
during the reading back of ranges."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet import dumpfile, podscan
from podnuma.fleet.execute import Processes, Serial, run_serial
from podnuma.fleet.inputs import FleetInputs, Scan, _InOrder, load_fleet, scan_files
from podnuma.fleet.podscan import (
    CHANGED,
    DumpChanged,
    DumpName,
    cut_pieces,
    index_piece,
    index_pod_file,
    pods_of_ranges,
    read_dump,
)
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if
from podnuma.render.serialize import dump_json

from .conftest import need
from .test_dask_commands import _env

WHAT_IFS = [parse_what_if("pod-level")]
A, B = b"ip-10-0-0-1.", b"ip-10-0-0-2."
NODE_A, NODE_B = "ip-10-0-0-1.eu-west-1.compute.internal", "ip-10-0-0-2.eu-west-1.compute.internal"
#: pieces of a few items each (the test dump is about 570 KiB)
PIECE = 64 * 1024


def _swapped(data: bytes) -> bytes:
    out = data.replace(A, b"\0").replace(B, A).replace(b"\0", B)
    assert out != data and len(out) == len(data)
    return out


def rewrite(f: Path, *, replace: bool = False) -> None:
    """``f`` written again with two nodes' pods swapped (same length and
    layout): in place (same inode, a later modification time), or
    (``replace``) as a new file moved over it (another inode, the same
    modification time: only the inode tells)."""
    st = f.stat()
    data = _swapped(f.read_bytes())
    if replace:
        tmp = f.with_name(f.name + ".new")
        tmp.write_bytes(data)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, f)
        assert f.stat().st_ino != st.st_ino
        return
    with open(f, "r+b") as fh:
        fh.write(data)
    # (a later time, whatever the clock's tick: written within the same
    # tick, a rewrite keeps the time, which no identity tells)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert f.stat().st_ino == st.st_ino


@pytest.fixture
def fleet_dir(small_fleet: Path, tmp_path: Path) -> Path:
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    return d


def _dump(d: Path) -> Path:
    (f,) = sorted((d / "pods").glob("*.json"))
    return f


def _report(fleet: FleetInputs, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return fleet_report(fleet, list(results), [w.label for w in WHAT_IFS])


def _changed_nodes(report: dict[str, Any], f: Path) -> set[str]:
    """The nodes whose issues say ``f`` changed since it was indexed."""
    out = set()
    for n in report["nodes"]:
        for i in n.get("issues", []):
            if i["message"] == CHANGED:
                assert i["file"] == str(f) and i["severity"] == "warning"
                out.add(n["name"])
    return out


def _nodes_of(fleet: FleetInputs, f: Path) -> set[str]:
    return {n.name for n in fleet.nodes if any(r[0] == str(f) for r in n.pod_ranges)}


# --- the identity, as it is kept and carried ---


def test_the_ranges_carry_the_dump_s_identity_and_a_pickle_holds_it_once_per_file(fleet_dir: Path) -> None:
    import pickle
    from dataclasses import replace

    f = _dump(fleet_dir)
    fleet = load_fleet([fleet_dir])
    names = {r[0] for n in fleet.nodes for r in n.pod_ranges}
    assert names == {str(f)}
    (name,) = names
    assert isinstance(name, DumpName) and name.ident == podscan.file_ident(f.stat())
    assert len({id(r[0]) for n in fleet.nodes for r in n.pod_ranges}) == 1  # one name, shared
    back = pickle.loads(pickle.dumps(fleet.nodes))
    assert [n.pod_ranges for n in back] == [n.pod_ranges for n in fleet.nodes]
    assert all(r[0].ident == name.ident for n in back for r in n.pod_ranges)
    plain_name = str(name)
    plain = [replace(n, pod_ranges=tuple((plain_name, lo, hi) for _, lo, hi in n.pod_ranges)) for n in fleet.nodes]
    # the class once per pickle, the identity once per file: a few dozen bytes
    assert len(pickle.dumps(fleet.nodes)) - len(pickle.dumps(plain)) <= 64


def test_a_whole_dump_changed_while_it_is_read_is_read_again(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The descriptor's status before and after the read differ: the bytes
    may be of two versions, the file is read again; written again every
    time, it is refused (:class:`DumpChanged`), and the fleet's reading
    says so in one error naming it, the rest of the fleet read."""
    f = _dump(fleet_dir)
    before = f.read_bytes()
    plain = dumpfile.read_open
    writes = [1]

    def reading(fh: Any, limit: int) -> bytes:
        got = plain(fh, limit)
        if writes[0] > 0:
            writes[0] -= 1
            rewrite(f)
        return got

    monkeypatch.setattr(dumpfile, "read_open", reading)
    data, ident = read_dump(f, str(f))
    assert data == _swapped(before) and ident == podscan.file_ident(f.stat())  # the second reading's
    writes[0] = podscan.READ_TRIES
    with pytest.raises(DumpChanged) as e:
        read_dump(f, str(f))
    assert e.value.file == str(f) and "changed while it was read (3 times in a row)" in e.value.message
    writes[0] = 10**9
    fleet = load_fleet([fleet_dir])
    (issue,) = [i for i in fleet.issues if i.file == str(f)]
    assert issue.severity == "error" and issue.message.startswith("changed while it was read")
    assert fleet.pods_total == 0 and len(fleet.nodes) == 10  # nothing of it read, the rest read


# --- between the index and the replay ---


@pytest.mark.parametrize("replace", [False, True], ids=["in place", "moved over it"])
@pytest.mark.parametrize("kept", [False, True], ids=["read back", "kept from the index"])
def test_a_dump_rewritten_before_the_replay_is_said_not_read_as_other_pods(
    fleet_dir: Path, replace: bool, kept: bool
) -> None:
    """One process: the pods read back from the file, or kept from the
    index (the command's own reading): either way, each node of the dump
    says it changed and none of its pods is read as the index's; the
    other version is not mixed in."""
    f = _dump(fleet_dir)
    fleet = load_fleet([fleet_dir], map_files=Serial().map) if kept else load_fleet([fleet_dir])
    assert podscan.is_held(str(f)) is kept
    try:
        rewrite(f, replace=replace)
        report = _report(fleet, run_serial(fleet.nodes, WHAT_IFS))
    finally:
        podscan.release_held()
    assert _changed_nodes(report, f) == _nodes_of(fleet, f) and len(_nodes_of(fleet, f)) == 10
    assert report["fleet"]["podsReplayed"] == 0
    # the rewrite keeps the layout: read as plain ranges (no identity), the
    # bytes decode, as other pods (node A's ranges now hold node B's pods)
    a = next(n for n in fleet.nodes if n.name == NODE_A)
    got, errors = pods_of_ranges({NODE_A: [(str(r[0]), r[1], r[2]) for r in a.pod_ranges]}, scanned=True)
    assert errors == [] and got[NODE_A] and {p.node for p in got[NODE_A]} == {NODE_B}


def test_the_same_report_whether_the_pods_were_kept_or_read_back(fleet_dir: Path) -> None:
    f = _dump(fleet_dir)
    text = f.read_bytes()
    reports = []
    for kept in (False, True):
        f.write_bytes(text)
        fleet = load_fleet([fleet_dir], map_files=Serial().map) if kept else load_fleet([fleet_dir])
        try:
            rewrite(f)
            reports.append(dump_json(_report(fleet, run_serial(fleet.nodes, WHAT_IFS))))
        finally:
            podscan.release_held()
    assert reports[0] == reports[1]


def test_a_dump_rewritten_while_its_ranges_are_read_back_is_said_changed(
    fleet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is still the one indexed when its ranges are begun, and
    written again after the first is read: the status taken after them
    tells; none of the ranges' items is given."""
    f = _dump(fleet_dir)
    fleet = load_fleet([fleet_dir])
    plain = os.pread
    calls = []

    def pread(fd: int, n: int, offset: int) -> bytes:
        got = plain(fd, n, offset)
        calls.append(offset)
        if len(calls) == 1:
            rewrite(f)
        return got

    stats = []
    plain_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        stats.append(fd)
        return plain_fstat(fd)

    monkeypatch.setattr(os, "pread", pread)
    monkeypatch.setattr(os, "fstat", fstat)
    ranges = {n.name: n.pod_ranges for n in fleet.nodes}
    got, errors = pods_of_ranges(ranges, scanned=True)
    monkeypatch.undo()
    assert len(calls) == sum(len(rs) for rs in ranges.values()) >= 10  # every range read, then told
    assert len(stats) == 2  # one file: its status before its ranges and after, not per range
    assert all(not pods for pods in got.values())
    assert sorted(n for n, _ in errors) == sorted(ranges)  # once per node, however many ranges
    assert {(e.message, e.file) for _, e in errors} == {(CHANGED, str(f))}


def test_a_dump_rewritten_before_the_replay_on_a_pool_of_processes(fleet_dir: Path) -> None:
    """``--workers 2``: the ranges (in pieces) read back by spawned
    processes, which check the identity the nodes carry to them."""
    f = _dump(fleet_dir)
    ex = Processes(2)
    try:
        fleet = load_fleet([fleet_dir], map_files=ex.map, parts=ex.parts, runners=ex.runners)
        rewrite(f)
        report = _report(fleet, ex.replay(fleet.nodes, WHAT_IFS))
    finally:
        ex.close()
    assert _changed_nodes(report, f) == _nodes_of(fleet, f) and len(_nodes_of(fleet, f)) == 10
    assert report["fleet"]["podsReplayed"] == 0


SCRIPT = """
import json, os, sys, threading
from pathlib import Path
from podnuma.fleet import podscan
from podnuma.fleet.execute import Serial, open_executor
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if

A, B = {A!r}, {B!r}
{swapped}
{rewrite}

FLEET = Path(sys.argv[1])
DUMP = FLEET / "pods" / "pods-0000.json"
W = [parse_what_if("pod-level")]
podscan.PIECE_BYTES = int(sys.argv[2])
TEXT = DUMP.read_bytes()


def report(ex, seen):
    DUMP.write_bytes(TEXT)
    fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts, runners=getattr(ex, "runners", None))
    seen["pieces"] = len(ex.holders.get(str(DUMP), [])) if hasattr(ex, "holders") else 0
    rewrite(DUMP)
    results = ex.replay(fleet.nodes, W, lambda n: seen.setdefault("told", []).append(
        threading.current_thread().name))
    return fleet_report(fleet, results, [w.label for w in W])


want = report(Serial(), {{}})
seen = {{}}
with open_executor(dask_target="local:2") as ex:
    kind = type(ex).__name__
    got = report(ex, seen)
print(json.dumps({{"same": got == want, "report": got, "kind": kind, **seen}}))
"""


@pytest.mark.parametrize("piece", [podscan.PIECE_BYTES, PIECE], ids=["whole", "in pieces"])
def test_a_dump_rewritten_before_the_replay_on_dask(fleet_dir: Path, piece: int) -> None:
    """``--dask local:2``: the command, its Dask client process and two
    forked workers; the pods kept where they were indexed (the command,
    a worker) or read back: the report is one process's, each node of the
    dump saying it changed."""
    need("distributed")
    script = SCRIPT.format(A=A, B=B, swapped=inspect.getsource(_swapped), rewrite=inspect.getsource(rewrite))
    r = subprocess.run([sys.executable, "-c", script, str(fleet_dir), str(piece)],
                       env=_env(), capture_output=True, timeout=300, text=True)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["same"] and got["kind"] == "DaskProcess"
    # replayed by the cluster's workers and by the command itself (the
    # pods it kept while the cluster came up)
    assert set(got["told"]) == {"podnuma-fleet-here", "MainThread"}, got["told"]
    assert (got["pieces"] > 3) is (piece == PIECE)
    assert len(_changed_nodes(got["report"], _dump(fleet_dir))) == 10
    assert got["report"]["fleet"]["podsReplayed"] == 0


def test_the_command_says_it_in_one_line_and_goes_on(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``podnuma fleet analyze``: the dump written again after it was read
    (a hook after the fleet is assembled): one warning per node naming the
    file, on standard error too; no traceback, the run ends as usual."""
    from click.testing import CliRunner

    from podnuma.cli.app import cli

    f = _dump(fleet_dir)
    plain = inputs_mod.assemble

    def assemble(scan: Scan) -> FleetInputs:
        out = plain(scan)
        rewrite(f)
        return out

    monkeypatch.setattr(inputs_mod, "assemble", assemble)
    try:
        r = CliRunner().invoke(cli, ["fleet", "analyze", str(fleet_dir), "-o", "json"])
    finally:
        podscan.release_held()
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.stderr
    report = json.loads(r.stdout)
    assert len(_changed_nodes(report, f)) == 10
    lines = [ln for ln in r.stderr.splitlines() if CHANGED in ln]
    assert len(lines) == 10 and all(ln.startswith("warning: node ") and f": {f}: " in ln for ln in lines)


# --- pieces ---


@pytest.fixture
def pieces_of(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], list[podscan.Piece]]:
    monkeypatch.setattr(podscan, "PIECE_BYTES", PIECE)

    def cut(f: Path) -> list[podscan.Piece]:
        got = cut_pieces(str(f))
        assert got is not None and len(got) > 3
        return got

    return cut


class _Mapper:
    """Reads the batches here, one after the other, as a cluster would;
    ``between``: called after each batch (a rewrite between pieces)."""

    def __init__(self, between: Callable[[int], None] = lambda i: None) -> None:
        self.between = between
        self.unread = 0

    def __call__(self, fn: Callable[[Sequence[Any]], list[Scan]], args: Sequence[Sequence[Any]], *,
                 arrived: Callable[[int, list[Scan]], None] | None = None) -> list[list[Scan]]:
        out = []
        for i, batch in enumerate(args):
            scans = fn(batch)
            self.unread += sum(not s.piece_read for s in scans)
            out.append(scans)
            if arrived is not None:
                arrived(i, scans)
            self.between(i)
        return out


def _whole(fleet: FleetInputs) -> str:
    return dump_json(_report(fleet, run_serial(fleet.nodes, WHAT_IFS)))


def test_a_piece_changed_while_it_is_read_is_not_read(
    fleet_dir: Path, pieces_of: Callable[[Path], list[podscan.Piece]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dump is the one cut when the piece begins, and written again
    while its bytes are read: the status taken after tells."""
    f = _dump(fleet_dir)
    pieces = pieces_of(f)
    assert index_piece(pieces[2]) is not None
    plain = podscan._pread_into

    def pread_into(fd: int, n: int, offset: int) -> bytearray | None:
        got = plain(fd, n, offset)
        rewrite(f)
        return got

    monkeypatch.setattr(podscan, "_pread_into", pread_into)
    assert index_piece(pieces[2]) is None


def test_a_dump_rewritten_between_two_pieces_is_read_whole_as_it_is_now(
    fleet_dir: Path, pieces_of: Callable[[Path], list[podscan.Piece]]
) -> None:
    """The pieces read after the rewrite are refused; the dump is read
    whole, anew: its ranges are the new version's, and the report is the
    one of one process reading the new version."""
    f = _dump(fleet_dir)
    pieces_of(f)
    done = []

    def between(i: int) -> None:
        if i == 0:
            rewrite(f)
            done.append(i)

    mapper = _Mapper(between)
    fleet = load_fleet([fleet_dir], map_files=mapper, parts=8, runners=2)
    assert done and mapper.unread > 0
    names = {r[0] for n in fleet.nodes for r in n.pod_ranges}
    assert [n.ident for n in names] == [podscan.file_ident(f.stat())]  # type: ignore[attr-defined]
    assert _whole(fleet) == _whole(load_fleet([fleet_dir]))
    report = json.loads(_whole(fleet))
    assert report["fleet"]["podsReplayed"] > 0 and not _changed_nodes(report, f)


def test_pieces_of_two_versions_of_a_dump_are_not_taken_together(
    fleet_dir: Path, pieces_of: Callable[[Path], list[podscan.Piece]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard where the pieces are taken together: pieces each read as
    one version of the dump, but not the same one (cut again between
    them), are not merged; the dump is read whole, as it is now."""
    f = _dump(fleet_dir)
    first = pieces_of(f)
    scans = [scan_files([p])[0] for p in first[:2]]
    rewrite(f)
    second = pieces_of(f)
    assert [(p.lo, p.hi) for p in first] == [(p.lo, p.hi) for p in second]  # the same cuts
    scans += [scan_files([p])[0] for p in second[2:]]
    assert all(s.piece_read for s in scans)
    assert len({s.piece_ident for s in scans}) == 2
    whole: list[str] = []
    plain = inputs_mod.scan_files

    def spy(paths: Sequence[Any], *args: Any, **kwargs: Any) -> list[Scan]:
        whole.extend(str(p) for p in paths)
        return plain(paths, *args, **kwargs)

    monkeypatch.setattr(inputs_mod, "scan_files", spy)
    merged = Scan()
    order = _InOrder(merged)
    for i, s in enumerate(scans):
        order.arrived(i, [s])
    order.finish([[s] for s in scans])
    assert whole == [str(f)]
    idents = {r[0].ident for rs in merged.pod_ranges.values() for r in rs}  # type: ignore[attr-defined]
    assert idents == {podscan.file_ident(f.stat())}


def test_a_dump_that_keeps_changing_after_its_pieces_is_an_error_naming_it(
    fleet_dir: Path, pieces_of: Callable[[Path], list[podscan.Piece]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece refused as changed, and every whole reading after it too:
    one error naming the dump, the rest of the fleet read and replayed."""
    f = _dump(fleet_dir)
    pieces_of(f)
    plain = dumpfile.read_open

    def reading(fh: Any, limit: int) -> bytes:
        got = plain(fh, limit)
        if fh.name == str(f):
            rewrite(f)
        return got

    monkeypatch.setattr(dumpfile, "read_open", reading)
    mapper = _Mapper(lambda i: rewrite(f) if i == 0 else None)
    fleet = load_fleet([fleet_dir], map_files=mapper, parts=8, runners=2)
    (issue,) = [i for i in fleet.issues if i.file == str(f)]
    assert issue.severity == "error" and issue.message.startswith("changed while it was read")
    assert fleet.pods_total == 0 and not any(n.pod_ranges for n in fleet.nodes)
    report = json.loads(_whole(fleet))
    assert report["fleet"]["nodes"] == 10


# --- the general reader's dumps ---


def test_a_dump_the_general_reader_reads_is_read_again_only_as_indexed(fleet_dir: Path) -> None:
    """A dump the fast path does not take (here YAML) is read whole again
    by the replay: from the version the index read only."""
    f = _dump(fleet_dir)
    y = f.with_suffix(".yaml")
    f.rename(y)
    fleet = load_fleet([fleet_dir])
    files = {p for n in fleet.nodes for p in n.pod_files}
    assert files == {str(y)} and all(isinstance(p, DumpName) for n in fleet.nodes for p in n.pod_files)
    rewrite(y)
    report = _report(fleet, run_serial(fleet.nodes, WHAT_IFS))
    assert _changed_nodes(report, y) == {n.name for n in fleet.nodes}
    assert report["fleet"]["podsReplayed"] == 0


def test_an_unchanged_dump_reads_as_before(fleet_dir: Path) -> None:
    """Nothing rewritten: the identity costs no issue, and the index of a
    dump read by the caller carries the identity the caller's read gave."""
    fleet = load_fleet([fleet_dir])
    report = _report(fleet, run_serial(fleet.nodes, WHAT_IFS))
    assert not _changed_nodes(report, _dump(fleet_dir)) and report["fleet"]["podsReplayed"] > 200
    f = _dump(fleet_dir)
    index = index_pod_file(f, data=f.read_bytes(), ident=12345)
    assert index is not None and isinstance(index.file, DumpName) and index.file.ident == 12345
    index = index_pod_file(f)
    assert index is not None and isinstance(index.file, DumpName)
    assert index.file.ident == podscan.file_ident(f.stat())
