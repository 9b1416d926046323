"""Numbers in the kubelet's ``--config`` file, podnuma against the
kubelet's own loader (``kubelet-oracle kubeletconfig --file``).

A text starting with ``{`` is JSON, decoded by Go's encoding/json (the
kubelet's sigs.k8s.io/json): a number reaches a field as its text, so an
int field takes an integer literal in its range only (``1e2``, ``1.0`` and
``1E1`` are refused, the text named), a float field a number within the
float64 range, a string, bool, duration or map-of-string field no number
at all (not named), a quantity the text itself; an unknown field's number
is skipped, however long. A YAML text is turned into JSON first
(``sigs.k8s.io/yaml``): go-yaml's value is written as encoding/json writes
it (``1e2`` is 100 and loads, ``1e21`` is ``1e+21`` and is refused, a
number past the float range stays a string).

Each field kind of the v1beta1 ``KubeletConfiguration`` (and of the v1
``CredentialProviderConfig``) gets numbers from a pool, as JSON and as
YAML; podnuma must load what the kubelet loads and refuse the rest, a
number refused in the kubelet's words.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podnuma.api._kubeletconfig_v137 import SCHEMA
from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import kubelet_reason as _reason
from tests.oracle.kubeletconfig_files import oracle_file_answers as _oracle
from tests.oracle.kubeletconfig_files import podnuma_file_error as _podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_NUMBERS_COUNT", 300)

_KC = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
_MARK = '"@NUMBER@"'

#: number texts, read as JSON numbers and as YAML plain scalars
_NUMBERS = (
    "1e2", "1.0", "1E1", "1e9", "100", "0", "-0", "-1", "0.5", "1.5e3", "2147483647", "2147483648",
    "3000000000", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e21", "1e20",
    "1e400", "-1e400", "1e-400", "1e-7", "12e0", "4294967295", "4294967296", "9" * 400,
)


def _leaves() -> list[tuple[str, Callable[[Any], Any]]]:
    """Every scalar field of the schema: its path and how to build a
    document holding a value there (one item in a list, key ``k`` in a
    map)."""
    out: list[tuple[str, Callable[[Any], Any]]] = []

    def walk(schema: Any, path: str, build: Callable[[Any], Any]) -> None:
        if isinstance(schema, str):
            out.append((path, build))
            return
        kind, inner = schema
        if kind == "struct":
            for key, sub in inner.items():
                walk(sub, f"{path}.{key}" if path else key, lambda x, b=build, k=key: b({k: x}))
        elif kind == "map":
            walk(inner, path, lambda x, b=build: b({"k": x}))
        else:
            walk(inner, path, lambda x, b=build: b([x]))

    walk(SCHEMA, "", lambda x: x)
    return [(p, b) for p, b in out if p not in ("apiVersion", "kind")]


def _yaml(value: Any, indent: int = 0) -> str:
    """Block YAML of JSON-like values (the marker left for the number)."""
    pad = " " * indent
    if isinstance(value, dict):
        return "".join(
            f"{pad}{k}:\n{_yaml(v, indent + 2)}" if isinstance(v, (dict, list)) else f"{pad}{k}: {_scalar(v)}\n"
            for k, v in value.items())
    return "".join(
        f"{pad}-\n{_yaml(v, indent + 2)}" if isinstance(v, (dict, list)) else f"{pad}- {_scalar(v)}\n"
        for v in value)


def _scalar(v: Any) -> str:
    return "@NUMBER@" if v == "@NUMBER@" else json.dumps(v)


def _document(doc: dict[str, Any], number: str, as_json: bool) -> str:
    if as_json:
        return json.dumps(doc).replace(_MARK, number)
    return _yaml(doc).replace("@NUMBER@", number)


def corpus(seed: int, count: int) -> list[tuple[str, str]]:
    leaves = _leaves()
    out = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig-numbers:{seed}:{i}")
        as_json = rng.random() < 0.6
        number = rng.choice(_NUMBERS + (("1" * 5000,) if as_json else ()))
        if rng.random() < 0.15:
            path, doc = "unknown", {"zzzUnknown": "@NUMBER@"}
        elif rng.random() < 0.15:
            path = "credential"
            provider: dict[str, Any] = {"name": "p", "matchImages": ["a"], "defaultCacheDuration": "1m",
                                        "apiVersion": "credentialprovider.kubelet.k8s.io/v1"}
            where = rng.choice(("name", "defaultCacheDuration", "matchImages", "requireServiceAccount", "unknown"))
            if where == "requireServiceAccount":
                provider["tokenAttributes"] = {"serviceAccountTokenAudience": "a", "requireServiceAccount": "@NUMBER@"}
            elif where == "matchImages":
                provider["matchImages"] = ["@NUMBER@"]
            else:
                provider["zzz" if where == "unknown" else where] = "@NUMBER@"
            doc = {"apiVersion": "kubelet.config.k8s.io/v1", "kind": "CredentialProviderConfig",
                   "providers": [provider]}
        else:
            path, build = rng.choice(leaves)
            doc = build("@NUMBER@")
        if path != "credential":
            doc = {**_KC, **doc}
        out.append((f"n{i}-{'json' if as_json else 'yaml'}-{path}={number[:20]}", _document(doc, number, as_json)))
    return out


def _compare(items: list[tuple[str, str]], paths: list[Path], answers: list[dict[str, Any]]) -> tuple[list[str], int]:
    mismatches = []
    worded = 0
    for (name, _), path, answer in zip(items, paths, answers, strict=True):
        theirs, mine = answer.get("error"), _podnuma(path)
        if (theirs is None) != (mine is None):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
            continue
        if theirs is None or mine is None:
            continue
        reason = _reason(theirs)
        if "cannot unmarshal number" in reason:
            worded += 1
            if reason not in mine:
                mismatches.append(f"{name}: podnuma {mine!r} != kubelet {reason!r}")
    return mismatches, worded


def test_numbers_as_the_kubelets_decoder_reads_them(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    paths = []
    for i, (_, text) in enumerate(items):
        p = tmp_path / f"{i:05d}.conf"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    answers = _oracle(oracle_binary, paths)
    assert len(answers) == len(items)
    mismatches, worded = _compare(items, paths, answers)
    refused = sum("error" in a for a in answers)
    print(f"kubelet config numbers: {len(items)} files (seed {SEED}): {refused} refused ({worded} for a number); "
          f"{len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert worded and len(items) - refused > len(items) // 10


def test_every_fields_words_for_a_number(oracle_binary: str, tmp_path: Path) -> None:
    """A number past the float range in each field of the schema, as JSON:
    the struct, the field path and the Go type the decoder names
    (``_kubeletconfig_gotypes_v137``)."""
    items = [(path, json.dumps({**_KC, **build("@NUMBER@")}).replace(_MARK, "1e400"))
             for path, build in _leaves()]
    paths = []
    for i, (_, text) in enumerate(items):
        p = tmp_path / f"{i:05d}.json"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    answers = _oracle(oracle_binary, paths)
    mismatches, worded = _compare(items, paths, answers)
    assert not mismatches, "\n".join(mismatches[:10])
    assert worded > 100


#: (file text, the kubelet's reason, or None: it loads)
FIXED = [
    ('{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":1e2}',
     "failed to decode: json: cannot unmarshal number 1e2 into Go struct field KubeletConfiguration.maxPods "
     "of type int32"),
    ('{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","zzz":' + "1" * 5000 + "}",
     None),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 1e2\n", None),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 1e21\n",
     "failed to decode: json: cannot unmarshal number 1e+21 into Go struct field KubeletConfiguration.maxPods "
     "of type int32"),
]


def test_fixed_numbers(oracle_binary: str, tmp_path: Path) -> None:
    paths = []
    for i, (text, _) in enumerate(FIXED):
        p = tmp_path / f"f{i}.conf"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    for (_, reason), path, answer in zip(FIXED, paths, _oracle(oracle_binary, paths), strict=True):
        theirs = answer.get("error")
        assert (None if theirs is None else _reason(theirs)) == reason, answer
        mine = _podnuma(path)
        assert (mine is None) is (reason is None), mine
        assert reason is None or mine is not None and reason in mine, mine
