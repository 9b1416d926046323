"""A command whose optional extra is not installed exits 2 with the
``pip install 'podnuma[EXTRA]'`` line (one guard for every command), not
with an internal error. The missing module is simulated in a child
process by an import hook that refuses it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import importlib.abc, sys
blocked = sys.argv[1].split(",")

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked or name in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
for mod in list(sys.modules):
    if mod.partition(".")[0] in blocked:
        del sys.modules[mod]
from podnuma.cli.app import main
sys.exit(main(sys.argv[2:]))
"""


def run(blocked: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-c", RUN, blocked, *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=env)


@pytest.mark.parametrize(("blocked", "args", "extra"), [
    ("grpc", ["podresources", "list", "--socket", "kubelet.sock"], "agent"),
    ("grpc", ["agent", "--manifests", "m", "--state-dir", "s"], "agent"),
    ("prometheus_client", ["agent", "--manifests", "m", "--state-dir", "s"], "agent"),
    ("distributed", ["fleet", "analyze", str(ROOT / "examples" / "fleet"), "--dask", "local"],
     "fleet"),
    ("plotly", ["fleet", "analyze", str(ROOT / "examples" / "fleet"), "-o", "html"], "fleet"),
    ("fastapi", ["serve", "--port", "0"], "web"),
    ("uvicorn", ["serve", "--port", "0"], "web"),
])
def test_missing_extra_exits_2_with_the_install_line(
    tmp_path: Path, blocked: str, args: list[str], extra: str
) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "kubelet.sock").touch()
    proc = run(blocked, *args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: podnuma "), lines[0]
    assert f"pip install 'podnuma[{extra}]'" in lines[0]
    assert blocked in lines[0]
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_unrelated_missing_module_stays_a_bug(tmp_path: Path) -> None:
    # the hook refuses a module podnuma itself needs: not an extra, so exit 1
    proc = run("rich", "demo", cwd=tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "internal error" in proc.stderr and "pip install" not in proc.stderr
