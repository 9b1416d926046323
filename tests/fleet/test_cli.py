from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .conftest import EXAMPLE, need


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_analyze_table_names_the_findings() -> None:
    code, out, err = _run("fleet", "analyze", str(EXAMPLE), "--what-if", "pod-level,scope=pod")
    assert code == 0
    assert "CPUs pinned only to sidecars" in out and "pod-level,scope=pod" in out
    assert "ip-10-20-1-17.eu-west-1.compute.internal" in out  # node names are not cut
    # Per-node problems on stderr too, and the run went on.
    assert "no topology data" in err and "which is running" in err and "not in the nodes dump" in err


def test_analyze_json_is_the_report_document() -> None:
    code, out, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "pod-level")
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "FleetReport" and doc["whatIfs"] == ["pod-level"]
    assert doc["summary"]["as running"]["sidecarOnlyCpus"] == 11
    assert doc["summary"]["pod-level"]["change"]["sidecarOnlyCpus"] == -11
    assert doc["fleet"]["nodeStatus"] == {"ok": 3, "warning": 1, "error": 1}


def test_analyze_yaml_is_the_same_report_document() -> None:
    """``-o yaml``, as every command that prints a document has it: the
    document of ``-o json``, in YAML."""
    import yaml

    code, out, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "yaml", "--what-if", "pod-level")
    assert code == 0
    assert out.startswith("apiVersion: podnuma.io/v1\nkind: FleetReport\n")
    code, js, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "pod-level")
    assert code == 0
    assert yaml.safe_load(out) == json.loads(js)


def test_html_report_is_self_contained(tmp_path: Path) -> None:
    need("plotly")
    out = tmp_path / "report.html"
    code, stdout, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "html", "--output-file", str(out),
                           "--what-if", "pod-level")
    assert code == 0 and stdout == ""
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script src" not in html and "<link" not in html  # nothing fetched
    assert "Plotly.newPlot" in html and "class=sortable" in html
    assert html.count("<svg") >= 4  # a topology picture per replayed node
    assert "id='node-ip-10-20-1-17_eu-west-1_compute_internal'" in html


def test_generate_then_analyze(tmp_path: Path) -> None:
    d = tmp_path / "gen"
    code, _, err = _run("fleet", "generate", "--nodes", "6", "--pods-per-node", "12", "--seed", "4",
                        "--output-dir", str(d))
    assert code == 0 and "wrote 6 nodes, 72 pods" in err
    assert (d / "nodes.json").exists() and (d / "fleet.yaml").exists()
    code, out, _ = _run("fleet", "analyze", str(d), "-o", "json")
    assert code == 0 and json.loads(out)["fleet"]["podsReplayed"] == 72
    # Same seed, same fleet.
    d2 = tmp_path / "gen2"
    assert _run("fleet", "generate", "--nodes", "6", "--pods-per-node", "12", "--seed", "4",
                "--output-dir", str(d2))[0] == 0
    assert (d / "pods" / "pods-0000.json").read_text() == (d2 / "pods" / "pods-0000.json").read_text()
    code, _, err = _run("fleet", "generate", "--nodes", "1", "--pods-per-node", "1", "--output-dir", str(d))
    assert code == 2 and "not empty" in err
    # a directory that cannot be made (under a file): one line, exit 2, not an internal error
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, err = _run("fleet", "generate", "--nodes", "1", "--pods-per-node", "1",
                          "--output-dir", str(blocker / "sub"))
    assert code == 2 and out == ""
    assert err == (f"error: {blocker / 'sub'}: --output-dir: cannot reach it: Not a directory (a file on "
                   "the way, where a directory should be)\n"), err


def test_bad_arguments_exit_2_with_one_line() -> None:
    code, out, err = _run("fleet", "analyze", str(EXAMPLE), "--what-if", "scope=pods")
    assert code == 2 and out == "" and err.startswith("error: --what-if: scope=pods")
    code, out, err = _run("fleet", "analyze", "no-such-dir")
    assert code == 2 and err == "error: no-such-dir: INPUT: no such file or directory\n"
    code, _, err = _run("fleet", "analyze", str(EXAMPLE), "--dask", "udp")
    assert code == 2 and "--dask udp" in err
    code, _, err = _run("fleet", "analyze", str(EXAMPLE), "--dask", "local", "--workers", "2")
    assert code == 2


def test_stdin_dump(tmp_path: Path) -> None:
    nodes = (EXAMPLE / "nodes.json").read_text()
    r = CliRunner().invoke(cli, ["fleet", "analyze", "-", str(EXAMPLE / "pods.json"),
                                 str(EXAMPLE / "fleet.yaml"), "-o", "json"], input=nodes)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["fleet"]["nodes"] == 5


def test_stdin_closed_or_too_large_is_one_line_exit_2(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input closed when the command starts (``<&-``), or larger
    than the fleet's byte limit: one line naming it, exit 2 (it was read
    whole, without a limit, and a closed one was an internal error)."""
    import os
    import subprocess
    import sys

    from podnuma.inputs import limits

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.run(["sh", "-c", '"$0" -m podnuma.cli fleet analyze - <&-', sys.executable],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2
    assert proc.stderr == "error: <stdin>: cannot read input from standard input: it is closed\n"
    monkeypatch.setattr(limits, "FLEET_LIMITS", limits.ReadLimits(max_bytes=1000, max_nodes=10_000))
    nodes = (EXAMPLE / "nodes.json").read_text()
    assert len(nodes) > 1000
    r = CliRunner().invoke(cli, ["fleet", "analyze", "-", str(EXAMPLE / "pods.json"), "-o", "json"],
                           input=nodes)
    assert r.exit_code == 2 and r.stdout == ""
    assert "error: <stdin>: input is larger than the limit of 1000 bytes" in r.stderr


def test_dask_scheduler_address_gives_the_same_report(dask_client: object) -> None:
    address = dask_client.scheduler.address  # type: ignore[attr-defined]
    assert address.startswith("tcp://127.0.0.1:")
    code, out, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "scope=pod",
                        "--dask", address)
    assert code == 0
    code2, out2, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "scope=pod")
    assert code2 == 0 and out == out2


def test_a_dump_of_only_unreadable_files_exits_2_naming_the_file(tmp_path: Path) -> None:
    """No node to report on, and a file that could not be read: that
    file's error is the answer (exit 2), not an empty report."""
    bad = tmp_path / "nodes.json"
    bad.write_text('{"kind": "NodeList", "items": [')
    code, out, err = _run("fleet", "analyze", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {bad}: ") and len(err.strip().splitlines()) == 1
    # one readable node beside it: the report, the bad file among its issues
    (tmp_path / "more.json").write_text((EXAMPLE / "nodes.json").read_text())
    code, out, err = _run("fleet", "analyze", str(tmp_path))
    assert code == 0 and str(bad) in err


@pytest.mark.parametrize("executor", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_stdin_fleetconfig_references_resolve_in_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, executor: list[str]) -> None:
    """A FleetConfig read from standard input names its files relative to
    the working directory (as a scenario read from standard input does),
    not to the temporary copy the command reads it from: the report is the
    one the same FleetConfig gives as a file there."""
    import yaml

    doc = yaml.safe_load((EXAMPLE / "fleet.yaml").read_text())
    general = doc["nodeGroups"][0]
    (tmp_path / "kubelet.yaml").write_text(yaml.safe_dump(
        {**general.pop("kubeletConfig"), "cpuManagerPolicy": "static", "reservedSystemCPUs": "0-1"}))
    general["kubeletConfigFile"] = "kubelet.yaml"
    text = yaml.safe_dump(doc)
    (tmp_path / "fleet.yaml").write_text(text)
    dumps = [str(EXAMPLE / n) for n in ("nodes.json", "pods.json", "noderesourcetopologies.json", "configz")]
    monkeypatch.chdir(tmp_path)
    piped = CliRunner().invoke(cli, ["fleet", "analyze", "-", *dumps, "-o", "json", *executor], input=text)
    assert piped.exit_code == 0, piped.stderr
    named = CliRunner().invoke(cli, ["fleet", "analyze", str(tmp_path / "fleet.yaml"), *dumps, "-o", "json",
                                     *executor])
    assert named.exit_code == 0, named.stderr
    assert json.loads(piped.stdout.replace("<stdin>", str(tmp_path / "fleet.yaml"))) == json.loads(named.stdout)
    assert str(tmp_path / "kubelet.yaml") in piped.stdout  # (the group's configuration, from there)


def test_the_table_takes_columns_from_the_environment() -> None:
    """A table into a pipe is as wide as COLUMNS says, as every command's
    (the node table drops baseline columns to fit); without it, wide."""
    import subprocess
    import sys

    widths = {}
    for columns in ("80", "300", None):
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONPATH")}
        if columns is not None:
            env["COLUMNS"] = columns
        run = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(EXAMPLE)],
                             capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
        widths[columns] = max(len(line) for line in run.stdout.splitlines())
    assert widths["80"] <= 80 < widths[None] <= 220
    assert widths["300"] >= widths[None]


def test_the_output_file_s_suffix_names_the_format(tmp_path: Path) -> None:
    """As topology's: ``--output-file r.html`` writes the HTML report (it
    wrote the table), ``.json``/``.yaml``/``.yml``/``.txt`` theirs; a
    suffix that names another format than ``-o``, or no format, is a usage
    error before anything is read (exit 2, nothing written)."""
    import subprocess
    import sys

    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    for name, starts in (("r.html", "<!DOCTYPE html>"), ("r.json", "{"), ("r.YML", "apiVersion:"),
                         ("r.txt", "5 nodes")):
        got = run("--output-file", name)
        assert got.returncode == 0 and got.stdout == "", got.stderr
        assert (tmp_path / name).read_text().startswith(starts), name
    got = run("--output-file", "s.json", "-o", "yaml")
    assert got.returncode == 2 and got.stderr.endswith(
        "error: Invalid value for '--output-file': the suffix '.json' is for json, not -o yaml "
        "(see 'podnuma fleet analyze --help')\n")
    got = run("--output-file", "s.pdf")
    assert got.returncode == 2 and "unknown suffix '.pdf'" in got.stderr
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "s.pdf").exists()
