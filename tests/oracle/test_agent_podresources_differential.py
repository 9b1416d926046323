"""The PodResources API of a running ``podnuma agent`` process against the
kubelet's own server (``kubelet-oracle podresources``), message by message.

The agent runs as a real process on a unix socket, with the scenario's node
and kubelet configuration; each ``addPod`` step is a manifest written into
its static-pod directory, each ``removePod`` the manifest deleted. After the
agent has decided (its status file), the oracle runs the same step, and both
sockets are asked the same questions with podnuma's client: v1 ``List``,
``Get`` of every pod the node knows and of one it does not,
``GetAllocatableResources``, v1alpha1 ``List`` (see
tests/oracle/podresources_harness.py for the canonical order).

Each sync of the agent ends with a pass of the CPU manager's reconcile
loop (``removeStaleState``: a pod rejected after its CPUs were allocated
loses them then), so the oracle runs every step followed by a
``reconcile`` step. The kubelet names a static pod ``NAME-NODENAME``; the oracle's scenario
gets the pods under the names the agent gives them, with the same UIDs.
Scenarios with steps a manifest directory cannot express
(``removeContainer``, ``reconcile``), starting state or devices are left
out, and so are scenarios podnuma refuses as invalid input or where it
reports a kubelet panic, and those with a pod the kubelet's file source
refuses as a static pod (``kubelet-oracle staticpod`` decides; the agent
refusing it too, else that is a difference) (each counted)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle import generate
from tests.oracle.harness import (
    env_int,
    random_settings,
    reports_kubelet_panic,
    run_podnuma,
    write_scenario,
)
from tests.oracle.podresources_harness import _Oracle, ask, compare_answers
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_AGENT_COUNT", 40)
DEADLINE = float(os.environ.get("PODNUMA_AGENT_DEADLINE", "90"))
STATUS = "podnuma-agent-status.json"


def _usable(doc: Any) -> bool:
    if doc.get("state") or doc.get("apiServer") or (doc.get("node") or {}).get("devices"):
        return False
    if "kubeletConfigFile" in doc or "machineInfoFile" in (doc.get("node") or {}):
        return False
    refs: set[str] = set()
    for st in doc.get("steps") or []:
        (op, body), = st.items()
        if op == "addPod":
            meta = body.get("metadata") or {}
            ref = f"{meta.get('namespace', 'default')}/{meta.get('name')}"
            if ref in refs:
                return False  # one manifest per pod name
            refs.add(ref)
        elif op != "removePod":
            return False
    return bool(doc.get("steps"))


class _Agent:
    def __init__(self, base: Path, scenario: Path) -> None:
        self.manifests = base / "manifests"
        self.state = base / "state"
        self.socket = base / "agent.sock"
        self.manifests.mkdir()
        self.log = base / "agent.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "podnuma.cli", "agent", "--manifests", str(self.manifests),
                 "--state-dir", str(self.state), "--node", str(scenario), "--kubelet-config", str(scenario),
                 "--podresources-socket", str(self.socket), "--resync", "1"],
                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
            )  # fmt: skip

    def status(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.state / STATUS).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return data if data.get("pid") == self.proc.pid else None

    def wait(self, cond: Any, what: str) -> dict[str, Any]:
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"agent exited ({self.proc.returncode}) waiting for {what}:\n{self.log.read_text()}")
            st = self.status()
            if st is not None and cond(st) and self.socket.exists():
                return st
            time.sleep(0.02)
        raise AssertionError(f"agent never reached: {what}\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _named_as_static(doc: Any, node: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The scenario with its pods named as the kubelet names static pods,
    every pod with an explicit UID; and each step's pod file name."""
    from podnuma.api.pod import derive_pod_uid

    out = copy.deepcopy(doc)
    files: dict[str, str] = {}
    for i, st in enumerate(out["steps"]):
        (op, body), = st.items()
        if op != "addPod":
            continue
        meta = body.setdefault("metadata", {})
        ns = meta.setdefault("namespace", "default")
        meta.setdefault("uid", derive_pod_uid(ns, meta["name"]))
        ref_old = f"{ns}/{meta['name']}"
        meta["name"] = f"{meta['name']}-{node.lower()}"
        files[ref_old] = files[meta["uid"]] = f"pod{i:03d}.yaml"
    for st in out["steps"]:
        (op, body), = st.items()
        if op == "removePod":
            st["removePod"] = next(
                s["addPod"]["metadata"]["uid"] for s in out["steps"] if "addPod" in s
                and files.get(body) == files.get(s["addPod"]["metadata"]["uid"])
            )  # fmt: skip
    return out, files


def _as_manifest(body: Any, node: str) -> dict[str, Any]:
    """A scenario's pod (named as the agent names it) as its static-pod
    manifest: the name without the node's suffix, every container with an
    image."""
    manifest = {"apiVersion": "v1", "kind": "Pod", **copy.deepcopy(body)}
    manifest["metadata"]["name"] = body["metadata"]["name"][: -len(node) - 1]  # the agent adds the suffix
    for key in ("initContainers", "containers"):  # a static pod's containers name an image
        for c in manifest.get("spec", {}).get(key) or []:
            c.setdefault("image", "registry.k8s.io/pause:3.10")
    return manifest


def _static_pods(binary: str, doc: Any, tmp: Path) -> tuple[bool, list[str]]:
    """Whether every pod of the scenario can be a static pod, as the
    kubelet's file source decides (``kubelet-oracle staticpod``: a pod with
    ephemeral containers, say, is refused by ValidatePodCreate and never
    admitted), and where podnuma's agent decides otherwise than the
    kubelet (each a difference: never a reason to leave a scenario out)."""
    from podnuma.agent.manifests import parse_manifest
    from podnuma.api.kubeletconfig import load_kubelet_config
    from podnuma.errors import InputError

    node = str((doc.get("node") or {}).get("name") or "node")
    named, _ = _named_as_static(doc, node)
    gates = load_kubelet_config({}).feature_gates
    d = tmp / "static"
    d.mkdir()
    files = []
    for k, st in enumerate(x for x in named["steps"] if "addPod" in x):
        f = d / f"pod{k:03d}.yaml"
        f.write_text(yaml.safe_dump(_as_manifest(st["addPod"], node), sort_keys=False))
        files.append(f)
    if not files:
        return True, []
    proc = subprocess.run([binary, "staticpod", "--node-name", node, *map(str, files)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(line) for line in proc.stdout.splitlines()]
    static, differ = True, []
    for f, kubelet in zip(files, verdicts, strict=True):
        try:
            parse_manifest(f.read_bytes(), f, node_name=node, gates=gates)
            ours = None
        except InputError as e:
            ours = str(e)
        if "error" in kubelet:
            static = False
        if ("error" in kubelet) != (ours is not None):
            differ.append(f"{f.name}: the kubelet {'refuses' if 'error' in kubelet else 'accepts'} it "
                          f"({kubelet.get('error', 'admitted')}); podnuma {'refuses' if ours else 'accepts'} it"
                          + (f" ({ours})" if ours else ""))
    return static, differ


def replay_agent(binary: str, name: str, doc: Any, tmp: Path, stats: dict[str, int]) -> list[str]:
    node = str((doc.get("node") or {}).get("name") or "node")
    named, files = _named_as_static(doc, node)
    # Every sync of the agent ends with a pass of the CPU manager's
    # reconcile loop (its removeStaleState): the oracle replays each step
    # followed by a reconcile step.
    for_oracle = dict(named)
    for_oracle["steps"] = [x for st in named["steps"] for x in (st, {"reconcile": {}})]
    path = write_scenario(for_oracle, tmp / "scenario.json")
    agent = _Agent(tmp, path)
    oracle = _Oracle(binary, path, tmp / "kubelet.sock")
    try:
        agent.wait(lambda s: s["syncs"] >= 1, "first sync")
        known: list[tuple[str, str]] = []
        for i, st in enumerate(named["steps"]):
            (op, body), = st.items()
            if op == "addPod":
                meta = body["metadata"]
                manifest = _as_manifest(body, node)
                f = files[meta["uid"]]
                tmpf = agent.manifests / f".{f}.tmp"
                tmpf.write_text(yaml.safe_dump(manifest, sort_keys=False))
                os.replace(tmpf, agent.manifests / f)
                known.append((meta["namespace"], meta["name"]))
                uid = meta["uid"]
                agent.wait(lambda s, uid=uid: any(p["uid"] == uid and p.get("decided") for p in s["pods"]),
                           f"step {i}: pod {uid} decided")
            else:
                (agent.manifests / files[body]).unlink()
                gone = next(s["addPod"]["metadata"] for s in named["steps"] if "addPod" in s
                            and s["addPod"]["metadata"]["uid"] == body)
                known = [k for k in known if k != (gone["namespace"], gone["name"])]
                agent.wait(lambda s, uid=body: all(p["uid"] != uid for p in s["pods"]), f"step {i}: pod {body} gone")
            for j in (2 * i, 2 * i + 1):
                line = oracle.next()
                if line != f"ready {j}":
                    return [f"kubelet-oracle at step {j}: {line}"]
            diffs = compare_answers(ask(agent.socket, known), ask(tmp / "kubelet.sock", known))
            stats["steps"] = stats.get("steps", 0) + 1
            stats["answers"] = stats.get("answers", 0) + 4 + len(known)
            if diffs:
                return [f"after step {i}:", *diffs]
        return []
    finally:
        oracle.close()
        agent.stop()


def _run(binary: str, items: list[tuple[str, Any]], tmp: Path, label: str) -> None:
    stats: dict[str, int] = {}
    found: list[tuple[str, list[str]]] = []
    for k, (name, doc) in enumerate(items):
        if not _usable(doc):
            stats["left_out"] = stats.get("left_out", 0) + 1
            continue
        d = tmp / f"s{k}"
        d.mkdir()
        mine = run_podnuma(write_scenario(doc, d / "original.json"))
        if mine.kind != "ok":
            # an invalid pod or configuration: the agent skips such a
            # manifest, the oracle refuses the scenario (compared elsewhere)
            stats["invalid"] = stats.get("invalid", 0) + 1
            continue
        static, differ = _static_pods(binary, doc, d)
        if differ:  # (the agent's decoding against the kubelet's: a difference, not a pass)
            found.append((name, differ))
            continue
        if not static:
            # a pod the kubelet's file source refuses, and the agent too: no
            # static pod to replay (test_staticpod_differential compares why)
            stats["not_static"] = stats.get("not_static", 0) + 1
            continue
        if reports_kubelet_panic(mine):
            # the kubelet's code dies at that pod (compared elsewhere)
            stats["kubelet_panic"] = stats.get("kubelet_panic", 0) + 1
            continue
        diffs = replay_agent(binary, name, doc, d, stats)
        stats["replayed"] = stats.get("replayed", 0) + 1
        if diffs:
            found.append((name, diffs))
    print(f"agent PodResources, {label}: {stats}, {len(found)} differences")
    if found:
        lines = [f"{n}:\n  " + "\n  ".join(d[:10]) for n, d in found[:6]]
        pytest.fail(f"{len(found)} agent replays differ from the kubelet's server:\n" + "\n".join(lines), pytrace=False)
    assert stats.get("replayed", 0) > 0 and stats.get("steps", 0) > stats["replayed"], stats


def test_examples(oracle_binary: str, tmp_path: Path) -> None:
    _run(oracle_binary, [(str(p.relative_to(ROOT)), _load(p)) for p in EXAMPLES], tmp_path, "examples")


def test_random(oracle_binary: str, tmp_path: Path) -> None:
    _run(oracle_binary, generate.scenarios(SEED + 6, COUNT, tmp_path), tmp_path, f"seed {SEED + 6}")
