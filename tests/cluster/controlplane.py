"""A real Kubernetes control plane on loopback, for tests and fixture scripts.

etcd and kube-apiserver (built from the Go module proxy by ``cluster/build``)
run as child processes bound to 127.0.0.1 on free ports, with a certificate
authority, serving and client certificates and a service-account key made
by the ``openssl`` command, RBAC authorization and an audit log (every
request the API server served, so tests can check what a client asked).
The NodeResourceTopology CRD can be installed on demand. ``kubectl`` (built
from the same release) drives it.

The binaries are looked up in ``$PODNUMA_CLUSTER_BIN``, else ``cluster/bin``
of the repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "cluster" / "manifests" / "noderesourcetopology-crd.yaml"
CONTROL_PLANE_BINARIES = ("etcd", "kube-apiserver", "kubectl")
NODE_BINARIES = ("kubelet", "fake-cri")


def bin_dir() -> Path:
    env = os.environ.get("PODNUMA_CLUSTER_BIN")
    return Path(env) if env else REPO / "cluster" / "bin"


def missing_binaries(names: Sequence[str] = CONTROL_PLANE_BINARIES) -> list[str]:
    d = bin_dir()
    return [n for n in names if not os.access(d / n, os.X_OK)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class PKI:
    """A throwaway certificate authority (EC P-256 keys, one day)."""

    def __init__(self, d: Path) -> None:
        self.dir = d
        d.mkdir(parents=True, exist_ok=True)
        self.ca_crt, self.ca_key = d / "ca.crt", d / "ca.key"
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                 "-subj", "/CN=podnuma-test-ca", cwd=d)

    def issue(self, name: str, cn: str, *, groups: Sequence[str] = (),
              server: bool = False, ips: Sequence[str] = ()) -> tuple[Path, Path]:
        """A certificate (and its key) signed by the CA: a server certificate
        for 127.0.0.1/localhost, or a client one for user ``cn`` in
        ``groups`` (one O= each)."""
        subj = f"/CN={cn}" + "".join(f"/O={g}" for g in groups)
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subj, cwd=self.dir)
        ext = self.dir / f"{name}.ext"
        if server:
            ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                           "extendedKeyUsage=serverAuth\n"
                           "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,"
                           f"DNS:kubernetes.default.svc,DNS:{cn}"
                           + "".join(f",IP:{ip}" for ip in ips) + "\n")
        else:
            ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                           "extendedKeyUsage=clientAuth\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", ext.name,
                 cwd=self.dir)
        return self.dir / f"{name}.crt", self.dir / f"{name}.key"


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def spawn(name: str, argv: Sequence[str], log: Path) -> Process:
    with open(log, "ab") as fh:
        p = subprocess.Popen(list(argv), stdout=fh, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    return Process(name, p, log)


class StartError(RuntimeError):
    pass


@dataclass
class ControlPlane:
    dir: Path
    pki: PKI
    server: str
    admin_kubeconfig: Path
    audit_log: Path
    processes: list[Process] = field(default_factory=list)

    # -- clients -------------------------------------------------------
    def kubeconfig_for(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig holding a client certificate for ``user`` (RBAC
        subject ``User user``) in ``groups``."""
        crt, key = self.pki.issue(f"user-{user}", user, groups=groups)
        path = self.dir / f"kubeconfig-{user}"
        write_kubeconfig(path, self.server, self.pki.ca_crt, crt, key, user)
        return path

    def kubectl(self, *args: str, kubeconfig: Path | None = None, input: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [str(bin_dir() / "kubectl"), f"--kubeconfig={kubeconfig or self.admin_kubeconfig}", *args]
        r = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
        return r

    def apply(self, docs: Sequence[dict[str, Any]] | dict[str, Any], *, verb: str = "create") -> None:
        """Create (or apply) objects through the API, as one kubectl call."""
        items = [docs] if isinstance(docs, dict) else list(docs)
        if not items:
            return
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        args = [verb, "-f", "-"]
        if verb == "apply":
            args.append("--server-side")
        self.kubectl(*args, input=body)

    def apply_status(self, docs: Sequence[dict[str, Any]]) -> None:
        """Set objects' status through the status subresource (server-side
        apply, as one kubectl call), as a kubelet reports it."""
        if docs:
            body = json.dumps({"apiVersion": "v1", "kind": "List", "items": list(docs)})
            self.kubectl("apply", "--server-side", "--subresource=status", "--force-conflicts",
                         "--field-manager=podnuma-test-kubelet", "-f", "-", input=body)

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def install_nrt_crd(self) -> None:
        self.kubectl("apply", "--server-side", "-f", str(CRD))
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                     "crd/noderesourcetopologies.topology.node.k8s.io")
        # Discovery refreshes asynchronously: wait until the resource lists.
        deadline = time.monotonic() + 60
        while self.kubectl("get", "noderesourcetopologies.topology.node.k8s.io", check=False).returncode:
            if time.monotonic() > deadline:
                raise StartError("the NodeResourceTopology CRD never became listable")
            time.sleep(0.5)

    def remove_nrt_crd(self) -> None:
        self.kubectl("delete", "--ignore-not-found", "--wait=true", "-f", str(CRD))
        deadline = time.monotonic() + 60
        while self.kubectl("get", "--raw", "/apis/topology.node.k8s.io/v1alpha2",
                           check=False).returncode == 0:
            if time.monotonic() > deadline:
                raise StartError("the NodeResourceTopology CRD never went away")
            time.sleep(0.5)

    def audit(self) -> list[dict[str, Any]]:
        """The audit events written so far (one per request, stage
        ResponseComplete)."""
        out = []
        with contextlib.suppress(FileNotFoundError), open(self.audit_log) as fh:
            for line in fh:
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.stop()


def write_kubeconfig(path: Path, server: str, ca: Path, crt: Path, key: Path, user: str) -> None:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "loopback", "cluster": {"server": server,
                                                     "certificate-authority": str(ca)}}],
        "users": [{"name": user, "user": {"client-certificate": str(crt), "client-key": str(key)}}],
        "contexts": [{"name": user, "context": {"cluster": "loopback", "user": user}}],
        "current-context": user,
    }, indent=2))


def _wait_ready(cp: ControlPlane, crt: Path, key: Path, apiserver: Process, timeout: float) -> None:
    ctx = ssl.create_default_context(cafile=str(cp.pki.ca_crt))
    ctx.load_cert_chain(str(crt), str(key))
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if apiserver.popen.poll() is not None:
            raise StartError(f"kube-apiserver exited ({apiserver.popen.returncode}):\n{apiserver.tail()}")
        try:
            with urllib.request.urlopen(f"{cp.server}/readyz", context=ctx, timeout=5) as r:
                if r.status == 200:
                    return
        except Exception as e:  # not up yet
            last = str(e)
        time.sleep(0.5)
    raise StartError(f"kube-apiserver not ready after {timeout:.0f} s ({last}):\n{apiserver.tail()}")


AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
"""


def start(workdir: Path, *, timeout: float = 180) -> ControlPlane:
    """etcd + kube-apiserver on loopback; raises StartError with the
    process's last log lines when either does not come up."""
    binaries = bin_dir()
    workdir.mkdir(parents=True, exist_ok=True)
    pki = PKI(workdir / "pki")
    server_crt, server_key = pki.issue("apiserver", "kube-apiserver", server=True)
    admin_crt, admin_key = pki.issue("admin", "podnuma-admin", groups=["system:masters"])
    # The identity the API server shows a kubelet (nodes/proxy, logs, exec).
    kc_crt, kc_key = pki.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client",
                               groups=["system:masters"])
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key", cwd=pki.dir)
    _openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki.dir)

    etcd_client, etcd_peer, secure = free_port(), free_port(), free_port()
    procs: list[Process] = []
    etcd = spawn("etcd", [
        str(binaries / "etcd"), "--name=podnuma", f"--data-dir={workdir / 'etcd'}",
        f"--listen-client-urls=http://127.0.0.1:{etcd_client}",
        f"--advertise-client-urls=http://127.0.0.1:{etcd_client}",
        f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}",
        f"--initial-cluster=podnuma=http://127.0.0.1:{etcd_peer}",
        "--listen-metrics-urls=", "--log-level=warn", "--unsafe-no-fsync",
    ], workdir / "etcd.log")
    procs.append(etcd)
    audit_policy = workdir / "audit-policy.yaml"
    audit_policy.write_text(AUDIT_POLICY)
    audit_log = workdir / "audit.log"
    apiserver = spawn("kube-apiserver", [
        str(binaries / "kube-apiserver"),
        f"--etcd-servers=http://127.0.0.1:{etcd_client}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={secure}",
        f"--tls-cert-file={server_crt}", f"--tls-private-key-file={server_key}",
        f"--client-ca-file={pki.ca_crt}",
        f"--service-account-key-file={pki.dir / 'sa.pub'}",
        f"--service-account-signing-key-file={pki.dir / 'sa.key'}",
        "--service-account-issuer=https://kubernetes.default.svc",
        "--service-cluster-ip-range=10.0.0.0/24",
        "--authorization-mode=RBAC",
        f"--kubelet-client-certificate={kc_crt}", f"--kubelet-client-key={kc_key}",
        "--kubelet-preferred-address-types=InternalIP",
        f"--audit-policy-file={audit_policy}", f"--audit-log-path={audit_log}",
        "--audit-log-format=json", "--audit-log-mode=blocking",
        "--endpoint-reconciler-type=none",
        "--v=1",
    ], workdir / "kube-apiserver.log")
    procs.append(apiserver)
    cp = ControlPlane(workdir, pki, f"https://127.0.0.1:{secure}", workdir / "kubeconfig-admin",
                      audit_log, procs)
    write_kubeconfig(cp.admin_kubeconfig, cp.server, pki.ca_crt, admin_crt, admin_key, "podnuma-admin")
    try:
        if etcd.popen.poll() is not None:
            raise StartError(f"etcd exited ({etcd.popen.returncode}):\n{etcd.tail()}")
        _wait_ready(cp, admin_crt, admin_key, apiserver, timeout)
        # The default service account (the controller manager would make it;
        # the ServiceAccount admission plugin needs it for pods).
        for _ in range(60):
            if cp.kubectl("get", "namespace", "default", check=False).returncode == 0:
                break
            time.sleep(0.5)
    except BaseException:
        cp.stop()
        raise
    return cp


@contextlib.contextmanager
def running(workdir: Path) -> Iterator[ControlPlane]:
    cp = start(workdir)
    try:
        yield cp
    finally:
        cp.stop()


# -- objects -------------------------------------------------------------

SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                 "selfLink")


def creatable(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as a client would send it: no server-set metadata, no status."""
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_FIELDS}
    return out


def ensure_namespaces(cp: ControlPlane, namespaces: Sequence[str]) -> None:
    """Namespaces with what the controller manager would put in them: the
    ``default`` service account (pods need it to pass admission) and the
    ``kube-root-ca.crt`` ConfigMap (a kubelet mounts it into every pod's
    service-account token volume)."""
    have = {n["metadata"]["name"] for n in cp.get_json("namespaces")["items"]}
    cp.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
              for n in sorted(set(namespaces) - have)])
    sas = {(s["metadata"]["namespace"], s["metadata"]["name"])
           for s in cp.get_json("serviceaccounts", "-A")["items"]}
    cp.apply([{"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "default", "namespace": n}}
              for n in sorted(set(namespaces)) if (n, "default") not in sas])
    cms = {(c["metadata"]["namespace"], c["metadata"]["name"])
           for c in cp.get_json("configmaps", "-A")["items"]}
    ca = cp.pki.ca_crt.read_text()
    cp.apply([{"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "kube-root-ca.crt", "namespace": n}, "data": {"ca.crt": ca}}
              for n in sorted(set(namespaces)) if (n, "kube-root-ca.crt") not in cms])


def create_nodes(cp: ControlPlane, nodes: Sequence[dict[str, Any]]) -> None:
    """Nodes through the API, then their status (capacity, allocatable,
    nodeInfo...) through the status subresource, as a kubelet reports it."""
    cp.apply([creatable(n) for n in nodes])
    cp.apply_status([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n["metadata"]["name"]},
                      "status": n["status"]} for n in nodes if n.get("status")])


def create_pods(cp: ControlPlane, pods: Sequence[dict[str, Any]], *, status: bool = True) -> None:
    """Pods through the API (defaulting, validation and admission are the
    API server's), then each one's status as a kubelet would report it
    (the API server keeps qosClass its own)."""
    ensure_namespaces(cp, sorted({p["metadata"].get("namespace", "default") for p in pods}))
    cp.apply([creatable(p) for p in pods])
    if not status:
        return
    statuses = []
    for p in pods:
        st = {k: v for k, v in (p.get("status") or {}).items() if k != "qosClass"}
        if st:
            statuses.append({"apiVersion": "v1", "kind": "Pod", "status": st, "metadata": {
                "name": p["metadata"]["name"], "namespace": p["metadata"].get("namespace", "default")}})
    cp.apply_status(statuses)


def podnuma(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The podnuma command line, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True,
                          text=True, timeout=300, input=stdin)


def have_openssl() -> bool:
    return shutil.which("openssl") is not None
