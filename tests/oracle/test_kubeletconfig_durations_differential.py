"""The ``metav1.Duration`` fields of a KubeletConfiguration against the
kubelet's own codec (``kubelet-oracle kubeletconfig``): the texts Go's
``time.ParseDuration`` takes and refuses, in the same words; which fields
are durations at all (every string field of the v1beta1 types is given
``"abc"``: only the durations may fail); and what a ``null`` does to each.
The oracle prints a refusal as ``failed to decode: `` (the codec's prefix)
followed by Go's error; podnuma keeps Go's error and adds the field path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from podnuma.api._kubeletconfig_v137 import DURATION_FIELDS, SCHEMA
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.errors import InputError
from podnuma.golang.duration import format_duration, parse_duration

PREFIX = "failed to decode: "

#: texts for time.ParseDuration: units, signs, fractions, "0", overflow
GRAMMAR = (
    "9999999999h", "1.5h", "-1s", "+5m", "1h2m3s", "", " 1s", "1s ", "1", "1S", ".s", "-.s",
    "0", "-0", "+0", "00", "0s", "0.0s", ".5s", "5.s", "1.", "1..5s", "abc", "-", "+", "+-1s",
    "1ns", "1us", "1\u00b5s", "1\u03bcs", "1ms", "1m", "1h", "1d", "1 s", "1sm", "1m1", "1h-1m",
    "2562047h47m16.854775807s", "2562047h47m16.854775808s", "2562047h", "2562048h",
    "9223372036854775807ns", "9223372036854775808ns", "18446744073709551616ns",
    "0.000000001s", "0.0000000001s", "1.0000000000000000000000001h", "1.9999999999999999999999s",
    "3.000000001s", "100ms", "1e3s", "0x10s", "1h1h1h", "5m0.5s",
)

#: the edges: the int64 bounds (a magnitude of 2**63 is read before the
#: sign), two terms of 2**63 (Go's unsigned sum wraps to zero), long
#: fractions (digits past 2**63 are dropped), only ASCII 0-9 as digits, both
#: micro signs, and how an error quotes ``"``, ``\\``, control and non-ASCII
#: bytes (``time.quote``: ``\\xNN`` per UTF-8 byte, DEL as it is)
EDGES = (
    "-9223372036854775808ns", "-2562047h47m16.854775808s", "-2562047h47m16.854775809s",
    "-9223372036854775809ns", "+9223372036854775807ns", "-9223372036854775807ns",
    "9223372036854775808ns9223372036854775808ns", "-9223372036854775808ns9223372036854775808ns",
    "9223372036854775808ns9223372036854775808ns90s",
    "9223372036854775808ns1ns", "9223372036854775807ns1ns", "-9223372036854775807ns1ns",
    "0.9223372036854775807s", "0.9223372036854775808s", "0.9223372036854775809s",
    "0.92233720368547758079s", "1.00000000000000000000000000000000000000001s",
    "0." + "0" * 400 + "1h", "1" + "0" * 5000 + "ns", "0" * 5000 + "1ns", "0.1234567890123456789012345h",
    "1.5h0.000000001ns", "0.5ns", "0.9999999999ns", "1.s", "1.h", ".5s", "1..5s", "1.5.5s",
    "1\u00b5s", "1\u03bcs", "1\u00b5", "1\u03bc", "1\u00c2\u00b5s", "1\u00b5\u00b5s",
    "", "+", "-", "0", "+0", "-0", "+-0", "--1s", "0.0", "00s", "0 ", " 0",
    "\u0661s", "1\u0661s", "1\u00b2s", "\uff11s", "1\uff53", '1"s', "1\\s", "1\u00e9", "1\u00e9s",
    '"', "\\", "1\ts", "1\ns", "1\x00s", "1\x7fs", "1\x1fs", "1s\ufffd", "1\ud800s", "1\U0001f600",
    "\u00e9", "1h\u00e9", "1\u2028s", "1\u00a0s", "1 \u00b5s",
)


def oracle_answers(oracle: str, tmp_path: Path, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    paths = []
    for i, doc in enumerate(docs):
        p = tmp_path / f"{i:04d}.json"
        p.write_text(json.dumps(doc), encoding="utf-8")
        paths.append(str(p))
    proc = subprocess.run([oracle, "kubeletconfig", *paths], capture_output=True, text=True, check=True,
                          timeout=300)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(docs)
    return answers


def podnuma_error(doc: dict[str, Any]) -> InputError | None:
    try:
        load_kubelet_config(doc)
    except InputError as e:
        return e
    return None


def nested(path: str, value: Any) -> dict[str, Any]:
    doc: Any = value
    for key in reversed(path.split(".")):
        doc = {key: doc}
    out: dict[str, Any] = doc
    return out


def lookup(config: dict[str, Any], path: str) -> Any:
    value: Any = config
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def verdicts(oracle: str, tmp_path: Path, texts: tuple[str, ...]) -> list[str]:
    """For each text given to ``syncFrequency``: where podnuma and the
    kubelet part (refusal or not, words, the value read), "" when not."""
    answers = oracle_answers(oracle, tmp_path, [{"syncFrequency": t} for t in texts])
    out = []
    for text, answer in zip(texts, answers, strict=True):
        err = podnuma_error({"syncFrequency": text})
        if answer.get("error"):
            theirs = answer["error"].removeprefix(PREFIX)
            ok = err is not None and err.message == theirs and err.path == "syncFrequency"
            out.append("" if ok else f"{text!r}: kubelet refuses ({theirs}), podnuma: {err}")
            continue
        if err is not None:
            out.append(f"{text!r}: kubelet accepts it, podnuma: {err}")
            continue
        # (a zero duration is then defaulted: 1m0s for syncFrequency)
        read = parse_duration(text)
        printed = answer["config"]["syncFrequency"]
        ok = read == 0 or format_duration(read) == printed
        out.append("" if ok else f"{text!r}: kubelet reads {printed}, podnuma {format_duration(read)}")
    return out


def test_the_grammar_is_go_s(oracle_binary: str, tmp_path: Path) -> None:
    differences = [d for d in verdicts(oracle_binary, tmp_path, GRAMMAR) if d]
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("text", EDGES)
def test_the_edges_are_go_s(oracle_binary: str, tmp_path: Path, text: str) -> None:
    assert verdicts(oracle_binary, tmp_path, (text,)) == [""]


def string_fields(schema: Any, prefix: str = "") -> list[str]:
    """The dotted paths of the string (and "any") fields reached through
    structs only."""
    out: list[str] = []
    for name, sub in schema[1].items():
        path = f"{prefix}.{name}" if prefix else name
        if sub == "string" or sub == "any":
            out.append(path)
        elif isinstance(sub, tuple) and sub[0] == "struct":
            out.extend(string_fields(sub, path))
    return out


def test_the_duration_fields_are_the_kubelets(oracle_binary: str, tmp_path: Path) -> None:
    fields = [p for p in string_fields(SCHEMA) if p not in ("apiVersion", "kind")]
    assert set(DURATION_FIELDS) <= set(fields)
    answers = oracle_answers(oracle_binary, tmp_path, [nested(p, "abc") for p in fields])
    # (an "any" field of another type, a quantity, refuses "abc" in other words)
    kubelet = {p for p, a in zip(fields, answers, strict=True) if a.get("error", "").startswith(PREFIX + "time: ")}
    assert kubelet == set(DURATION_FIELDS)
    for path in fields:
        err = podnuma_error(nested(path, "abc"))
        if path in kubelet:
            assert err is not None and (err.message, err.path) == ('time: invalid duration "abc"', path)
        else:  # a string the codec takes as it is
            assert err is None or not err.message.startswith("time: "), path


def test_null_and_other_forms_on_each_duration_field(oracle_binary: str, tmp_path: Path) -> None:
    cases = [(p, v) for p in DURATION_FIELDS for v in (None, 5, 5.5, True, [], {}, "2m", "-1h")]
    docs = [nested(p, v) for p, v in cases]
    for doc in docs:  # (validation wants the gate for a period other than 100ms)
        if "cpuCFSQuotaPeriod" in doc:
            doc["featureGates"] = {"CustomCPUCFSQuotaPeriod": True}
    answers = oracle_answers(oracle_binary, tmp_path, docs)
    differences = []
    for (path, value), doc, answer in zip(cases, docs, answers, strict=True):
        err = podnuma_error(doc)
        theirs = answer.get("error", "").removeprefix(PREFIX)
        if bool(theirs) != (err is not None):
            differences.append(f"{path}={value!r}: kubelet {theirs or 'accepts'}, podnuma {err or 'accepts'}")
        elif theirs.startswith("time: ") and err is not None and err.message != theirs:
            differences.append(f"{path}={value!r}: kubelet {theirs!r}, podnuma {err.message!r}")
        elif not theirs and isinstance(value, str):
            printed = lookup(answer["config"], path)
            if printed != format_duration(parse_duration(value)):
                differences.append(f"{path}={value!r}: kubelet reads {printed}")
    assert not differences, "\n".join(differences)
