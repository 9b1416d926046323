"""Running ``podnuma agent`` as a real subprocess, for the agent's tests."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "pod-level"
STATUS = "podnuma-agent-status.json"

NODE_YAML = """\
name: kep-node
synthetic:
  sockets: 2
  numaNodesPerSocket: 1
  coresPerNumaNode: 8
  threadsPerCore: 1
  memoryPerNumaNode: 16Gi
"""

KUBELET_YAML = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates:
  PodLevelResources: true
  PodLevelResourceManagers: true
cpuManagerPolicy: static
reservedSystemCPUs: "0"
memoryManagerPolicy: Static
kubeReserved: {memory: 924Mi}
evictionHard: {memory.available: 100Mi}
reservedMemory:
  - {numaNode: 0, limits: {memory: 1Gi}}
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
"""

# How long to wait for the agent before failing (a deadline, not a measurement).
DEADLINE = float(os.environ.get("PODNUMA_AGENT_DEADLINE", "90"))


def classic_pod(name: str, cpu: str = "2") -> dict[str, Any]:
    """A Guaranteed pod of one container ``c`` with ``cpu`` CPUs and 1Gi."""
    res = {"cpu": cpu, "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": res, "limits": res}}]},
    }


def example_pod(example: str, index: int = 0) -> dict[str, Any]:
    """The pod of step ``index`` of a pod-level example, as a Pod manifest."""
    doc = yaml.safe_load((EXAMPLES / example).read_text())
    pod = dict(doc["steps"][index]["addPod"])
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def write_manifest(directory: Path, name: str, pod: dict[str, Any] | str) -> Path:
    """Write atomically (hidden temp file, rename), as deployment tools do."""
    text = pod if isinstance(pod, str) else yaml.safe_dump(pod, sort_keys=False)
    tmp = directory / f".{name}.tmp"
    tmp.write_text(text)
    os.replace(tmp, directory / name)
    return directory / name


class AgentProcess:
    def __init__(self, base: Path, *extra: str) -> None:
        self.base = base
        self.manifests = base / "manifests"
        self.state = base / "state"
        self.socket = base / "kubelet.sock"
        self.manifests.mkdir(exist_ok=True)
        (base / "node.yaml").write_text(NODE_YAML)
        (base / "kubelet.yaml").write_text(KUBELET_YAML)
        self.extra = extra
        self.proc: subprocess.Popen[str] | None = None
        self.log_path = base / "agent.log"
        self.starts = 0

    def argv(self) -> list[str]:
        return [
            sys.executable, "-m", "podnuma.cli", "agent",
            "--manifests", str(self.manifests),
            "--state-dir", str(self.state),
            "--node", str(self.base / "node.yaml"),
            "--kubelet-config", str(self.base / "kubelet.yaml"),
            "--podresources-socket", str(self.socket),
            "--resync", "1",
            *self.extra,
        ]

    def start(self, nofile: tuple[int, int] | None = None) -> None:
        """Start the agent; ``nofile``: its (soft, hard) ``RLIMIT_NOFILE``,
        set by a small Python program that then executes the agent."""
        self.starts += 1
        argv = self.argv()
        if nofile is not None:
            shim = ("import os, resource, sys; "
                    f"resource.setrlimit(resource.RLIMIT_NOFILE, {nofile!r}); "
                    "os.execv(sys.argv[1], sys.argv[1:])")
            argv = [sys.executable, "-c", shim, *argv]
        log = self.log_path.open("a")
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=log, text=True, stdin=subprocess.DEVNULL
        )
        log.close()

    def status(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.state / STATUS).read_text())
            return data
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def wait(self, cond: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """Wait until the status file (written by this process) satisfies ``cond``."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"agent exited ({self.proc.returncode}) waiting for {what}:\n{self.log()}")
            st = self.status()
            if st is not None and st.get("pid") == self.proc.pid and cond(st):
                return st
            time.sleep(0.02)
        raise AssertionError(f"agent never reached: {what}\n{self.log()[-4000:]}")

    def wait_ready(self) -> dict[str, Any]:
        st = self.wait(lambda s: s["syncs"] >= 1, "first sync")
        # A killed agent leaves its socket file behind: wait until this
        # process accepts a connection, not until the file exists.
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(self.socket))
                return st
            except OSError:
                time.sleep(0.02)
            finally:
                probe.close()
        raise AssertionError(f"the PodResources socket never accepted a connection\n{self.log()[-4000:]}")

    def signal(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=DEADLINE)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=DEADLINE)

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def log_records(self) -> list[dict[str, Any]]:
        """The agent's log records so far: its complete lines (the last one
        may still be being written while the agent runs)."""
        text = self.log()
        out = []
        for line in text[:text.rfind("\n") + 1].splitlines():
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def metrics_url(self) -> str:
        for rec in reversed(self.log_records()):
            if rec.get("msg") == "Serving metrics":
                m = re.match(r"http://127\.0\.0\.1:(\d+)/metrics", rec["address"])
                assert m is not None
                return rec["address"]
        raise AssertionError("no metrics address in the log")
