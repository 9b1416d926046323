"""podnuma's YAML reader against the one the kubelet and kubectl use
(``kubelet-oracle yaml``: ``sigs.k8s.io/yaml.YAMLToJSON`` over its go-yaml
v2 fork), on a corpus of tricky documents: YAML 1.1 booleans, octal and
other integer forms, floats, timestamps, null forms, keys that are not
strings, merge keys, explicit tags, anchors defined twice.

Both must give the same JSON value, or both refuse. The one difference
podnuma makes on purpose: a key given twice in one mapping is an error
(go-yaml keeps the last one); those documents are checked for podnuma's
refusal and go-yaml's last-wins answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import parse_document

SCALARS = [
    # booleans, YAML 1.1
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF", "true", "True", "TRUE", "false", "False", "FALSE", "tRUE", "yEs", "oN", "t", "f",
    "'yes'", '"on"', "!!str yes", "!!bool yes", "!!bool 1",
    # null forms
    "", "~", "null", "Null", "NULL", "nULL", "'null'", "!!null ~",
    # integers
    "0", "00", "07", "0755", "08", "0o17", "0O17", "0x1F", "0X1f", "0b101", "0B11", "-0b101",
    "0b-1", "+12", "-12", "1_000", "1__0", "_1", "0x_1F", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "-9223372036854775809", "190:20:30", "!!int 12", "!!int '12'", "!!int 1.5", "!!float 3",
    # floats
    "1.5", "-1.5", ".5", "-.5", "+.5", "1.", "1e3", "1E3", "1e+3", "1e-3", "6.8523015e+5",
    "2.0", "1e21", "1e20", "1e400", "-1e400", ".5e3", "._5", ".", "0.0", "-0.0", ".inf", "-.Inf",
    "+.INF", ".nan", ".NaN", ".iNf", "1_0.5", "0x1p3", "1.5_0",
    # timestamps (go-yaml keeps the text)
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-12-14 21:59:43.10 -5",
    "2001-02-30", "2001-1-2", "2001-12-14T21:59:43Z", "20011-12-14", "!!timestamp 2001-12-14",
    # strings that look like something
    "1.2.3", "0x", "0xZZ", "+", "-", "<<", "'<<'", "12:30", "1:2:3", "!custom text", "! text",
    "!!binary aGVsbG8=", "!!binary |\n  aGVs\n  bG8=", "0.1.2", "1e", "e3",
]

DOCUMENTS = [
    # keys that are not strings
    "1: a\n2.5: b\ntrue: c\nno: d\n0x10: e\n1e3: f\n0.1: g\n-0.0: h\n1e7: i\n123456: j\n",
    "~: a\n", "null: a\n", "? [a, b]\n: c\n", "? {a: 1}\n: c\n", "18446744073709551615: a\n",
    "2001-12-14: a\n", ".inf: a\n", "y: 1\nn: 2\n",
    # merge keys
    "base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\n",
    "base: &b {a: 1, b: 2}\nx:\n  b: 3\n  <<: *b\n",
    "a: &a {k: 1}\nb: &b {k: 2, m: 3}\nx:\n  <<: [*a, *b]\n",
    "x:\n  <<: {a: 1}\n  <<: {a: 2}\n",
    "x: {<<: 1}\n", "x: {<<: [1]}\n", "x: {'<<': {a: 1}}\n",
    "x: {!!merge <<: {a: 1}}\n",
    # anchors
    "a: &x 1\nb: &x 2\nc: *x\n", "a: &x [1, 2]\nb: *x\nc: *x\n", "a: *y\n", "a: &a [*a]\n",
    # documents
    "", "# only a comment\n", "--- 3\n", "[1, y, n, ~]\n", "{a: [on, off]}\n",
    # tags on collections
    "!!python/object:os.system {}\n", "!!map {a: 1}\n", "!!seq [1]\n", "!custom {a: 1}\n",
]

DUPLICATES = ["a: 1\na: 2\n", "1: a\n'1': b\n", "true: a\ny: b\n"]


def _oracle(binary: str, text: str, tmp: Path) -> Any:
    f = tmp / "doc.yaml"
    f.write_text(text)
    proc = subprocess.run([binary, "yaml", str(f)], capture_output=True, text=True, timeout=60)
    if proc.returncode == 1:
        return ("refused", proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    return ("value", json.loads(proc.stdout))


def _podnuma(text: str) -> Any:
    try:
        return ("value", parse_document(text, name="doc.yaml").data)
    except InputError as e:
        return ("refused", str(e))


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


CORPUS = [f"v: {s}\n" if "\n" not in s else f"v: {s.replace(chr(10), chr(10) + '  ')}\n"
          for s in SCALARS] + [f"{s}\n" for s in SCALARS if s and "\n" not in s] + DOCUMENTS


def test_podnuma_reads_yaml_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    differences = []
    for text in CORPUS:
        want = _oracle(oracle_binary, text, tmp_path)
        got = _podnuma(text)
        if want[0] != got[0] or (want[0] == "value" and not _same(want[1], got[1])):
            differences.append(f"{text!r}: kubelet {want}, podnuma {got}")
    assert not differences, f"{len(differences)} of {len(CORPUS)} differ:\n" + "\n".join(differences)


@pytest.mark.parametrize("text", DUPLICATES)
def test_duplicate_keys_podnuma_refuses_go_yaml_keeps_the_last(
    oracle_binary: str, tmp_path: Path, text: str
) -> None:
    kind, _ = _oracle(oracle_binary, text, tmp_path)
    assert kind == "value"
    got = _podnuma(text)
    assert got[0] == "refused" and "duplicate key" in got[1]
