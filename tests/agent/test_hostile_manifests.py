"""Hostile manifests: one bad file (an alias bomb among them) is skipped
with a log event and a counted metric, the other pods are admitted; the
pods' UIDs do not depend on how the manifests directory is spelled."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent.core import Agent
from podnuma.agent.logs import setup_logging
from podnuma.agent.state import StateDir
from podnuma.inputs.pods import load_config_file, load_node_file
from tests.agent.helpers import KUBELET_YAML, NODE_YAML, write_manifest

ROOT = Path(__file__).resolve().parents[2]


def alias_bomb_pod(name: str, levels: int = 9) -> str:
    """A pod whose first container's env holds an unchecked key ``xbomb``
    with nested aliases (9 levels: 10**9 strings once expanded) in well
    under 1 KiB."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    anchors = "\n".join("        " + line for line in lines)
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          containers:
          - name: c
            image: x
            resources:
              requests: {{cpu: "1", memory: 1Gi}}
              limits: {{cpu: "1", memory: 1Gi}}
            env:
            - name: A
              value: b
              xbomb:
        """) + anchors + "\n"


def pod(name: str, cpu: str = "2") -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "1Gi"}
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x",
                                 "resources": {"requests": res, "limits": res}}]},
    }


def test_bomb_is_small() -> None:
    assert len(alias_bomb_pod("bomb").encode()) < 1024


# The sync runs in a child process with its address space capped: a reader
# that expanded the bomb would die or time out there instead of here.
SYNC = """
import io, json, logging, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from podnuma.agent.core import Agent
from podnuma.agent.logs import setup_logging
from podnuma.agent.metrics import AgentMetrics
from podnuma.agent.state import StateDir
from podnuma.inputs.pods import load_config_file, load_node_file
base = Path(sys.argv[1])
stream = io.StringIO()
metrics = AgentMetrics()
agent = Agent(machine=load_node_file(base / "node.yaml"),
              config=load_config_file(base / "kubelet.yaml"),
              manifests=base / "manifests", state=StateDir(base / "state"),
              logger=setup_logging(stream, logging.INFO), metrics=metrics)
agent.sync()
agent.sync()  # a second look counts nothing new
skipped = {s.labels["reason"]: s.value for m in metrics.registry.collect()
           if m.name == "podnuma_agent_manifests_skipped" for s in m.samples
           if s.name.endswith("_total")}
print(json.dumps({
    "admitted": sorted(r.file.rsplit("/", 1)[1] for r in agent.records.values() if r.admitted),
    "errors": {f.rsplit("/", 1)[1]: e for f, e in agent.errors.items()},
    "skipped": skipped,
    "events": [json.loads(x) for x in stream.getvalue().splitlines()
               if json.loads(x).get("msg") == "Manifest skipped"],
}))
"""


def test_alias_bomb_manifest_is_skipped_and_the_others_admitted(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(NODE_YAML)
    (tmp_path / "kubelet.yaml").write_text(KUBELET_YAML)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    write_manifest(manifests, "a.yaml", pod("first"))
    write_manifest(manifests, "b.yaml", alias_bomb_pod("bomb"))
    write_manifest(manifests, "c.yaml", pod("third"))
    write_manifest(manifests, "d.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT))
    proc = subprocess.run([sys.executable, "-c", SYNC, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["admitted"] == ["a.yaml", "c.yaml"]
    assert set(out["errors"]) == {"b.yaml", "d.yaml"}
    bomb = out["errors"]["b.yaml"]
    assert "b.yaml: spec.containers[0].env[0].xbomb.l" in bomb and "alias" in bomb, bomb
    assert out["skipped"] == {"invalid": 2.0}
    events = out["events"]
    assert sorted(e["file"].rsplit("/", 1)[1] for e in events) == ["b.yaml", "d.yaml"]
    assert all(e["reason"] == "invalid" for e in events)


def _agent(tmp: Path, manifests: Path, stream: io.StringIO) -> Agent:
    return Agent(
        machine=load_node_file(tmp / "node.yaml"),
        config=load_config_file(tmp / "kubelet.yaml"),
        manifests=manifests,
        state=StateDir(tmp / "state"),
        logger=setup_logging(stream, logging.INFO),
    )


@pytest.mark.parametrize("spelling", ["absolute", "dot-dot", "symlink", "trailing-slash"])
def test_uids_survive_any_spelling_of_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    (tmp_path / "node.yaml").write_text(NODE_YAML)
    (tmp_path / "kubelet.yaml").write_text(KUBELET_YAML)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(manifests)
    write_manifest(manifests, "a.yaml", pod("first"))
    write_manifest(manifests, "b.yaml", pod("second", cpu="4"))
    monkeypatch.chdir(tmp_path)
    first = _agent(tmp_path, Path("manifests"), io.StringIO())
    first.sync()
    before = {Path(r.file).name: (r.pod.uid, r.admitted) for r in first.records.values()}
    assert [a for _, a in before.values()] == [True, True]
    cpus_before = (tmp_path / "state" / "cpu_manager_state").read_bytes()
    again = {
        "absolute": manifests.resolve(),
        "dot-dot": Path("sub/../manifests"),
        "symlink": Path("link"),
        "trailing-slash": Path("./manifests/"),
    }[spelling]
    stream = io.StringIO()
    second = _agent(tmp_path, again, stream)
    second.sync()
    after = {Path(r.file).name: (r.pod.uid, r.admitted) for r in second.records.values()}
    assert after == before
    logs = [json.loads(x) for x in stream.getvalue().splitlines()]
    # nothing was dropped as stale, every pod was restored where it was
    assert not [x for x in logs if x.get("msg") == "Stale pod state removed"]
    assert all(x.get("restored") for x in logs if x.get("msg") == "Pod admitted")
    assert (tmp_path / "state" / "cpu_manager_state").read_bytes() == cpus_before
