"""Values of the wrong type in the kubelet's ``--config`` file, podnuma
against the kubelet's own loader (``kubelet-oracle kubeletconfig --file``).

The codec decodes the JSON (a YAML file made JSON first) with Go's
encoding/json: a value of the wrong JSON type for its field (a string for a
bool, an int, a list, a map or a struct; a list or an object for a string;
a bool anywhere but a bool) is ``failed to decode: json: cannot unmarshal
string into Go struct field KubeletConfiguration.failSwapOn of type bool``
(the innermost struct, the path of JSON names without list indices or map
keys, the Go type: ``_kubeletconfig_gotypes_v137``); decoding goes on past
it, and the first one met is the error, unless a type that decodes itself
fails later, which ends the decoding at once with its own words: a
duration (``time: invalid duration "abc"``, or a value that is not a
string, as a string field's), the logging flush frequency (``invalid
duration "true": json: cannot unmarshal bool into Go value of type
time.Duration``), a quantity (``quantities must match the regular
expression ...``), a taint's time (``parsing time "x" as ...``). A YAML
file's ``.inf``, ``-.inf`` or ``.nan`` fails before any of it: making the
YAML JSON refuses it (``json: unsupported value: +Inf``, the first in the
sorted keys' order).

Every struct, list and map of the schema, and every scalar field, gets a
value of each wrong type, as JSON and as YAML; then a seeded corpus of
valid configurations with one to four of: wrong types, bad durations,
quantities and times, nulls, unknown and duplicate fields, non-finite
floats (YAML). podnuma must refuse what the kubelet refuses, in its words,
and load the rest.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podnuma.api._kubeletconfig_gotypes_v137 import GO_COMPOSITES
from podnuma.api._kubeletconfig_v137 import DURATION_FIELDS, SCHEMA
from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import kubelet_reason, outcomes, words_agree
from tests.oracle.kubeletconfig_files import podnuma_file_error as _podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_TYPES_COUNT", 300)

_KC = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}

Build = Callable[[Any], Any]


def _nodes() -> tuple[list[tuple[str, Any, Build]], list[tuple[str, str, Build]]]:
    """The schema's composite nodes (``GO_COMPOSITES`` keys, their schema,
    how to build a document with a value there) and its scalar leaves
    (path, kind, build)."""
    composites: list[tuple[str, Any, Build]] = []
    leaves: list[tuple[str, str, Build]] = []

    def walk(schema: Any, node: str, path: str, build: Build) -> None:
        if isinstance(schema, str):
            leaves.append((path, schema, build))
            return
        kind, inner = schema
        if node:
            composites.append((node, schema, build))
        if kind == "struct":
            for key, sub in inner.items():
                walk(sub, f"{node}.{key}" if node else key, f"{path}.{key}" if path else key,
                     lambda x, b=build, k=key: b({k: x}))
        elif kind == "map":
            walk(inner, node + "{}", path, lambda x, b=build: b({"k": x}))
        else:
            walk(inner, node + "[]", path, lambda x, b=build: b([x]))

    walk(SCHEMA, "", "", lambda x: x)
    return composites, [leaf for leaf in leaves if leaf[0] not in ("apiVersion", "kind")]


def _yaml(value: Any, indent: int = 0) -> str:
    """Block YAML of JSON values (scalars as JSON, which YAML reads alike;
    ``@`` texts written plain)."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        return "".join(f"{pad}{json.dumps(k)}:\n{_yaml(v, indent + 2)}" if _block(v)
                       else f"{pad}{json.dumps(k)}: {_scalar(v)}\n" for k, v in value.items())
    if not value:
        return pad + "[]\n"
    return "".join(f"{pad}-\n{_yaml(v, indent + 2)}" if _block(v) else f"{pad}- {_scalar(v)}\n" for v in value)


def _block(v: Any) -> bool:
    return isinstance(v, (dict, list)) and bool(v)


def _scalar(v: Any) -> str:
    if isinstance(v, str) and v.startswith("@"):
        return v[1:]  # a plain YAML scalar (.inf, .nan)
    return json.dumps(v)


def _text(doc: dict[str, Any], as_json: bool, spaced: bool = True) -> str:
    # (the flush frequency's error quotes an array's or object's JSON text
    # as the file spaces it)
    if as_json:
        return json.dumps(doc, ensure_ascii=False) if spaced else json.dumps(doc, separators=(",", ":"))
    return _yaml(doc)


def _run(oracle_binary: str, tmp_path: Path, items: list[tuple[str, str]]) -> tuple[list[str], dict[str, int]]:
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "conf")
    kinds: dict[str, int] = {"loaded": loaded} if loaded else {}
    for name, mine, theirs in refused:
        reason = kubelet_reason(theirs)
        kind = _kind(reason)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind != "other" and reason not in mine:
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {reason!r}")
    return mismatches, kinds


def _kind(reason: str) -> str:
    for words, kind in (("unsupported value", "non-finite"), ("into Go value of type time.Duration", "flush"),
                        ("cannot unmarshal", "type"), ("time: ", "duration"), ("quantities must", "quantity"),
                        ("parsing time", "time")):
        if words in reason:
            return kind
    return "other"


#: a value of each JSON type; what each kind of field refuses
_VALUES: dict[str, Any] = {"string": "x", "bool": True, "number": 1, "array": ["x"], "object": {"a": "x"}}
_REFUSES = {
    "string": ("bool", "array", "object"), "bool": ("string", "number", "array", "object"),
    "float": ("string", "bool", "array", "object"), "any": ("bool", "array", "object"),
}


def test_every_struct_list_and_map(oracle_binary: str, tmp_path: Path) -> None:
    """Each composite node gets each JSON type it refuses: the struct, path
    and Go type ``GO_COMPOSITES`` has for it (which must cover the
    schema's composites, no more)."""
    composites, _ = _nodes()
    assert sorted(GO_COMPOSITES) == sorted(node for node, _, _ in composites)
    items = []
    for node, schema, build in composites:
        takes = {"struct": "object", "map": "object", "list": "array"}[schema[0]]
        for jtype, value in _VALUES.items():
            if jtype != takes:
                for as_json in (True, False):
                    items.append((f"{node}={jtype}-{'json' if as_json else 'yaml'}",
                                  _text({**_KC, **build(value)}, as_json)))
    mismatches, kinds = _run(oracle_binary, tmp_path, items)
    print(f"kubelet config composites: {len(items)} files: {kinds}; {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert kinds.get("type", 0) == len(items)


def test_every_scalar_field(oracle_binary: str, tmp_path: Path) -> None:
    """Each scalar field gets each non-number JSON type it refuses (numbers:
    test_kubeletconfig_numbers_differential.py), durations and the types
    that decode themselves included."""
    _, leaves = _nodes()
    items = []
    for path, kind, build in leaves:
        refuses = _REFUSES.get(kind, ("string", "bool", "array", "object"))
        if path in DURATION_FIELDS:
            refuses = ("bool", "array", "object")
        for jtype in refuses:
            for as_json in (True, False):
                items.append((f"{path}={jtype}-{'json' if as_json else 'yaml'}",
                              _text({**_KC, **build(_VALUES[jtype])}, as_json)))
    mismatches, kinds = _run(oracle_binary, tmp_path, items)
    print(f"kubelet config scalars: {len(items)} files: {kinds}; {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert kinds.get("type", 0) > len(items) // 2 and kinds.get("flush") and kinds.get("quantity")


_BASE: dict[str, Any] = {
    "maxPods": 110, "failSwapOn": True, "cpuManagerPolicy": "static", "clusterDNS": ["10.0.0.10"],
    "evictionHard": {"memory.available": "100Mi"}, "featureGates": {"CPUManagerPolicyAlphaOptions": True},
    "syncFrequency": "1m", "authentication": {"webhook": {"enabled": True, "cacheTTL": "2m"}},
    "logging": {"format": "text", "flushFrequency": "5s", "options": {"json": {"infoBufferSize": "0"}}},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
    "registerWithTaints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}],
    "memoryThrottlingFactor": 0.9, "staticPodURLHeader": {"a": ["b"]}, "kubeReserved": {"cpu": "100m"},
}
#: (path as keys, values to put there)
_MUTATIONS: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = [
    (("maxPods",), ("x", True, [1], {"a": 1}, None)),
    (("failSwapOn",), ("x", 1, [True], None)),
    (("cpuManagerPolicy",), (True, ["static"], {"a": "b"}, None)),
    (("clusterDNS",), ("10.0.0.1", {"a": "b"}, True, [1], [True], [None], None)),
    (("evictionHard",), ("x", ["a"], {"memory.available": True}, {"memory.available": None}, None)),
    (("featureGates",), (["x"], {"CPUManagerPolicyAlphaOptions": "x"}, "x")),
    (("syncFrequency",), ("abc", True, [], None, "5")),
    (("authentication", "webhook", "cacheTTL"), ("abc", False, None)),
    (("authentication", "webhook", "enabled"), ("yes", None)),
    (("authentication",), ("x", [])),
    (("logging", "flushFrequency"), ("1S", True, [1, 2], {"b": 1, "a": "<&>"}, None)),
    (("logging", "options", "json", "infoBufferSize"), ("x", True, [], " 1Mi ", None)),
    (("logging", "vmodule"), ("x", [{"filePattern": 1}], [{"verbosity": "x"}])),
    (("reservedMemory",), ("x", [1], [{"numaNode": "x"}], [{"numaNode": 0, "limits": {"memory": "1Gx"}}],
                           [{"numaNode": 0, "limits": {"memory": True}}], [None])),
    (("registerWithTaints",), ("x", [1], [{"key": "k", "timeAdded": "yesterday"}], [{"key": "k", "timeAdded": 5}],
                               [{"key": "k", "timeAdded": None}], [{"key": True}])),
    (("memoryThrottlingFactor",), ("x", True, None)),
    (("staticPodURLHeader",), ({"a": "b"}, {"a": [1]}, ["a"])),
    (("kubeReserved",), ({"cpu": 1}, {"cpu": True}, "x")),
    (("tracing",), ("x", {"samplingRatePerMillion": "x"})),
    (("zzzUnknown",), (1, "x")),
]
_NON_FINITE = ("@.inf", "@-.inf", "@.nan", "@.NaN", "@+.inf")


def _put(doc: dict[str, Any], keys: tuple[Any, ...], value: Any) -> None:
    for k in keys[:-1]:
        if not isinstance(doc.get(k), dict):
            doc[k] = {}
        doc = doc[k]
    doc[keys[-1]] = value


def corpus(seed: int, count: int) -> list[tuple[str, str]]:
    out = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig-types:{seed}:{i}")
        doc = json.loads(json.dumps(_BASE))
        as_json = rng.random() < 0.5
        tags = []
        for _ in range(rng.randrange(1, 5)):
            keys, values = rng.choice(_MUTATIONS)
            value = rng.choice(values)
            if not as_json and rng.random() < 0.1:
                keys, value = rng.choice((("zzz",), ("maxPods",), ("evictionHard", "a"), ("aaa",))), \
                    rng.choice(_NON_FINITE)
            _put(doc, keys, value)
            tags.append(".".join(keys))
        if as_json and rng.random() < 0.2:  # a key given twice, in the text
            text = _text({**_KC, **doc}, True, rng.random() < 0.5)[:-1] + ',"maxPods":"dup"}'
        else:
            text = _text({**_KC, **doc}, as_json, rng.random() < 0.5)
        out.append((f"t{i}-{'json' if as_json else 'yaml'}-{'+'.join(tags)}", text))
    return out


def test_wrong_types_in_the_kubelets_words(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    mismatches, kinds = _run(oracle_binary, tmp_path, items)
    print(f"kubelet config types: {len(items)} files (seed {SEED}): {kinds}; {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert all(kinds.get(k) for k in ("loaded", "type", "duration", "quantity"))


#: (JSON document's fields, the kubelet's reason): which error wins
FIXED = [
    ({"failSwapOn": "y", "syncFrequency": "abc"}, 'failed to decode: time: invalid duration "abc"'),
    ({"syncFrequency": "abc", "failSwapOn": "y"}, 'failed to decode: time: invalid duration "abc"'),
    ({"failSwapOn": "y", "syncFrequency": True},
     "failed to decode: json: cannot unmarshal bool into Go struct field KubeletConfiguration.syncFrequency "
     "of type string"),
    ({"maxPods": "x", "failSwapOn": "y"},
     "failed to decode: json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of type "
     "int32"),
    ({"maxPods": 1e2, "syncFrequency": "abc"}, 'failed to decode: time: invalid duration "abc"'),
    ({"zzz": 1, "failSwapOn": "y"},
     "failed to decode: json: cannot unmarshal string into Go struct field KubeletConfiguration.failSwapOn of "
     "type bool"),
    ({"maxPods": "x", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gx"}}]},
     "failed to decode: quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ({"registerWithTaints": [{"key": "k", "timeAdded": "x"}]},
     'failed to decode: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
    ({"logging": {"flushFrequency": True}},
     'failed to decode: invalid duration "true": json: cannot unmarshal bool into Go value of type time.Duration'),
]


def test_which_error_wins(oracle_binary: str, tmp_path: Path) -> None:
    items = [(f"f{i}", json.dumps({**_KC, **doc}).replace("100.0", "1e2")) for i, (doc, _) in enumerate(FIXED)]
    items += [(f"y{i}", _yaml({**_KC, **doc})) for i, (doc, _) in enumerate(FIXED) if "maxPods" not in doc
              or doc["maxPods"] != 1e2]
    mismatches, _ = _run(oracle_binary, tmp_path, items)
    assert not mismatches, "\n".join(mismatches)
    for (name, text), path in zip(items, sorted(tmp_path.glob("*.conf")), strict=True):
        if name.startswith("y"):
            continue  # (YAML: the keys met sorted, which the oracle's answer had)
        words = FIXED[int(name[1:])][1]
        mine = _podnuma(path)
        assert mine is not None and words in mine, (text, mine)


def test_non_finite_yaml_floats(oracle_binary: str, tmp_path: Path) -> None:
    """``.inf`` and the like anywhere in the first document, before anything
    else fails: the first in sorted order."""
    head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
    items = [(f"n{i}", text) for i, text in enumerate((
        head + "maxPods: .inf\n", head + "zzz: .nan\naaa: -.inf\n", head + "maxPods: 1\nmaxPods: 2\nzzz: .inf\n",
        head + "failSwapOn: x\nevictionHard: {a: .NaN}\n", "kind: KubeletConfiguration\nmaxPods: +.inf\n",
        head + "x: &a .inf\ny: *a\n", head + "clusterDNS: [.Inf]\n", head + "syncFrequency: -.Inf\n",
        "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: a, z: .nan}]\n",
    ))]
    mismatches, kinds = _run(oracle_binary, tmp_path, items)
    assert not mismatches, "\n".join(mismatches)
    assert kinds == {"non-finite": len(items)}


_H = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def test_review_cases(oracle_binary: str, tmp_path: Path) -> None:
    # a non-finite value replaced by a later key (go-yaml never shows it),
    # a negative zero in an unsigned field (Go writes -0)
    items = [
        ("inf-replaced", _H + "maxPods: .inf\nmaxPods: 1\n"),
        ("inf-replaced-map", _H + "evictionHard: {a: .inf}\nevictionHard: {}\n"),
        ("inf-merge-overridden", _H + "evictionHard: {<<: {a: .inf}, a: \"1\"}\n"),
        ("inf-then-wrong-type", _H + "evictionHard: {a: .inf, a: 1}\n"),
        ("inf-kept", _H + "evictionHard: {a: .inf}\n"),
        ("negative-zero-uint", _H + "logging: {verbosity: -0.0}\n"),
        ("negative-zero-exp", _H + "logging: {verbosity: -0e5}\n"),
        ("negative-zero-int", _H + "maxPods: -0.0\n"),
        ("negative-zero-flush", _H + "logging: {flushFrequency: [1.0, -0.0]}\n"),
        # a quantity's JSON text as it is between the quotes: an escape stays
        ("quantity-block", _H + "logging:\n  options:\n    json:\n      infoBufferSize: |\n        1Mi\n"),
        ("quantity-tab", _H + 'logging: {options: {json: {infoBufferSize: "\\t1Mi"}}}\n'),
        ("quantity-limits", _H + "reservedMemory: [{numaNode: 0, limits: {memory: \"1Gi\\n\"}}]\n"),
        ("quantity-spaces", _H + 'logging: {options: {json: {infoBufferSize: " 1Mi "}}}\n'),
    ]
    mismatches, loaded, refused = words_agree(oracle_binary, tmp_path, items, "yaml")
    assert not mismatches, "\n".join(mismatches)
    assert loaded == 5 and refused == 8


def test_json_objects_given_twice_merge(oracle_binary: str, tmp_path: Path) -> None:
    # encoding/json decodes a key given again into the struct or map the
    # first made: objects merge, other values replace
    head = '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",'
    items = [
        ("gates-merge", head + '"featureGates":{"NoSuch":true},"featureGates":{}}'),
        ("eviction-merge", head + '"evictionHard":{"memory.available":"1Gi"},"evictionHard":{"nodefs.available":5}}'),
        ("nested-merge", head + '"logging":{"options":{"json":{"infoBufferSize":"x"}}},"logging":{"format":"text"}}'),
        ("null-replaces", head + '"featureGates":{"NoSuch":true},"featureGates":null}'),
        ("list-replaces", head + '"tlsCipherSuites":["bogus"],"tlsCipherSuites":[]}'),
    ]
    mismatches, loaded, refused = words_agree(oracle_binary, tmp_path, items, "json")
    assert not mismatches, "\n".join(mismatches)
    assert loaded == 2 and refused == 3
