"""How ``fleet analyze`` takes its input paths: pipes (``/dev/stdin``, a
named pipe whose writer is slow, the same pipe twice), a working directory
that is gone, links that lead round in a dumps directory, and a copy that
cannot be saved. Each against the real command in a child process."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .conftest import EXAMPLE

#: the command with the wait for a named pipe's writer set (``FIFO_WAIT_S``,
#: 30 s by default) by its first argument
WAITING = ("import sys, podnuma.inputs.documents as d; d.FIFO_WAIT_S = float(sys.argv.pop(1)); "
           "from podnuma.cli import run; run()")

FLEETCONFIG = """\
apiVersion: podnuma.io/v1
kind: FleetConfig
nodeGroups:
- name: all
  selector: ""
  kubeletConfigFile: sub/kubelet.yaml
  node: {synthetic: {sockets: 1, numaNodesPerSocket: 2, coresPerNumaNode: 8, threadsPerCore: 2, memoryPerNumaNode: 64Gi}}
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _cmd(wait: float = 30.0) -> list[str]:
    return [sys.executable, "-c", WAITING, str(wait), "fleet", "analyze"]


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kubelet.yaml").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n")
    (tmp_path / "fleet.yaml").write_text(FLEETCONFIG)
    for f in ("nodes.json", "pods.json"):
        shutil.copy(EXAMPLE / f, tmp_path / f)
    return tmp_path


def test_a_fleetconfig_on_dev_stdin_names_files_of_the_working_directory(work: Path) -> None:
    """``cat fleet.yaml | podnuma fleet analyze ... /dev/stdin``: an unnamed
    pipe, as ``-`` and ``<(cat fleet.yaml)`` are: its relative file names
    are the working directory's, not ``/dev``'s."""
    p = subprocess.run(_cmd() + ["nodes.json", "pods.json", "/dev/stdin", "-o", "json"],
                       input=FLEETCONFIG.encode(), cwd=work, env=_env(), capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    sources = {n["configSource"] for n in json.loads(p.stdout)["nodes"]}
    assert f"group all ({work / 'sub' / 'kubelet.yaml'})" in sources, sources


def test_an_unnamed_pipe_is_read_however_slowly(work: Path) -> None:
    """``/dev/stdin`` on a pipe whose writer takes longer than the wait for a
    named pipe's writer: read as it comes (a slow ``kubectl``), not given up."""
    proc = subprocess.Popen(_cmd(0.5) + ["/dev/stdin", "pods.json", "-o", "json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, env=_env())
    time.sleep(1.5)
    out, err = proc.communicate((work / "nodes.json").read_bytes(), timeout=120)
    assert proc.returncode == 0, err.decode()
    assert len(json.loads(out)["nodes"]) == 5


def test_a_named_pipe_whose_writer_is_there_is_read_however_slowly(work: Path) -> None:
    """``kubectl get nodes -o json > fifo``: the shell opens the pipe at once
    and the bytes come later; the writer is there, so the command reads on
    past the wait (which is for a pipe nobody has opened yet)."""
    fifo = work / "nodes-fifo.json"
    os.mkfifo(fifo)
    proc = subprocess.Popen(_cmd(0.5) + [str(fifo), "pods.json", "-o", "json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=work, env=_env())
    with open(fifo, "wb") as w:  # (opens once the command has it open for reading)
        time.sleep(1.5)
        w.write((work / "nodes.json").read_bytes())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert len(json.loads(out)["nodes"]) == 5


def test_a_named_pipe_given_twice_is_read_once(work: Path) -> None:
    """The same named pipe twice: read once and its copy given twice, as a
    file given twice is (the second is not a second wait for a writer that
    will not come)."""
    fifo = work / "nodes-fifo.json"
    os.mkfifo(fifo)
    proc = subprocess.Popen(_cmd(0.5) + [str(fifo), str(fifo), "pods.json", "-o", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=work, env=_env())

    def write() -> None:
        with open(fifo, "wb") as w:
            w.write((work / "nodes.json").read_bytes())

    threading.Thread(target=write, daemon=True).start()
    out, err = proc.communicate(timeout=120)
    twice = subprocess.run(_cmd() + ["nodes.json", "nodes.json", "pods.json", "-o", "json"], cwd=work,
                           env=_env(), capture_output=True, timeout=120)
    assert proc.returncode == 0 == twice.returncode, err.decode()
    assert json.loads(out.decode().replace(str(fifo), "nodes.json")) == json.loads(twice.stdout)


def _in_a_removed_directory(tmp_path: Path, args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"cd {gone} && rmdir {gone} && exec {sys.executable} -c '{WAITING}' 30 fleet analyze {args}"
    return subprocess.run(["bash", "-c", script], input=stdin, env=_env(), capture_output=True, timeout=120)


def test_a_removed_working_directory(work: Path, tmp_path: Path) -> None:
    """The working directory removed: a relative file name in a FleetConfig
    from standard input stays as written (one line, exit 2; never a name in
    the command's own temporary directory); ``--workers`` cannot start its
    processes there (one line naming it, exit 2, not an internal error)."""
    p = _in_a_removed_directory(tmp_path, f"{work}/nodes.json -", FLEETCONFIG.encode())
    assert p.returncode == 2
    assert p.stderr.decode() == "error: sub/kubelet.yaml: nodeGroups[0].kubeletConfigFile: input file not found\n"
    p = _in_a_removed_directory(tmp_path, f"{work}/nodes.json {work}/pods.json --workers 2 -o json")
    assert p.returncode == 2
    assert p.stderr.decode() == ("error: --workers: cannot start worker processes: the working directory is "
                                 "gone (No such file or directory); run from another directory, or without "
                                 "--workers\n")


def test_links_that_lead_round_in_a_dumps_directory_are_read_once(work: Path) -> None:
    """Links back to the dumps directory (two: the walk would grow without
    end) and a link to nothing: each directory read once, the links left
    out with a warning, the report the directory's own."""
    d = work / "top" / "dump"
    d.mkdir(parents=True)
    for f in ("nodes.json", "pods.json"):
        shutil.copy(work / f, d / f)
    plain = subprocess.run(_cmd() + [str(d), "-o", "json"], env=_env(), capture_output=True, timeout=120)
    os.symlink(".", d / "loop")
    os.symlink("..", d / "up")  # (to the directory holding only this one)
    os.symlink("missing", d / "gone.json")
    p = subprocess.run(_cmd() + [str(d), "-o", "json"], env=_env(), capture_output=True, timeout=120)
    assert p.returncode == 0 == plain.returncode, p.stderr.decode()
    report = json.loads(p.stdout)
    assert report["fleet"] == json.loads(plain.stdout)["fleet"]
    assert report["fleet"]["podsDumpedTwice"] == 0
    warned = {(i["file"], i["message"]) for i in report["issues"] if i["severity"] == "warning"}
    assert (str(d / "loop"), "a directory already read (through another link): skipped") in warned
    assert (str(d / "gone.json"), "a link to nothing: skipped") in warned
    # a link out of the directory given is not followed (``..``, ``/``,
    # ``/proc/self``: the walk stays in the dumps tree)
    assert (str(d / "up"), "a link to a directory outside the input directory: skipped (not followed; "
            "give that directory as an input to read it)") in warned


def test_a_copy_that_cannot_be_saved_is_not_a_failure_to_read(tmp_path: Path) -> None:
    """Standard input's copy on a full disk: said as that, not as standard
    input failing to be read."""
    from podnuma.cli.fleet_analyze import _copy_input
    from podnuma.errors import InputError

    os.symlink("/dev/full", tmp_path / "input-0.part")
    with pytest.raises(InputError) as e:
        _copy_input(io.BytesIO(b'{"kind": "List"}').read, tmp_path, 0, "<stdin>",
                    "cannot read input from standard input")
    assert str(e.value) == f"<stdin>: cannot save a copy of it in {tmp_path.parent}: No space left on device"
