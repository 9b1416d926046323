"""A real kubelet on this machine, registered to the loopback control plane.

The kubelet (built from the Go module proxy by ``cluster/build``) runs as
root with the fake CRI runtime of k8s.io/cri-client (``fake-cri``: sandboxes
and containers live in that process's memory; it records the Linux
resources the kubelet asks for each container), the static CPU manager, the
Static memory manager and the topology manager, both pod-level gates, and
the cgroupfs driver on this machine's cgroup hierarchy under a cgroup root
of its own (so it never touches another kubelet's cgroups). Its state
(checkpoints, PodResources socket, pod directories) stays in a temporary
root directory.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import controlplane
from .controlplane import ControlPlane, Process, StartError, free_port, spawn

CGROUP_FS = Path("/sys/fs/cgroup")
RESERVED_MEMORY = "200Mi"  # kubeReserved 100Mi + evictionHard memory.available 100Mi


def cgroup_version() -> int:
    """2 when /sys/fs/cgroup is a cgroup2 mount, else 1 (the kubelet's test:
    the file system type of /sys/fs/cgroup)."""
    return 2 if _fstype(CGROUP_FS) == "cgroup2" else 1


def _fstype(path: Path) -> str:
    """The type of the file system mounted exactly at ``path`` ("" if none)."""
    kind = ""
    with open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and parts[1] == str(path):
                kind = parts[2]  # the last mount there is the visible one
    return kind


def v1_hierarchies() -> dict[str, Path]:
    """Mounted cgroup v1 controllers -> their hierarchy root."""
    out: dict[str, Path] = {}
    with open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 4 and parts[2] == "cgroup":
                for opt in parts[3].split(","):
                    if opt in ("cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb", "blkio",
                               "devices", "freezer", "net_cls", "perf_event", "net_prio", "rdma",
                               "misc") or opt.startswith("name="):
                        out[opt] = Path(parts[1])
    return out


def host_ip() -> str | None:
    """This machine's IPv4 address on its default route (what the kubelet
    itself would pick as the node IP), or None."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("203.0.113.1", 9))  # a UDP connect sends no packet
            ip: str = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def kubelet_config(*, address: str, port: int, healthz: int, pki: controlplane.PKI, crt: Path, key: Path,
                   cgroup_root: str, logs: Path, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": address,
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz,
        "tlsCertFile": str(crt),
        "tlsPrivateKeyFile": str(key),
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(pki.ca_crt)}},
        "authorization": {"mode": "Webhook"},
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "memoryManagerPolicy": "Static",
        "kubeReserved": {"memory": "100Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": RESERVED_MEMORY}}],
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": scope,
        "enforceNodeAllocatable": ["pods"],
        "localStorageCapacityIsolation": False,
        "podLogsDirectory": str(logs),
        "resolvConf": "",
        "serializeImagePulls": False,
        "registerNode": True,
        "nodeStatusUpdateFrequency": "2s",
        "syncFrequency": "5s",
        "fileCheckFrequency": "5s",
    }


@dataclass
class Kubelet:
    name: str
    root: Path
    config_file: Path
    config: dict[str, Any]
    cgroup_root: str
    record: Path
    processes: list[Process]
    cgroup_dirs: list[Path]
    tunables: dict[Path, str]

    @property
    def pod_resources_socket(self) -> Path:
        return self.root / "pod-resources" / "kubelet.sock"

    def log(self, lines: int = 60) -> str:
        return "\n\n".join(f"--- {p.name}\n{p.tail(lines)}" for p in self.processes)

    def alive(self) -> bool:
        return all(p.popen.poll() is None for p in self.processes)

    def records(self) -> list[dict[str, Any]]:
        out = []
        with contextlib.suppress(FileNotFoundError), open(self.record) as fh:
            for line in fh:
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.stop()
        # What the kubelet mounted: its root directory bound onto itself (to
        # share mount propagation) and volumes under it (tmpfs for secrets and
        # service-account tokens), deepest first.
        with open("/proc/self/mounts") as fh:
            mounts = [line.split()[1] for line in fh if len(line.split()) > 1]
        root = str(self.root)
        inside = [m for m in mounts if m == root or m.startswith(root + "/")]
        for m in sorted(inside, key=len, reverse=True):
            subprocess.run(["umount", m], capture_output=True, check=False)
        # The pod cgroups the kubelet made, deepest first, then our root.
        for base in self.cgroup_dirs:
            if not base.exists():
                continue
            for d in sorted((p for p in base.rglob("*") if p.is_dir()),
                            key=lambda p: len(p.parts), reverse=True):
                with contextlib.suppress(OSError):
                    d.rmdir()
            with contextlib.suppress(OSError):
                base.rmdir()
        for tunable, value in self.tunables.items():
            with contextlib.suppress(OSError):
                if tunable.read_text() != value:
                    tunable.write_text(value)


def _make_cgroup_root(name: str) -> list[Path]:
    """``/name`` in every hierarchy (the kubelet wants its cgroup root to
    exist); a cpuset cgroup starts with its parent's CPUs and nodes. Returns
    every directory the kubelet may create cgroups under (for clean-up)."""
    dirs: list[Path] = []
    if cgroup_version() == 2:
        d = CGROUP_FS / name
        d.mkdir(exist_ok=True)
        return [d]
    for ctrl, root in sorted(v1_hierarchies().items()):
        d = root / name
        if d in dirs:
            continue
        d.mkdir(exist_ok=True)
        dirs.append(d)
        if ctrl == "cpuset":
            for f in ("cpuset.cpus", "cpuset.mems"):
                (d / f).write_text((root / f).read_text())
    unified = CGROUP_FS / "unified"  # a hybrid host's v2 hierarchy
    if _fstype(unified) == "cgroup2":
        dirs.append(unified / name)
    return dirs


# The kernel settings a kubelet sets at start (protectKernelDefaults off);
# put back as found when it stops.
KERNEL_TUNABLES = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")


def _save_tunables() -> dict[Path, str]:
    out = {}
    for t in KERNEL_TUNABLES:
        p = Path("/proc/sys") / t
        with contextlib.suppress(OSError):
            out[p] = p.read_text()
    return out


def start(cp: ControlPlane, workdir: Path, *, scope: str = "pod", timeout: float = 120) -> Kubelet:
    """fake-cri and a kubelet registered as node ``podnuma-<id>``; waits
    until the node is Ready. Raises StartError with the kubelet's log."""
    binaries = controlplane.bin_dir()
    ident = uuid.uuid4().hex[:8]
    name = f"podnuma-{ident}"
    # The kubelet's API port listens on this machine's own address, not on
    # loopback: the API server refuses to proxy to a loopback address
    # (nodes/proxy answers 400 "address not allowed"), and the kubelet
    # refuses a loopback node IP. Clients need a certificate of this run's
    # CA; everything else (healthz, the control plane) stays on loopback.
    ip = host_ip()
    if ip is None:
        raise StartError("this machine has no non-loopback IPv4 address for the kubelet's API")
    workdir.mkdir(parents=True, exist_ok=True)
    root = workdir / "root"
    root.mkdir(exist_ok=True)
    cri = workdir / "cri.sock"
    record = workdir / "cri-requests.jsonl"
    crt, key = cp.pki.issue(f"kubelet-{ident}", name, server=True, ips=[ip])
    cfg = kubelet_config(address=ip, port=free_port(), healthz=free_port(), pki=cp.pki, crt=crt, key=key,
                         cgroup_root=f"/podnuma-{ident}", logs=workdir / "pod-logs", scope=scope)
    cfg["containerRuntimeEndpoint"] = f"unix://{cri}"
    cfg["imageServiceEndpoint"] = f"unix://{cri}"
    config_file = workdir / "kubelet-config.json"
    config_file.write_text(json.dumps(cfg, indent=2))
    cgroup_dirs = _make_cgroup_root(f"podnuma-{ident}")
    procs: list[Process] = []
    kl = Kubelet(name, root, config_file, cfg, f"/podnuma-{ident}", record, procs, cgroup_dirs,
                 _save_tunables())
    try:
        procs.append(spawn("fake-cri", [str(binaries / "fake-cri"), f"-listen=unix://{cri}",
                                        f"-record={record}"], workdir / "fake-cri.log"))
        deadline = time.monotonic() + 30
        while not cri.exists():
            if time.monotonic() > deadline or procs[0].popen.poll() is not None:
                raise StartError(f"fake-cri did not start:\n{procs[0].tail()}")
            time.sleep(0.1)
        procs.append(spawn("kubelet", [
            str(binaries / "kubelet"), f"--config={config_file}",
            f"--kubeconfig={cp.admin_kubeconfig}", f"--root-dir={root}",
            f"--hostname-override={name}", f"--node-ip={ip}", "--v=2",
        ], workdir / "kubelet.log"))
        deadline = time.monotonic() + timeout
        while True:
            if not kl.alive():
                raise StartError(f"the kubelet exited:\n{kl.log()}")
            r = cp.kubectl("get", "node", name, "-o", "json", check=False)
            if r.returncode == 0:
                node = json.loads(r.stdout)
                ready = [c for c in node.get("status", {}).get("conditions", [])
                         if c.get("type") == "Ready"]
                if ready and ready[0].get("status") == "True":
                    return kl
            if time.monotonic() > deadline:
                raise StartError(f"node {name} not Ready after {timeout:.0f} s:\n{kl.log()}")
            time.sleep(1)
    except BaseException:
        kl.stop()
        raise


@contextlib.contextmanager
def running(cp: ControlPlane, workdir: Path, **kw: Any) -> Iterator[Kubelet]:
    kl = start(cp, workdir, **kw)
    try:
        yield kl
    finally:
        kl.stop()
