"""Malformed JSON in the kubelet's ``--config`` file, podnuma against the
kubelet's own loader (``kubelet-oracle kubeletconfig --file``).

A text whose first character other than white space is ``{`` goes to the
codec as JSON, whose first step (finding the ``kind``) checks the whole
text with Go's JSON scanner: a text that is no JSON is refused with Go's
``SyntaxError`` (``failed to decode: couldn't get version/kind; json parse
error: invalid character '}' looking for beginning of object key
string``, ``unexpected end of JSON input``), the byte it stopped at quoted
as the file has it (a byte that is not UTF-8 as the rune of its value).

A seeded corpus of a valid configuration (nested objects, lists, numbers,
strings, literals; fields podnuma does not decode further than the
kubelet's loader, which leaves quantities and policies to the start-up)
cut short, with a byte inserted, removed or replaced,
white space Go's ``unicode.IsSpace`` knows before the ``{`` (which the
JSON scanner refuses), text after the object, nesting past Go's depth
(``exceeded max depth``):
podnuma must refuse what the kubelet refuses, a syntax error in the
kubelet's words, and load what it loads.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import kubelet_reason, outcomes
from tests.oracle.kubeletconfig_files import oracle_file_answers as _oracle
from tests.oracle.kubeletconfig_files import podnuma_file_error as _podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_JSON_SYNTAX_COUNT", 300)

_BASE: dict[str, Any] = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
    "maxPods": 110, "cpuManagerPolicy": "static", "failSwapOn": True, "enableServer": False,
    "staticPodURLHeader": {"a": ["b", "c"]}, "nodeStatusMaxImages": 50,
    "registryBurst": 10, "eventRecordQPS": 5.5, "clusterDNS": ["10.0.0.10", "10.0.0.11"],
    "evictionHard": {"memory.available": "100Mi"}, "providerID": "", "logging": {"format": "text"},
    "tlsCipherSuites": [], "streamingConnectionIdleTimeout": "4h0m0s", "cgroupRoot": "/",
}
#: bytes a mutation brings in (ASCII the scanner has states for, control
#: characters, bytes that are not UTF-8, the start of a two-byte character)
_JUNK = (b",", b"}", b"]", b"{", b"[", b":", b'"', b"x", b"\x00", b"\x01", b"\x7f", b"\xff", b"\xc3", b"\xc3\xa9",
         b" ", b"\\", b"t", b"n", b"-", b"0", b"1", b".", b"e", b"E", b"+", b"\t", b"\n", b"'", b"u", b"\\u12",
         b"\xe2\x80\xa8", b"\x0b")
#: white space that makes the kubelet take the text as JSON but that Go's
#: JSON scanner refuses (``unicode.IsSpace`` outside space, tab, CR, LF)
_IS_SPACE = ("\v", "\f", "\x85", "\xa0", "\u2028", "\u3000")


def _text(rng: random.Random) -> bytes:
    doc = dict(_BASE)
    for key in rng.sample(sorted(_BASE)[2:], rng.randrange(0, 6)):
        if key not in ("apiVersion", "kind"):
            del doc[key]
    indent = rng.choice((None, None, 2))
    return json.dumps(doc, indent=indent, ensure_ascii=rng.random() < 0.5).encode("utf-8")


def _mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    how = rng.choice(("cut", "insert", "insert", "remove", "replace", "replace", "space", "after", "deep", "two"))
    at = rng.randrange(1, len(data))
    if how == "cut":
        return how, data[:at]
    if how == "insert":
        return how, data[:at] + rng.choice(_JUNK) + data[at:]
    if how == "remove":
        return how, data[:at] + data[at + 1:]
    if how == "replace":
        return how, data[:at] + rng.choice(_JUNK) + data[at + 1:]
    if how == "space":
        return how, rng.choice(("", " ", "\n")).encode() + rng.choice(_IS_SPACE).encode("utf-8") + data
    if how == "after":
        return how, data + rng.choice((b" x", b"\n---\n{}", b"}", b",", b" {}", b"\x00", b"\xff"))
    if how == "deep":
        # (past Go's 10,000 levels: podnuma reads 100 levels, docs/limits.md)
        depth = rng.choice((10001, 10002, 10005))
        opener = rng.choice((b"[", b'{"a":'))
        closer = b"]" if opener == b"[" else b"}"
        return how, data[:-1] + b',"zzz":' + opener * depth + b"1" + closer * depth + b"}"
    # two mutations
    _, once = _mutate(rng, data)
    return how, _mutate(rng, once)[1] if len(once) > 1 else once


def corpus(seed: int, count: int) -> list[tuple[str, bytes]]:
    out = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig-json-syntax:{seed}:{i}")
        how, data = _mutate(rng, _text(rng))
        out.append((f"j{i}-{how}", data))
    return out


def _compare(items: list[tuple[str, bytes]], tmp_path: Path, oracle_binary: str) -> tuple[list[str], int, int]:
    mismatches, _, both = outcomes(oracle_binary, tmp_path, items, "json")
    syntax = 0
    refused = len(both)
    for name, mine, theirs in both:
        reason = kubelet_reason(theirs)
        if "json parse error" in reason:
            syntax += 1
            if reason not in mine:
                mismatches.append(f"{name}: podnuma {mine!r} != kubelet {reason!r}")
        elif "json parse error" in mine:
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {reason!r}")
    return mismatches, refused, syntax


def test_malformed_json_in_the_kubelets_words(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    mismatches, refused, syntax = _compare(items, tmp_path, oracle_binary)
    print(f"kubelet config JSON syntax: {len(items)} files (seed {SEED}): {refused} refused ({syntax} as no "
          f"JSON); {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert syntax > len(items) // 3 and len(items) - refused > 0


#: (file bytes, the kubelet's reason)
FIXED = [
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",',
     "unexpected end of JSON input"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1" "kind":"KubeletConfiguration"}',
     "invalid character '\"' after object key:value pair"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":tru}',
     "invalid character '}' in literal true (expecting 'e')"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration"}\n---\n{}',
     "invalid character '-' after top-level value"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":NaN}',
     "invalid character 'N' looking for beginning of value"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",}',
     "invalid character '}' looking for beginning of object key string"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":1\xff}',
     "invalid character '\u00ff' after object key:value pair"),
    (b"\x0b{}", "invalid character '\\v' looking for beginning of value"),
    (b'{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","x":"a\tb"}',
     "invalid character '\\t' in string literal"),
]


def test_fixed_malformed_json(oracle_binary: str, tmp_path: Path) -> None:
    items = [(f"f{i}", data) for i, (data, _) in enumerate(FIXED)]
    paths = []
    for i, (_, data) in enumerate(items):
        p = tmp_path / f"f{i}.json"
        p.write_bytes(data)
        paths.append(p)
    answers = _oracle(oracle_binary, paths)
    for (data, words), path, answer in zip(FIXED, paths, answers, strict=True):
        want = f"failed to decode: couldn't get version/kind; json parse error: {words}"
        assert answer["error"].endswith(want), (data, answer)
        mine = _podnuma(path)
        assert mine is not None and mine.endswith(want), (data, mine)
