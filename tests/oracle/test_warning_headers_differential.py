"""``Warning`` headers (podnuma.web.warning_headers) against the Kubernetes
API server's own (``kubelet-oracle warnings``: the texts added through
``warning.AddWarning`` in a handler wrapped by
``filters.WithWarningRecorder`` of k8s.io/apiserver v0.37.2, and the
headers read back by apimachinery's ``ParseWarningHeaders``).

Both sides must give the same header values, byte for byte and in order,
for hand-written cases (quotes, backslashes, non-ASCII text, control
characters, duplicates, empty texts, the 4,096-rune limit reached at once,
one rune past it, and long after it) and 300 generated ones; every header
podnuma writes must parse back, with Go's parser, to code 299, agent ``-``
and the text written (cut to 256 runes once the limit was passed).

Then over real HTTP: ``/api/topology`` as SVG gives, in ``Warning``
headers, the same warnings its JSON form gives in ``warnings`` (which
tests/web/test_warnings_and_surrogates.py compares with the command's
standard error), read back by Go's parser, non-ASCII text included (UTF-8
on the wire); an answer without warnings has no ``Warning`` header."""

from __future__ import annotations

import json
import random
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from podnuma.web.warning_headers import (
    TRUNCATE_AT_TOTAL_RUNES,
    TRUNCATE_ITEM_RUNES,
    header_value,
    warning_headers,
)
from tests.oracle.conftest import oracle_binary

__all__ = ["oracle_binary"]  # the differential suite's fixture: its build, its skip (fail under CI)

PIECES = ["a", "b c", '"', "\\", '\\"', "é", "名前", "🙂", " ", "\u2028", "\u00a0", "warning: ",
          "x" * 40, "y" * 255, "z" * 257, ""]
#: control characters (a text holding one gives no header): one piece in 40
CONTROL = ["\t", "\x07", "\x7f", "\x85", "\x00", "\n"]

HAND: list[list[str]] = [
    [],
    [""],
    ["one"],
    ["dup", "dup", "other", "dup"],
    ['quoted "text" with \\ backslash', "\\\\", '"'],
    ["é ünïcode 名前 🙂", "\u2028 line separator, not a control character"],
    ["bell \x07 refused", "after the refused one"],
    ["next line \x85 (C1) refused", "nbsp \u00a0 kept"],
    ["tab\tis a control character", "DEL \x7f too"],
    ["x" * TRUNCATE_AT_TOTAL_RUNES],
    ["x" * TRUNCATE_AT_TOTAL_RUNES, "y"],
    ["x" * (TRUNCATE_AT_TOTAL_RUNES + 1)],
    ["a" * 2000, "b" * 2000, "c" * 96, "d"],
    ["a" * 2000, "b" * 2000, "c" * 97],
    [f"{i:03d} " + "w" * 300 for i in range(40)],
    ["\x07" + "v" * 5000, "u" * 300, "t" * 10],
    ["short"] * 3 + ["s" * 5000] + [f"later {i} " + "r" * 100 for i in range(60)],
    ["é" * 3000, "ü" * 2000],
]


def _generated(n: int, seed: int) -> list[list[str]]:
    rnd = random.Random(seed)
    out: list[list[str]] = []
    for _ in range(n):
        texts: list[str] = []
        for _ in range(rnd.choice([0, 1, 2, 5, 12, 40])):
            text = "".join(rnd.choice(CONTROL if rnd.random() < 0.025 else PIECES)
                           for _ in range(rnd.randint(0, 12)))
            if texts and rnd.random() < 0.15:
                text = rnd.choice(texts)
            texts.append(text)
        out.append(texts)
    return out


def _oracle(binary: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    proc = subprocess.run([binary, "warnings"], input=json.dumps(cases).encode(),
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_headers_are_the_api_servers(oracle_binary: str) -> None:
    cases = HAND + _generated(300, seed=20261206)
    ours = [warning_headers(texts) for texts in cases]
    got = _oracle(oracle_binary, [{"texts": texts, "headers": mine}
                                  for texts, mine in zip(cases, ours, strict=True)])
    assert len(got) == len(cases)
    truncated = 0
    for texts, mine, theirs in zip(cases, ours, got, strict=True):
        assert mine == theirs["written"], texts
        assert theirs["parseErrors"] == []
        assert [(p["code"], p["agent"]) for p in theirs["parsed"]] == [(299, "-")] * len(mine)
        # each header says its text: written back, the same header
        assert [header_value(p["text"]) for p in theirs["parsed"]] == mine
        if sum(len(p["text"]) for p in theirs["parsed"]) < sum(len(t) for t in dict.fromkeys(texts)
                                                                if header_value(t) is not None):
            truncated += 1
            assert all(len(p["text"]) <= TRUNCATE_ITEM_RUNES for p in theirs["parsed"])
    # the cases reach the limit, and the generated ones more than once
    assert truncated >= 10


def test_refused_texts_give_no_header() -> None:
    assert header_value("bell \x07") is None
    assert header_value("lone \ud800 surrogate") is None
    assert header_value('a "b" \\ c') == '299 - "a \\"b\\" \\\\ c"'
    assert warning_headers(["", "\x07", "ok", "ok"]) == ['299 - "ok"']


# --- over HTTP -------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def web() -> Any:
    from tests.web.conftest import running

    with running() as url:
        yield url


def _post(url: str, body: bytes) -> tuple[int, list[str], bytes]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/yaml"})
    with urllib.request.urlopen(req) as resp:  # (200 expected: an error raises)
        # (the header's bytes are UTF-8, as the API server writes them; the
        # client reads them as Latin-1)
        values = [v.encode("latin-1").decode("utf-8") for v in resp.headers.get_all("Warning") or []]
        return resp.status, values, resp.read()


def test_svg_gives_its_warnings_as_headers(web: str, oracle_binary: str) -> None:
    scen = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text()
    assert "  topologyManagerPolicy:" in scen
    # a misspelt field whose name is not ASCII: named in the warning
    scen = scen.replace("  topologyManagerPolicy:",
                        '  allowedUnsafeSysctls: ["kernel.msg*"]\n  "topologyManagerPolicé \\"q\\"":')
    body = scen.encode()
    status, values, svg = _post(web + "/api/topology?name=s.yaml&step=0", body)
    assert status == 200 and svg.lstrip().startswith(b"<")
    status, _, data = _post(web + "/api/topology?name=s.yaml&step=0&format=json", body)
    want = json.loads(data)["warnings"]
    assert len(want) >= 2 and any('unknown field "topologyManagerPolicé \\"q\\""' in w for w in want)
    assert values == warning_headers(want)
    assert any(not v.isascii() for v in values)  # (the UTF-8 bytes went through, read back)
    (parsed,) = _oracle(oracle_binary, [{"texts": [], "headers": values}])
    assert parsed["parseErrors"] == []
    assert [p["text"] for p in parsed["parsed"]] == want


def test_svg_without_warnings_has_no_header(web: str) -> None:
    body = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_bytes()
    status, values, svg = _post(web + "/api/topology", body)
    assert status == 200 and svg.lstrip().startswith(b"<") and values == []
