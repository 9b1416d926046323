"""A static pod's validation under the kubelet's configured feature gates
against the kubelet's file source (``kubelet-oracle staticpod
--feature-gates``: k8s.io/kubernetes v1.37.2 pkg/kubelet/config/common.go,
``ValidatePodCreate`` with ``GetValidationOptionsFromPodSpecAndMeta``).

The options the kubelet derives from its gates for a new pod:
``PodDeletionCost`` (the deletion-cost annotation), ``EnvFiles`` (the
wording of an empty ``valueFrom``), ``UserNamespacesHostNetworkSupport``
(``hostNetwork`` with ``hostUsers: false``), ``SELinuxMount`` (only
``Recursive`` without it), ``TaintTolerationComparisonOperators``
(``Lt``/``Gt`` tolerations and their values), ``ContainerRestartRules`` and
``RestartAllContainersOnContainerExits`` (restart rules and their
actions), ``MatchLabelKeysInPodTopologySpread`` and its
``SelectorMerge`` (which ``matchLabelKeys`` rule), ``StrictIPCIDRValidation``
(leading zeros, IPv4-mapped IPv6 addresses), ``PodLevelResources``
(``spec.resources`` checked: without it the kubelet keeps the field but
neither checks nor uses it, podnuma drops it) and, in the v1 defaults,
``PodLevelResourcesFixDefaulting`` (off: pod-level requests and hugepage
limits defaulted before validation). podnuma takes them from its kubelet
configuration (``featureGates``): each manifest is read by both under the
same gates, the kubelet's whole message (every error, in its order) inside
podnuma's; for an accepted one the QoS class and the resources (pod-level
and per container) as the kubelet sees them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent.manifests import parse_manifest
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.qos import compute_pod_qos
from podnuma.errors import InputError
from tests.oracle.test_staticpod_differential import HEAD, NODE, _as_values, _values, kubelet_words

_NO_PLR = {"PodLevelResources": False, "PodLevelResourcesFixDefaulting": False,
           "PodLevelResourcesFixKubeletQOSClass": False, "InPlacePodLevelResourcesVerticalScaling": False}
#: gate set name -> the gates
GATE_SETS: dict[str, dict[str, bool]] = {
    "defaults": {},
    "no-deletion-cost": {"PodDeletionCost": False},
    "no-env-files": {"EnvFiles": False},
    "userns-host-network": {"UserNamespacesHostNetworkSupport": True},
    "no-selinux-mount": {"SELinuxMount": False},
    "toleration-comparison": {"TaintTolerationComparisonOperators": True},
    "no-restart-all": {"RestartAllContainersOnContainerExits": False},
    "no-restart-rules": {"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False},
    "no-selector-merge": {"MatchLabelKeysInPodTopologySpreadSelectorMerge": False},
    "no-match-label-keys": {"MatchLabelKeysInPodTopologySpread": False,
                            "MatchLabelKeysInPodTopologySpreadSelectorMerge": False},
    "no-pod-level-resources": _NO_PLR,
    "no-fix-defaulting": {"PodLevelResourcesFixDefaulting": False},
    "no-strict-ip": {"StrictIPCIDRValidation": False},
}


def _pod(spec: str = "", meta: str = "{name: web}", container: str = "{name: c, image: nginx}") -> str:
    extra = "".join(f"  {line}\n" for line in spec.splitlines())
    return HEAD + f"metadata: {meta}\nspec:\n" + extra + f"  containers:\n  - {container}\n"


_SPREAD = "topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
#: name -> manifest (each read under every gate set)
MANIFESTS: dict[str, str] = {
    "deletion-cost.yaml": _pod(meta="{name: web, annotations: {controller.kubernetes.io/pod-deletion-cost: '01'}}"),
    "env-value-from-empty.yaml": _pod(container="{name: c, image: x, env: [{name: A, valueFrom: {}}]}"),
    "env-file-key-ref.yaml": _pod("volumes: [{name: v, emptyDir: {}}]",
                                  container="{name: c, image: x, env: [{name: A, valueFrom: {fileKeyRef: "
                                            "{volumeName: v, path: p, key: K}}}]}"),
    "userns-host-network.yaml": _pod("hostUsers: false\nhostNetwork: true\nhostPID: true"),
    "selinux-mount-option.yaml": _pod("securityContext: {seLinuxChangePolicy: MountOption}"),
    "selinux-recursive.yaml": _pod("securityContext: {seLinuxChangePolicy: Recursive}"),
    "tolerations-compare.yaml": _pod(
        "tolerations: [{key: a, operator: Lt, value: '10', effect: NoSchedule}, {key: b, operator: Gt, value: abc},"
        " {key: c, operator: Lt}, {key: d, operator: Gt, value: '05'}, {key: e, operator: Lt, value: '-0'},"
        " {key: f, operator: Gt, value: '99999999999999999999'}, {key: g, operator: Lt, value: '+5'},"
        " {key: h, operator: Gt, value: '-12'}, {key: i, operator: Ge, value: '1'}]"),
    # (strconv.ParseInt's errors: read left to right, the first problem wins)
    "tolerations-parse-int.yaml": _pod(
        "tolerations: [{key: ta, operator: Lt, value: '99999999999999999999a'},"
        " {key: tb, operator: Gt, value: '-9223372036854775809a'}, {key: tc, operator: Lt, value: '18446744073709551615a'},"
        " {key: td, operator: Gt, value: '18446744073709551616a'}, {key: te, operator: Lt, value: '+'},"
        " {key: tf, operator: Gt, value: '-'}, {key: tg, operator: Lt, value: '1_000'},"
        " {key: th, operator: Gt, value: '9223372036854775808'}, {key: ti, operator: Lt, value: '-9223372036854775808'},"
        " {key: tj, operator: Gt, value: '-9223372036854775809'}, {key: tk, operator: Lt, value: '-99999999999999999999x'},"
        " {key: tl, operator: Gt, value: '１'}, {key: tm, operator: Lt, value: '12 '},"
        " {key: tn, operator: Gt, value: '+99999999999999999999999'}, {key: to, operator: Lt, value: '0x10'}]"),
    "tolerations-annotation-compare.yaml": _pod(
        meta="{name: web, annotations: {scheduler.alpha.kubernetes.io/tolerations: "
             "'[{\"key\": \"a\", \"operator\": \"Gt\", \"value\": \"x1\"}]'}}"),
    "restart-all-app.yaml": _pod(container="{name: c, image: x, restartPolicy: Never, restartPolicyRules: "
                                           "[{action: RestartAllContainers, exitCodes: {operator: In, values: [1]}},"
                                           " {action: Restart, exitCodes: {operator: In, values: [2]}}]}"),
    "restart-rules-sidecar.yaml": _pod("initContainers: [{name: s, image: x, restartPolicy: Always, "
                                       "restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [1]}}]}]"),
    "restart-rules-init.yaml": _pod("initContainers: [{name: s, image: x, restartPolicy: OnFailure, "
                                    "restartPolicyRules: [{action: Nope}]}]"),
    "match-label-keys-in-selector.yaml": _pod(
        _SPREAD + "labelSelector: {matchLabels: {app: a}, matchExpressions: [{key: tier, operator: Exists}]},"
        " matchLabelKeys: [app, tier, 'Bad Key', pod-template-hash]}]"),
    "match-label-keys-no-selector.yaml": _pod(_SPREAD + "matchLabelKeys: [app, 'x y']}]"),
    "pod-level-resources-bad.yaml": _pod("resources: {requests: {cpu: '2'}, limits: {cpu: '1'}, claims: [{name: x}]}"),
    "ip-addresses.yaml": _pod("hostAliases: [{ip: 010.1.1.1, hostnames: [a]}, {ip: '::ffff:1.2.3.4', hostnames: [b]},"
                              " {ip: '1.2.3', hostnames: [c]}]\ndnsPolicy: None\n"
                              "dnsConfig: {nameservers: ['1.02.3.4', '::ffff:10.0.0.1', 'x']}"),
    # (SetDefaults_Pod's pod-level defaulting without PodLevelResourcesFixDefaulting)
    "pod-level-limits-default-requests.yaml": _pod(
        "resources: {limits: {cpu: '2', memory: 1Gi}}\ninitContainers: [{name: i, image: x, resources: "
        "{requests: {cpu: '3'}}}]", container="{name: c, image: x, resources: {requests: {cpu: '1'}}}"),
    "pod-level-limits-below-container-requests.yaml": _pod(
        "resources: {limits: {cpu: '2'}}", container="{name: c, image: x, resources: {requests: {cpu: '3'}}}"),
    "pod-level-hugepages-default-limits.yaml": _pod(
        "resources: {requests: {memory: 1Gi}}", container="{name: c, image: x, resources: {limits: "
                                                           "{hugepages-2Mi: 4Mi, memory: 1Gi}}}"),
    "pod-level-hugepages-request-no-default.yaml": _pod(
        "resources: {requests: {hugepages-2Mi: 2Mi, cpu: '1'}}", container="{name: c, image: x}"),
    "pod-level-limits-only.yaml": _pod("resources: {limits: {cpu: '1', memory: 1Gi}}"),
    "pod-level-memory-over-limit.yaml": _pod(
        "resources: {limits: {memory: 1Gi}}", container="{name: c, image: x, resources: {requests: {memory: 2Gi}}}"),
    "pod-level-resources-good.yaml": _pod("resources: {requests: {cpu: '1'}, limits: {cpu: '1', memory: 1Gi}}",
                                          container="{name: c, image: x, resources: {requests: {cpu: 500m}}}"),
}


def _oracle(binary: str, gates: dict[str, bool], files: list[Path]) -> list[dict[str, Any]]:
    flag = ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
    args = [binary, "staticpod", "--node-name", NODE, *(["--feature-gates", flag] if flag else []), *map(str, files)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _ours(path: Path, gates: dict[str, bool]) -> dict[str, Any]:
    view = load_kubelet_config({"featureGates": gates} if gates else {}).feature_gates
    try:
        pod = parse_manifest(path.read_bytes(), path, node_name=NODE, gates=view).pod
    except InputError as e:
        return {"error": str(e)}
    return {
        "name": pod.name, "namespace": pod.namespace,
        "qosClass": compute_pod_qos(pod, pod_level_resources=view.enabled("PodLevelResources")),
        "resources": {
            "pod": None if pod.resources is None else {
                "requests": _values(pod.resources.requests), "limits": _values(pod.resources.limits)},
            "containers": [{"name": c.name, "kind": c.kind, "requests": _values(c.requests),
                            "limits": _values(c.limits)} for c in (*pod.init_containers, *pod.containers)],
        },
    }


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    d = tmp_path_factory.mktemp("manifests")
    files = []
    for name, text in MANIFESTS.items():
        (d / name).write_text(text)
        files.append(d / name)
    out: dict[tuple[str, str], Any] = {}
    for set_name, gates in GATE_SETS.items():
        for f, kubelet in zip(files, _oracle(oracle_binary, gates, files), strict=True):
            out[set_name, f.name] = (kubelet, _ours(f, gates))
    return out


def _verdict(answer: dict[str, Any]) -> dict[str, Any]:
    """The kubelet's answer without the UID: its error (every message), or
    the admitted pod's name, namespace, QoS class and resources."""
    return {k: v for k, v in answer.items() if k != "uid"}


def test_the_gates_change_the_kubelets_verdicts(decoded: dict[tuple[str, str], Any]) -> None:
    """Each gate set changes the kubelet's verdict (not only the UID) on
    some manifest (the cases exercise every option)."""
    for set_name in GATE_SETS:
        if set_name == "defaults":
            continue
        assert any(_verdict(decoded[set_name, m][0]) != _verdict(decoded["defaults", m][0])
                   for m in MANIFESTS), set_name


@pytest.mark.parametrize(("set_name", "name"), [(g, m) for g in sorted(GATE_SETS) for m in sorted(MANIFESTS)])
def test_validated_under_the_configured_gates(decoded: dict[tuple[str, str], Any], set_name: str,
                                              name: str) -> None:
    kubelet, ours = decoded[set_name, name]
    if "error" in kubelet:
        assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
        assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])
    else:
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        assert (ours["name"], ours["namespace"], ours["qosClass"]) == (
            kubelet["name"], kubelet["namespace"], kubelet["qosClass"])
        theirs = _as_values(kubelet["resources"])
        assert ours["resources"]["containers"] == theirs["containers"]
        if GATE_SETS[set_name].get("PodLevelResources", True):
            assert ours["resources"]["pod"] == theirs["pod"]
        else:  # (the kubelet keeps spec.resources unchecked and unused; podnuma drops it)
            assert ours["resources"]["pod"] is None
