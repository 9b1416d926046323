"""A machine of more NUMA nodes than podnuma goes over every set of for
topology hints (``MAX_MASK_NODES``): one line naming the step, exit 2 on
the command line and 400 from the API (it was an internal error: a
``MemoryError`` from 21 to about 40 NUMA nodes, an ``OverflowError`` at 63
and 64, a 500 from the API)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from podnuma.cm.topologymanager.mask_tables import MAX_MASK_NODES
from tests.web.conftest import running
from tests.web.test_api import call


def _scenario(numa: int) -> str:
    return f"""\
apiVersion: podnuma.io/v1
kind: Scenario
node:
  name: wide
  synthetic: {{sockets: 1, numaNodesPerSocket: {numa}, coresPerNumaNode: 1, threadsPerCore: 1,
              memoryPerNumaNode: 1Gi}}
kubeletConfig:
  cpuManagerPolicy: static
  reservedSystemCPUs: "0"
  topologyManagerPolicy: best-effort
  topologyManagerPolicyOptions: {{max-allowable-numa-nodes: "{numa}"}}
steps:
  - addPod:
      metadata: {{name: a, namespace: d}}
      spec:
        containers: [{{name: app, resources: {{limits: {{cpu: "1", memory: 100Mi}}}}}}]
"""


def _message(numa: int) -> str:
    return (f"{numa} NUMA nodes: the kubelet's topology hints go over every set of them (2^{numa} - 1); "
            f"podnuma replays them on machines of at most {MAX_MASK_NODES} NUMA nodes")


@pytest.mark.parametrize("numa", [MAX_MASK_NODES + 1, 40, 63, 64])
def test_too_many_numa_nodes_for_hints_is_one_line_exit_2(numa: int) -> None:
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", "-", "-o", "json"],
                          input=_scenario(numa), capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"error: <stdin>: steps[0].addPod: {_message(numa)} (line "), proc.stderr
    assert proc.stderr.count("\n") == 1


def test_too_many_numa_nodes_for_hints_is_a_400() -> None:
    with running() as url:
        status, _, data = call(url + "/api/simulate", _scenario(64).encode(), "application/yaml")
    assert status == 400, data[:500]
    assert _message(64) in json.loads(data)["error"]
