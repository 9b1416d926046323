"""Upstream's CPU-assignment tables (cpu_assignment_test.go), through
``podnuma simulate``.

A case gives a topology, the available CPUs and a request. Its scenario:
the static policy with the option that selects the picker under test
(none: packed; ``prefer-align-cpus-by-uncorecache``: packed + uncore;
``distribute-cpus-across-cores``: spread; ``distribute-cpus-across-numa``,
with ``full-pcpus-only`` for a group size of 2: NUMA-distributed), the CPUs
outside the available set strictly reserved (so the available CPUs are
exactly the case's), topology manager ``none`` (no NUMA affinity: the
policy calls the picker once on all available CPUs), and a Guaranteed pod
asking for the request. The container's CPUs (or the rejection message)
must be the table's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.cpumanager.policy_options import (
    DISTRIBUTE_CPUS_ACROSS_CORES_OPTION,
    DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION,
    FULL_PCPUS_ONLY_OPTION,
    PREFER_ALIGN_BY_UNCORE_CACHE_OPTION,
)
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager import test_cpu_assignment as assignment_tests
from tests.cm.cpumanager.cpu_policy_helpers import ALPHA, DEFAULTS, Gates, make_pod
from tests.e2e.scenario_builder import (
    NotExpressible,
    check_topology,
    plan_state,
    pod_manifest,
    scenario,
    simulate,
)


def _gate_overrides(gates: Gates) -> dict[str, bool]:
    from tests.cm.cpumanager.cpu_policy_helpers import DEFAULT_GATES

    return {k: v for k, v in gates.values.items() if DEFAULT_GATES.get(k) != v}


def _run(
    tmp_path: Path,
    topo: CPUTopology,
    avail: str,
    num_cpus: int,
    exp_err: str,
    exp: str,
    options: dict[str, str],
    gates: Gates = DEFAULTS,
) -> None:
    available = CPUSet.parse(avail)
    pod = make_pod("fakePod", "fakeContainer", str(num_cpus), str(num_cpus))
    try:
        check_topology(topo)
        plan = plan_state(
            topo, available, {}, num_reserved=0, options=options, gates=gates, pod=pod
        )
    except NotExpressible as e:
        pytest.skip(f"not expressible: {e}")
    assert plan.notes == ["reserve-missing"] and plan.reserved == topo.cpus() - available
    doc = scenario(topo, plan, [{"addPod": pod_manifest(pod)}], gates=_gate_overrides(gates))
    res = simulate(doc, tmp_path)
    assert res.exit_code == 0, res.stderr
    step = res.step(0)
    if exp_err:
        assert step["admitted"] is False
        assert step["reason"] == "UnexpectedAdmissionError"
        assert step["message"] == f"Pod was rejected: Allocate failed due to {exp_err}, which is unexpected"
        assert step["defaultCpuSet"] == str(available)
        return
    assert step["admitted"] is True, step["message"]
    (ctr,) = step["containers"]
    assert ctr["isolation"] == "container"
    assert CPUSet.parse(ctr["cpus"]) == CPUSet.parse(exp)
    assert CPUSet.parse(step["defaultCpuSet"]) == available - CPUSet.parse(exp)


def _ids(cases: list[Any]) -> list[str]:
    return [c[0] for c in cases]


@pytest.mark.parametrize(
    ("desc", "topo", "uncore", "avail", "num_cpus", "exp_err", "exp"),
    assignment_tests.PACKED_CASES,
    ids=_ids(assignment_tests.PACKED_CASES),
)
def test_take_by_topology_numa_packed(
    desc: str, topo: CPUTopology, uncore: bool, avail: str, num_cpus: int, exp_err: str, exp: str,
    tmp_path: Path,
) -> None:
    options = {PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "true"} if uncore else {}
    _run(tmp_path, topo, avail, num_cpus, exp_err, exp, options)


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "num_cpus", "exp_err", "exp"),
    assignment_tests.SPREAD_CASES,
    ids=_ids(assignment_tests.SPREAD_CASES),
)
def test_take_by_topology_spread(
    desc: str, topo: CPUTopology, avail: str, num_cpus: int, exp_err: str, exp: str,
    tmp_path: Path,
) -> None:
    _run(tmp_path, topo, avail, num_cpus, exp_err, exp,
         {DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "true"}, ALPHA)


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "num_cpus", "group", "exp_err", "exp"),
    assignment_tests.DISTRIBUTED,
    ids=_ids(assignment_tests.DISTRIBUTED),
)
def test_take_by_topology_numa_distributed(
    desc: str, topo: CPUTopology, avail: str, num_cpus: int, group: int, exp_err: str, exp: str,
    tmp_path: Path,
) -> None:
    options = {DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "true"}
    if group != 1:
        if group != topo.cpus_per_core():
            pytest.skip(
                f"not expressible: group size {group} is neither 1 nor the machine's "
                f"{topo.cpus_per_core()} threads per core (full-pcpus-only)"
            )
        if num_cpus % group != 0:
            pytest.skip(
                f"not expressible: group size {group} needs full-pcpus-only, which rejects a "
                f"request of {num_cpus} CPUs (not a multiple of the SMT level) before any pick"
            )
        options[FULL_PCPUS_ONLY_OPTION] = "true"
    _run(tmp_path, topo, avail, num_cpus, exp_err, exp, options)
