"""A static pod manifest that repeats a key many times is decoded in work
linear in its size (the kubelet's decoder merges each occurrence into the
value so far): every occurrence is merged into one value per key path,
never by walking the earlier occurrences again. No timing: the work is
counted (the values the merging meets or copies) and must stay within a
small multiple of the input's length, which a quadratic merge exceeds
many times over at these sizes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent import staticpod, validation
from podnuma.agent.manifests import parse_manifest
from podnuma.api.kubeletconfig import load_kubelet_config

HEAD = '"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"}'


def _pod(spec: str) -> str:
    return "{" + HEAD + ',"spec":{' + spec + "}}"


def _unknown_spec_keys(n: int) -> str:
    return ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":'
            '[{"name":"c","image":"x"}],' + ",".join(f'"u{i}":1' for i in range(n)) + "}"
            + ',"spec":{}' * n + "}")


def _labels(n: int) -> str:
    return ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{'
            + ",".join(f'"k{i}":"v"' for i in range(n)) + "}" + ',"labels":{}' * n
            + '},"spec":{"containers":[{"name":"c","image":"x"}]}}')


def _args(n: int) -> str:
    return _pod('"containers":[{"name":"c","image":"x","args":[' + ",".join(['"a"'] * n) + "]"
                + ',"args":[null]' * n + "}]")


def _limits(n: int) -> str:
    return _pod('"containers":[{"name":"c","image":"x","resources":{"limits":{'
                + ",".join(f'"k{i}/x":"1"' for i in range(n)) + "}" + ',"limits":{}' * n + "}}]")


def _env(n: int) -> str:
    return _pod('"containers":[{"name":"c","image":"x","env":['
                + ",".join(f'{{"name":"E{i}"}}' for i in range(n)) + "]" + ',"env":[{}]' * n + "}]")


def _element(n: int) -> str:
    # (one list element, with many fields, merged again and again)
    return _pod('"containers":[{"name":"c","image":"x","env":[{"name":"E",'
                + ",".join(f'"u{i}":1' for i in range(n)) + "}]" + ',"env":[{}]' * n + "}]")


def _nested(n: int) -> str:
    # (a repeated key at each level of a deep struct: each level's
    # occurrences are decoded, then the value they settle to: the objects
    # below are not decoded again at each level)
    exprs = ",".join(f'{{"key":"a{i}","operator":"Exists","operator":"Exists"}}' for i in range(n))
    term = '{"matchExpressions":[' + exprs + '],"matchFields":null,"matchFields":null}'
    required = '{"nodeSelectorTerms":[' + term + '],"nodeSelectorTerms":[' + term + "]}"
    node = ('{"requiredDuringSchedulingIgnoredDuringExecution":' + required
            + ',"preferredDuringSchedulingIgnoredDuringExecution":null'
            + ',"preferredDuringSchedulingIgnoredDuringExecution":null}')
    return _pod('"containers":[{"name":"c","image":"x"}],"affinity":{"nodeAffinity":' + node
                + ',"podAffinity":null,"podAffinity":null},"hostname":"a","hostname":"a"')


CASES: dict[str, tuple[Callable[[int], str], int]] = {
    "unknown spec keys": (_unknown_spec_keys, 20000),
    "labels": (_labels, 40000),
    "args": (_args, 60000),
    "resource limits": (_limits, 20000),
    "env": (_env, 20000),
    "one element": (_element, 20000),
    "nested repeats": (_nested, 5000),
}


@pytest.mark.parametrize("case", CASES)
def test_repeated_keys_cost_linear_work(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, n = CASES[case]
    text = make(n)
    met = [0]
    real = validation.occurrences

    def counted(value: Mapping[str, Any], from_json: bool = True) -> list[tuple[str, Any]]:
        pairs = real(value, from_json)
        met[0] += len(pairs)
        return pairs

    monkeypatch.setattr(validation, "occurrences", counted)
    decoded = [0]
    decode = validation._go_decode

    def decode_counted(*args: Any) -> Any:
        decoded[0] += 1
        return decode(*args)

    monkeypatch.setattr(validation, "_go_decode", decode_counted)
    monkeypatch.setattr(validation, "WORK", [0])
    monkeypatch.setattr(staticpod, "MERGE_WORK", [0])
    path = tmp_path / "web.json"
    path.write_text(text)
    got = parse_manifest(text.encode(), path, node_name="node-a",
                         gates=load_kubelet_config({}).feature_gates)
    # the verdict: the pod is accepted (as the kubelet accepts it)
    assert got.pod.name == "web-node-a"
    work = met[0] + validation.WORK[0] + staticpod.MERGE_WORK[0]
    assert work <= 4 * len(text), (case, work, len(text))
    # (a value is met by the typed decoder about once: not once per level of repeats above it)
    assert decoded[0] <= len(text) // 2, (case, decoded[0], len(text))
