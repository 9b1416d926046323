"""The agent's start-up judgement of its state directory: what the kubelet's
``validateState`` refuses is refused with the kubelet's message, and two
pods on one exclusive CPU (a state kubelet v1.37.2 accepts and later writes
back inconsistent) is refused too, before anything is served or written."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podnuma.agent.state import double_assignments
from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint, encode_cpu_checkpoint
from podnuma.machine.cpuset import CPUSet
from tests.agent.helpers import DEADLINE, AgentProcess, classic_pod, write_manifest

from ..records import replace


@pytest.fixture
def settled() -> Iterator[AgentProcess]:
    """An agent that admitted two pods with two exclusive CPUs each, then stopped."""
    base = Path(tempfile.mkdtemp(prefix="pna", dir="/tmp"))
    a = AgentProcess(base)
    try:
        a.start()
        a.wait_ready()
        write_manifest(a.manifests, "a.yaml", classic_pod("a", "2"))
        write_manifest(a.manifests, "b.yaml", classic_pod("b", "2"))
        a.wait(lambda s: sum(p["admitted"] for p in s["pods"]) == 2, "two pods admitted")
        assert a.signal() == 0
        yield a
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


def _restart(a: AgentProcess) -> subprocess.CompletedProcess[str]:
    return subprocess.run(a.argv(), capture_output=True, text=True, timeout=DEADLINE, check=False)


def test_two_pods_on_one_exclusive_cpu_refused_at_start(settled: AgentProcess) -> None:
    a = settled
    cpu_file = a.state / "cpu_manager_state"
    cpu = decode_cpu_checkpoint(cpu_file.read_bytes())
    (ua, ca), (ub, cb) = sorted((uid, c["c"]) for uid, c in cpu.entries.items())
    # the second pod also claims one of the first pod's CPUs; the total is unchanged
    edited = replace(cpu, entries={ua: {"c": ca}, ub: {"c": cb | CPUSet([min(ca)])}})
    assert double_assignments(edited) is not None
    blob = encode_cpu_checkpoint(edited)
    cpu_file.write_bytes(blob)
    proc = _restart(a)
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {cpu_file}: exclusive CPUs held by two pods: pod: {ub}, container: c cpuset: ")
    assert f'overlaps with pod: {ua}, container: c cpuset: "{ca}"' in last
    assert cpu_file.read_bytes() == blob  # never rewritten


def test_validate_state_refusal_has_the_kubelets_message(settled: AgentProcess) -> None:
    a = settled
    cpu_file = a.state / "cpu_manager_state"
    cpu = decode_cpu_checkpoint(cpu_file.read_bytes())
    uid = sorted(cpu.entries)[0]
    mine = cpu.entries[uid]["c"]
    edited = replace(cpu, default_cpuset=cpu.default_cpuset | mine)
    cpu_file.write_bytes(encode_cpu_checkpoint(edited))
    proc = _restart(a)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f'error: kubelet would not start: start cpu manager error: pod: {uid}, container: c cpuset: "{mine}" '
        f'overlaps with default cpuset "{edited.default_cpuset}"'
    )


def test_same_pod_sharing_is_not_double_assignment() -> None:
    from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData

    shared = CPUCheckpointData(
        "static", CPUSet.parse("0"),
        {"p": {"init": CPUSet.parse("1-2"), "app": CPUSet.parse("1-2")}},
        {"p": CPUSet.parse("1-3")},
    )  # fmt: skip
    assert double_assignments(shared) is None
    other = replace(shared, pod_entries={**shared.pod_entries, "q": CPUSet.parse("3")})
    assert double_assignments(other) == 'pod: q (pod-level) cpuset: "3" overlaps with pod: p (pod-level) cpuset: "1-3"'
