"""A number of seconds is one option type for every command
(:class:`podnuma.cli.options.Seconds`): ``serve --time-limit`` and
``--read-timeout``, ``agent --resync`` and ``explain --search-time``.

click's ``FloatRange`` lets ``nan`` through (it compares false with both
bounds) and takes ``inf`` and ``1e400`` (read as ``inf``): a server whose
every simulation failed on a wait the system cannot make, an agent that
crashed once it had admitted its pods. None is a number of seconds: each
is refused as the command line is read, one line, exit 2, before
anything starts (no state written, no server listening)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _podnuma() -> list[str]:
    exe = Path(sys.executable).parent / "podnuma"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """The command, ended (by its own id) and failed when it is still running
    after ``timeout`` seconds: it took the value and started."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    proc = subprocess.Popen([*_podnuma(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"podnuma {' '.join(args)} was still running after {timeout}s: {err[-400:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _refused(proc: subprocess.CompletedProcess[str], option: str, why: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-600:])
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: Invalid value for '{option}': "), lines[0]
    assert why in lines[0], lines[0]


_NOT_SECONDS = [("nan", "nan is not a number of seconds"), ("inf", "inf is not a number of seconds"),
                ("1e400", "1e400 is not a number of seconds"), ("-inf", "-inf is not a number of seconds"),
                ("1e7", "is not in the range")]


@pytest.mark.parametrize("value,why", _NOT_SECONDS, ids=[v for v, _ in _NOT_SECONDS])
@pytest.mark.parametrize("option", ["--time-limit", "--read-timeout"])
def test_serve_refuses_what_is_no_number_of_seconds(option: str, value: str, why: str) -> None:
    """The server does not start on such a limit."""
    _refused(_run(["serve", "-p", "0", option, value], timeout=15), option, why)


@pytest.mark.parametrize("value,why", _NOT_SECONDS[:3], ids=[v for v, _ in _NOT_SECONDS[:3]])
def test_agent_resync_is_refused_before_anything_is_admitted(tmp_path: Path, value: str, why: str) -> None:
    """The agent refuses the period before it admits a pod: the state
    directory is left as it was (not even made)."""
    state = tmp_path / "state"
    proc = _run(["agent", "--manifests", str(EXAMPLES / "agent" / "pods"), "--state-dir", str(state),
                 "--node", str(EXAMPLES / "agent" / "node.yaml"),
                 "--kubelet-config", str(EXAMPLES / "agent" / "kubelet-config.yaml"),
                 "--resync", value], timeout=60)
    _refused(proc, "--resync", why)
    assert not state.exists()


@pytest.mark.parametrize("value,why", _NOT_SECONDS[:3], ids=[v for v, _ in _NOT_SECONDS[:3]])
def test_explain_search_time_is_the_same_type(value: str, why: str) -> None:
    """``explain --search-time`` says it in the same words."""
    proc = _run(["explain", str(EXAMPLES / "static-dual-socket.yaml"), "--search-time", value], timeout=60)
    _refused(proc, "--search-time", why)


def test_every_seconds_option_is_of_the_one_type() -> None:
    """No command takes seconds in a type of its own (a new one would let
    ``nan`` through again)."""
    import click

    from podnuma.cli.agent import agent_command
    from podnuma.cli.explain import explain_command
    from podnuma.cli.options import Seconds
    from podnuma.cli.serve import serve_command

    seconds = {p.name: p.type for c in (agent_command, explain_command, serve_command) for p in c.params
               if isinstance(p, click.Option) and p.name in ("resync", "search_time", "time_limit", "read_timeout")}
    assert sorted(seconds) == ["read_timeout", "resync", "search_time", "time_limit"]
    assert all(isinstance(t, Seconds) for t in seconds.values()), seconds


_SPELLINGS_NOT_TAKEN = [("1_0", "1_0"), ("0x10", "0x10"), ("abc", "abc"), ("1e", "1e"), ("5s", "5s"),
                        (" 5", "' 5'"), ("5 ", "'5 '"), ("", "''"), ("\u0665", "\u0665"), ("1\u00a0", "'1\\xa0'")]


@pytest.mark.parametrize("value,shown", _SPELLINGS_NOT_TAKEN, ids=[repr(v) for v, _ in _SPELLINGS_NOT_TAKEN])
def test_a_number_of_seconds_is_a_plain_decimal_number(value: str, shown: str) -> None:
    """A number of seconds is spelled as Go's ``strconv.ParseFloat`` reads
    a decimal number: no ``_`` between digits (Python's ``float`` reads
    ``1_0`` as 10), no spaces around it, no digits of other scripts, no
    hexadecimal; every other spelling is told in the one wording, ``X is
    not a number of seconds`` (quoted where it is empty or holds a space)."""
    import click

    from podnuma.cli.options import Seconds

    with pytest.raises(click.BadParameter) as got:
        Seconds(min=0).convert(value, None, None)
    assert got.value.message == f"{shown} is not a number of seconds"


@pytest.mark.parametrize("value,seconds", [("10", 10.0), ("0.5", 0.5), (".5", 0.5), ("5.", 5.0), ("1e3", 1000.0),
                                           ("1E-1", 0.1), ("+2", 2.0), ("007", 7.0)])
def test_the_decimal_spellings_are_taken(value: str, seconds: float) -> None:
    """Every decimal spelling Go reads is taken, with its value."""
    from podnuma.cli.options import Seconds

    assert Seconds(min=0).convert(value, None, None) == seconds


def test_an_underscore_is_refused_on_the_command_line() -> None:
    """``serve --time-limit 1_0`` does not start a server with a 10 s limit."""
    _refused(_run(["serve", "-p", "0", "--time-limit", "1_0"], timeout=15), "--time-limit",
             "1_0 is not a number of seconds")
