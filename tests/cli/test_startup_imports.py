"""What each command imports to start: only what it uses.

Every command's start-up is paid once per run, and for a short run it is
most of the run (``bench/bench_startup.py`` prints it). The command line
registers its commands by import path; a command module imports the
renderers, the file writers and the optional libraries where it uses them
(a table, a picture, ``--checkpoint-dir``, YAML). Each test runs one
command in a fresh interpreter and names the modules that must not have
been loaded by the time it finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from podnuma.fleet.generate import generate_fleet

from ..scenario.helpers import base

ROOT = Path(__file__).resolve().parents[2]

#: runs ``podnuma ARGS`` in this interpreter and writes the names of the
#: modules loaded by then to a file
PROBE = """
import json, sys
from podnuma.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(sorted(sys.modules), f)
sys.exit(code)
"""

#: never needed to start any of the commands below
NEVER = (
    "podnuma.web", "podnuma.agent", "podnuma.grpc", "podnuma.cgroups",
    "grpc", "google.protobuf", "fastapi", "uvicorn", "starlette", "pydantic",
    "dask", "distributed", "plotly", "kubernetes", "PIL", "selenium",
)
#: the document formats (-o json) need no table or picture
VIEWS = (
    "rich", "podnuma.render.table", "podnuma.render.picture", "podnuma.render.explain",
    "podnuma.render.side_by_side",
)


def loaded(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True,
                          text=True, timeout=180, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    names: list[str] = json.loads(out.read_text(encoding="utf-8"))
    assert "podnuma.cli" in names  # the probe saw the command run
    return set(names)


def found(modules: set[str], *prefixes: str) -> list[str]:
    """The loaded modules that are one of ``prefixes`` or inside one."""
    return sorted(m for m in modules for p in prefixes if m == p or m.startswith(p + "."))


@pytest.fixture
def json_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(base()), encoding="utf-8")
    return path


def test_version_loads_no_engine(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--version")
    assert found(modules, "podnuma.api", "podnuma.cm", "podnuma.machine", "podnuma.inputs",
                 "podnuma.scenario", "podnuma.render", "yaml", "msgspec", *NEVER) == []


def test_simulate_json_to_json_loads_no_yaml_view_or_writer(tmp_path: Path, json_scenario: Path) -> None:
    modules = loaded(tmp_path, "simulate", str(json_scenario), "-o", "json")
    assert "podnuma.cm.container_manager" in modules  # it did simulate
    assert found(modules, "yaml", "podnuma.inputs.goyaml", "podnuma.render.yaml_text",
                 "podnuma.fileio", "podnuma.analysis", "podnuma.fleet", "numpy",
                 "importlib.metadata", *VIEWS, *NEVER) == []
    # the output's spool and the scenario's copy stay in memory: tempfile (and
    # shutil, random, bz2, lzma with it) is imported only when one rolls over;
    # and no record on the path is a dataclass (code generated at import)
    assert found(modules, "tempfile", "shutil", "random", "dataclasses") == []
    # nor click (the fast path runs it), nor hashlib (a pod without a uid
    # gets one from SHA-1's own module)
    assert found(modules, "click", "podnuma.cli.app", "podnuma.cli.options", "hashlib",
                 "_hashlib", "locale") == []
    # nor, for a short file, msgspec (its import costs more than it saves
    # below MSGSPEC_FROM bytes) and what it loads (typing_extensions,
    # inspect, datetime, decimal, uuid and platform); nor pathlib (and
    # urllib.parse, ipaddress, fnmatch with it: the file is opened and its
    # directory found without it), the uuid module (a pod's derived uid is
    # text), the sysfs reader, the Go JSON codec's base64 and copy, nor, in
    # pure Python, mypy_extensions
    assert found(modules, "msgspec", "typing_extensions", "inspect", "datetime", "decimal",
                 "uuid", "platform", "pathlib", "urllib", "ipaddress", "fnmatch",
                 "podnuma.inputs.discover.sysfs", "base64", "copy", "importlib.util",
                 "mypy_extensions") == []


def test_simulate_json_of_a_long_file_loads_msgspec(tmp_path: Path) -> None:
    # the other side: from MSGSPEC_FROM bytes on, msgspec decodes the steps
    from podnuma.inputs.scenario_stream import MSGSPEC_FROM

    doc = base()
    doc["steps"] = [doc["steps"][0], {"removePod": "uid-a"}] * (MSGSPEC_FROM // 300 + 1)
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert path.stat().st_size >= MSGSPEC_FROM
    modules = loaded(tmp_path, "simulate", str(path), "-o", "json")
    assert "msgspec" in modules
    assert found(modules, "pathlib", "click") == []


def test_simulate_json_past_the_spool_still_prints_everything(tmp_path: Path) -> None:
    # the other side: a run whose output outgrows the in-memory spool rolls
    # it over to a temporary file and prints the document whole
    doc = base()
    doc["steps"] = [doc["steps"][0], {"removePod": "uid-a"}] * 150
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    small = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    code = ("import sys; from podnuma.cli import simulate_stream; simulate_stream._SPOOL = 4096; "
            "from podnuma.inputs import spool; opened = []; make = spool.anonymous_file; "
            "spool.anonymous_file = lambda *a: opened.append(1) or make(*a); "
            "from podnuma.cli import main; rc = main(sys.argv[1:]); "
            "print(bool(opened), file=sys.stderr); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code, "simulate", str(path), "-o", "json"],
                          capture_output=True, text=True, timeout=180, cwd=tmp_path, env=small)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("True")  # it did roll over
    out = json.loads(proc.stdout)
    assert len(out["steps"]) == 300 and len(proc.stdout) > 4 * 4096
    assert [s["admitted"] for s in out["steps"][-4:]] == [True, None, True, None]


def test_simulate_yaml_table_loads_no_picture_or_search(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(base()), encoding="utf-8")
    modules = loaded(tmp_path, "simulate", str(path))
    assert {"yaml", "podnuma.render.table"} <= modules
    assert found(modules, "podnuma.render.picture", "podnuma.analysis", "podnuma.fleet",
                 "podnuma.fileio", "numpy", *NEVER) == []


def test_simulate_checkpoint_dir_loads_the_writer(tmp_path: Path, json_scenario: Path) -> None:
    # the other side of the lazy import: the option still finds its writer
    modules = loaded(tmp_path, "simulate", str(json_scenario), "-o", "json",
                     "--checkpoint-dir", str(tmp_path / "state"))
    assert "podnuma.fileio" in modules
    assert (tmp_path / "state" / "cpu_manager_state").is_file()


def test_explain_json_loads_no_view(tmp_path: Path, json_scenario: Path) -> None:
    modules = loaded(tmp_path, "explain", str(json_scenario), "--no-search", "-o", "json")
    assert "podnuma.analysis.explain" in modules
    assert found(modules, "podnuma.fleet", "numpy", "yaml", *VIEWS, *NEVER) == []


def test_demo_json_loads_no_view(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "demo", "-o", "json")
    assert found(modules, "podnuma.analysis", "podnuma.fleet", "podnuma.fileio", "numpy",
                 *VIEWS, *NEVER) == []


def test_fleet_analyze_json_loads_no_other_door(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    generate_fleet(fleet, nodes=2, pods_per_node=5, seed=1)
    modules = loaded(tmp_path, "fleet", "analyze", str(fleet), "-o", "json")
    assert "podnuma.fleet.replay" in modules
    assert found(modules, "rich", "podnuma.render.table", "podnuma.render.picture",
                 "podnuma.analysis.nearest", *NEVER) == []
    # no scratch directory without standard input; the restart analysis only
    # for a restart what-if
    assert found(modules, "tempfile", "shutil", "podnuma.analysis.restart",
                 "podnuma.inputs.state") == []
    # the pod keys' BLAKE2 and the density copies' SHA-1 come from their own
    # modules, without hashlib's OpenSSL bindings
    assert found(modules, "hashlib", "_hashlib") == []


def test_fleet_analyze_restart_what_if_loads_the_restart_analysis(tmp_path: Path) -> None:
    # the other side of the lazy import: the what-if still finds it
    fleet = tmp_path / "fleet"
    generate_fleet(fleet, nodes=2, pods_per_node=5, seed=1)
    modules = loaded(tmp_path, "fleet", "analyze", str(fleet), "-o", "json", "--what-if", "restart")
    assert "podnuma.analysis.restart" in modules
