"""``podnuma fleet analyze`` keeps the command line's rules, through both
of its doors (the console script, which tries the fast path first, and
click alone): a scenario directory that cannot be written is refused before
any output; standard input is named as the other commands name it, and
read once; colours follow ``NO_COLOR`` and ``FORCE_COLOR`` as ``simulate``'s
table does; errors are printed with ``--quiet``.

Each case runs the command in a fresh interpreter, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from podnuma.inputs.documents import STDIN_NAME
from tests.terminal import run_on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet"
#: a node of the example fleet (its scenario is NODE.yaml)
NODE = "ip-10-20-1-17.eu-west-1.compute.internal"

#: the two doors: the console script's (``python -m podnuma.cli``: the fast
#: path, then click) and click's alone
ENTRIES = {
    "console": ["-m", "podnuma.cli"],
    "click": ["-c", "import sys; from podnuma.cli.app import main; sys.exit(main(sys.argv[1:]))"],
}
BAD_YAML = "foo: [1, 2\n"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="120")
    for name in ("NO_COLOR", "FORCE_COLOR", "_PODNUMA_COMPLETE", "PODNUMA_DEBUG"):
        env.pop(name, None)
    env.update(extra)
    return env


def run(entry: str, *args: str, stdin: bytes = b"", cwd: Path = ROOT,
        **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, *ENTRIES[entry], *args], input=stdin,
                          capture_output=True, timeout=300, cwd=cwd, env=_env(**env))


@pytest.fixture(params=sorted(ENTRIES))
def entry(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def one_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The one line of a refused command (nothing on standard output, exit 2)."""
    err = proc.stderr.decode()
    assert (proc.returncode, proc.stdout) == (2, b""), err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.rstrip("\n")


# --- --as-scenario: the directory's problem before any output ------------------


def _parent_is_a_file(tmp: Path) -> tuple[Path, str, str]:
    (tmp / "file").write_text("x", encoding="utf-8")
    target = tmp / "file" / "scenarios"
    return target, str(target), ("--as-scenario: cannot reach it: Not a directory (a file on the way, "
                                 "where a directory should be)")


def _a_directory_for_a_scenario_file(tmp: Path) -> tuple[Path, str, str]:
    # (what an earlier run left: a directory not empty is refused first)
    target = tmp / "scenarios"
    (target / f"{NODE}.yaml").mkdir(parents=True)
    return target, str(target), "--as-scenario: not empty"


def _under_proc(tmp: Path) -> tuple[Path, str, str]:
    if not Path("/proc/self").exists():
        pytest.skip("no /proc")
    return Path("/proc/xdir"), "/proc/xdir", "--as-scenario: cannot create: "


def _proc_itself(tmp: Path) -> tuple[Path, str, str]:
    # a directory there already, not empty
    if not Path("/proc/self").exists():
        pytest.skip("no /proc")
    return Path("/proc"), "/proc", "--as-scenario: not empty"


# (a directory where nothing can be made or written, even by root: /proc)
@pytest.mark.parametrize("case", [_parent_is_a_file, _a_directory_for_a_scenario_file,
                                  _under_proc, _proc_itself],
                         ids=lambda c: c.__name__.strip("_"))
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_scenario_directory_that_cannot_be_written_is_refused_before_any_output(
    tmp_path: Path, entry: str, case: object, fmt: str,
) -> None:
    assert callable(case)
    directory, named, words = case(tmp_path)
    proc = run(entry, "fleet", "analyze", str(FLEET), "-o", fmt, "--as-scenario", str(directory))
    line = one_error(proc)
    assert line.startswith(f"error: {named}: {words}"), line


def test_scenarios_written_after_the_report(tmp_path: Path, entry: str) -> None:
    # the other side: a directory made (with its parents) and written into;
    # the report on standard output, the count of files on standard error
    target = tmp_path / "a" / "b"
    proc = run(entry, "fleet", "analyze", str(FLEET), "-o", "json", "--as-scenario", str(target))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "FleetReport"
    written = sorted(p.name for p in target.iterdir())
    assert f"{NODE}.yaml" in written and not [n for n in written if n.startswith(".")]
    assert f"note: wrote {len(written)} scenario(s) to {target}\n" in proc.stderr.decode()


# --- standard input: its name, read once ---------------------------------------


def test_bad_standard_input_is_named_as_the_other_commands_name_it(tmp_path: Path, entry: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_YAML, encoding="utf-8")
    from_file = one_error(run(entry, "fleet", "analyze", str(bad)))
    from_stdin = one_error(run(entry, "fleet", "analyze", "-", stdin=BAD_YAML.encode()))
    assert from_stdin.startswith(f"error: {STDIN_NAME}: invalid YAML"), from_stdin
    assert from_stdin == from_file.replace(str(bad), STDIN_NAME)


@pytest.mark.parametrize("given", ["fleet.yaml", "pods.json"])
def test_the_report_from_standard_input_names_it(entry: str, given: str) -> None:
    """The report (and its issues on standard error) from ``-`` is the
    report from the file, but for the file's name: standard input's, not
    its temporary copy's. The FleetConfig's name is in the nodes'
    configuration and topology sources; the pods dump's in an issue."""
    inputs = ["nodes.json", "pods.json", "configz", "noderesourcetopologies.json", "fleet.yaml"]
    named = run(entry, "fleet", "analyze", *inputs, "-o", "json", cwd=FLEET)
    piped = run(entry, "fleet", "analyze", *["-" if i == given else i for i in inputs], "-o", "json",
                stdin=(FLEET / given).read_bytes(), cwd=FLEET)
    assert named.returncode == piped.returncode == 0, piped.stderr
    assert given.encode() in named.stdout  # (the case names the file somewhere)
    assert piped.stdout == named.stdout.replace(given.encode(), STDIN_NAME.encode())
    assert piped.stderr == named.stderr.replace(given.encode(), STDIN_NAME.encode())
    assert b"podnuma-fleet-" not in piped.stdout + piped.stderr


def test_standard_input_given_twice_is_refused(entry: str) -> None:
    # refused as the other commands refuse it (compare's line, but for the
    # command's name), before standard input is read
    proc = run(entry, "fleet", "analyze", "-", "-", stdin=(FLEET / "nodes.json").read_bytes())
    line = one_error(proc)
    assert line == ("error: only one file argument can be '-' (standard input) "
                    "(see 'podnuma fleet analyze --help')")
    other = one_error(run(entry, "compare", "-", "--node", "-", stdin=b"x"))
    assert line == other.replace("podnuma compare", "podnuma fleet analyze")


# --- colours ---------------------------------------------------------------------


def test_force_color_colours_the_table_into_a_pipe(entry: str) -> None:
    plain = run(entry, "fleet", "analyze", str(FLEET))
    forced = run(entry, "fleet", "analyze", str(FLEET), FORCE_COLOR="1")
    assert plain.returncode == forced.returncode == 0
    assert b"\x1b[" not in plain.stdout and b"\x1b[" in forced.stdout
    assert b"pods replayed" in forced.stdout
    # the same text as without colours (but for trailing spaces)
    import re

    text = re.sub(rb"\x1b\[[;?0-9]*[a-zA-Z]", b"", forced.stdout)
    assert [line.rstrip() for line in text.splitlines()] == plain.stdout.splitlines()


def on_a_terminal(entry: str, *args: str, **env: str) -> tuple[int, bytes]:
    """``podnuma ARGS`` with standard output a terminal (standard error
    ``/dev/null``): its exit code and what the terminal showed."""
    return run_on_a_terminal([sys.executable, *ENTRIES[entry], *args], stream="stdout",
                             env=_env(TERM="xterm", **env), cwd=ROOT)


def test_no_color_on_a_terminal_has_no_escapes(entry: str) -> None:
    code, coloured = on_a_terminal(entry, "fleet", "analyze", str(FLEET))
    assert code == 0 and b"\x1b[" in coloured and b"pods replayed" in coloured
    code, plain = on_a_terminal(entry, "fleet", "analyze", str(FLEET), NO_COLOR="1")
    assert code == 0 and b"pods replayed" in plain
    assert b"\x1b" not in plain, plain[:300]


# --- --quiet: errors still printed ------------------------------------------------


def test_quiet_still_prints_errors(tmp_path: Path, entry: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_YAML, encoding="utf-8")
    args = ["fleet", "analyze", str(bad), str(FLEET / "nodes.json"), "-o", "json"]
    loud = run(entry, *args)
    quiet = run(entry, "--quiet", *args)
    assert loud.returncode == quiet.returncode == 0
    assert loud.stdout == quiet.stdout and json.loads(quiet.stdout)["kind"] == "FleetReport"
    loud_lines = loud.stderr.decode().splitlines()
    quiet_lines = quiet.stderr.decode().splitlines()
    assert any(line.startswith("warning: ") for line in loud_lines)  # (what quiet leaves out)
    assert f"error: {bad}: invalid YAML" in quiet.stderr.decode()
    # the errors, in the same order, and nothing else
    assert quiet_lines == [line for line in loud_lines if line.startswith("error: ")]
