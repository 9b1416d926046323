"""explain's heading of a step keeps its verdict whatever the width: a
rule cuts its title to one line, so a long pod name (legal: a 63-character
namespace and a 253-character name) or a narrow terminal once hid
"rejected: REASON". The heading is then printed wrapped above the rule."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("columns", [40, 60, 80, 120, 200])
@pytest.mark.parametrize("short", [True, False])
def test_the_verdict_is_always_shown(tmp_path: Path, columns: int, short: bool) -> None:
    doc = yaml.safe_load((ROOT / "examples" / "static-dual-socket.yaml").read_text())
    if not short:
        doc["steps"][1]["addPod"]["metadata"] = {"name": "odd-" + "x" * 55, "namespace": "shop-" + "y" * 40}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-c", "from podnuma.cli import run; run()", "explain", str(path),
                           "--step", "1", "--no-picture"], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert "✗ rejected: SMTAlignmentError" in " ".join(proc.stdout.split())  # (wrapped at a space, maybe)
    pod = "shop/odd" if short else "shop-" + "y" * 40 + "/odd-" + "x" * 55
    assert pod in proc.stdout.replace("\n", "")


@pytest.mark.parametrize("columns", [50, 60, 80, 100, 120])
def test_the_containers_table_cuts_no_word(columns: int) -> None:
    """The containers table fits the width by wrapping at spaces, commas and
    separators, and by leaving out optional columns (said in a note), never
    by cutting a word (``containe`` / ``r``, ``preferre`` / ``d)``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-c", "from podnuma.cli import run; run()", "explain",
                           str(ROOT / "examples" / "real-node" / "this-node.yaml"), "--no-picture"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("containers")
    end = next(i for i in range(start, len(lines))
               if lines[i].startswith(("   exclusive CPUs", "   (", "   •", "node shared pool")))
    table = lines[start:end]
    assert max(len(line) for line in table) <= columns, "\n".join(table)
    tokens = " ".join(table).split()
    for word in ("container", "pool", "exclusive", "slice", "memory", "256Mi", "NUMA", "CPUs"):
        assert word in tokens, (word, "\n".join(table))
    shown = {"hint": "preferred)", "devices": "devices", "CFS quota": "disabled"}
    flat = " ".join(proc.stdout.split())  # (the note may wrap)
    at = flat.find("(left out to fit")
    note = flat[at:flat.index(")", at)] if at >= 0 else ""
    for column, word in shown.items():
        assert (word in tokens) != (column in note), (column, note, "\n".join(table))
    if columns >= 80:
        assert note == ""
