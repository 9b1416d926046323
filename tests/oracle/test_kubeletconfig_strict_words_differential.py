"""The kubelet's words for a ``--config`` file's values of the wrong type
and keys given twice, podnuma against the kubelet's own loader and codec
(``kubelet-oracle kubeletconfig --file`` and ``kubeletconfig``).

A ``kubelet.config.k8s.io/v1`` ``CredentialProviderConfig`` is a kind the
loader's scheme knows but decodes strictly only (its lenient decoder has
v1beta1 alone): a value of the wrong type is encoding/json's error
(``failed to decode: json: cannot unmarshal string into Go struct field
CredentialProvider.providers.name of type string``, the first one met,
unless a duration fails first, which ends decoding at once); a key given
twice is the strict decoding's (YAML: go-yaml v2's ``yaml: unmarshal
errors: line N: key "x" already set in map``, the line of the value; JSON:
``duplicate field "providers[0].name"``), with the unknown fields after it.
The fields are met in the document's order for JSON, sorted for YAML.

A ``KubeletConfiguration`` with a key given twice decodes leniently: the
last value, and the strict error as the warning the kubelet logs.

A seeded corpus of each, as YAML and as JSON; podnuma must refuse what the
kubelet refuses in its words (white space aside: podnuma's message is one
line) and accept the rest with the same warning, word for word.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
from pathlib import Path
from typing import Any

from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.pods import load_config_file
from tests.oracle.harness import env_int, random_settings

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_STRICT_COUNT", 300)


class Obj(list[tuple[str, Any]]):
    """A mapping as key/value pairs, so that a key can appear twice."""


def _scalar(v: Any) -> str:
    return json.dumps(v)


def to_json(value: Any) -> str:
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_json(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(to_json(v) for v in value) + "]"
    return _scalar(value)


def to_yaml(value: Obj, indent: int = 0) -> str:
    """Block YAML of a mapping (flow for empty collections)."""
    pad = " " * indent
    out = []
    for k, v in value:
        if isinstance(v, Obj) and v:
            out.append(f"{pad}{k}:\n{to_yaml(v, indent + 2)}")
        elif isinstance(v, list) and not isinstance(v, Obj) and v:
            out.append(f"{pad}{k}:\n{_yaml_list(v, indent + 2)}")
        else:
            out.append(f"{pad}{k}: {to_json(v)}\n")
    return "".join(out)


def _yaml_list(items: list[Any], indent: int) -> str:
    pad = " " * indent
    out = []
    for item in items:
        if isinstance(item, Obj) and item:
            out.append(f"{pad}-\n{to_yaml(item, indent + 2)}")
        else:
            out.append(f"{pad}- {to_json(item)}\n")
    return "".join(out)


_WRONG = (5, "x", True, 1.5, [], ["a"], Obj([("a", 1)]), Obj(), None)


def _provider(rng: random.Random, i: int) -> Obj:
    p = Obj([("name", f"p{i}"), ("matchImages", ["*.example.com"]), ("defaultCacheDuration", "10m"),
             ("apiVersion", "credentialprovider.kubelet.k8s.io/v1")])
    if rng.random() < 0.5:
        p.append(("args", ["--a", "b"]))
    if rng.random() < 0.5:
        p.append(("env", [Obj([("name", "X"), ("value", "1")])]))
    if rng.random() < 0.4:
        p.append(("tokenAttributes", Obj([("serviceAccountTokenAudience", "aud"), ("cacheType", "Token"),
                                          ("requireServiceAccount", True),
                                          ("requiredServiceAccountAnnotationKeys", ["k"])])))
    rng.shuffle(p)
    return p


def _objects(value: Any) -> list[Obj]:
    out: list[Obj] = []
    if isinstance(value, Obj):
        out.append(value)
        for _, v in value:
            out.extend(_objects(v))
    elif isinstance(value, list):
        for v in value:
            out.extend(_objects(v))
    return out


def _mutate(rng: random.Random, doc: Obj, top_fields: tuple[str, ...]) -> str:
    objs = [o for o in _objects(doc) if o]
    what = rng.choice(("wrong", "wrong", "duplicate", "duplicate", "unknown", "duration"))
    target = rng.choice(objs)
    if what == "wrong":
        i = rng.randrange(len(target))
        k, v = target[i]
        if k in top_fields:
            return "none"
        target[i] = (k, copy.deepcopy(rng.choice([w for w in _WRONG if type(w) is not type(v)])))
    elif what == "duplicate":
        k, v = rng.choice(list(target))
        if k in top_fields:
            return "none"
        target.insert(rng.randrange(len(target) + 1), (k, copy.deepcopy(v) if rng.random() < 0.5 else rng.choice(_WRONG[:3])))
    elif what == "unknown":
        target.insert(rng.randrange(len(target) + 1), (rng.choice(("fooBar", "Name", "zz", "aa")), 1))
    else:
        durations = [o for o in objs if any(k == "defaultCacheDuration" for k, _ in o)]
        if not durations:
            return "none"
        o = rng.choice(durations)
        i = next(j for j, (k, _) in enumerate(o) if k == "defaultCacheDuration")
        o[i] = ("defaultCacheDuration", rng.choice(("5x", "", "1.5.5s", 5, False, "90s")))
    return what


def credential_corpus(seed: int, count: int) -> list[tuple[str, str]]:
    out = []
    for i in range(count):
        rng = random.Random(f"credential-provider:{seed}:{i}")
        doc = Obj([("apiVersion", "kubelet.config.k8s.io/v1"), ("kind", "CredentialProviderConfig"),
                   ("providers", [_provider(rng, j) for j in range(rng.randint(1, 3))])])
        names = [_mutate(rng, doc, ("apiVersion", "kind")) for _ in range(rng.choice((1, 1, 2, 3)))]
        as_json = rng.random() < 0.35
        text = to_json(doc) if as_json else to_yaml(doc)
        out.append((f"c{i}-{'json' if as_json else 'yaml'}-" + "+".join(names), text))
    return out


def kubelet_config_corpus(seed: int, count: int) -> list[tuple[str, str]]:
    out = []
    for i in range(count):
        rng = random.Random(f"kubelet-duplicates:{seed}:{i}")
        doc = Obj([("apiVersion", "kubelet.config.k8s.io/v1beta1"), ("kind", "KubeletConfiguration"),
                   ("maxPods", 110), ("cpuManagerPolicy", "static"), ("reservedSystemCPUs", "0"),
                   ("kubeReserved", Obj([("cpu", "1"), ("memory", "1Gi")])),
                   ("featureGates", Obj([("PodLevelResourceManagers", True)])),
                   ("topologyManagerPolicy", "restricted")])
        rng.shuffle(doc)
        names = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            target = rng.choice([o for o in _objects(doc) if o])
            k, v = rng.choice(list(target))
            if k in ("apiVersion", "kind"):
                continue
            if rng.random() < 0.2:  # (top level: a map of strings would take it as a value)
                doc.insert(rng.randrange(len(doc) + 1), (rng.choice(("fooBar", "MaxPods", "zz")), 1))
                names.append("unknown")
            else:
                target.insert(rng.randrange(len(target) + 1), (k, copy.deepcopy(v)))
                names.append("duplicate")
        as_json = rng.random() < 0.35
        text = to_json(doc) if as_json else to_yaml(doc)
        out.append((f"k{i}-{'json' if as_json else 'yaml'}-" + "+".join(names or ["plain"]), text))
    return out


def _write(tmp_path: Path, items: list[tuple[str, str]]) -> list[Path]:
    paths = []
    for i, (_, text) in enumerate(items):
        p = tmp_path / f"{i:05d}.yaml"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


def _oracle(oracle_binary: str, *args: str) -> list[dict[str, Any]]:
    proc = subprocess.run([oracle_binary, "kubeletconfig", *args], capture_output=True, text=True, check=True,
                          timeout=300)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def _kind(reason: str) -> str:
    for words, kind in (("cannot unmarshal", "type"), ("time: ", "duration"), ("already set", "duplicate"),
                        ("duplicate field", "duplicate"), ("unknown field", "unknown")):
        if words in reason:
            return kind
    return "other"


def _words(text: str) -> str:
    return " ".join(text.split())


def test_credential_provider_config_refused_in_the_kubelets_words(oracle_binary: str, tmp_path: Path) -> None:
    items = credential_corpus(SEED, COUNT)
    paths = _write(tmp_path, items)
    answers = _oracle(oracle_binary, "--file", *map(str, paths))
    assert len(answers) == len(items)
    mismatches = []
    kinds: dict[str, int] = {"type": 0, "duration": 0, "duplicate": 0, "unknown": 0}
    for (name, _), path, answer in zip(items, paths, answers, strict=True):
        theirs = answer.get("error")
        assert theirs, f"{name}: the kubelet loads a CredentialProviderConfig as its configuration"
        reason = theirs.rsplit(", error ", 1)[-1]
        try:
            load_config_file(path)
        except (InputError, KubeletStartupError) as e:
            mine = str(e)
        else:
            mismatches.append(f"{name}: the kubelet refuses it ({reason!r}); podnuma loads it")
            continue
        if _words(reason) not in _words(mine):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {reason!r}")
        kind = _kind(reason)
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"CredentialProviderConfig refusals: {len(items)} files (seed {SEED}): {kinds}; "
          f"{len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert all(kinds[k] for k in ("type", "duration", "duplicate", "unknown"))


def test_kubelet_configuration_duplicates_decode_leniently(oracle_binary: str, tmp_path: Path) -> None:
    items = kubelet_config_corpus(SEED, COUNT)
    paths = _write(tmp_path, items)
    loaded = _oracle(oracle_binary, "--file", *map(str, paths))
    decoded = _oracle(oracle_binary, *map(str, paths))
    mismatches = []
    warned = 0
    for (name, _), path, load, dec in zip(items, paths, loaded, decoded, strict=True):
        assert "error" not in load and "error" not in dec, (name, load, dec)
        try:
            cfg = load_config_file(path)
        except (InputError, KubeletStartupError) as e:
            mismatches.append(f"{name}: the kubelet loads it; podnuma refuses: {e}")
            continue
        theirs = dec.get("warning", "")
        warned += bool(theirs)
        if cfg.decode_warning != theirs or cfg.max_pods != dec["config"]["maxPods"]:
            mismatches.append(f"{name}: podnuma {cfg.decode_warning!r} (maxPods {cfg.max_pods}) != kubelet "
                              f"{theirs!r} (maxPods {dec['config']['maxPods']})")
    print(f"KubeletConfiguration duplicates: {len(items)} files (seed {SEED}): {warned} with a warning; "
          f"{len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert warned > len(items) // 2


#: files with keys given twice and unknown fields, and the --set items
#: applied to them (each a flag's: the kubelet applies its flags to what
#: its file decoded to, so the warning it logged is the file's)
SET_FILES = [
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\nzzz: 1\n"
     "maxPods: 20\naaa: 2\n", ("podPidsLimit=5",)),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nzzz: 1\naaa: 2\n"
     "kubeReserved:\n  cpu: 100m\n  cpu: 200m\n", ("kubeReserved.cpu=300m", "maxPods=7")),
    ('{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "zzz": 1, "maxPods": 3, '
     '"maxPods": 4, "aaa": 2}', ("podPidsLimit=5",)),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\nmaxPods: 20\n",
     ("maxPods=30",)),
]


def test_set_keeps_the_files_warning(oracle_binary: str, tmp_path: Path) -> None:
    """``--set`` (a flag) leaves the warning the file's decoding gave:
    the same, word for word, with and without it."""
    from podnuma.inputs.overrides import parse_overrides
    from podnuma.inputs.pods import load_config_text
    from podnuma.inputs.text import TextInput

    paths = _write(tmp_path, [(str(i), text) for i, (text, _) in enumerate(SET_FILES)])
    decoded = _oracle(oracle_binary, *map(str, paths))
    for (_, items), path, dec in zip(SET_FILES, paths, decoded, strict=True):
        theirs = dec.get("warning", "")
        assert theirs, dec
        src = TextInput.read(path, what="kubelet configuration")
        assert load_config_text(src).decode_warning == theirs
        assert load_config_text(src, parse_overrides(items)).decode_warning == theirs


#: pairs of YAML mapping keys: go-yaml decodes a mapping into a Go map
#: keyed by interface{}, so a key is "already set" only when it is the same
#: Go value (type and value; a NaN is never the same, -0.0 is 0.0)
_KEY_PAIRS = (
    ("1", "1.0"), ("true", "'true'"), ("1", "'1'"), ("1e3", "1000"), (".nan", ".nan"), ("1", "1"),
    ("1.0", "1.0"), ("'a'", "a"), ("0x10", "16"), ("0.0", "-0.0"), ("1", "0x1"), ("false", "False"),
    ("~", "null"), ("1.5", "1.50"), ("'1.0'", "1.0"), ("a", "'b'"), (".inf", ".Inf"), ("2", "+2"),
)


def test_duplicate_keys_compared_as_go_values(oracle_binary: str, tmp_path: Path) -> None:
    """The warning for two keys of one mapping, word for word. (Two Go keys
    that make one JSON key are not "already set", and the value the
    kubelet keeps for that key is whichever its map's random order meets
    last: not compared.)"""
    head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicyOptions:\n"
    items = [(f"{a}/{b}", f"{head}  {a}: v1\n  {b}: v2\n") for a, b in _KEY_PAIRS]
    paths = _write(tmp_path, items)
    decoded = _oracle(oracle_binary, *map(str, paths))
    mismatches = []
    warned = 0
    for (name, _), path, dec in zip(items, paths, decoded, strict=True):
        try:
            cfg = load_config_file(path)
        except (InputError, KubeletStartupError) as e:
            if "error" not in dec:
                mismatches.append(f"{name}: the kubelet loads it; podnuma refuses: {e}")
            continue
        if "error" in dec:
            mismatches.append(f"{name}: the kubelet refuses it ({dec['error']}); podnuma loads it")
            continue
        theirs = dec.get("warning", "")
        warned += bool(theirs)
        if cfg.decode_warning != theirs:
            mismatches.append(f"{name}: podnuma {cfg.decode_warning!r} != kubelet {theirs!r}")
    assert not mismatches, "\n".join(mismatches)
    assert 0 < warned < len(items)
