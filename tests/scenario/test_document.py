"""The output document and the table, from hand-made step records."""

from __future__ import annotations

import io
import json
from typing import Any

import yaml

from podnuma.cm.results import ContainerResult, MemoryBlock, NodeSummary, PodAllocation, StepResult
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.inputs.discover import load_node
from podnuma.machine.cpuset import CPUSet
from podnuma.render.serialize import dump_json, dump_yaml
from podnuma.render.table import format_size, make_console, render_table
from podnuma.scenario.document import build_document
from podnuma.scenario.run import RunResult

GI = 1 << 30


def _result() -> RunResult:
    machine = load_node(
        {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                       "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}},
        base_dir=__import__("pathlib").Path("."),
    )
    c = CPUSet.parse
    steps = (
        StepResult(
            index=0, op="addPod", pod="default/web", pod_uid="u1", admitted=True, reason=None,
            message=None, qos_class="Guaranteed",
            pod_allocation=PodAllocation(c("1-2,9-10"), (MemoryBlock("memory", (0,), 4 * GI),)),
            containers=(
                ContainerResult(
                    name="init", type="init", cpus=c("1-2"), mems=(0,), isolation="container",
                    memory=(MemoryBlock("memory", (0,), 2 * GI),),
                    topology_hint=TopologyHint(BitMask.of(0), True),
                ),
                ContainerResult(
                    name="app", type="app", cpus=c("1-2,9-10"), mems=(0,), isolation="pod",
                    memory=(MemoryBlock("memory", (0,), 2 * GI), MemoryBlock("hugepages-2Mi", (0, 1), 1 << 21)),
                    devices={"example.com/gpu": ("gpu1", "gpu0"), "a.io/nic": ("n0",)},
                    topology_hint=TopologyHint(BitMask.of(0, 1), False),
                ),
            ),
            default_cpuset=c("0,3-8,11-15"),
        ),
        StepResult(
            index=1, op="addPod", pod="default/big", pod_uid="u2", admitted=False,
            reason="TopologyAffinityError",
            message="Resources cannot be allocated with Topology locality", qos_class="Guaranteed",
            pod_allocation=None, containers=(), default_cpuset=c("0,3-8,11-15"),
        ),
        StepResult(
            index=2, op="removeContainer", pod="default/web", pod_uid="u1", admitted=None,
            reason=None, message=None, qos_class="Guaranteed", pod_allocation=None,
            containers=(ContainerResult(name="app", type="app", cpus=c("0,3-8,11-15"), mems=(0, 1),
                                        isolation="host"),),
            default_cpuset=c("0-15"), container="init",
        ),
        StepResult(
            index=3, op="removePod", pod="default/web", pod_uid="u1", admitted=None, reason=None,
            message=None, qos_class="Guaranteed", pod_allocation=None, containers=(),
            default_cpuset=c("0-15"),
        ),
    )
    return RunResult(
        scenario="s.yaml", machine=machine,
        node=NodeSummary("node", c("0-15"), (0, 1), c("0")),
        steps=steps,
        checkpoints={"memoryManager": {"policyName": "None"}, "cpuManager": {"policyName": "static"}},
        checkpoint_files={},
    )


def test_document() -> None:
    doc = build_document(_result())
    assert doc["node"] == {"name": "node", "cpus": "0-15", "numaNodes": [0, 1], "reservedCpus": "0"}
    s0, s1, s2, s3 = doc["steps"]
    assert s0["podAllocation"] == {
        "cpus": "1-2,9-10", "memory": [{"type": "memory", "numaNodes": [0], "size": 4 * GI}],
    }
    init, app = s0["containers"]
    assert init == {
        "name": "init", "type": "init", "cpus": "1-2", "mems": [0], "isolation": "container",
        "memory": [{"type": "memory", "numaNodes": [0], "size": 2 * GI}], "devices": {},
        "topologyHint": {"numaNodes": [0], "preferred": True},
        "cpuQuotaDisabled": False,
    }
    # device ids keep the allocation order; resources are sorted
    assert list(app["devices"].items()) == [("a.io/nic", ["n0"]), ("example.com/gpu", ["gpu1", "gpu0"])]
    assert app["topologyHint"] == {"numaNodes": [0, 1], "preferred": False}
    assert (s1["admitted"], s1["reason"], s1["containers"], s1["podAllocation"]) == (
        False, "TopologyAffinityError", [], None,
    )
    assert s2["container"] == "init" and s2["admitted"] is None
    assert s2["containers"][0]["topologyHint"] == {"numaNodes": None, "preferred": False}
    assert "container" not in s3 and s3["containers"] == [] and s3["defaultCpuSet"] == "0-15"
    # checkpoints in contract order
    assert list(doc["checkpoints"]) == ["cpuManager", "memoryManager"]


def test_dumps_round_trip() -> None:
    doc = build_document(_result())
    assert json.loads(dump_json(doc)) == doc
    text = dump_yaml(doc)
    assert yaml.safe_load(text) == doc
    assert text.startswith("node:\n  name: node\n")


def _table(width: int | None = None) -> str:
    buf = io.StringIO()
    render_table(_result(), make_console(buf, width=width))
    return buf.getvalue()


def test_table() -> None:
    out = _table()
    assert "\x1b[" not in out
    assert max(len(line) for line in out.splitlines()) <= 120
    for needle in ("default/web", "Guaranteed", "admitted", "TopologyAffinityError",
                   "Resources cannot be allocated with Topology locality", "removed",
                   "exclusive", "pod pool", "hugepages-2Mi",
                   "gpu1,gpu0", "0 ✓", "0,1 ✗", "1-2,9-10"):
        assert needle in out, (needle, out)
    # the per-NUMA summary after the last step
    assert "after the last step" in out


def test_table_is_stable() -> None:
    assert _table() == _table()


def test_format_size() -> None:
    cases: list[tuple[int, Any]] = [(0, "0"), (1 << 21, "2Mi"), (3 * GI, "3Gi"), (1536 << 20, "1536Mi"), (1000, "1000")]
    for n, want in cases:
        assert format_size(n) == want
