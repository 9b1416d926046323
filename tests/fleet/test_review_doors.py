"""Review fixes of ``fleet analyze`` and ``fleet generate`` at their doors:
control characters of the inputs escaped on standard error and in the
table, ``--dask`` addresses checked before any work, ``--output-dir`` a
device, a pipe or ``-``, all-or-nothing writing of the dumps and of the
``--as-scenario`` directory (a full disk), a FleetConfig's ``nodeFile`` and
``kubeletConfigFile`` read within the ordinary 64 MiB limit, an empty
INPUT, ``shared-pool-cpus`` bounded, and ``--output-file`` checked before
the replay."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.fleet.execute import parse_dask_target
from podnuma.fleet.whatif import MAX_SHARED_POOL_CPUS, parse_what_if

from .conftest import EXAMPLE

EVIL_POD = "evil\x1b]0;pwned\x07\x1b[2J\x1b[31mRED\nline2"
EVIL_NODE = "bad\x1b[31mnode\nx"
#: the lines podnuma writes on standard error
PREFIXES = ("error: ", "warning: ", "note: ", "... and ")


def _run(*args: str) -> tuple[int, str, str]:
    # color=True: nothing stripped on the way, as on a terminal
    r = CliRunner().invoke(cli, list(args), color=True)
    return r.exit_code, r.stdout, r.stderr


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _hostile_names(fleet: Path) -> None:
    """A running pod that gets a warning renamed to ``EVIL_POD``; another
    pod bound to the node ``EVIL_NODE`` (not in the nodes dump: an error)."""
    path = fleet / "pods.json"
    doc = json.loads(path.read_text())
    for p in doc["items"]:
        if p["metadata"]["name"] == "checkout-api-6c9f7d8b54-h2f6d":
            p["metadata"]["name"] = EVIL_POD
    doc["items"][0]["spec"]["nodeName"] = EVIL_NODE
    path.write_text(json.dumps(doc))


def _lines_are_inert(err: str) -> None:
    for c in ("\x1b", "\x07"):
        assert c not in err, repr(err)
    for line in err.splitlines():
        assert line.startswith(PREFIXES), repr(line)


# 1. control characters --------------------------------------------------


def test_control_characters_of_names_are_escaped_on_stderr_and_in_the_table(example: Path) -> None:
    _hostile_names(example)
    code, out, err = _run("fleet", "analyze", str(example))
    assert code == 0, err
    _lines_are_inert(err)
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mRED\\nline2" in err
    assert "node bad\\x1b[31mnode\\nx: " in err
    # the issue rows of the table: escaped, never raw
    for c in ("\x1b", "\x07"):
        assert c not in out
    assert "bad\\x1b[31mnode\\nx" in out
    assert "line2" not in [line.strip() for line in out.splitlines()]


def test_json_keeps_the_real_names(example: Path) -> None:
    _hostile_names(example)
    code, out, _ = _run("-q", "fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert any(i.get("node") == EVIL_NODE for i in doc["issues"])
    assert any(EVIL_POD in i["message"] for i in doc["issues"])


def test_a_dump_file_name_with_a_line_break_stays_on_one_line(tmp_path: Path) -> None:
    d = tmp_path / "nl"
    d.mkdir()
    (d / "nodes.json").write_bytes((EXAMPLE / "nodes.json").read_bytes())
    (d / "x\ny\x1b[2J.json").write_text("garbage{")
    code, _, err = _run("fleet", "analyze", str(d))
    assert code == 0
    _lines_are_inert(err)
    assert f"error: {d}/x\\ny\\x1b[2J.json: " in err


# 2. --dask addresses --------------------------------------------------------


@pytest.mark.parametrize("target", [
    "tcp://", "tcp://127.0.0.1", "tcp://h:abc", "tcp://[::1", "tcp://[::1]", "tcp://::1:8786",
    "tcp://h:0", "tcp://h:65536", "tcp://:8786", "tcp://h:1/x", "tls://127.0.0.1:1",
    "ucx://h:1", "inproc://x",
])
def test_a_malformed_dask_address_is_a_usage_error_before_any_work(target: str, example: Path) -> None:
    code, out, err = _run("fleet", "analyze", str(example), "--dask", target)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: --dask {target}: "), err
    with pytest.raises(ValueError):
        parse_dask_target(target)


def test_tls_is_refused_saying_why() -> None:
    with pytest.raises(ValueError, match="TLS certificates"):
        parse_dask_target("tls://127.0.0.1:8786")


@pytest.mark.parametrize("target", ["tcp://127.0.0.1:8786", "tcp://[::1]:8786", "tcp://sched.example.com:1"])
def test_a_well_formed_dask_address_is_taken(target: str) -> None:
    assert parse_dask_target(target) == (target, None)


# 3. fleet generate --output-dir ---------------------------------------------


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_generate_into_a_device_or_a_pipe_is_one_line(kind: str, tmp_path: Path) -> None:
    if kind == "device":
        target = os.devnull
    else:
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    code, out, err = _run("fleet", "generate", "--nodes", "2", "--pods-per-node", "3", "--output-dir", target)
    assert code == 2, err
    assert out == ""
    kind = "a character device" if kind == "device" else "a named pipe"
    assert err == f"error: {target}: --output-dir: not a directory ({kind})\n"


def test_generate_into_dash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run("fleet", "generate", "--nodes", "2", "--pods-per-node", "3", "--output-dir", "-")
    assert code == 2
    assert err.startswith("error: -: --output-dir: '-' names no directory"), err
    assert err.count("\n") == 1
    assert not (tmp_path / "-").exists()


def _full_disk_after(n: int, real: Any) -> Any:
    """``atomic_write`` failing with ENOSPC from its ``n``-th call on."""
    calls = [0]

    def write(path: Any, data: bytes, **kw: Any) -> None:
        calls[0] += 1
        if calls[0] >= n:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data, **kw)

    return write


@pytest.mark.parametrize("exists", [False, True])
def test_generate_on_a_full_disk_leaves_nothing_and_a_rerun_works(
        exists: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import podnuma.fleet.generate as gen

    out = tmp_path / "parent" / "fleet"
    if exists:
        out.mkdir(parents=True)
    args = ("fleet", "generate", "--nodes", "20", "--pods-per-node", "5", "--output-dir", str(out))
    with monkeypatch.context() as m:
        m.setattr(gen, "atomic_write", _full_disk_after(4, gen.atomic_write))
        code, _, err = _run(*args)
    assert code == 2, err
    assert "No space left on device" in err and err.count("\n") == 1
    if exists:
        assert list(out.iterdir()) == []
    else:
        assert not (tmp_path / "parent").exists()
    code, _, err = _run(*args)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "configz", "fleet.yaml", "noderesourcetopologies.json", "nodes.json", "pods"]


# 4. a FleetConfig's files within the ordinary limit ---------------------------


@pytest.mark.parametrize("field", ["nodeFile", "kubeletConfigFile"])
def test_a_group_file_is_read_within_the_ordinary_limit(field: str, example: Path) -> None:
    (example / "fleet.yaml").write_text(
        "apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups:\n"
        f"- name: all\n  selector: \"\"\n  {field}: /dev/zero\n")
    code, out, err = _run("fleet", "analyze", str(example))
    assert code == 2
    assert out == ""
    assert err == (f"error: /dev/zero: nodeGroups[0].{field}: input file is larger than the limit "
                   f"of {64 << 20} bytes\n")


# 5. an empty INPUT -----------------------------------------------------------


def test_an_empty_input_is_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLE)  # (a dumps directory: scanned when '' read as the working directory)
    code, out, err = _run("fleet", "analyze", "", "-o", "json")
    assert (code, out, err) == (2, "", "error: '': INPUT: no such file or directory\n")


def test_an_empty_input_is_no_file_on_the_fast_path() -> None:
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", ""], cwd=EXAMPLE,
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "error: '': INPUT: no such file or directory\n")


# 6. shared-pool-cpus bounded ---------------------------------------------------


def test_a_huge_shared_pool_is_refused_when_the_what_if_is_parsed(example: Path) -> None:
    value = "99999999999999999999999"
    code, out, err = _run("fleet", "analyze", str(example), "--what-if", f"pod-level,shared-pool-cpus={value}")
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: --what-if: shared-pool-cpus={value}: at most {MAX_SHARED_POOL_CPUS} CPUs")
    assert err.count("\n") == 1


def test_the_shared_pool_bound() -> None:
    assert parse_what_if(f"pod-level,shared-pool-cpus={MAX_SHARED_POOL_CPUS}").shared_pool_cpus == 8192
    for value in (str(MAX_SHARED_POOL_CPUS + 1), "9" * 5000, "\u00b2"):
        with pytest.raises(InputError, match="--what-if: shared-pool-cpus="):
            parse_what_if(f"pod-level,shared-pool-cpus={value}")


# 7. --output-file checked before any work ------------------------------------


@pytest.mark.parametrize("target", ["nodir/x.txt", os.devnull])
def test_an_output_file_that_cannot_be_written_is_said_before_the_replay(
        target: str, example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run("fleet", "analyze", str(example), "--output-file", target)
    assert code == 2
    assert out == ""
    # one line: not the node issues the replay prints first
    assert err.count("\n") == 1 and err.startswith(f"error: {target}: --output-file: cannot write: "), err
    assert not (tmp_path / "nodir").exists()


def test_a_good_output_file_is_written(example: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    code, out, err = _run("-q", "fleet", "analyze", str(example), "-o", "json", "--output-file", str(target))
    assert code == 0, err
    assert out == ""
    assert json.loads(target.read_text())["fleet"]["nodes"] > 0


# 8. --as-scenario on a full disk -----------------------------------------------


@pytest.mark.parametrize("exists", [False, True])
def test_scenarios_on_a_full_disk_leave_nothing(
        exists: bool, example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import podnuma.fileio as fileio

    scen = tmp_path / "new" / "scen"
    if exists:
        scen.mkdir(parents=True)
    args = ("-q", "fleet", "analyze", str(example), "-o", "json", "--what-if", "pod-level",
            "--as-scenario", str(scen))
    with monkeypatch.context() as m:
        m.setattr(fileio, "atomic_write", _full_disk_after(3, fileio.atomic_write))
        code, out, err = _run(*args)
    assert code == 2, err
    assert json.loads(out)["fleet"]["nodes"] > 0  # (the report was printed before)
    assert "No space left on device" in err
    if exists:
        assert list(scen.iterdir()) == []
    else:
        assert not (tmp_path / "new").exists()
    code, _, err = _run(*args)
    assert code == 0, err
    assert len(list(scen.iterdir())) > 2


@pytest.mark.parametrize("args", [
    ["--dask", "local:²"], ["--dask", "local:٣"], ["--dask", "local:513"], ["--dask", "local:0"],
    ["--workers", "100000"], ["--workers", "513"],
])
def test_worker_counts_are_ascii_digits_and_bounded(args: list[str]) -> None:
    """A worker count is plain ASCII digits from 1 to 512: ``²`` reached
    ``int()`` and its error, ``٣`` was read as 3, and 100,000 local
    processes were started; one line naming the option, exit 2, nothing
    done."""
    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), *args],
                          capture_output=True, text=True, env=_env(), timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert args[0] in line and ("512" in line or "local:N" in line), line


def test_an_output_file_that_cannot_be_made_says_why(tmp_path: Path) -> None:
    """``--output-file /proc/version``: its directory exists, no file can be
    made there: the system's reason, not "its directory does not exist"."""
    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    code, out, err = _run("fleet", "analyze", str(fleet), "--output-file", "/proc/podnuma-report.txt")
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: /proc/podnuma-report.txt: --output-file: cannot write: "), line
    assert "does not exist" not in line
    code, _, err = _run("fleet", "analyze", str(fleet), "--output-file", str(tmp_path / "no" / "r.txt"))
    assert code == 2 and "its directory does not exist" in err


@pytest.mark.parametrize("columns", [60, 100])
def test_narrow_tables_wrap_and_say_what_they_leave_out(columns: int) -> None:
    """On a narrow terminal the fleet tables leave out optional columns and
    say which (``-o json`` has them), and wrap names and messages at their
    separators: nothing is cut short with ``…``, no line is wider."""
    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    env = {**_env(), "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "--what-if",
                           "pod-level"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "…" not in proc.stdout
    assert max(len(line) for line in lines) <= columns
    flat = " ".join(proc.stdout.split())
    assert f"(left out to fit {columns} columns: type, cpu/topology policy" in flat
    # the nodes table's first column: each row's pieces make its node's whole name
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("node ") and "free" in line)
    names: list[str] = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        first = line[2:].split("  ")[0]
        if line[2:][len(first):].strip():  # (a row's first line has its figures)
            names.append(first.strip())
        else:  # (the rest of its name)
            names[-1] += first.strip()
    report = json.loads(subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json"],
        capture_output=True, text=True, env=_env(), timeout=120, check=True).stdout)
    replayed = {n["name"] for n in report["nodes"] if "baseline" in n}
    assert set(names) == replayed, names  # (every replayed node: fewer than the top 15)
