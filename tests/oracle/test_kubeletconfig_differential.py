"""podnuma's KubeletConfiguration decoding against the kubelet's own codec
(``kubelet-oracle kubeletconfig``: pkg/kubelet/kubeletconfig/util/codec
``DecodeKubeletConfiguration``, strict decoding then lenient decoding with
the strict error as a logged warning).

A seeded corpus of configz answers (JSON, as a running kubelet serves them
and as the fleet reads them) built from a valid configuration with one to
three of: unknown fields (top level and nested), duplicated fields and map
keys, keys in another case, values of the wrong type, unknown and locked
feature gates, nulls. Both must fail alike, or decode to the same values
of every field podnuma honours with the same warning, word for word.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

from podnuma.api._kubeletconfig_v137 import SCHEMA
from podnuma.api.kubeletconfig import json_object_pairs, load_kubelet_config
from podnuma.errors import InputError, KubeletStartupError
from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import kubelet_reason

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_COUNT", 400)


class Obj(list[tuple[str, Any]]):
    """A JSON object as key/value pairs, so that a key can appear twice."""


def dump(value: Any) -> str:
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dump(Obj(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def _base(rng: random.Random) -> Obj:
    cfg = Obj([
        ("enableServer", True), ("cgroupDriver", "systemd"),
        ("cpuManagerPolicy", rng.choice(("static", "none"))),
        ("topologyManagerPolicy", rng.choice(("none", "best-effort", "restricted", "single-numa-node"))),
        ("topologyManagerScope", rng.choice(("container", "pod"))),
        ("kubeReserved", {"cpu": "1", "memory": "1Gi"}),
        ("evictionHard", {"memory.available": "100Mi"}),
        ("memoryManagerPolicy", rng.choice(("None", "Static"))),
        ("reservedMemory", [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]),
        ("featureGates", {"PodLevelResourceManagers": rng.random() < 0.5}),
        ("logging", {"format": "text", "verbosity": 2}),
        ("authentication", {"webhook": {"enabled": True, "cacheTTL": "2m0s"}}),
        ("maxPods", 110),
        ("cpuManagerPolicyOptions", {"full-pcpus-only": "true"}),
    ])
    rng.shuffle(cfg)
    return cfg


def _set(cfg: Obj, key: str, value: Any) -> None:
    for i, (k, _) in enumerate(cfg):
        if k == key:
            cfg[i] = (k, value)
            return
    cfg.append((key, value))


def _get(cfg: Obj, key: str) -> Any:
    return next((v for k, v in cfg if k == key), None)


def _unknown_top(rng: random.Random, cfg: Obj) -> None:
    cfg.insert(rng.randint(0, len(cfg)), (rng.choice(("fooBar", "newFieldFromV139", "cpuManagerPolicyy")), 1))


def _unknown_nested(rng: random.Random, cfg: Obj) -> None:
    where = rng.choice(("logging", "authentication", "reservedMemory"))
    if where == "logging":
        _set(cfg, "logging", {"format": "text", "bogus": True})
    elif where == "authentication":
        _set(cfg, "authentication", {"webhook": {"enabled": True, "cacheTTLs": "1m"}, "x509s": {}})
    else:
        _set(cfg, "reservedMemory", [{"numaNode": 0, "limits": {"memory": "1Gi"}, "hugepages": 1}])


def _duplicate_field(rng: random.Random, cfg: Obj) -> None:
    key = rng.choice(("cpuManagerPolicy", "topologyManagerPolicy", "maxPods", "memoryManagerPolicy"))
    value = {"cpuManagerPolicy": "none", "topologyManagerPolicy": "restricted", "maxPods": 50,
             "memoryManagerPolicy": "None"}[key]
    cfg.insert(rng.randint(0, len(cfg)), (key, value))


def _duplicate_map_key(rng: random.Random, cfg: Obj) -> None:
    which = rng.choice(("evictionHard", "kubeReserved", "cpuManagerPolicyOptions"))
    if which == "evictionHard":
        _set(cfg, which, Obj([("memory.available", "100Mi"), ("nodefs.available", "10%"), ("memory.available", "200Mi")]))
    elif which == "kubeReserved":
        _set(cfg, which, Obj([("cpu", "1"), ("cpu", "2")]))
    else:
        _set(cfg, which, Obj([("full-pcpus-only", "true"), ("full-pcpus-only", "false")]))


def _case_variant(rng: random.Random, cfg: Obj) -> None:
    key = rng.choice(("CpuManagerPolicy", "cpumanagerpolicy", "TopologyManagerPolicy", "MaxPods"))
    cfg.insert(rng.randint(0, len(cfg)), (key, 7 if key == "MaxPods" else "static"))


def _wrong_type(rng: random.Random, cfg: Obj) -> None:
    key, value = rng.choice((
        ("maxPods", "110"), ("maxPods", 1.5), ("cpuManagerPolicy", 5), ("kubeReserved", ["cpu"]),
        ("enableServer", "yes"), ("featureGates", {"PodLevelResources": "true"}),
        ("logging", {"verbosity": -1}), ("evictionHard", {"memory.available": 100}),
        ("reservedMemory", {"numaNode": 0}), ("maxPods", 1 << 40),
    ))
    _set(cfg, key, value)


def _unknown_gate(rng: random.Random, cfg: Obj) -> None:
    gates = dict(_get(cfg, "featureGates") or {})
    gates[rng.choice(("SomeGateFromV139", "NoSuchGate"))] = True
    _set(cfg, "featureGates", gates)


def _null(rng: random.Random, cfg: Obj) -> None:
    _set(cfg, rng.choice(("cpuManagerPolicy", "kubeReserved", "evictionHard", "logging", "reservedMemory")), None)


MUTATIONS = (_unknown_top, _unknown_nested, _duplicate_field, _duplicate_map_key, _case_variant,
             _wrong_type, _unknown_gate, _null)


def corpus(seed: int, count: int) -> list[tuple[str, str]]:
    """(name, configz text): a few plain configurations, then mutated ones."""
    out = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig:{seed}:{i}")
        cfg = _base(rng)
        names = []
        for m in rng.sample(MUTATIONS, rng.choice((0, 1, 1, 2, 3))):
            m(rng, cfg)
            names.append(m.__name__.strip("_"))
        out.append((f"c{i}-" + "+".join(names or ["plain"]), '{"kubeletconfig": ' + dump(cfg) + "}"))
    return out


def podnuma_decode(text: str) -> dict[str, Any]:
    doc = json.loads(text, object_pairs_hook=json_object_pairs)["kubeletconfig"]
    try:
        cfg = load_kubelet_config(doc)
    except (InputError, KubeletStartupError) as e:
        return {"error": str(e)}
    return {
        "warning": cfg.decode_warning,
        "config": {
            "cpuManagerPolicy": cfg.cpu_manager_policy,
            "cpuManagerPolicyOptions": dict(cfg.cpu_manager_policy_options),
            "topologyManagerPolicy": cfg.topology_manager_policy,
            "topologyManagerScope": cfg.topology_manager_scope,
            "memoryManagerPolicy": cfg.memory_manager_policy,
            "kubeReserved": dict(cfg.kube_reserved_text),
            "featureGates": cfg.feature_gates.explicit(),
            "maxPods": cfg.max_pods,
            "reservedMemory": [
                {"numaNode": r.numa_node, "limits": {k: str(v) for k, v in r.limits.items()}}
                for r in cfg.reserved_memory
            ],
            "evictionHard": {k: v for k, v in cfg.eviction_hard.items() if k == "memory.available"},
        },
    }


def oracle_view(answer: dict[str, Any]) -> dict[str, Any]:
    if answer.get("error"):
        return {"error": answer["error"]}
    c = answer["config"]
    return {
        "warning": answer.get("warning", ""),
        "config": {
            "cpuManagerPolicy": c.get("cpuManagerPolicy"),
            "cpuManagerPolicyOptions": c.get("cpuManagerPolicyOptions") or {},
            "topologyManagerPolicy": c.get("topologyManagerPolicy"),
            "topologyManagerScope": c.get("topologyManagerScope"),
            "memoryManagerPolicy": c.get("memoryManagerPolicy"),
            "kubeReserved": c.get("kubeReserved") or {},
            "featureGates": c.get("featureGates") or {},
            "maxPods": c.get("maxPods"),
            "reservedMemory": c.get("reservedMemory") or [],
            # the codec applies no eviction defaults (loadConfigFile does, after it)
            "evictionHard": {k: v for k, v in (c.get("evictionHard") or {"memory.available": "100Mi"}).items()
                             if k == "memory.available"},
        },
    }


def _to_go_schema(schema: Any) -> Any:
    if isinstance(schema, str):
        return {"kind": schema}
    kind, inner = schema
    if kind == "struct":
        return {"kind": "struct", "fields": {k: _to_go_schema(v) for k, v in inner.items()}}
    return {"kind": kind, "elem": _to_go_schema(inner)}


def test_field_table_is_the_kubelets(oracle_binary: str) -> None:
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--schema"], capture_output=True, text=True,
                          check=True, timeout=60)
    assert _to_go_schema(SCHEMA) == json.loads(proc.stdout)


def test_decoding_matches_the_kubelets_codec(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    paths = []
    for i, (_, text) in enumerate(items):
        p = tmp_path / f"{i:05d}.json"
        p.write_text(text, encoding="utf-8")
        paths.append(str(p))
    proc = subprocess.run([oracle_binary, "kubeletconfig", *paths], capture_output=True, text=True,
                          check=True, timeout=600)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(items)
    mismatches = []
    kinds = {"strict": 0, "lenient": 0, "error": 0}
    for (name, text), answer in zip(items, answers, strict=True):
        theirs, mine = oracle_view(answer), podnuma_decode(text)
        kinds["error" if "error" in theirs else "lenient" if theirs["warning"] else "strict"] += 1
        if ("error" in theirs) != ("error" in mine) or "error" not in theirs and mine != theirs:
            mismatches.append(f"{name}: podnuma {mine} != kubelet {theirs}")
    print(f"kubelet configuration decoding: {len(items)} configurations (seed {SEED}): "
          f"{kinds['strict']} strict, {kinds['lenient']} lenient with a warning, {kinds['error']} refused; "
          f"{len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert all(kinds.values())


# -- the kubelet's --config file: its type from the file alone -----------------------
#
# ``kubelet-oracle kubeletconfig --file`` loads each file through the
# kubelet's own loader (cmd/kubelet/app/server.go loadConfigFile,
# pkg/kubelet/kubeletconfig/configfiles), the bytes as written: no
# apiVersion or kind added. podnuma's ``--kubelet-config FILE`` must accept
# and refuse the same files, the refusal in the kubelet's words (without the
# document the kubelet quotes after "is missing in"), naming the file.

_V1BETA1 = "apiVersion: kubelet.config.k8s.io/v1beta1\n"
_KIND = "kind: KubeletConfiguration\n"
_BODY = "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"

#: file name -> text
CONFIG_FILES: dict[str, str] = {
    "ok.yaml": _V1BETA1 + _KIND + _BODY,
    "ok.json": '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", '
               '"cpuManagerPolicy": "static"}',
    "ok-unknown-field.yaml": _V1BETA1 + _KIND + "fooBar: 1\n",
    "no-kind-no-apiversion.yaml": _BODY,
    "no-kind-no-apiversion.json": '{"cpuManagerPolicy": "static"}',
    "empty-object.json": "{}",
    "no-kind.yaml": _V1BETA1 + _BODY,
    "kind-no-apiversion.yaml": _KIND + _BODY,
    "kind-no-apiversion.json": '{"kind": "KubeletConfiguration", "cpuManagerPolicy": "static"}',
    "wrong-kind.yaml": _V1BETA1 + "kind: KubeProxyConfiguration\n" + _BODY,
    "kind-in-lower-case.yaml": _V1BETA1 + "kind: kubeletconfiguration\n",
    "pod.yaml": "apiVersion: v1\nkind: Pod\n",
    "wrong-apiversion-v1.yaml": "apiVersion: kubelet.config.k8s.io/v1\n" + _KIND + _BODY,
    "wrong-apiversion-v1alpha1.yaml": "apiVersion: kubelet.config.k8s.io/v1alpha1\n" + _KIND,
    "wrong-group.yaml": "apiVersion: kubeproxy.config.k8s.io/v1beta1\n" + _KIND,
    "version-without-group.yaml": "apiVersion: v1beta1\n" + _KIND,
    "group-without-version.yaml": "apiVersion: kubelet.config.k8s.io/\n" + _KIND,
    "two-slashes.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1/x\n" + _KIND,
    "empty-apiversion.yaml": "apiVersion: \"\"\n" + _KIND,
    "null-apiversion.yaml": "apiVersion: null\n" + _KIND,
    "empty-kind.yaml": _V1BETA1 + "kind: \"\"\n",
    "numeric-apiversion.yaml": "apiVersion: 1\n" + _KIND,
    "list-kind.json": '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": ["KubeletConfiguration"]}',
    "other-kubelet-kind.yaml": _V1BETA1 + "kind: SerializedNodeConfigSource\n",
    "credential-provider-v1.yaml": "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n",
    # the loader (configfiles.go Load) refuses only a file of no bytes as
    # empty; sigs.k8s.io/yaml decodes the first YAML document only
    "zero-bytes.yaml": "",
    "only-comment.yaml": "# only a comment\n",
    "only-newline.yaml": "\n",
    "null-document.yaml": "null\n",
    "blank.json": "  \n",
    "first-document-empty.yaml": "---\n---\n" + _V1BETA1 + _KIND,
    "second-document.yaml": _V1BETA1 + _KIND + _BODY + "---\n# second document\nfoo: 1\n",
    "second-document-other-kind.yaml": _V1BETA1 + _KIND + "---\nkind: Foo\n",
    # a v1 kind that fails strict decoding: the lenient decoder (v1beta1
    # and internal only) cannot decode it, so the strict error is given
    # (YAML: the keys met sorted, as sigs.k8s.io/yaml makes the JSON)
    "credential-provider-v1-unknown-field.yaml": "apiVersion: kubelet.config.k8s.io/v1\n"
                                                 "kind: CredentialProviderConfig\nfooBar: 1\n",
    "credential-provider-v1-nested-unknown.yaml": "apiVersion: kubelet.config.k8s.io/v1\nkind: "
                                                  "CredentialProviderConfig\nproviders:\n- name: a\n  fooBar: 1\n"
                                                  "  env: [{name: x, value: v, z: 1}]\nzed: 2\n",
    "credential-provider-v1-unknown.json": '{"apiVersion": "kubelet.config.k8s.io/v1", "kind": '
                                           '"CredentialProviderConfig", "zed": 1, "providers": [{"name": "a", '
                                           '"fooBar": 1}]}',
    "credential-provider-v1beta1-unknown-field.yaml": _V1BETA1 + "kind: CredentialProviderConfig\nfooBar: 1\n",
    "enforcement-null-item.yaml": _V1BETA1 + _KIND + "enforceNodeAllocatable: [pods, null]\n",
    "null-gate.yaml": _V1BETA1 + _KIND + "featureGates: {PodLevelResourceManagers: null}\n",
}

#: a null gate is false: refused for a gate locked to true (and a gate the
#: kubelet does not know is refused whatever its value)
NULL_GATE_FILES = {
    "null-locked-gate.yaml": _V1BETA1 + _KIND + "featureGates: {CPUManagerPolicyOptions: null}\n" + _BODY
                             + "cpuManagerPolicyOptions: {full-pcpus-only: \"true\"}\n",
    "null-locked-topology-gate.yaml": _V1BETA1 + _KIND + "featureGates:\n  TopologyManagerPolicyOptions: ~\n"
                                      + "topologyManagerPolicyOptions: {prefer-closest-numa-nodes: \"true\"}\n",
    "null-unknown-gate.yaml": _V1BETA1 + _KIND + "featureGates: {MemoryManagerPolicyOptions: null}\n"
                              + "memoryManagerPolicy: Static\n",
    "false-locked-gate.json": '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", '
                              '"featureGates": {"CPUManagerPolicyOptions": false}}',
}


def test_a_null_gate_is_refused_as_the_kubelet_refuses_it_at_featuregates(
    oracle_binary: str, tmp_path: Path
) -> None:
    """The kubelet's reason, and the blame on ``featureGates`` (not on the
    policy options field whose name the gate spells)."""
    from podnuma.inputs.pods import node_and_config
    from podnuma.inputs.startup import StartupFailure
    from podnuma.inputs.text import TextInput

    paths = []
    for name, text in NULL_GATE_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(tmp_path / name)
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=60)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for path, answer in zip(paths, answers, strict=True):
        theirs = answer["error"]
        # the v1beta1 defaulting panics: the process dies with Go's
        # "panic: " and the panic's text (the oracle recovers it and wraps
        # it as the loader's error)
        assert ", error panic: failed to merge global and in-flight KubeletConfiguration" in theirs, theirs
        reason = theirs[theirs.index("panic: "):]
        try:
            node_and_config(None, TextInput.read(path, what="kubelet configuration"))
        except StartupFailure as e:
            assert e.file == str(path) and e.path == "featureGates", (path.name, e.file, e.path)
            assert str(e) == reason, (reason, str(e))
        else:
            raise AssertionError(f"{path.name}: the kubelet refuses it ({theirs}); podnuma loads it")



def _podnuma_load_file(path: Path) -> str | None:
    from podnuma.inputs.pods import load_config_file

    try:
        load_config_file(path)
    except (InputError, KubeletStartupError) as e:
        return str(e)
    return None


def _kubelet_words(error: str) -> str:
    """The kubelet's reason, without the two wrappings naming the file (the
    document it quotes with its line breaks escaped: podnuma's message is
    one line)."""
    return kubelet_reason(error)


def test_config_file_type_as_the_kubelets_loader(oracle_binary: str, tmp_path: Path) -> None:
    paths = []
    for name, text in CONFIG_FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(tmp_path / name)
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=120)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(paths)
    refused = 0
    for path, answer in zip(paths, answers, strict=True):
        mine = _podnuma_load_file(path)
        theirs = answer.get("error")
        if theirs is None:
            assert mine is None, f"{path.name}: the kubelet loads it; podnuma refuses: {mine}"
            continue
        refused += 1
        assert mine is not None, f"{path.name}: the kubelet refuses it ({theirs}); podnuma loads it"
        assert "\n" not in mine and mine.startswith(str(path)), mine
        assert _kubelet_words(theirs) in mine, (theirs, mine)
    assert refused >= 15 and len(paths) - refused >= 3


def test_the_first_document_of_a_kubelet_file_is_the_configuration(tmp_path: Path) -> None:
    """The kubelet reads its --config file's first YAML document; a
    scenario stays one document."""
    from podnuma.inputs.pods import load_config_file

    (tmp_path / "k.yaml").write_text(_V1BETA1 + _KIND + _BODY + "---\n" + _V1BETA1 + _KIND, encoding="utf-8")
    assert load_config_file(tmp_path / "k.yaml").cpu_manager_policy == "static"
    (tmp_path / "s.yaml").write_text("kind: Scenario\nkubeletConfig: {}\n---\nfoo: 1\n", encoding="utf-8")
    try:
        load_config_file(tmp_path / "s.yaml")
    except InputError as e:
        assert "expected a single document" in str(e)
    else:
        raise AssertionError("a scenario of two documents loads")


def test_a_scenarios_configuration_gets_the_v1beta1_type(tmp_path: Path) -> None:
    """Not the kubelet's file: an inline ``kubeletConfig`` and the file a
    scenario's ``kubeletConfigFile`` names take apiVersion and kind when
    they have none (docs and the scenario contract; the oracle's scenario
    reader gives them too)."""
    from podnuma.inputs.pods import load_config_file

    (tmp_path / "cfg.yaml").write_text(_BODY, encoding="utf-8")
    (tmp_path / "inline.yaml").write_text("kind: Scenario\nkubeletConfig: {cpuManagerPolicy: static}\n")
    (tmp_path / "named.yaml").write_text("kind: Scenario\nkubeletConfigFile: cfg.yaml\n")
    assert load_config_file(tmp_path / "inline.yaml").cpu_manager_policy == "static"
    assert load_config_file(tmp_path / "named.yaml").cpu_manager_policy == "static"


#: feature gates given null, as the kubelet's codec decodes them
NULL_GATES = {
    "alpha": "featureGates: {CPUManagerPolicyAlphaOptions: null}\n",
    "beta": "featureGates:\n  PodLevelResourceManagers: ~\n  CPUManagerPolicyBetaOptions: null\n",
    "json": '{"featureGates": {"PodLevelResourceManagers": null, "CPUManagerPolicyAlphaOptions": true}}',
}


def load_config_document(path: Path) -> Any:
    from podnuma.inputs.documents import parse_document

    return parse_document(path.read_text(encoding="utf-8"), name=str(path)).data


def test_a_null_feature_gate_is_false_as_the_kubelet_decodes_it(oracle_binary: str, tmp_path: Path) -> None:
    paths = []
    for name, text in NULL_GATES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(tmp_path / name)
    proc = subprocess.run([oracle_binary, "kubeletconfig", *map(str, paths)], capture_output=True, text=True,
                          check=True, timeout=60)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for path, answer in zip(paths, answers, strict=True):
        theirs = answer["config"]["featureGates"]
        assert False in theirs.values(), answer
        mine = load_kubelet_config(load_config_document(path)).feature_gates.explicit()
        assert mine == theirs, (path.name, mine, theirs)
