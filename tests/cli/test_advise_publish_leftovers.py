"""What ``advise --as-scenario`` leaves, and cleans, beside FILE.

- The shape files of an earlier run that this run no longer writes are
  removed in the same publish, only when the record of FILE
  (``.FILE.shapes``) lists them with their content unchanged; put back
  when the publish fails; any other file of such a name is left.
- What a publish killed midway (``SIGKILL``, or a termination signal on a
  thread other than the main one) leaves is recovered by the next publish
  of the same target, when its writer is provably gone: temporary files
  removed, a previous version whose target is missing put back (and said).
- :func:`~podnuma.fileio.held_signals` holds nothing off the main thread.
- An output that is an input only through a scenario (its
  ``kubeletConfigFile``) is refused before the search, by the service's
  check every door shares.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma import fileio
from podnuma.errors import InputError
from podnuma.service import outputs
from tests.cli.test_advise_option_checks import BIG
from tests.cli.test_advise_publish import _no_search, _one_error, _run, _snapshot

ROOT = Path(__file__).resolve().parents[2]


def _earlier_run(path: Path, shapes: int) -> None:
    """What a run of podnuma that wrote ``shapes`` other shapes left."""
    contents = [b"old scenario\n"] + [f"old shape {k}\n".encode() for k in range(1, shapes + 1)]
    writes, removals = outputs.scenario_files(str(path), contents)
    fileio.publish_files(writes, remove=removals)


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# the shape files of an earlier run ---------------------------------------------


def test_an_earlier_runs_extra_shape_files_are_removed(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text(BIG)
    _earlier_run(tmp_path / "replay.yaml", 4)
    assert _names(tmp_path) == [".replay.yaml.shapes", "big.yaml", "replay.shape-1.yaml", "replay.shape-2.yaml",
                                "replay.shape-3.yaml", "replay.shape-4.yaml", "replay.yaml"]
    code, _, err = _run("advise", str(tmp_path / "big.yaml"), "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 0, err
    # this run has one other shape: .shape-2 to .shape-4 are gone, the record lists .shape-1 alone
    assert _names(tmp_path) == [".replay.yaml.shapes", "big.yaml", "replay.shape-1.yaml", "replay.yaml"]
    assert yaml.safe_load((tmp_path / "replay.shape-1.yaml").read_text())["steps"]
    record = (tmp_path / ".replay.yaml.shapes").read_text().splitlines()
    assert len(record) == 2 and record[1].endswith(" 1")


def test_a_users_file_or_an_edited_shape_file_is_left(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text(BIG)
    _earlier_run(tmp_path / "replay.yaml", 3)
    (tmp_path / "replay.shape-2.yaml").write_text("edited since\n")  # (listed, but not as written)
    (tmp_path / "replay.shape-3.yaml").unlink()
    (tmp_path / "other.txt").write_text("old shape 3\n")  # (the content recorded, through a link)
    (tmp_path / "replay.shape-3.yaml").symlink_to(tmp_path / "other.txt")  # (a link now: never followed)
    (tmp_path / "replay.shape-5.yaml").write_text("the user's own\n")  # (never listed)
    code, _, err = _run("advise", str(tmp_path / "big.yaml"), "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 0, err
    assert _names(tmp_path) == [".replay.yaml.shapes", "big.yaml", "other.txt", "replay.shape-1.yaml",
                                "replay.shape-2.yaml", "replay.shape-3.yaml", "replay.shape-5.yaml", "replay.yaml"]
    assert (tmp_path / "replay.shape-2.yaml").read_text() == "edited since\n"
    assert (tmp_path / "replay.shape-3.yaml").is_symlink()
    assert (tmp_path / "replay.shape-5.yaml").read_text() == "the user's own\n"
    assert (tmp_path / "big.yaml").read_text() == BIG


def test_shape_files_without_a_record_are_left(olds: Path) -> None:
    """An earlier run without a record (or files of such names made by
    hand): nothing proves them podnuma's."""
    (olds / "replay.shape-2.yaml").write_text("old shape 2\n")
    code, _, err = _run("advise", str(olds / "big.yaml"), "--as-scenario", str(olds / "replay.yaml"))
    assert code == 0, err
    assert (olds / "replay.shape-2.yaml").read_text() == "old shape 2\n"


@pytest.fixture
def olds(tmp_path: Path) -> Path:
    (tmp_path / "big.yaml").write_text(BIG)
    (tmp_path / "replay.yaml").write_text("old scenario\n")
    (tmp_path / "replay.shape-1.yaml").write_text("old shape\n")
    return tmp_path


def test_a_failed_publish_puts_the_removed_shape_files_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big.yaml").write_text(BIG)
    _earlier_run(tmp_path / "replay.yaml", 3)
    before = _snapshot(tmp_path)
    real = os.replace

    def record_fails(src: Any, dst: Any, **kwargs: Any) -> None:
        if os.fspath(dst).endswith(".shapes"):  # (after the scenario and its shape: the removals come last)
            raise OSError(28, os.strerror(28))
        real(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", record_fails)
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--as-scenario", str(tmp_path / "replay.yaml"))
    monkeypatch.setattr(os, "replace", real)
    assert code == 2 and out == ""
    assert _one_error(err).endswith("No space left on device (nothing written: every file is as it was)")
    assert _snapshot(tmp_path) == before  # the same files (inodes), contents, and no temporary file

    # a failure after the removals themselves: they are put back too
    rename = os.rename
    seen: list[str] = []

    def last_fails(src: Any, dst: Any, **kwargs: Any) -> None:
        seen.append(os.fspath(src))
        if len(seen) == 2:  # (.shape-2 renamed aside, then .shape-3's renaming fails)
            raise OSError(5, os.strerror(5))
        rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "rename", last_fails)
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--as-scenario", str(tmp_path / "replay.yaml"))
    monkeypatch.setattr(os, "rename", rename)
    assert code == 2 and seen == [str(tmp_path / "replay.shape-2.yaml"), str(tmp_path / "replay.shape-3.yaml")]
    assert _one_error(err) == (f"error: {tmp_path / 'replay.shape-3.yaml'}: --as-scenario: cannot write: "
                               "Input/output error (nothing written: every file is as it was)")
    assert _snapshot(tmp_path) == before


def test_a_run_without_shapes_removes_the_record_and_the_shape_files(tmp_path: Path) -> None:
    _earlier_run(tmp_path / "r.json", 2)
    writes, removals = outputs.scenario_files(str(tmp_path / "r.json"), [b"{}\n"])
    assert [p for p, _ in writes] == [str(tmp_path / "r.json")]
    assert sorted(p for p, _ in removals) == sorted(str(tmp_path / n) for n in
                                                    (".r.json.shapes", "r.shape-1.json", "r.shape-2.json"))
    fileio.publish_files(writes, remove=removals)
    assert _names(tmp_path) == ["r.json"]


def test_a_file_replaced_after_the_check_is_not_removed(tmp_path: Path) -> None:
    _earlier_run(tmp_path / "r.yaml", 2)
    writes, removals = outputs.scenario_files(str(tmp_path / "r.yaml"), [b"new\n", b"new shape\n"])
    (tmp_path / "r.shape-2.yaml").rename(tmp_path / "kept")  # (kept: its inode is not reused)
    (tmp_path / "r.shape-2.yaml").write_text("old shape 2\n")  # (the same bytes, another file)
    fileio.publish_files(writes, remove=removals)
    assert (tmp_path / "r.shape-2.yaml").read_text() == "old shape 2\n"


# what a publish killed midway leaves ------------------------------------------------

#: publishes a, b, c into argv[1] and SIGKILLs itself at a known point:
#: argv[2] "renamed-a": right after a's new content is renamed in; "moved-b":
#: right after b's previous version is renamed aside (b's link refused, as
#: for another user's file), before its new content takes its place
_KILLED = """\
import os, signal, sys
from podnuma import fileio
out, where = sys.argv[1], sys.argv[2]
def refused(path, aside, *, regular):
    raise PermissionError(1, "refused", path)
if where == "moved-b":
    fileio._keep_aside = refused
real_replace, real_rename = os.replace, os.rename
def replace(src, dst, **kw):
    real_replace(src, dst, **kw)
    if where == "renamed-a" and dst.endswith("/a"):
        os.kill(os.getpid(), signal.SIGKILL)
def rename(src, dst, **kw):
    real_rename(src, dst, **kw)
    if where == "moved-b" and src.endswith("/b"):
        os.kill(os.getpid(), signal.SIGKILL)
os.replace, os.rename = replace, rename
fileio.publish_files([(os.path.join(out, n), f"new {n}".encode()) for n in ("a", "b", "c")])
print("not killed")
"""


def _killed(directory: Path, where: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([sys.executable, "-c", _KILLED, str(directory), where], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == -signal.SIGKILL, (got.stdout, got.stderr)
    return got.returncode


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".podnuma-"))


def test_a_publish_killed_after_a_rename_is_cleaned_by_the_next(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("old a")
    (tmp_path / "b").write_text("old b")
    _killed(tmp_path, "renamed-a")
    left = _leftovers(tmp_path)
    # its plan, the temporary files of b and c, and the previous versions of a and b
    assert sorted(n.rsplit(".", 1)[1] for n in left) == ["new", "new", "old", "old", "plan"], left
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "old b"
    notes = fileio.publish_files([(str(tmp_path / "b"), b"newer b")])
    assert notes == []  # (nothing to put back: each kept version's target is there)
    assert _names(tmp_path) == ["a", "b"]
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "newer b"
    assert not (tmp_path / "c").exists()


def test_a_previous_version_whose_target_is_missing_is_put_back_and_said(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("old a")
    (tmp_path / "b").write_text("old b")
    _killed(tmp_path, "moved-b")
    assert not (tmp_path / "b").exists()  # (moved aside, its new content never came)
    (kept,) = [n for n in _leftovers(tmp_path) if n.endswith(".moved") and (tmp_path / n).read_text() == "old b"]
    notes = fileio._recover(str(tmp_path), ["b"], fileio._whereabouts())
    assert len(notes) == 1 and notes[0].startswith(f"{tmp_path / 'b'}: put back its previous version, moved aside "
                                                   f"as {tmp_path / kept} by an earlier write killed midway")
    assert _names(tmp_path) == ["a", "b"]
    assert (tmp_path / "b").read_text() == "old b" and (tmp_path / "a").read_text() == "new a"


def test_the_cli_notes_what_it_put_back(olds: Path) -> None:
    (olds / "replay.yaml").write_text("old scenario\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = _KILLED.replace('("a", "b", "c")', '("replay.yaml", "b")').replace('"/b"', '"/replay.yaml"')
    got = subprocess.run([sys.executable, "-c", script, str(olds), "moved-b"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == -signal.SIGKILL, (got.stdout, got.stderr)
    assert not (olds / "replay.yaml").exists()
    code, _, err = _run("advise", str(olds / "big.yaml"), "--as-scenario", str(olds / "replay.yaml"))
    assert code == 0, err
    assert f"{olds / 'replay.yaml'}: put back its previous version, moved aside as " in err
    assert _leftovers(olds) == []
    assert yaml.safe_load((olds / "replay.yaml").read_text())["kind"] == "Scenario"


def _plan(directory: Path, pid: int, where: dict[str, str], names: list[str]) -> list[str]:
    """Leftovers as a publish by ``pid`` running at ``where`` leaves them."""
    token = "0123456789ab"
    plan = directory / f".podnuma-{pid}-{token}.plan"
    plan.write_text(json.dumps({"where": where, "files": [[i, "write", n] for i, n in enumerate(names)]}))
    made = [plan.name]
    for i, _ in enumerate(names):
        new = directory / f".podnuma-{pid}-{token}-{i}.new"
        new.write_text("half")
        made.append(new.name)
    return sorted(made)


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, timeout=60)
    return int(proc.stdout)


def test_leftovers_not_provably_stale_are_left(tmp_path: Path) -> None:
    here = fileio._whereabouts()
    if not here["boot"] or not here["pidns"]:
        pytest.skip("no boot id or process id namespace to tell a writer's whereabouts")
    alive = _plan(tmp_path, os.getppid(), here, ["a"])  # (a process that is there)
    elsewhere = _plan(tmp_path, _dead_pid(), {**here, "host": here["host"] + "-other"}, ["a"])
    other = _plan(tmp_path, _dead_pid(), here, ["z"])  # (of another target)
    legacy = tmp_path / ".podnuma-0123456789ab.new"  # (no writer named: never removed)
    legacy.write_text("half")
    fileio.publish_files([(str(tmp_path / "a"), b"a")])
    assert _leftovers(tmp_path) == sorted([*alive, *elsewhere, *other, legacy.name])
    gone = _plan(tmp_path, _dead_pid(), here, ["a", "b"])
    fileio.publish_files([(str(tmp_path / "a"), b"a")])
    assert not set(gone) & set(_leftovers(tmp_path))
    assert (tmp_path / "a").read_bytes() == b"a" and not (tmp_path / "b").exists()


def test_a_writer_of_another_boot_is_not_proven_gone(tmp_path: Path) -> None:
    # a machine of the same name and another boot id (a clone sharing the
    # directory, a sandbox) cannot be told from this one restarted: its
    # leftovers are left, its kept versions never removed
    here = fileio._whereabouts()
    made = _plan(tmp_path, _dead_pid(), {**here, "boot": "another-boot"}, ["a"])
    fileio.publish_files([(str(tmp_path / "a"), b"a")])
    assert (tmp_path / "a").read_bytes() == b"a" and _leftovers(tmp_path) == made


def test_a_put_back_refused_keeps_the_plan_for_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("old a")
    (tmp_path / "b").write_text("old b")
    _killed(tmp_path, "moved-b")
    real_link = os.link

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", full)
    notes = fileio._recover(str(tmp_path), ["b"], fileio._whereabouts())
    assert len(notes) == 1 and ": missing: its previous version, moved aside as " in notes[0]
    assert "could not be put back: No space left on device" in notes[0]
    assert any(n.endswith(".plan") for n in _leftovers(tmp_path))  # (kept for the next)
    monkeypatch.setattr(os, "link", real_link)
    notes = fileio._recover(str(tmp_path), ["b"], fileio._whereabouts())
    assert len(notes) == 1 and ": put back its previous version" in notes[0]
    assert (tmp_path / "b").read_text() == "old b" and _leftovers(tmp_path) == []


def test_a_file_deleted_after_its_replacement_is_not_brought_back(tmp_path: Path) -> None:
    # killed after a's new content took its place; the user then deletes a:
    # the version kept aside is thrown away, never put back
    (tmp_path / "a").write_text("old a")
    (tmp_path / "b").write_text("old b")
    _killed(tmp_path, "renamed-a")
    (tmp_path / "a").unlink()
    notes = fileio.publish_files([(str(tmp_path / "b"), b"newer b")])
    assert notes == [] and _names(tmp_path) == ["b"] and _leftovers(tmp_path) == []


@pytest.mark.parametrize("content", ["[" * 200000, '{"where": {}, "files": [[0, "write", "a\u0000b"]]}',
                                     '{"where": {}, "files": [[0, "write", "' + "x" * 300 + '"]]}'])
@pytest.mark.parametrize("pid", ["1234", "9999999999"])
def test_a_hostile_plan_never_stops_a_publish(tmp_path: Path, content: str, pid: str) -> None:
    # not a plan publish_files wrote (nested past the parser, a NUL or an
    # over-long name, a process id past any kernel's): left as it is
    plan = tmp_path / f".podnuma-{pid}-0123456789ab.plan"
    plan.write_text(content)
    (tmp_path / f".podnuma-{pid}-0123456789ab-0.old").write_text("x")
    assert fileio.publish_files([(str(tmp_path / "a"), b"a")]) == []
    assert (tmp_path / "a").read_bytes() == b"a" and plan.exists()


def test_a_plan_that_cannot_be_written_is_not_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def full(fd: int, data: object) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".plan"):
            raise OSError(28, "No space left on device")
        return real_write(fd, data)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError):
        fileio.publish_files([(str(tmp_path / "a"), b"a")])
    assert list(tmp_path.iterdir()) == []


# signals on another thread --------------------------------------------------


def test_held_signals_holds_on_the_main_thread() -> None:
    before = {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS}
    with fileio.held_signals():
        during = {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS}
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert all(during[sig] is not before[sig] for sig in fileio.HELD_SIGNALS)
    assert set(fileio.HELD_SIGNALS) <= blocked
    assert {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS} == before
    assert not set(fileio.HELD_SIGNALS) & signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_held_signals_is_a_no_op_off_the_main_thread() -> None:
    seen: list[object] = []
    before = {sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS}

    def run() -> None:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        with fileio.held_signals():
            seen.append({sig: signal.getsignal(sig) for sig in fileio.HELD_SIGNALS})
            seen.append(signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert seen == [before, True]


def test_publish_files_on_another_thread_writes_every_file(tmp_path: Path) -> None:
    failed: list[BaseException] = []

    def run() -> None:
        try:
            fileio.publish_files([(str(tmp_path / "a"), b"a"), (str(tmp_path / "b"), b"b")])
        except BaseException as e:  # (reported to the test's thread)
            failed.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert failed == []
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a": b"a", "b": b"b"}


#: publishes a, b into argv[1] on a worker thread and sends itself SIGTERM
#: after a's rename: nothing holds it there, the process ends at once
_THREAD_TERM = """\
import os, signal, sys, threading
from podnuma import fileio
out = sys.argv[1]
real = os.replace
def replace(src, dst, **kw):
    real(src, dst, **kw)
    if dst.endswith("/a"):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        signal.sigwait([signal.SIGUSR1])  # (never comes: the process ends here)
os.replace = replace
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
signal.signal(signal.SIGTERM, signal.SIG_DFL)
t = threading.Thread(target=fileio.publish_files, args=([(os.path.join(out, n), n.encode()) for n in "ab"],))
t.start()
t.join()
print("not ended")
"""


def test_a_termination_signal_during_a_threads_publish_is_recovered_by_the_next(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([sys.executable, "-c", _THREAD_TERM, str(tmp_path)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == -signal.SIGTERM, (got.stdout, got.stderr)
    assert (tmp_path / "a").read_bytes() == b"a" and not (tmp_path / "b").exists()
    assert sorted(n.rsplit(".", 1)[1] for n in _leftovers(tmp_path)) == ["new", "plan"]
    fileio.publish_files([(str(tmp_path / "b"), b"b")])
    assert _names(tmp_path) == ["a", "b"]


# an input only through a scenario ---------------------------------------------------


def test_a_kubelet_config_file_named_like_a_shape_file_is_refused_before_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.yaml").write_text(BIG)
    config = tmp_path / "replay.shape-2.yaml"
    text = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
            "cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n")
    config.write_text(text)
    sub = tmp_path / "in"
    sub.mkdir()
    (sub / "wrap.yaml").write_text("kind: Scenario\nkubeletConfigFile: ../replay.shape-2.yaml\n")
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), "--kubelet-config", str(sub / "wrap.yaml"),
                          "--as-scenario", str(tmp_path / "replay.yaml"))
    assert code == 2 and out == ""
    line = _one_error(err)
    assert line.startswith(f"error: {config}: --as-scenario: cannot write: it is the input file "), line
    assert line.endswith("(an output never replaces an input: write the scenario elsewhere)")
    assert config.read_text() == text and not (tmp_path / "replay.yaml").exists()


def test_the_service_check_refuses_a_file_read_through_an_input(tmp_path: Path) -> None:
    from podnuma.inputs.text import TextInput

    config = tmp_path / "cfg.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    (tmp_path / "wrap.yaml").write_text("kind: Scenario\nkubeletConfigFile: cfg.yaml\n")
    named = outputs.files_named(None, TextInput.read(str(tmp_path / "wrap.yaml"), what="kubelet configuration"))
    with pytest.raises(InputError) as e:
        outputs.check_scenario_not_input(str(config), [], named)
    assert e.value.file == str(config) and "it is the input file" in e.value.message
    outputs.check_scenario_not_input(str(tmp_path / "replay.yaml"), [], named)  # (elsewhere: taken)
    # an input that cannot be read is left for the command to say
    assert outputs.files_named(None, TextInput("kind: Scenario\nkubeletConfigFile: nope.yaml\n", "x",
                                               tmp_path, "x")) == {}
