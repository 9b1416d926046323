"""The device manager's checkpoint in the agent's state directory, across
a real agent process restart: written as the kubelet writes it
(``device-plugins/kubelet_internal_checkpoint``), restored at start, so a
pod admitted before the restart keeps its devices and a new one gets the
others."""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.devicemanager.checkpoint import read_device_checkpoint
from podnuma.grpc import client
from podnuma.grpc.convert import pod_resources_doc
from tests.agent.helpers import NODE_YAML, AgentProcess, write_manifest

GPU = "example.com/gpu"
DEVICE_FILE = Path("device-plugins") / "kubelet_internal_checkpoint"
NODE_WITH_GPUS = NODE_YAML + f"""\
devices:
  {GPU}:
    - {{id: gpu0, numaNodes: [0]}}
    - {{id: gpu1, numaNodes: [0]}}
    - {{id: gpu2, numaNodes: [1]}}
    - {{id: gpu3, numaNodes: [1]}}
"""


def gpu_pod(name: str, gpus: int) -> dict[str, Any]:
    res = {"cpu": "2", "memory": "1Gi", GPU: str(gpus)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": res, "limits": res}}]}}


@pytest.fixture
def agent() -> Iterator[AgentProcess]:
    base = Path(tempfile.mkdtemp(prefix="pnd", dir="/tmp"))
    a = AgentProcess(base)
    (base / "node.yaml").write_text(NODE_WITH_GPUS)
    try:
        yield a
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


def gpus_listed(a: AgentProcess) -> dict[str, list[str]]:
    with client.connect(a.socket) as stub:
        out: dict[str, list[str]] = {}
        for p in client.list_pods(stub).pod_resources:
            doc = pod_resources_doc(p)
            out[p.name] = sorted(i for c in doc["containers"] for d in c["devices"] for i in d["deviceIds"])
        return out


def settled(a: AgentProcess, names: set[str]) -> dict[str, Any]:
    want = {str(a.manifests / n) for n in names}
    return a.wait(lambda s: {p["file"] for p in s["pods"]} == want, f"pods of {sorted(names)}")


def test_devices_written_and_restored_across_a_restart(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    write_manifest(a.manifests, "train.yaml", gpu_pod("train", 2))
    st = settled(a, {"train.yaml"})
    (pod,) = st["pods"]
    assert pod["admitted"] is True
    before = gpus_listed(a)["train-kep-node"]
    assert len(before) == 2
    data = read_device_checkpoint((a.state / DEVICE_FILE).read_bytes())
    assert data.error is None
    assert {e.pod_uid: e.device_ids() for e in data.entries} == {pod["uid"]: tuple(before)}
    assert data.registered == {GPU: ("gpu0", "gpu1", "gpu2", "gpu3")}

    # killed; a second GPU pod arrives meanwhile and is admitted first after
    # the restart (file order): it must not get the devices train holds
    a.kill()
    write_manifest(a.manifests, "other.yaml", gpu_pod("other", 2))
    a.start()
    st = settled(a, {"train.yaml", "other.yaml"})
    assert all(p["admitted"] for p in st["pods"]), st["pods"]
    a.wait_ready()
    listed = gpus_listed(a)
    assert listed["train-kep-node"] == before
    assert set(listed["other-kep-node"]).isdisjoint(before) and len(listed["other-kep-node"]) == 2
    data = read_device_checkpoint((a.state / DEVICE_FILE).read_bytes())
    held = {e.pod_uid: set(e.device_ids()) for e in data.entries}
    assert held[pod["uid"]] == set(before) and len(held) == 2
    assert a.signal(signal.SIGTERM) == 0


def test_unreadable_device_checkpoint_does_not_refuse_the_start(agent: AgentProcess) -> None:
    # the kubelet logs a device checkpoint it cannot read (here: a wrong
    # checksum) and starts with no device state; its next write replaces it
    a = agent
    (a.state / DEVICE_FILE.parent).mkdir(parents=True)
    (a.state / DEVICE_FILE).write_bytes(b'{"Data": {"PodDeviceEntries": [], "RegisteredDevices": {}}, "Checksum": 1}')
    a.start()
    a.wait_ready()
    write_manifest(a.manifests, "train.yaml", gpu_pod("train", 2))
    st = settled(a, {"train.yaml"})
    assert st["pods"][0]["admitted"] is True
    data = read_device_checkpoint((a.state / DEVICE_FILE).read_bytes())
    assert data.error is None and [e.pod_uid for e in data.entries] == [st["pods"][0]["uid"]]


def test_device_directory_symlinked_out_is_not_followed(agent: AgentProcess, tmp_path: Path) -> None:
    a = agent
    outside = tmp_path / "outside"
    outside.mkdir()
    a.state.mkdir(parents=True)
    (a.state / DEVICE_FILE.parent).symlink_to(outside)
    a.start()
    assert a.proc is not None and a.proc.wait(timeout=60) == 2
    assert "device-plugins/kubelet_internal_checkpoint" in a.log() and "symlink" in a.log()
    assert list(outside.iterdir()) == []
