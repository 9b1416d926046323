"""The command line's fast path: ``simulate FILE [-o json|yaml|table|wide]``
and ``fleet analyze`` without click.

Each case runs one command line twice in fresh interpreters: through
``podnuma.cli.main`` as the console script runs it (the fast path first, in
a process of its own) and through
``podnuma.cli.app.main`` (click alone), and requires the same standard
output, standard error and exit code, byte for byte; and that the fast
path took the command lines it reads (click and the other commands' modules
never loaded) and left every other one to click.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.cli.fast import _parse
from podnuma.fleet.generate import generate_fleet

from ..scenario.helpers import base

ROOT = Path(__file__).resolve().parents[2]

#: runs ``podnuma ARGS`` through ``sys.argv[1]`` (``podnuma.cli`` or
#: ``podnuma.cli.app``) and prints on standard error, last, whether click
#: and each command module were loaded
PROBE = """
import importlib, json, sys
main = importlib.import_module(sys.argv[1]).main
# the console script's process (podnuma.cli.run): a process of its own
own = {"own_process": True} if sys.argv[1] == "podnuma.cli" else {}
try:
    code = main(sys.argv[2:], **own)
finally:
    sys.stdout.flush()
    loaded = sorted(m for m in sys.modules if m == "click" or m.startswith("click.")
                    or m.startswith("podnuma.cli."))
    sys.stderr.write("\\nPROBE " + json.dumps(loaded) + "\\n")
sys.exit(code)
"""


def run(entry: str, args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[bytes, bytes, int, list[str]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("_PODNUMA_COMPLETE", None)
    proc = subprocess.run([sys.executable, "-c", PROBE, entry, *args], input=stdin,
                          capture_output=True, timeout=180, cwd=cwd, env=env)
    err, _, probe = proc.stderr.rpartition(b"\nPROBE ")
    modules: list[str] = json.loads(probe)
    return proc.stdout, err, proc.returncode, modules


def both(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[list[str], list[str], bytes, bytes, int]:
    """Run ``args`` both ways; assert the same bytes and code; return the
    modules each way loaded, and the output, errors and code."""
    fast_out, fast_err, fast_code, fast_mods = run("podnuma.cli", args, cwd, stdin)
    click_out, click_err, click_code, click_mods = run("podnuma.cli.app", args, cwd, stdin)
    assert (fast_out, fast_err, fast_code) == (click_out, click_err, click_code)
    assert "click" in click_mods
    return fast_mods, click_mods, fast_out, fast_err, fast_code


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(base()), encoding="utf-8")
    return path


def noted() -> dict[str, Any]:
    """A scenario whose configuration gives a warning (an unknown field) and
    a note (a field not modelled)."""
    doc = base()
    doc["kubeletConfig"]["allowedUnsafeSysctls"] = ["net.core.somaxconn"]
    doc["kubeletConfig"]["noSuchField"] = 1
    return doc


FAST_FORMS = [
    ["simulate", "{s}", "-o", "json"],
    ["simulate", "{s}", "-o", "yaml"],
    ["simulate", "-ojson", "{s}"],
    ["simulate", "--output=yaml", "{s}", "--detail"],
    ["simulate", "--detail", "--output", "json", "{s}"],
    ["-q", "simulate", "{s}", "-o", "json"],
    ["--quiet", "-q", "simulate", "{s}", "-o", "json"],
]


TABLE_FORMS = [
    ["simulate", "{s}"],  # the table, into a pipe: no colours
    ["simulate", "{s}", "-o", "wide"],
    ["-q", "simulate", "-otable", "{s}"],
]


@pytest.mark.parametrize("form", FAST_FORMS + TABLE_FORMS, ids=lambda f: " ".join(f))
def test_fast_forms_skip_click_and_match_it(tmp_path: Path, scenario: Path, form: list[str]) -> None:
    args = [a.replace("{s}", str(scenario)) for a in form]
    fast_mods, _, out, err, code = both(args, tmp_path)
    assert code == 0 and err == b""
    if form in TABLE_FORMS:
        assert out.count("✓ admitted".encode()) == 2 and b"after the last step" in out
    else:
        doc = yaml.safe_load(out) if any("yaml" in a for a in form) else json.loads(out)
        assert [s["admitted"] for s in doc["steps"]] == [True, True]
    # nothing of click, nor of any other command, nor the group
    assert fast_mods == [
        "podnuma.cli.fast", "podnuma.cli.guard", "podnuma.cli.process", "podnuma.cli.simulate_stream",
    ]


@pytest.mark.parametrize("quiet", [False, True])
def test_notes_and_warnings_match(tmp_path: Path, quiet: bool) -> None:
    path = tmp_path / "noted.yaml"
    path.write_text(yaml.safe_dump(noted()), encoding="utf-8")
    fast_mods, _, out, err, code = both([*(["-q"] if quiet else []), "simulate", str(path),
                                         "-o", "json"], tmp_path)
    assert code == 0 and json.loads(out)["steps"]
    lines = err.decode().splitlines()
    assert any(line.startswith("warning: ") and "noSuchField" in line for line in lines)
    assert any(line.startswith("note: ") and "allowedUnsafeSysctls" in line
               for line in lines) is not quiet
    assert "click" not in fast_mods


def test_bad_input_matches(tmp_path: Path) -> None:
    doc = base()
    doc["steps"][0]["addPod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "two"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    fast_mods, _, out, err, code = both(["simulate", str(path), "-o", "json"], tmp_path)
    assert code == 2 and out == b""
    assert err.startswith(b"error: ") and err.count(b"\n") == 1 and b"bad.json" in err
    assert "click" not in fast_mods


def test_missing_file_matches(tmp_path: Path) -> None:
    fast_mods, _, out, err, code = both(["simulate", str(tmp_path / "nope.json"), "-o", "json"],
                                        tmp_path)
    assert code == 2 and out == b"" and err.startswith(b"error: ")
    assert "click" not in fast_mods


def test_standard_input_matches(tmp_path: Path) -> None:
    text = yaml.safe_dump(base()).encode()
    fast_mods, _, out, err, code = both(["simulate", "-", "-o", "json"], tmp_path, stdin=text)
    assert code == 0 and err == b"" and len(json.loads(out)["steps"]) == 2
    assert "click" not in fast_mods


CLICK_FORMS = [
    ["simulate", "{s}", "-o", "table", "--checkpoint-dir", "{d}/ck"],
    ["simulate", "{s}", "-o", "json", "-o", "json"],  # an option given twice
    ["simulate", "{s}", "-o", "xml"],  # click's message for a bad choice
    ["simulate", "{s}", "-o"],
    ["simulate", "{s}", "-o", "json", "--set", "cpuManagerPolicy=none"],
    ["simulate", "{s}", "{s}", "-o", "json"],
    ["simulate", "-o", "json"],
    ["simulate", "{s}", "-o", "json", "--help"],
    ["simulate", "{s}", "-o", "json", "--", "x"],
    ["simulate", "{s}", "-o", "json", "--detail", "--detail"],
    ["simulate", "{s}", "--output", "JSON"],
    ["--version", "simulate", "{s}", "-o", "json"],
    ["-q", "simulate", "{s}", "-q", "-o", "json"],
    ["simulate", "{d}", "-o", "json"],  # a directory: click accepts it, the reader refuses
    ["simulat", "{s}", "-o", "json"],
]


@pytest.mark.parametrize("form", CLICK_FORMS, ids=lambda f: " ".join(f))
def test_other_forms_go_to_click(tmp_path: Path, scenario: Path, form: list[str]) -> None:
    args = [a.replace("{s}", str(scenario)).replace("{d}", str(tmp_path)) for a in form]
    fast_mods, _, _, _, _ = both(args, tmp_path)
    assert "click" in fast_mods or form == ["simulate", "{d}", "-o", "json"]


def test_a_coloured_table_is_on_the_fast_path(tmp_path: Path, scenario: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With colours (``FORCE_COLOR``: a terminal) the table is streamed as
    into a pipe, its cells with their styles: the same bytes both ways,
    without click on the fast path."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    fast_mods, _, out, _, code = both(["simulate", str(scenario)], tmp_path)
    assert code == 0 and b"\x1b[" in out and "click" not in fast_mods


def test_unreadable_file_goes_to_click(tmp_path: Path, scenario: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    scenario.chmod(0)
    fast_mods, _, _, err, code = both(["simulate", str(scenario), "-o", "json"], tmp_path)
    assert code == 2 and b"not readable" in err and "click" in fast_mods


def test_completion_goes_to_click(tmp_path: Path, scenario: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), _PODNUMA_COMPLETE="bash_complete",
               COMP_WORDS="podnuma simulate", COMP_CWORD="1")
    outs = [subprocess.run([sys.executable, "-c", PROBE, entry, "simulate", str(scenario), "-o",
                            "json"], capture_output=True, timeout=180, cwd=tmp_path, env=env)
            for entry in ("podnuma.cli", "podnuma.cli.app")]
    assert outs[0].stdout == outs[1].stdout and outs[0].returncode == outs[1].returncode
    assert b"simulate" in outs[0].stdout
    assert b'"click"' in outs[0].stderr


@pytest.mark.parametrize(("argv", "expected"), [
    (["simulate", "f", "-o", "json"], (("simulate",), False, ("f",), "json", False, {})),
    (["-q", "simulate", "-", "-oyaml", "--detail"], (("simulate",), True, ("-",), "yaml", True, {})),
    (["simulate", "--output=json", "f"], (("simulate",), False, ("f",), "json", False, {})),
    (["fleet", "analyze", "d"], (("fleet", "analyze"), False, ("d",), "table", False, {})),
    (["fleet", "analyze", "d", "-o", "json", "e"],
     (("fleet", "analyze"), False, ("d", "e"), "json", False, {})),
    (["fleet", "analyze", "d", "--dask", "local:2", "--workers=3", "--output-file", "r.json", "-o", "json"],
     (("fleet", "analyze"), False, ("d",), "json", False,
      {"--dask": "local:2", "--workers": "3", "--output-file": "r.json"})),
    # the format the file's suffix names: click's way (it was the table, into r.json)
    (["fleet", "analyze", "d", "--output-file", "r.json"], None),
    (["fleet", "analyze", "--dask=tcp://127.0.0.1:8786", "d", "-ojson"],
     (("fleet", "analyze"), False, ("d",), "json", False, {"--dask": "tcp://127.0.0.1:8786"})),
    (["fleet", "analyze", "d", "--dask", "local", "--dask", "local"], None),  # given twice
    (["fleet", "analyze", "d", "--dask"], None),
    (["fleet", "analyze", "d", "--dask", "-o", "json"], None),
    (["fleet", "analyze", "d", "--dask="], None),
    (["fleet", "analyze", "d", "--workers", "0"], None),
    (["fleet", "analyze", "d", "--workers", "2x"], None),
    (["fleet", "analyze", "d", "--workers", " 2"], None),
    (["fleet", "analyze", "d", "--workers", "1" * 5000], None),  # past what int() reads
    (["fleet", "analyze", "d", "--workers", "1" * 10], None),
    (["fleet", "analyze", "d", "--workers", "\u0662"], None),  # a digit click reads, not ASCII
    # a directory: refused by the command either way ('/: --output-file: cannot write: Is a directory')
    (["fleet", "analyze", "d", "-o", "json", "--output-file", "/"],
     (("fleet", "analyze"), False, ("d",), "json", False, {"--output-file": "/"})),
    (["simulate", "f", "-o", "json", "--dask", "local"], None),
    (["fleet", "analyze", "d", "-o", "html"], None),
    (["fleet", "analyze", "d", "--detail"], None),
    (["fleet", "analyze", "-o", "json"], None),
    (["fleet", "generate", "--output-dir", "d"], None),
    (["simulate", "-o", "table", "f"], (("simulate",), False, ("f",), "table", False, {})),
    (["simulate", "f"], (("simulate",), False, ("f",), "table", False, {})),
    (["simulate", "f", "--output=wide", "--detail"], None),  # (click's usage error: --detail is json/yaml's)
    (["simulate", "-o", "json"], None),
    (["simulate", "f", "g", "-o", "json"], None),
    (["simulate", "f", "-o", "json", "--output", "yaml"], None),
    (["simulate", "f", "-o", "json", "-x"], None),
    (["simulate", "f", "-o", "json", "-"], None),
    (["simulate", "f", "-o"], None),
    (["explain", "f", "-o", "json"], None),
    (["-h", "simulate", "f", "-o", "json"], None),
    ([], None),
])
def test_parse(argv: list[str], expected: tuple[object, ...] | None) -> None:
    assert _parse(argv) == expected


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    path = tmp_path / "fleet"
    generate_fleet(path, nodes=2, pods_per_node=5, seed=1)
    return path


@pytest.mark.parametrize("form", [
    ["fleet", "analyze", "{f}", "-o", "json"],
    ["-q", "fleet", "analyze", "-ojson", "{f}"],
    ["fleet", "analyze", "{f}"],  # the table (standard output is not a terminal)
    ["fleet", "analyze", "{f}/nodes.json", "--output=json", "{f}/pods"],
    ["fleet", "analyze", "{f}", "-o", "json", "--workers", "2"],
    ["fleet", "analyze", "--dask=local:1", "{f}", "-o", "json"],
], ids=lambda f: " ".join(f))
def test_fleet_analyze_skips_click_and_matches_it(tmp_path: Path, fleet: Path,
                                                  form: list[str]) -> None:
    args = [a.replace("{f}", str(fleet)) for a in form]
    fast_mods, _, out, _, code = both(args, tmp_path)
    assert code == 0 and out
    if "json" in " ".join(form):
        assert len(json.loads(out)["nodes"]) == 2
    assert fast_mods == ["podnuma.cli.fast", "podnuma.cli.fleet_analyze", "podnuma.cli.guard",
                         "podnuma.cli.outputfile", "podnuma.cli.process"]  # (the report written: the process may end at once)


def test_fleet_analyze_output_file_matches(tmp_path: Path, fleet: Path) -> None:
    # the report written to a file: the same bytes both ways, nothing on
    # standard output, click not loaded by the fast path
    written = []
    for entry in ("podnuma.cli", "podnuma.cli.app"):
        target = tmp_path / f"report-{entry}.json"
        out, err, code, mods = run(entry, ["fleet", "analyze", str(fleet), "--output-file",
                                           str(target), "-o", "json"], tmp_path)
        assert (out, err, code) == (b"", b"", 0)
        assert ("click" in mods) is (entry == "podnuma.cli.app")
        written.append(target.read_bytes())
    assert written[0] == written[1] and len(json.loads(written[0])["nodes"]) == 2


def test_a_dask_error_matches(tmp_path: Path, fleet: Path) -> None:
    # a target the command refuses: the same one line and exit code both ways
    fast_mods, _, out, err, code = both(["fleet", "analyze", str(fleet), "--dask", "local:0"],
                                        tmp_path)
    assert code == 2 and out == b"" and err.count(b"\n") == 1 and b"local:0" in err
    assert "click" not in fast_mods


def test_fleet_analyze_issues_match(tmp_path: Path, fleet: Path) -> None:
    # a pods dump that is not JSON: an issue of the report, on standard error
    (fleet / "pods" / "pods-0001.json").write_text("{not json", encoding="utf-8")
    for quiet in (False, True):
        fast_mods, _, out, err, code = both([*(["-q"] if quiet else []), "fleet", "analyze",
                                             str(fleet), "-o", "json"], tmp_path)
        assert code == 0 and json.loads(out)["issues"]
        assert "click" not in fast_mods
        # (errors printed with --quiet too: it silences notes and warnings)
        assert err.startswith(b"error: ") and b"pods-0001.json: invalid JSON" in err
        if quiet:
            assert b"warning: " not in err


@pytest.mark.parametrize("form", [
    ["fleet", "analyze", "{f}", "-o", "html"],
    ["fleet", "analyze", "{f}", "--what-if", "gates", "-o", "json"],
    ["fleet", "analyze", "{f}", "-o", "json", "--workers", "0"],  # click's message
    ["fleet", "analyze", "{f}", "-o", "json", "--workers", "1" * 5000],  # not an integer to click
    ["fleet", "analyze", "{f}", "-o", "json", "--dask", "local", "--dask", "local:1"],
    ["fleet", "analyze", "-o", "json"],
    ["fleet", "analyze", "{f}", "-o", "yaml"],
    ["fleet", "analyze", "--help"],
], ids=lambda f: " ".join(f))
def test_other_fleet_forms_go_to_click(tmp_path: Path, fleet: Path, form: list[str]) -> None:
    args = [a.replace("{f}", str(fleet)) for a in form]
    fast_mods, _, _, _, _ = both(args, tmp_path)
    assert "click" in fast_mods


@pytest.mark.parametrize("fmt", ["table", "wide"])
@pytest.mark.parametrize("entry", ["podnuma.cli", "podnuma.cli.app"])
def test_detail_with_a_table_is_a_usage_error(tmp_path: Path, scenario: Path, fmt: str, entry: str) -> None:
    """--detail adds to the json/yaml document: with a table it would be
    ignored, so it is refused (one line, exit 2, nothing on stdout), on
    both paths."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import importlib, sys; sys.exit(importlib.import_module(sys.argv[1]).main(sys.argv[2:]))"
    proc = subprocess.run([sys.executable, "-c", code, entry, "simulate", str(scenario), "-o", fmt, "--detail"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"error: --detail adds to the json/yaml document; -o {fmt} has none (give -o json or "
                           "-o yaml) (see 'podnuma simulate --help')\n")
