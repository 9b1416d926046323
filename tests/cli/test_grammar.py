"""The one command-line grammar: -o is the format everywhere (json in every
command), '-' is standard input, nothing is printed before the inputs
validate, a closed pipe ends quietly, --version/--quiet/completion, colour
only when wanted, and tables that wrap at the right places."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from podnuma.cli import cli
from podnuma.render.wrap import cpu_list, name

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "podnuma" / "scenario" / "demo" / "demo.yaml"
EXAMPLES = ROOT / "examples"
TRAINER = EXAMPLES / "whatif" / "trainer-pod.yaml"
RESTRICTED = EXAMPLES / "topology" / "restricted.yaml"


def _invoke(args: list[str], stdin: str | None = None, **env: str) -> object:
    return CliRunner().invoke(cli, args, input=stdin, env=env or None)


# ------------------------------------------------------------------ -o json


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", str(DEMO)],
        ["demo"],
        ["explain", str(DEMO), "--step", "4"],
        ["topology", str(DEMO)],
        ["compare", str(TRAINER)],
        ["advise", str(TRAINER)],
        ["restart", str(DEMO)],
    ],
    ids=lambda a: a[0],
)
def test_every_command_writes_json(args: list[str]) -> None:
    r = CliRunner().invoke(cli, [*args, "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert isinstance(doc, dict) and doc


@pytest.mark.parametrize(
    "args",
    [["simulate", str(DEMO)], ["explain", str(DEMO), "--step", "4"], ["compare", str(TRAINER)]],
    ids=lambda a: a[0],
)
def test_yaml_is_the_same_document_as_json(args: list[str]) -> None:
    as_json = json.loads(CliRunner().invoke(cli, [*args, "-o", "json"]).stdout)
    as_yaml = yaml.safe_load(CliRunner().invoke(cli, [*args, "-o", "yaml"]).stdout)
    assert as_yaml == as_json


def test_topology_output_file_is_a_named_option(tmp_path: Path) -> None:
    out = tmp_path / "pic.svg"
    r = CliRunner().invoke(cli, ["topology", str(DEMO), "--output-file", str(out)])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "<svg" in out.read_text()
    r = CliRunner().invoke(cli, ["topology", str(DEMO), "-o", str(out)])
    assert r.exit_code == 2  # -o is a format, not a file
    assert "'--output'" in r.stderr


# ------------------------------------------------------------------ stdin


@pytest.mark.parametrize(
    ("args", "stdin_file"),
    [
        (["simulate", "-", "-o", "json"], DEMO),
        (["explain", "-", "--step", "4", "-o", "json"], DEMO),
        (["topology", "-", "-o", "json"], DEMO),
        (["compare", "-", "-o", "json"], TRAINER),
        (["advise", "-", "-o", "json"], TRAINER),
    ],
    ids=lambda a: a[0] if isinstance(a, list) else "",
)
def test_dash_reads_standard_input(args: list[str], stdin_file: Path) -> None:
    from_file = CliRunner().invoke(cli, [args[0], str(stdin_file), *args[2:]])
    from_stdin = CliRunner().invoke(cli, args, input=stdin_file.read_text())
    assert from_stdin.exit_code == 0, from_stdin.output
    strip = re.compile(re.escape(str(stdin_file)) + "|<stdin>|demo\\.yaml")
    assert strip.sub("X", from_stdin.stdout) == strip.sub("X", from_file.stdout)


def test_kubectl_list_on_stdin_to_advise() -> None:
    pod = yaml.safe_load(TRAINER.read_text())
    pod["status"] = {"phase": "Running"}
    listing = {"apiVersion": "v1", "kind": "List", "items": [pod]}
    r = CliRunner().invoke(cli, ["advise", "-", "-o", "json"], input=json.dumps(listing))
    assert r.exit_code == 0, r.output
    (advice,) = json.loads(r.stdout)["pods"]
    assert advice["source"].startswith("<stdin>")


def test_errors_name_stdin() -> None:
    r = CliRunner().invoke(cli, ["simulate", "-"], input="steps: [")
    assert r.exit_code == 2
    assert r.stderr.startswith("error: <stdin>: invalid YAML")
    assert r.stdout == ""


def test_node_from_stdin() -> None:
    node = "synthetic:\n  sockets: 1\n  numaNodesPerSocket: 1\n  coresPerNumaNode: 16\n  threadsPerCore: 2\n  memoryPerNumaNode: 64Gi\n"
    r = CliRunner().invoke(cli, ["compare", str(TRAINER), "--node", "-", "-o", "json"], input=node)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["node"]["cpus"] == "0-31"


def test_stdin_only_once() -> None:
    r = CliRunner().invoke(cli, ["compare", "-", "--node", "-"], input="")
    assert r.exit_code == 2
    assert "only one file argument can be '-'" in r.stderr


# ------------------------------------------------------------------ nothing before validation


@pytest.mark.parametrize("command", ["simulate", "explain", "topology"])
def test_nothing_on_stdout_for_bad_input(command: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEMO.read_text().replace("cpu: \"2\"", "cpu: \"two\"", 1))
    r = CliRunner().invoke(cli, [command, str(bad)])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith(f"error: {bad}: ")


# ------------------------------------------------------------------ real processes


def _podnuma() -> list[str]:
    exe = Path(sys.executable).parent / "podnuma"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]


@pytest.mark.parametrize(
    "args",
    [["demo"], ["demo", "-o", "json"], ["explain", str(DEMO)], ["topology", str(DEMO), "-o", "svg"]],
    ids=lambda a: "-".join(a[:1] + a[-1:]),
)
def test_closed_pipe_exits_0(args: list[str]) -> None:
    proc = subprocess.Popen([*_podnuma(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(20)
    proc.stdout.close()  # the reader goes away (podnuma demo | head -c 20)
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert b"Traceback" not in err and b"error" not in err


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["simulate", "--help"], ["completion", "bash"]],
                         ids=lambda a: "-".join(a))
def test_closed_pipe_under_what_click_prints_exits_0(args: list[str]) -> None:
    """The help, the version and the completion script (printed by click
    itself) into a pipe whose reader is already gone: exit 0, nothing on
    standard error."""
    r, w = os.pipe()
    os.close(r)  # the reader has gone before the first write
    try:
        proc = subprocess.run([*_podnuma(), *args], stdout=w, stderr=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""


def test_version_quiet_and_completion(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("podnuma, version ")
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(TRAINER.read_text() + "\n---\napiVersion: v1\nkind: ConfigMap\n")
    r = CliRunner().invoke(cli, ["compare", str(mixed)])
    assert "not a Pod or a workload (kind ConfigMap), skipped" in r.stderr
    r = CliRunner().invoke(cli, ["--quiet", "compare", str(mixed)])
    assert r.exit_code == 0 and r.stderr == ""
    for shell, marker in (("bash", "_PODNUMA_COMPLETE"), ("zsh", "compdef"), ("fish", "complete")):
        r = CliRunner().invoke(cli, ["completion", shell])
        assert r.exit_code == 0
        assert marker in r.stdout


def test_completion_completes_commands() -> None:
    env = {**os.environ, "_PODNUMA_COMPLETE": "bash_complete", "COMP_WORDS": "podnuma ex",
           "COMP_CWORD": "1"}
    out = subprocess.run(_podnuma(), env=env, capture_output=True, text=True, timeout=60)
    assert "explain" in out.stdout


# ------------------------------------------------------------------ colour


def test_colour_only_when_wanted() -> None:
    plain = CliRunner().invoke(cli, ["simulate", str(RESTRICTED)])
    assert "\x1b[" not in plain.stdout
    forced = CliRunner().invoke(cli, ["simulate", str(RESTRICTED)], env={"FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    both = CliRunner().invoke(cli, ["simulate", str(RESTRICTED)], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in both.stdout
    topo = CliRunner().invoke(cli, ["topology", str(DEMO)], env={"FORCE_COLOR": "1"})
    assert "\x1b[" in topo.stdout
    topo = CliRunner().invoke(cli, ["topology", str(DEMO)], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in topo.stdout


_ESC = re.compile(r"\x1b\[[0-9;]*m")


def test_plain_text_views_colour_only_when_wanted_and_keep_their_text(tmp_path: Path) -> None:
    """``restart``, ``state inspect`` and ``cgroups plan`` print plain text
    laid out in columns: with ``FORCE_COLOR`` (as on a terminal) the same
    characters with styles on them (the outcomes, the headers, the
    inconsistencies), none with ``NO_COLOR`` or into a pipe."""
    example = EXAMPLES / "static-dual-socket.yaml"
    ck = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["simulate", str(example), "--checkpoint-dir", str(ck)]).exit_code == 0
    views = {
        "restart": (["restart", str(example)], "\x1b[32m✓ kept\x1b[0m"),
        "wide": (["restart", str(example), "-o", "wide"], "\x1b[32m✓ kept\x1b[0m"),
        "state": (["state", "inspect", str(ck)], "\x1b[32mno inconsistencies\x1b[0m"),
        "plan": (["cgroups", "plan", str(example), "--driver", "systemd", "--cgroup-version", "2"],
                 "\x1b[2m   [node allocatable; kubelet]\x1b[0m"),
    }
    for view, (args, marker) in views.items():
        plain = CliRunner().invoke(cli, args)
        assert plain.exit_code == 0, (view, plain.output)
        assert "\x1b[" not in plain.stdout, view
        forced = CliRunner().invoke(cli, args, env={"FORCE_COLOR": "1"})
        assert marker in forced.stdout, (view, forced.stdout)
        assert "\x1b[1m" in forced.stdout, view  # (a header or title in bold)
        assert _ESC.sub("", forced.stdout) == plain.stdout, view
        both = CliRunner().invoke(cli, args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
        assert both.stdout == plain.stdout, view
    # an inconsistent state: its count in bold red, each one in yellow
    from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
    from podnuma.machine.cpuset import CPUSet

    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    (bad_dir / "cpu_manager_state").write_bytes(encode_cpu_checkpoint(
        CPUCheckpointData("static", CPUSet.parse("0-8"), {"uid-a": {"app": CPUSet.parse("3,9")}})))
    bad = CliRunner().invoke(cli, ["state", "inspect", str(bad_dir)], env={"FORCE_COLOR": "1"})
    assert "\x1b[1;31m1 inconsistency:\x1b[0m" in bad.stdout, bad.stdout
    assert "\x1b[33m  [cpu-in-default-set] CPUs 3 of container 'app' of pod uid-a" in bad.stdout, bad.stdout


# ------------------------------------------------------------------ tables


@pytest.mark.parametrize("width", range(7, 40, 3))
def test_cpu_lists_wrap_only_after_commas(width: int) -> None:
    text = "0-7,16-23,24-31,40,42,44-47,100-127"
    console = Console(width=width + 4, color_system=None)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(max_width=width)
    table.add_row(cpu_list(text))
    with console.capture() as cap:
        console.print(table)
    lines = [line.strip() for line in cap.get().splitlines() if line.strip()]
    assert "".join(lines) == text
    for line in lines[:-1]:
        assert line.endswith(","), lines


def test_names_wrap_at_word_boundaries() -> None:
    console = Console(width=14, color_system=None)
    with console.capture() as cap:
        console.print(name("kube-system/metrics-exporter-abc"))
    lines = cap.get().splitlines()
    assert lines == ["kube-system/", "metrics-", "exporter-abc"]


def test_narrow_table_names_the_columns_it_leaves_out() -> None:
    r = CliRunner().invoke(cli, ["simulate", str(RESTRICTED)], env={"COLUMNS": "72"})
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 72
    header = next(line for line in lines if line.split()[:2] == ["#", "pod"]).split()
    note = " ".join(line for line in lines if "left out" in line or "-o wide" in line)
    left_out = [c for c in ("isolation", "mems", "memory", "hint") if c not in header]
    assert left_out, header
    for column in left_out:
        assert column in note
    wide = CliRunner().invoke(cli, ["simulate", str(RESTRICTED), "-o", "wide"], env={"COLUMNS": "72"})
    header = next(line for line in wide.stdout.splitlines() if line.split()[:2] == ["#", "pod"])
    assert header.split() == ["#", "pod", "admission", "container", "CPUs", "isolation", "mems",
                              "memory", "hint"]
    assert "left out" not in wide.stdout


def test_columns_sets_the_plain_width() -> None:
    r = CliRunner().invoke(cli, ["simulate", str(RESTRICTED)], env={"COLUMNS": "200"})
    header = next(line for line in r.stdout.splitlines() if line.split()[:2] == ["#", "pod"])
    assert "hint" in header
    assert max(len(line) for line in r.stdout.splitlines()) > 120


@pytest.mark.parametrize(("args", "start", "path"), [
    (["demo", "-o"], "error: Option '-o' requires an argument.", "podnuma demo"),
    (["simulate", str(DEMO), "-o"], "error: Option '-o' requires an argument.", "podnuma simulate"),
    (["fleet", "analyze", str(EXAMPLES / "fleet"), "--dask"], "error: Option '--dask' requires an argument.",
     "podnuma fleet analyze"),
    (["cgroups", "plan", str(DEMO)], "error: Missing option '--driver'. Choose from: systemd, cgroupfs",
     "podnuma cgroups plan"),
    (["completion"], "error: Missing argument '{bash|zsh|fish}'. Choose from: bash, zsh, fish",
     "podnuma completion"),
    (["-q", "demo", "--bogus"], "error: No such option '--bogus'.", "podnuma demo"),
    (["no-such-command"], "error: No such command 'no-such-command'.", "podnuma"),
], ids=lambda v: "-".join(v[:2]) if isinstance(v, list) else None)
def test_usage_errors_are_one_line_with_the_help_to_see(args: list[str], start: str, path: str) -> None:
    """A missing option value (raised by click's parser without its
    context) and a missing choice (whose values click lists on lines of
    their own) are one line like every usage error, naming the command's
    help."""
    r = CliRunner().invoke(cli, args, prog_name="podnuma")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith(start), r.stderr
    assert r.stderr.endswith(f" (see '{path} --help')\n"), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["demo"], ["demo", "-o", "json"], ["simulate", str(DEMO), "-o", "yaml"],
                                  ["topology", str(DEMO), "-o", "svg"]], ids=lambda a: "-".join(a[:1] + a[-1:]))
def test_an_output_that_cannot_be_written_is_one_line_not_a_bug(args: list[str]) -> None:
    """Standard output on a full device: one line saying so, exit 2; not
    an internal error (exit 1 says a bug)."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*_podnuma(), *args], stdout=full, stderr=subprocess.PIPE, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == b"error: standard output: cannot write: No space left on device\n"
