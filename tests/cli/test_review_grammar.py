"""The command-line grammar's promises (docs/cli.md) where a review found
them broken: a full standard output outside the guard, standard input read
twice, -o on every command with output, --quiet never hiding a warning,
'-' as standard output, one-line messages, one wording of a step out of
range."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "examples" / "static-dual-socket.yaml"
EXAMPLES = ROOT / "examples"
FULL = ROOT / "tests" / "cgroups" / "full.yaml"
FULL_DEVICE = "error: standard output: cannot write: No space left on device\n"


def _podnuma() -> list[str]:
    exe = Path(sys.executable).parent / "podnuma"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]


def _invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, prog_name="podnuma")


# ------------------------------------------------------- 1. a full device


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["completion", "bash"], ["--help"], ["--version"], ["simulate", "--help"]],
                         ids=lambda a: "-".join(a))
def test_what_click_prints_on_a_full_device_is_one_line_exit_2(args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*_podnuma(), *args], stdout=full, stderr=subprocess.PIPE, timeout=120,
                              check=False, env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode() == FULL_DEVICE


# ------------------------------------------------ 2. standard input once


def test_agent_reads_standard_input_once(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()  # (--manifests must be there: checked as the options are read)
    r = _invoke("agent", "--manifests", str(tmp_path / "m"), "--state-dir", str(tmp_path / "s"),
                "--node", "-", "--kubelet-config", "-", stdin="x: 1\n")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == ("error: only one file argument can be '-' (standard input) "
                        "(see 'podnuma agent --help')\n")
    assert not (tmp_path / "s").exists()


# ------------------------------------------------------ 3. cgroups apply -o


def _apply(root: Path, *extra: str) -> Result:
    return _invoke("cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                   "--root", str(root), *extra)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_cgroups_apply_prints_a_document_of_what_it_wrote(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "d").mkdir()
    table = _apply(tmp_path / "t", "--dry-run")
    assert table.exit_code == 0, table.output
    r = _apply(tmp_path / "d", "--dry-run", "-o", fmt)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    assert doc["dryRun"] is True
    assert doc["root"] == str(tmp_path / "d")
    ops = doc["operations"]
    lines = table.stdout.splitlines()
    assert len(ops) == len(lines)
    assert doc["counts"]["written"] == sum(line.startswith("write ") for line in lines) > 0
    first_write = next(op for op in ops if op["action"] == "write")
    assert f"write {first_write['path']} {first_write['value']!r}" in lines


def test_cgroups_apply_json_of_a_real_apply_says_so(tmp_path: Path) -> None:
    r = _apply(tmp_path, "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["dryRun"] is False
    assert doc["counts"]["created"] > 0
    assert (tmp_path / "kubepods").is_dir()


# ------------------------------------------------------------ 6. --quiet


def test_quiet_cgroups_apply_still_prints_the_stale_warning(tmp_path: Path) -> None:
    assert _apply(tmp_path).exit_code == 0
    r = _invoke("-q", "cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                "--root", str(tmp_path), "--step", "0", "--keep-stale")
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("warning: 6 cgroups of pods no longer in the plan are left")
    assert "wrote" not in r.stderr


# ---------------------------------------------- 4. -o yaml, -o table names

WHATIF = ROOT / "examples" / "whatif"
ADVISE = [str(WHATIF / "trainer-pod.yaml"), "--node", str(WHATIF / "node.yaml"),
          "--kubelet-config", str(WHATIF / "kubelet-config.yaml")]


def test_topology_yaml_is_the_json_document() -> None:
    j = _invoke("topology", str(STATIC), "-o", "json")
    y = _invoke("topology", str(STATIC), "-o", "yaml")
    assert y.exit_code == 0, y.output
    assert yaml.safe_load(y.stdout) == json.loads(j.stdout)


def test_explain_table_is_the_view_for_people_and_text_its_alias() -> None:
    default = _invoke("explain", str(STATIC), "--no-search")
    table = _invoke("explain", str(STATIC), "--no-search", "-o", "table")
    text = _invoke("explain", str(STATIC), "--no-search", "-o", "text")
    assert table.exit_code == 0, table.output
    assert table.stdout == default.stdout == text.stdout
    assert table.stdout.startswith("node ")


def test_advise_yaml_is_the_report_and_pods_the_rewritten_pods() -> None:
    j = _invoke("advise", *ADVISE, "-o", "json")
    y = _invoke("advise", *ADVISE, "-o", "yaml")
    default = _invoke("advise", *ADVISE)
    pods = _invoke("advise", *ADVISE, "-o", "pods")
    assert y.exit_code == 0, y.output
    assert yaml.safe_load(y.stdout) == json.loads(j.stdout)
    assert pods.stdout == default.stdout
    assert "kind: Pod" in pods.stdout


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_advise_diff_goes_with_the_pods_only(fmt: str) -> None:
    r = _invoke("advise", *ADVISE, "--diff", "-o", fmt)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == (f"error: --diff goes with -o pods (the rewritten pods), not -o {fmt} "
                        "(see 'podnuma advise --help')\n")


# ------------------------------------------------- 5. fleet generate bounds


@pytest.mark.parametrize("nodes,per_node,says", [
    ("99999999999999999999", "1", "error: Invalid value for '--nodes': 99999999999999999999 is not in the range"),
    ("100000", "101", "error: --nodes 100000 x --pods-per-node 101 is 10,100,000 pods: at most 10,000,000"),
])
def test_fleet_generate_is_bounded_before_anything_is_written(
        tmp_path: Path, nodes: str, per_node: str, says: str) -> None:
    out = tmp_path / "fleet"
    r = _invoke("fleet", "generate", "--nodes", nodes, "--pods-per-node", per_node, "--output-dir", str(out))
    assert r.exit_code == 2
    assert r.stderr.startswith(says), r.stderr
    assert r.stderr.count("\n") == 1
    assert not out.exists()


def test_fleet_generate_help_names_the_bound() -> None:
    assert "10,000,000" in " ".join(_invoke("fleet", "generate", "--help").stdout.split())


# ------------------------------------------------------------ 6. --quiet (notes)


def test_fleet_generate_says_what_it_wrote_in_a_note_quiet_silences(tmp_path: Path) -> None:
    r = _invoke("fleet", "generate", "--nodes", "2", "--pods-per-node", "3", "--output-dir", str(tmp_path / "a"))
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("note: wrote 2 nodes, 6 pods")
    r = _invoke("-q", "fleet", "generate", "--nodes", "2", "--pods-per-node", "3", "--output-dir", str(tmp_path / "b"))
    assert r.exit_code == 0, r.output
    assert r.stderr == ""


def test_compare_skipped_is_a_note(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text((WHATIF / "trainer-pod.yaml").read_text() + "\n---\napiVersion: v1\nkind: ConfigMap\n")
    r = _invoke("compare", str(mixed))
    assert r.exit_code == 0, r.output
    assert f"note: {mixed}#1: not a Pod or a workload (kind ConfigMap), skipped\n" in r.stderr


# ------------------------------------------------ 7. '-' as standard output


def test_topology_output_file_dash_is_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plain = _invoke("topology", str(STATIC), "-o", "json")
    dash = _invoke("topology", str(STATIC), "-o", "json", "--output-file", "-")
    assert dash.exit_code == 0, dash.output
    assert dash.stdout == plain.stdout
    assert not (tmp_path / "-").exists()


def test_fleet_analyze_output_file_dash_is_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _invoke("fleet", "generate", "--nodes", "1", "--pods-per-node", "2", "--output-dir", "f").exit_code == 0
    plain = _invoke("fleet", "analyze", "f", "-o", "json")
    dash = _invoke("fleet", "analyze", "f", "-o", "json", "--output-file", "-")
    assert dash.exit_code == 0, dash.output
    assert dash.stdout == plain.stdout != ""
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("args", [
    ["simulate", str(STATIC), "--as-scenario", "-"],
    ["explain", str(STATIC), "--no-search", "--as-scenario", "-"],
    ["restart", str(STATIC), "--as-scenario", "-"],
    ["advise", *ADVISE, "--as-scenario", "-"],
    ["fleet", "analyze", str(STATIC), "--as-scenario", "-"],
], ids=lambda a: "-".join(a[:2]) if a[0] == "fleet" else a[0])
def test_as_scenario_dash_is_refused_in_one_line(
        args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = _invoke(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    if args[0] == "fleet":  # (a directory there: the one wording of every directory option)
        assert r.stderr.startswith("error: -: --as-scenario: '-' names no directory"), r.stderr
    else:
        assert r.stderr.startswith("error: Invalid value for '--as-scenario': '-' would be standard output"), r.stderr
    assert r.stderr.count("\n") == 1
    assert not (tmp_path / "-").exists()


# ----------------------------------------------- 8. one line, whatever the name


@pytest.mark.parametrize("content", [None, "x: [\n"], ids=["missing", "invalid"])
def test_a_file_name_with_a_newline_is_escaped_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    name = "a\nb.yaml"
    if content is not None:
        (tmp_path / name).write_text(content)
    clicked = _invoke("explain", name)
    assert clicked.exit_code == 2
    assert clicked.stderr.startswith("error: a\\nb.yaml: ")
    assert clicked.stderr.count("\n") == 1
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    fast = subprocess.run([*_podnuma(), "simulate", name], capture_output=True, timeout=120, check=False, env=env)
    assert fast.returncode == 2
    assert fast.stderr.decode().startswith("error: a\\nb.yaml: ")
    assert fast.stderr.count(b"\n") == 1
    slow = _invoke("simulate", name)
    assert slow.stderr == fast.stderr.decode()


# ------------------------------------------------ 9. one wording of --step


@pytest.mark.parametrize("step", ["99", "-1"])
def test_a_step_out_of_range_is_worded_once(step: str) -> None:
    want = f"error: {STATIC}: --step {step}: no such step (the scenario has steps 0-4)\n"
    for args in (["topology", str(STATIC), "--step", step],
                 ["cgroups", "plan", str(STATIC), "--step", step, "--driver", "systemd", "--cgroup-version", "2"],
                 ["explain", str(STATIC), "--step", step]):
        r = _invoke(*args)
        assert r.exit_code == 2
        assert r.stderr == want, args


def test_options_that_would_be_ignored_are_refused(tmp_path: Path) -> None:
    """An option that only works with another, given alone, is one line and
    exit 2 (it was silently ignored): ``state inspect --kubelet-config``
    without ``--as-scenario``, ``fleet analyze --context`` without
    ``--kubeconfig``, and standard input beside ``--kubeconfig``."""
    example = EXAMPLES / "static-dual-socket.yaml"
    ck = tmp_path / "ck"
    assert CliRunner().invoke(cli, ["simulate", str(example), "--checkpoint-dir", str(ck)]).exit_code == 0
    r = CliRunner().invoke(cli, ["state", "inspect", str(ck), "--kubelet-config", str(example)])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "error: --kubelet-config: is the configuration of --as-scenario: give --as-scenario too\n"
    r = CliRunner().invoke(cli, ["fleet", "analyze", str(EXAMPLES / "fleet"), "--context", "prod"])
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("error: --context goes with --kubeconfig (see '")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    r = CliRunner().invoke(cli, ["fleet", "analyze", "-", "--kubeconfig", str(kubeconfig)], input="")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("error: standard input ('-') does not go with --kubeconfig (see '")


def test_a_topology_picture_is_written_readable_by_all(tmp_path: Path) -> None:
    """As the reports are (0644): a picture is for sharing (it was 0600)."""
    out = tmp_path / "t.svg"
    r = CliRunner().invoke(cli, ["topology", str(EXAMPLES / "static-dual-socket.yaml"), "--output-file", str(out)])
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_topology_takes_table_as_the_view_for_people() -> None:
    """``-o table`` is the view for people in every command: for topology
    the terminal's picture, as ``-o text`` (still taken)."""
    table = CliRunner().invoke(cli, ["topology", str(STATIC), "-o", "table"])
    text = CliRunner().invoke(cli, ["topology", str(STATIC), "-o", "text"])
    plain = CliRunner().invoke(cli, ["topology", str(STATIC)])
    assert table.exit_code == 0 == text.exit_code == plain.exit_code, table.output
    assert table.stdout == text.stdout == plain.stdout
    assert "NUMA" in table.stdout


def test_a_shared_pool_size_is_ascii_digits() -> None:
    """``--shared-pool-cpus ²`` (a digit to ``str.isdigit``, not to
    ``int``) was a traceback; ``sharedPoolCpus: "²"`` of the web API an
    internal error: both refused as any other bad size."""
    from click.testing import CliRunner

    from podnuma.cli import cli
    from podnuma.errors import InputError
    from podnuma.service.whatif import parse_shared_pool

    pod = str(Path(__file__).resolve().parents[2] / "examples" / "whatif" / "trainer-pod.yaml")
    for value in ("²", "٣"):
        got = CliRunner().invoke(cli, ["advise", pod, "--shared-pool-cpus", value])
        assert got.exit_code == 2 and got.stdout == ""
        assert f"Invalid value for '--shared-pool-cpus': {value!r}" in got.stderr
        with pytest.raises(InputError) as e:
            parse_shared_pool(value)
        assert e.value.path == "sharedPoolCpus"
    assert parse_shared_pool(" 3 ") == 3
