"""A static pod's JSON text that is no JSON, against ``kubelet-oracle
staticpod`` (k8s.io/kubernetes v1.37.2 ``pkg/kubelet/config/common.go``
``tryDecodeSinglePod``: the legacy scheme's JSON decoder, whose first look
at the text, for its version and kind, is ``encoding/json``'s: the whole
text scanned first). The kubelet's message is ``couldn't parse as
pod(couldn't get version/kind; json parse error: SYNTAX), please check
config file``, SYNTAX Go's ``SyntaxError`` (``invalid character 'x'
looking for beginning of value``, ``unexpected end of JSON input``,
``invalid character '}' after object key``...); podnuma's error must hold
that whole message.

Hand-written texts, then texts generated from a valid manifest: cut short
at every byte, each of a set of characters put in at every byte, each
byte dropped (those no longer starting with ``{`` left out: YAML to the
kubelet). Every generated text the kubelet refuses for its syntax podnuma
refuses in the same words; every other, podnuma does not call a syntax
error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podnuma.golang.jsonsyntax import go_json_syntax_error
from tests.oracle.test_staticpod_differential import _oracle, _podnuma, kubelet_words

VALID = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"a": "b\\u00e9\\n"}},\n'
         ' "spec": {"priority": -10, "containers": [{"name": "c", "image": "x", "tty": true, "stdin": false,\n'
         '  "resources": {"limits": {"cpu": 1.5e0}}, "args": [null, "a"]}]}}\n')

HAND = {
    "nan": '{"apiVersion": "v1", "kind": "Pod", "x": NaN}',
    "infinity": '{"apiVersion": "v1", "kind": "Pod", "x": -Infinity}',
    "single-quotes": "{'apiVersion': 'v1'}",
    "trailing-comma": '{"apiVersion": "v1", "kind": "Pod",}',
    "comment": '{"apiVersion": "v1", // x\n "kind": "Pod"}',
    "control-in-string": '{"apiVersion": "v\t1"}',
    "bad-escape": '{"apiVersion": "v\\x1"}',
    "bad-unicode-escape": '{"apiVersion": "\\u12g4"}',
    "leading-zero": '{"priority": 012}',
    "plus-number": '{"priority": +1}',
    "bare-dot": '{"priority": .5}',
    "cut-literal": '{"tty": tr',
    "cut-number": '{"priority": 1e',
    "cut-fraction": '{"priority": 1.',
    "two-objects": '{"a": 1} {"b": 2}',
    "extra-brace": '{"a": 1}}',
    "only-brace": "{",
    "non-ascii-outside-string": '{"a": é}',
    "non-ascii-key": '{é: 1}',
    "nbsp-between": '{"a":\u00a01}',
    "deep": "{" + '"a": [' * 10001,
    "deep-ok-then-bad": "{" + '"a": [' * 50 + "x",
    "missing-colon": '{"apiVersion" "v1"}',
    "key-not-string": "{1: 2}",
    "empty-key-then-end": '{"": ',
}


def _generated() -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(1, len(VALID)):
        out[f"cut-{i:03d}"] = VALID[:i]
    for i in range(len(VALID)):
        for j, ch in enumerate('{}[]:,"\\x0-.e+ tn\x01'):
            out[f"put-{i:03d}-{j:02d}"] = VALID[:i] + ch + VALID[i:]
        out[f"drop-{i:03d}"] = VALID[:i] + VALID[i + 1:]
    return {k: v for k, v in out.items() if v.startswith("{")}


GENERATED = _generated()
SYNTAX = ("json parse error: invalid character", "json parse error: unexpected end of JSON input")


def _both(oracle_binary: str, tmp_path: Path, cases: dict[str, str]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    files = []
    for name, text in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        files.append(path)
    return {f.stem: (k, _podnuma(f)) for f, k in zip(files, _oracle(oracle_binary, files), strict=True)}


def _disagreements(got: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    wrong = []
    for name, (kubelet, ours) in got.items():
        k_syntax = any(p in kubelet.get("error", "") for p in SYNTAX)
        o_syntax = any(p in ours.get("error", "") for p in SYNTAX)
        if k_syntax and kubelet_words(kubelet["error"]) not in ours.get("error", ""):
            wrong.append(f"{name}: kubelet {kubelet['error']!r}; podnuma {ours.get('error')!r}")
        elif o_syntax and not k_syntax:
            wrong.append(f"{name}: kubelet {kubelet.get('error')!r}; podnuma {ours['error']!r}")
    return wrong


def test_enough_cases() -> None:
    assert len(GENERATED) >= 3000


def test_hand_written(oracle_binary: str, tmp_path: Path) -> None:
    got = _both(oracle_binary, tmp_path, HAND)
    assert _disagreements(got) == []
    # (every hand-written text is a syntax error to the kubelet)
    assert [n for n, (k, _) in got.items() if not any(p in k.get("error", "") for p in SYNTAX)] == []


@pytest.mark.parametrize("part", range(4))
def test_generated(oracle_binary: str, tmp_path: Path, part: int) -> None:
    names = sorted(GENERATED)[part::4]
    got = _both(oracle_binary, tmp_path, {n: GENERATED[n] for n in names})
    assert _disagreements(got) == []


@pytest.mark.parametrize(("text", "want"), [
    ("{}", None),
    (VALID, None),
    ('{"a": 1}  \n', None),
    ('{"a": tru', "invalid character ' ' in literal true (expecting 'e')"),
    ('{"a": 1.', "invalid character ' ' after decimal point in numeric literal"),
    ('{"a": "x', "unexpected end of JSON input"),
    ('{"a": 1}x', "invalid character 'x' after top-level value"),
    ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    ('{"a": "\u0007"}', "invalid character '\\a' in string literal"),
    ('{"a": é}', "invalid character 'Ã' looking for beginning of value"),
    ("[" * 10001, "invalid character '[' exceeded max depth"),
])
def test_the_scan(text: str, want: str | None) -> None:
    assert go_json_syntax_error(text) == want



#: files whose bytes are not all UTF-8: Go's scanner quotes the byte it
#: stops at (0xFF as 'ÿ'), not the U+FFFD it would read in a string
BAD_BYTES = {
    "ff-value": b'{"apiVersion": "v1", "kind": "Pod", "x": \xff}',
    "fe-key": b'{"apiVersion": "v1", "kind": "Pod", \xfe: 1}',
    "c3-cut-value": b'{"apiVersion": "v1", "kind": "Pod", "x": \xc3}',
    "ff-after-top": b'{"apiVersion": "v1", "kind": "Pod"}\xff',
    "ff-after-value": b'{"apiVersion": "v1", "kind": "Pod", "x": 1\xff}',
    "ff-in-string-then-x": b'{"apiVersion": "v1", "kind": "Pod", "x": "\xff"}x',
}


def test_invalid_utf8_outside_a_string(oracle_binary: str, tmp_path: Path) -> None:
    files = []
    for name, data in BAD_BYTES.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        files.append(path)
    got = {f.stem: (k, _podnuma(f)) for f, k in zip(files, _oracle(oracle_binary, files), strict=True)}
    assert [n for n, (k, _) in got.items() if not any(p in k.get("error", "") for p in SYNTAX)] == []
    assert _disagreements(got) == []
    assert "invalid character 'ÿ' looking for beginning of value" in got["ff-value"][1]["error"]


@pytest.mark.parametrize(("data", "want"), [
    (b'{"a": \xff}', "invalid character '\u00ff' looking for beginning of value"),
    (b'{"a": "\xff"}', None),
    ('{"a": \ufffd}'.encode(), "invalid character '\u00ef' looking for beginning of value"),
])
def test_the_scan_of_bytes(data: bytes, want: str | None) -> None:
    assert go_json_syntax_error(data) == want
