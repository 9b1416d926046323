"""The manifests directory going out of reach while the agent runs, as the
kubelet's file source (``listConfig`` in ``pkg/kubelet/config/file.go``)
takes it:

- the directory exists but cannot be read (mode 000): upstream lists it
  with ``filepath.Glob``, which ignores the read error, so it lists
  nothing and every static pod goes (a quirk kept); readable again, they
  come back;
- a directory on the way cannot be searched (``stat`` fails, not with
  "no such file"): the kubelet logs the error and sends no update, so the
  pods stay; the agent logs it once.

Neither is an internal error. Run in a child process without the power to
bypass file permissions (``setpriv`` for root), a real agent on real
directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent.helpers import KUBELET_YAML, NODE_YAML, ROOT, classic_pod, write_manifest
from tests.agent.refusals import unprivileged

CHILD = r"""
import io, json, logging, os, sys
from pathlib import Path
from podnuma.agent.core import Agent
from podnuma.agent.logs import setup_logging
from podnuma.agent.state import StateDir
from podnuma.inputs.pods import load_config_file, load_node_file

tmp = Path(sys.argv[1])
parent, manifests = tmp / "parent", tmp / "parent" / "manifests"
stream = io.StringIO()
agent = Agent(machine=load_node_file(tmp / "node.yaml"), config=load_config_file(tmp / "kubelet.yaml"),
              manifests=manifests, state=StateDir(tmp / "state"), logger=setup_logging(stream, logging.INFO))
seen = []
def step(what):
    agent.sync()
    seen.append([what, sorted(r.pod.ref for r in agent.records.values())])
step("readable")
os.chmod(manifests, 0)
step("mode 000")
step("mode 000 again")
os.chmod(manifests, 0o755)
step("readable again")
os.chmod(parent, 0o600)
step("parent not searchable")
step("parent not searchable again")
os.chmod(parent, 0o755)
step("parent searchable")
logs = [json.loads(line) for line in stream.getvalue().splitlines()]
print(json.dumps({"seen": seen, "warnings": [r for r in logs if r.get("msg") == "Manifests not read, pods kept"]}))
"""


def test_unreadable_and_unreachable_manifests(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(NODE_YAML)
    (tmp_path / "kubelet.yaml").write_text(KUBELET_YAML)
    manifests = tmp_path / "parent" / "manifests"
    manifests.mkdir(parents=True)
    write_manifest(manifests, "web.yaml", classic_pod("web"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([*unprivileged(), sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    web = ["default/web-kep-node"]
    assert got["seen"] == [
        ["readable", web],
        ["mode 000", []],  # (Glob's quirk: read as empty, every static pod goes)
        ["mode 000 again", []],
        ["readable again", web],
        ["parent not searchable", web],  # no update: the pods stay
        ["parent not searchable again", web],
        ["parent searchable", web],
    ]
    assert len(got["warnings"]) == 1  # logged once, not at every sync
    assert "cannot look at it: Permission denied" in json.dumps(got["warnings"][0])
