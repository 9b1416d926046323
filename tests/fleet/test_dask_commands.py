"""``fleet analyze --dask tcp://HOST:PORT`` against a scheduler and workers
started by Dask's own ``dask scheduler`` and ``dask worker`` commands (on
loopback), and the reading of the dumps where the replay runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet.execute import Processes, Serial
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report

from .conftest import EXAMPLE, need

SRC = Path(__file__).resolve().parents[2] / "src"


def _env(scratch: Path | None = None) -> dict[str, str]:
    """The environment of the commands run here; ``scratch``: the directory
    a scheduler or worker keeps its scratch space in (Dask's default is a
    ``dask-scratch-space`` in the shared temporary directory, left behind)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    if scratch is not None:
        env["DASK_TEMPORARY_DIRECTORY"] = str(scratch)
    return env


def _dask() -> str:
    here = Path(sys.executable).parent / "dask"
    found = str(here) if here.exists() else shutil.which("dask")
    if found is None:
        need("no-such-module-dask-command")  # skips, or fails under CI
    assert found is not None
    return found


@pytest.fixture(scope="module")
def dask_commands(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two single-threaded workers, each its own process
    started by the ``dask`` command; the scheduler's address."""
    need("distributed")
    from distributed import Client

    d = tmp_path_factory.mktemp("dask")
    sched_file = d / "scheduler.json"
    dask = _dask()
    procs: list[subprocess.Popen[bytes]] = []
    log = (d / "dask.log").open("wb")
    try:
        procs.append(subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(sched_file)],
            env=_env(d), stdout=log, stderr=subprocess.STDOUT, cwd=d))
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sched_file.exists(), (d / "dask.log").read_text()
        for _ in range(2):
            procs.append(subprocess.Popen(
                [dask, "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                 "--host", "127.0.0.1", "--no-dashboard", "--no-nanny"],
                env=_env(d), stdout=log, stderr=subprocess.STDOUT, cwd=d))
        with Client(scheduler_file=str(sched_file), timeout=30) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(2, timeout=120)
            address = str(client.scheduler.address)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


def _analyze(*args: str) -> bytes:
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", *args],
                       env=_env(), capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_dask_commands_give_the_report_of_one_process(
    dask_commands: str, small_fleet: Path, fmt: str
) -> None:
    assert dask_commands.startswith("tcp://127.0.0.1:")
    args = [str(small_fleet), str(EXAMPLE / "fleet.yaml"), "-o", fmt, "--what-if", "pod-level"]
    one = _analyze(*args)
    assert b"pod-level" in one
    assert _analyze(*args, "--dask", dask_commands) == one
    if fmt == "json":
        assert _analyze(*args, "--dask", "local:2") == one
        assert _analyze(*args, "--workers", "2") == one


def test_the_workers_read_the_dumps(small_fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an executor of other processes, this process reads no file of
    the dumps: the files are read and the pods dumps indexed where the
    replay runs; the nodes carry byte ranges, not pods."""
    serial = Serial()
    want_fleet = load_fleet([small_fleet], map_files=serial.map)
    want = fleet_report(want_fleet, serial.replay(want_fleet.nodes, []), [])

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a dump read in the process that assembles the fleet")

    import podnuma.fleet.inputs as inputs_mod
    import podnuma.fleet.podscan as podscan_mod

    monkeypatch.setattr(inputs_mod, "index_pod_file", refuse)
    for reader in ("read_dump", "read_document_text", "parse_document"):
        monkeypatch.setattr(inputs_mod, reader, refuse)
    monkeypatch.setattr(podscan_mod, "read_ranges", refuse)
    ex = Processes(2)  # spawned: their modules are not patched
    try:
        fleet = load_fleet([small_fleet], map_files=ex.map, parts=ex.parts)
        assert all(n.pods is None and n.pod_ranges and not n.pod_files for n in fleet.nodes)
        assert sum(n.pods_bound for n in fleet.nodes) == fleet.pods_total > 0
        got = fleet_report(fleet, ex.replay(fleet.nodes, []), [])
    finally:
        ex.close()
    assert got == want


def _analyze_raw(*args: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", *args],
                       env=_env(), capture_output=True, timeout=600, text=True)
    return r.returncode, r.stdout, r.stderr


def test_hostile_dumps_read_on_the_workers_answer_as_in_one_process(
    dask_commands: str, small_fleet: Path, tmp_path: Path
) -> None:
    """A dump the workers cannot read: the same report and lines as one
    process; nothing readable at all: one line naming the file, exit 2,
    whether the dump was read here, on a local cluster or on ``dask
    worker`` processes."""
    import shutil

    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    (d / "pods" / "broken.json").write_text('{"kind": "PodList", "items": [{"kind": "Pod", "metadata": ')
    (d / "pods" / "garbage.json").write_bytes(b"\x00\xff not json")
    only = tmp_path / "only"
    only.mkdir()
    (only / "nodes.json").write_text('{"kind": "NodeList", "items": [')
    one = _analyze_raw(str(d), "-o", "json")
    assert one[0] == 0 and "garbage.json" in one[2]
    bad = _analyze_raw(str(only), "-o", "json")
    assert bad[0] == 2 and bad[1] == "" and len(bad[2].strip().splitlines()) == 1
    assert bad[2].startswith(f"error: {only / 'nodes.json'}: ")
    for target in ("local:2", dask_commands):
        assert _analyze_raw(str(d), "-o", "json", "--dask", target) == one
        assert _analyze_raw(str(only), "-o", "json", "--dask", target) == bad


def test_a_scheduler_without_workers_is_an_input_error_in_time(
    small_fleet: Path, tmp_path: Path
) -> None:
    """A scheduler no worker joins: exit 2 with one line saying that Dask's
    connect timeout (2 s here) has passed, not a run that waits for ever."""
    need("distributed")
    sched_file = tmp_path / "scheduler.json"
    log = (tmp_path / "dask.log").open("wb")
    sched = subprocess.Popen(
        [_dask(), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(sched_file)],
        env=_env(tmp_path), stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        import json

        # the scheduler writes its file in place: read until it is whole
        deadline = time.monotonic() + 60
        address = None
        while address is None and time.monotonic() < deadline:
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        assert address is not None, (tmp_path / "dask.log").read_text()
        env = {**_env(), "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
        r = subprocess.run(  # (the timeout: a hang guard, the run that waits for ever)
            [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(small_fleet), "-o", "json",
             "--dask", address],
            env=env, capture_output=True, timeout=120, text=True)
    finally:
        sched.terminate()
        try:
            sched.wait(timeout=60)
        except subprocess.TimeoutExpired:
            sched.kill()
            sched.wait()
        log.close()
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert r.stderr == (f"error: --dask {address}: no worker joined the scheduler within 2 s "
                        "(Dask's connect timeout: distributed.comm.timeouts.connect)\n")
