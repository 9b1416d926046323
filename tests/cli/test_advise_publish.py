"""``advise --as-scenario`` publishes the scenario and its other node
shapes' files all or nothing: every temporary file written and synced
before any rename; a failure midway (a rename refused, a write out of
space) puts back every file already replaced (the directory ends exactly
as before: names, contents, the files themselves); SIGTERM or SIGINT
during the renames takes effect once they are done. Before any search it
refuses an output that is one of its inputs (the scenario, or a
``.shape-K`` file beside it), and a name (or its temporary files') too
long for the directory, naming the user's path."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma import fileio
from podnuma.cli import advise as advise_cli
from podnuma.cli import cli
from podnuma.service import outputs, whatif
from tests.cli.test_advise_option_checks import BIG

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    got = CliRunner().invoke(cli, list(args), input=stdin)
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout, got.stderr


def _one_error(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def _snapshot(directory: Path) -> dict[str, tuple[str, int, bytes | None]]:
    """Every entry of ``directory``: its kind, its inode and its bytes."""
    out: dict[str, tuple[str, int, bytes | None]] = {}
    for p in directory.iterdir():
        st = p.lstat()
        kind = "dir" if p.is_dir() else "file"
        out[p.name] = (kind, st.st_ino, None if p.is_dir() else p.read_bytes())
    return out


def _no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    def searched(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the search ran")

    monkeypatch.setattr(whatif, "advise", searched)


@pytest.fixture
def olds(tmp_path: Path) -> Path:
    """A pod and the previous run's scenario and shape file."""
    (tmp_path / "big.yaml").write_text(BIG)
    (tmp_path / "replay.yaml").write_text("old scenario\n")
    (tmp_path / "replay.shape-1.yaml").write_text("old shape\n")
    return tmp_path


# all or nothing ---------------------------------------------------------------


def test_the_shapes_file_and_scenario_are_written_together(olds: Path) -> None:
    code, _, err = _run("advise", str(olds / "big.yaml"), "--as-scenario", str(olds / "replay.yaml"))
    assert code == 0, err
    assert yaml.safe_load((olds / "replay.yaml").read_text())["steps"]
    assert yaml.safe_load((olds / "replay.shape-1.yaml").read_text())["steps"]
    # (with the record of the shape files written: .replay.yaml.shapes)
    assert sorted(p.name for p in olds.iterdir()) == [".replay.yaml.shapes", "big.yaml", "replay.shape-1.yaml",
                                                      "replay.yaml"]


def test_a_later_rename_failing_puts_back_the_files_already_replaced(
    olds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(olds)
    real = os.replace
    calls: list[str] = []

    def second_fails(src: Any, dst: Any, **kwargs: Any) -> None:
        if Path(os.fspath(dst)).parent == olds:
            calls.append(os.fspath(dst))
            if len(calls) == 2:
                raise OSError(28, os.strerror(28))
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", second_fails)
    code, out, err = _run("advise", str(olds / "big.yaml"), "--as-scenario", str(olds / "replay.yaml"))
    monkeypatch.setattr(os, "replace", real)
    assert code == 2 and out == ""
    # the scenario was replaced first, then its shape's rename failed: the scenario is put back
    assert calls[:2] == [str(olds / "replay.yaml"), str(olds / "replay.shape-1.yaml")]
    assert _one_error(err) == (f"error: {olds / 'replay.shape-1.yaml'}: --as-scenario: cannot write: "
                               "No space left on device (nothing written: every file is as it was)")
    assert _snapshot(olds) == before  # the same files (inodes), contents, and no temporary file


def test_a_directory_in_the_way_after_the_checks_leaves_no_scenario_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.yaml").write_text(BIG)
    real = fileio.publish_files

    def late_directory(files: Any, **kwargs: Any) -> None:
        (tmp_path / "replay.shape-1.yaml").mkdir()  # (after every check: the rename itself fails)
        real(files, **kwargs)

    monkeypatch.setattr(advise_cli, "publish_files", late_directory)
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 2 and out == ""
    line = _one_error(err)
    assert line.startswith(f"error: {tmp_path / 'replay.shape-1.yaml'}: --as-scenario: cannot write: ")
    assert line.endswith("(nothing written: every file is as it was)")
    assert ".podnuma-" not in line  # (the user's path, never a temporary file's)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml", "replay.shape-1.yaml"]
    assert (tmp_path / "replay.shape-1.yaml").is_dir()


def test_a_write_out_of_space_before_the_renames_replaces_nothing(
    olds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(olds)
    real = fileio._write_synced
    writes: list[int] = []

    def full(fh: Any, data: bytes) -> None:
        writes.append(len(data))
        if len(writes) == 2:
            raise OSError(28, os.strerror(28))
        real(fh, data)

    monkeypatch.setattr(fileio, "_write_synced", full)
    code, out, err = _run("advise", str(olds / "big.yaml"), "--as-scenario", str(olds / "replay.yaml"))
    assert code == 2 and out == ""
    assert "No space left on device" in _one_error(err)
    assert _snapshot(olds) == before


def test_publish_files_restores_a_replaced_file_and_removes_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_text("old a")
    before = _snapshot(tmp_path)
    real = os.replace
    count = [0]

    def third_fails(src: Any, dst: Any, **kwargs: Any) -> None:
        count[0] += 1
        if count[0] == 3:
            raise OSError(5, os.strerror(5))
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", third_fails)
    with pytest.raises(OSError) as e:
        fileio.publish_files([(str(tmp_path / "a"), b"new a"), (str(tmp_path / "b"), b"new b"),
                              (str(tmp_path / "c"), b"new c")])
    monkeypatch.setattr(os, "replace", real)
    assert e.value.filename == str(tmp_path / "c")
    assert _snapshot(tmp_path) == before  # a put back (the same file), b removed, no temporary file


def test_a_file_that_cannot_be_linked_aside_is_moved_aside_and_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's file, which the system lets no one link (protected
    hard links) nor read: renamed aside at its rename instead, so it is
    still replaced, and put back when a later rename fails."""
    def refused(path: str, aside: str, *, regular: bool) -> None:
        raise PermissionError(1, os.strerror(1), path)

    monkeypatch.setattr(fileio, "_keep_aside", refused)
    (tmp_path / "a").write_text("old a")
    (tmp_path / "b").write_text("old b")
    fileio.publish_files([(str(tmp_path / "a"), b"new a"), (str(tmp_path / "b"), b"new b")])
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a": "new a", "b": "new b"}
    before = _snapshot(tmp_path)
    real = os.replace

    def second_fails(src: Any, dst: Any, **kwargs: Any) -> None:
        if os.fspath(dst) == str(tmp_path / "b") and os.fspath(src).endswith(".new"):
            raise OSError(28, os.strerror(28))
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(fileio.PublishError) as e:
        fileio.publish_files([(str(tmp_path / "a"), b"newer a"), (str(tmp_path / "b"), b"newer b")])
    monkeypatch.setattr(os, "replace", real)
    assert e.value.filename == str(tmp_path / "b") and e.value.unrestored == ()
    assert _snapshot(tmp_path) == before  # the same files (inodes) back, no temporary file


def test_a_previous_version_not_put_back_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("old a")
    real = os.replace
    count = [0]

    def fails(src: Any, dst: Any, **kwargs: Any) -> None:
        count[0] += 1
        if count[0] >= 2:  # the second file's rename, then the first's putting back
            raise OSError(5, os.strerror(5))
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", fails)
    with pytest.raises(fileio.PublishError) as e:
        fileio.publish_files([(str(tmp_path / "a"), b"new a"), (str(tmp_path / "b"), b"new b")])
    monkeypatch.setattr(os, "replace", real)
    (kept,) = e.value.unrestored
    assert Path(kept).parent == tmp_path and Path(kept).read_text() == "old a"
    assert (tmp_path / "a").read_text() == "new a"


# signals held through the renames ------------------------------------------

_SIGNALLED = """\
import os, signal, sys
from podnuma import fileio
out = sys.argv[1]
sig = getattr(signal, sys.argv[2])
if signal.getsignal(sig) is signal.SIG_IGN:  # (a run under nohup ignores SIGHUP: held, it is ignored too)
    signal.signal(sig, signal.SIG_DFL)
real = os.replace
def signalled(src, dst, **kw):
    if dst.endswith("/a"):
        os.kill(os.getpid(), sig)  # (during the renames: held until they are done)
    real(src, dst, **kw)
os.replace = signalled
files = [(os.path.join(out, n), f"new {n}".encode()) for n in ("a", "b", "c")]
try:
    fileio.publish_files(files)
except KeyboardInterrupt:
    print("interrupted once published:", sorted(open(p).read() for p, _ in files))
    sys.exit(3)
print("not signalled")
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_termination_signal_during_the_renames_ends_the_process_after_them(tmp_path: Path, sig: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([sys.executable, "-c", _SIGNALLED, str(tmp_path), sig], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == -getattr(signal, sig), (got.stdout, got.stderr)
    assert "not signalled" not in got.stdout
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a": "new a", "b": "new b", "c": "new c"}


def test_sigint_during_the_renames_interrupts_after_them(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([sys.executable, "-c", _SIGNALLED, str(tmp_path), "SIGINT"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 3, (got.stdout, got.stderr)
    assert "interrupted once published: ['new a', 'new b', 'new c']" in got.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


def test_the_handlers_are_as_they_were_after_a_publish(tmp_path: Path) -> None:
    before = {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    fileio.publish_files([(str(tmp_path / "a"), b"a")])
    assert {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS} == before
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask
    assert (tmp_path / "a").read_bytes() == b"a"


# an output that is an input ----------------------------------------------------


def test_an_input_named_like_a_shape_file_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = tmp_path / "replay.shape-2.yaml"  # (no shape file yet: the name alone)
    pods.write_text(BIG)
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(pods), "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 2 and out == ""
    assert _one_error(err) == (f"error: {pods}: --as-scenario: cannot write: it is the input file {pods} "
                               "(an output never replaces an input: write the scenario elsewhere)")
    assert pods.read_text() == BIG and sorted(p.name for p in tmp_path.iterdir()) == ["replay.shape-2.yaml"]


def test_the_scenario_being_an_input_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pods = tmp_path / "big.yaml"
    pods.write_text(BIG)
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(pods), "--as-scenario", str(pods))
    assert code == 2 and out == ""
    assert _one_error(err) == (f"error: {pods}: --as-scenario: cannot write: it is the input file {pods} "
                               "(an output never replaces an input: write the scenario elsewhere)")
    # the node or the kubelet configuration read is an input too
    node = tmp_path / "node.yaml"
    node.write_text("cpus: 8\n")
    code, out, err = _run("advise", str(pods), "--node", str(node), "--as-scenario", str(node))
    assert code == 2 and f"it is the input file {node} " in _one_error(err)
    assert pods.read_text() == BIG and node.read_text() == "cpus: 8\n"


def test_a_shape_file_that_is_a_link_to_an_input_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pods = tmp_path / "pods" / "big.yaml"
    pods.parent.mkdir()
    pods.write_text(BIG)
    os.link(pods, tmp_path / "replay.shape-1.yaml")  # (the same file under a shape's name)
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(pods), "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 2 and out == ""
    assert _one_error(err) == (f"error: {tmp_path / 'replay.shape-1.yaml'}: --as-scenario: cannot write: "
                               f"it is the input file {pods} (an output never replaces an input: write the "
                               "scenario elsewhere)")
    assert pods.read_text() == BIG


def test_standard_input_read_from_the_scenario_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "replay.yaml"
    target.write_text(BIG)
    with open(target) as fh:
        got = subprocess.run([str(Path(sys.executable).parent / "podnuma"), "advise", "-", "--as-scenario",
                              str(target)], stdin=fh, capture_output=True, text=True, timeout=300,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.splitlines() == [f"error: {target}: --as-scenario: cannot write: it is the input file "
                                       "standard input (-) (an output never replaces an input: write the "
                                       "scenario elsewhere)"]
    assert target.read_text() == BIG


# names too long for the directory -------------------------------------------------


def test_a_shape_name_past_name_max_is_refused_before_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = tmp_path / "big.yaml"
    pods.write_text(BIG)
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    target = tmp_path / ("r" * (name_max - len(".yaml")) + ".yaml")  # (a name that fits, exactly)
    shape = advise_cli._shape_path(str(target), 1)
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(pods), "--as-scenario", str(target))
    assert code == 2 and out == ""
    assert _one_error(err) == (f"error: {shape}: --as-scenario: cannot write: File name too long: its name is "
                               f"{name_max + len('.shape-1')} bytes, more than the {name_max} its directory "
                               "takes (another node shape's scenario goes there)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml"]


def test_a_long_name_that_fits_with_its_shape_is_written(tmp_path: Path) -> None:
    pods = tmp_path / "big.yaml"
    pods.write_text(BIG)
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    target = tmp_path / ("r" * (name_max - len(".shape-1.yaml")) + ".yaml")
    code, _, err = _run("advise", str(pods), "--as-scenario", str(target))
    assert code == 0, err
    shape = Path(advise_cli._shape_path(str(target), 1))
    assert len(shape.name) == name_max
    assert yaml.safe_load(target.read_text())["steps"] and yaml.safe_load(shape.read_text())["steps"]
    record = Path(outputs.record_path(str(target)))
    assert len(record.name) == name_max  # (the record's name is as long as the first shape file's)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["big.yaml", target.name, shape.name, record.name])


def test_check_publish_names_counts_bytes_and_the_temporary_names(tmp_path: Path) -> None:
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    fits = str(tmp_path / ("é" * (name_max // 2)))
    assert fileio.check_publish_names([fits]) is None
    over = str(tmp_path / ("é" * (name_max // 2 + 1)))
    got = fileio.check_publish_names([fits, over])
    assert got is not None and got[0] == over and "its name is" in got[1]
    deep = str(tmp_path / "/".join(["d" * 200] * 25) / "replay.yaml")
    got = fileio.check_publish_names([deep])
    assert got is not None and got[0] == deep and "its path" in got[1]


def test_a_file_a_scenario_input_names_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``kubeletConfigFile`` named by the scenario given to
    ``--kubelet-config`` is read too: writing the scenario over it is
    refused before the search (the node and the configuration are read
    first), and it stays as it was."""
    (tmp_path / "big.yaml").write_text(BIG)
    config = tmp_path / "cfg.yaml"
    text = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
            "cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n")
    config.write_text(text)
    (tmp_path / "wrap.yaml").write_text("kind: Scenario\nkubeletConfigFile: cfg.yaml\n")
    with monkeypatch.context() as m:
        _no_search(m)
        code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--kubelet-config",
                              str(tmp_path / "wrap.yaml"), "--as-scenario", str(config))
    assert code == 2 and out == ""
    assert _one_error(err) == (f"error: {config}: --as-scenario: cannot write: it is the input file {config} "
                               "(an output never replaces an input: write the scenario elsewhere)")
    assert config.read_text() == text
    # elsewhere, the same run writes its scenario
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--kubelet-config", str(tmp_path / "wrap.yaml"),
                          "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 0, err
    assert yaml.safe_load((tmp_path / "replay.yaml").read_text())["kind"] == "Scenario"
