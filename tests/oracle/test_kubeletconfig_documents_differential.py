"""The documents of the kubelet's ``--config`` file, podnuma against the
kubelet's own loader (``kubelet-oracle kubeletconfig --file``:
cmd/kubelet/app/server.go loadConfigFile, configfiles' fsLoader, the
codec's decoding of the bytes).

What the loader does with a file of more than one document: a text whose
first character other than white space is ``{`` is JSON, decoded whole (a
second document after it is refused); any other text is YAML, of which
``sigs.k8s.io/yaml`` (go-yaml v2's ``Unmarshal``) parses the first document
only, stopping at the token that ends it: what follows is never parsed, so
a later document may be malformed, tab-indented, unterminated or not YAML
at all. The reader still refuses a control character in any part of the
text it has taken, and it takes the text 512 bytes at a time.

A seeded corpus of files (a valid first document, padded so that the
end of it falls around a 512-byte boundary, then a separator and a later
document from a pool of broken texts, sometimes with a control character
placed near that boundary; some with a broken first document; some JSON
with a document after it) must be accepted and refused alike; a control
character refused by both is named by both.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import outcomes
from tests.oracle.kubeletconfig_files import podnuma_file_error as _podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_DOCUMENTS_COUNT", 300)

_HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
_FIELDS = (
    "cpuManagerPolicy: static\n",
    'reservedSystemCPUs: "0"\n',
    "maxPods: 110\n",
    "topologyManagerPolicy: restricted\n",
    "featureGates:\n  PodLevelResourceManagers: true\n",
    "kubeReserved:\n  cpu: 500m\n  memory: 1Gi\n",
    "cpuManagerPolicyOptions: {full-pcpus-only: \"true\"}\n",
)

#: later documents the kubelet never parses
_LATER = (
    "foo: [1, 2\n",
    "\tfoo: 1\n",
    "foo:\n\tbar: 1\n",
    'foo: "abc\n',
    "foo: 'abc\n",
    "{{{{ not yaml ]]]\n",
    "foo: 1\n  bar: 2\n",
    "foo: *nope\n",
    "@foo\n",
    "`cmd`\n",
    "- [\n",
    "%YAML 1.1\n%YAML 1.1\n---\nx: 1\n",
    "key: value: other\n",
    "a: 1\na: 2\n",
    "!!binary foo\n",
    "? [a\n",
    "x: |\n bad\n  indent\n\tmore\n",
    "apiVersion: v1\nkind: Pod\n",
    "",
    "plain text, not a mapping at all } ] >\n",
)

#: first documents the kubelet refuses
_BROKEN_FIRST = (
    'cpuManagerPolicy: "static\n',
    "\tcpuManagerPolicy: static\n",
    "cpuManagerPolicy: [static\n",
    "cpuManagerPolicy: static\n  maxPods: 1\n",
)

_CONTROL = ("\x01", "\x7f", "\x00", "\x1b", "\x85", "\u0080")  # \x85 (NEL) is allowed


#: characters of one to four bytes in UTF-8, for padding whose characters
#: straddle the reader's 512-byte reads
_WIDE = ("p", "p", "\u00e9", "\u20ac", "\U0001f600")

#: bytes that are not UTF-8 text (a lone lead byte, a bad trailing byte, an
#: encoded surrogate, a byte that leads nothing, an overlong form)
_NOT_UTF8 = (b"\xff", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xed\xa0\x80", b"\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80")


def _padding(rng: random.Random, head: str) -> str:
    """A comment that brings the first document's end near a 512-byte
    boundary (or not), sometimes of characters wider than a byte."""
    size = len(head.encode())
    if rng.random() < 0.3:
        return ""
    target = 512 * rng.choice((1, 1, 2)) + rng.randint(-8, 4)
    need = target - size - 3  # "#", " " and the newline
    if need <= 0:
        return ""
    if rng.random() < 0.5:
        return "# " + "p" * need + "\n"
    out = []
    while need > 0:
        ch = rng.choice(_WIDE)
        width = len(ch.encode())
        if width > need:
            ch, width = "p", 1
        out.append(ch)
        need -= width
    return "# " + "".join(out) + "\n"


def _near_boundary(rng: random.Random, data: bytes, first: int) -> int:
    """A byte offset near a 512-byte boundary, the end of the first
    document (``first``), or anywhere."""
    roll = rng.random()
    if roll < 0.4:
        at = 512 * rng.randint(1, max(1, len(data) // 512)) + rng.randint(-6, 6)
    elif roll < 0.85:
        at = first + rng.randint(0, 24)
    else:
        at = rng.randint(0, len(data))
    return max(0, min(at, len(data)))


def corpus(seed: int, count: int) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig-documents:{seed}:{i}")
        tags: list[str] = []
        first = _HEAD + "".join(rng.sample(_FIELDS, rng.randint(1, 4)))
        if rng.random() < 0.1:
            first += rng.choice(_BROKEN_FIRST)
            tags.append("broken-first")
        first += _padding(rng, first)
        sep = rng.choice(("---\n", "---\n", "--- ", "...\n", "...\n---\n", "---\n---\n", "\n---\n"))
        later = rng.choice(_LATER)
        if rng.random() < 0.3:
            later = _padding(rng, "") + later + _padding(rng, "")
        text = first + sep + later
        data = text.encode("utf-8")
        end = len((first + sep).encode("utf-8"))
        roll = rng.random()
        if roll < 0.3:
            # a control character around the end of the first document or
            # a read's boundary (before or after it)
            at = _near_boundary(rng, data, end)
            while at < len(data) and data[at] & 0xC0 == 0x80:
                at += 1  # (not inside a character)
            data = data[:at] + rng.choice(_CONTROL).encode("utf-8") + data[at:]
            tags.append("control")
        elif roll < 0.55:
            # bytes that are not UTF-8, anywhere (inside a character too)
            at = _near_boundary(rng, data, end)
            data = data[:at] + rng.choice(_NOT_UTF8) + data[at:]
            tags.append("not-utf8")
        if rng.random() < 0.06:
            data = (json.dumps({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                                "maxPods": 110}) + "\n" + sep + later).encode("utf-8")
            tags = ["json"]
        elif rng.random() < 0.08:
            # UTF-16 with a byte order mark, which go-yaml decodes
            order = rng.choice(("utf-16-le", "utf-16-be"))
            bom = b"\xff\xfe" if order == "utf-16-le" else b"\xfe\xff"
            body = first + sep + later
            if rng.random() < 0.4:
                at = rng.randint(len(first), len(body))
                body = body[:at] + rng.choice(_CONTROL) + body[at:]
            data = bom + body.encode(order, "surrogatepass")
            if rng.random() < 0.2:
                data += b"\x00"  # an odd byte at the end
            tags = [order]
        out.append((f"d{i}-" + "+".join(tags or ["later"]), data))
    return out


def test_later_documents_as_the_kubelets_loader(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    mismatches, _, both = outcomes(oracle_binary, tmp_path, items, "yaml")
    refused = len(both)
    reader: dict[str, int] = {}
    for name, mine, theirs in both:
        # go-yaml's reader's problem, in its words
        said = next((w for w in _READER_WORDS if f"yaml: {w}" in theirs), None)
        if said is not None:
            reader[said] = reader.get(said, 0) + 1
        if said is not None and f"invalid YAML: {said}" not in mine or said is None and "invalid YAML: " in mine \
                and any(w in mine for w in _READER_WORDS):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
    print(f"kubelet config file documents: {len(items)} files (seed {SEED}): {refused} refused "
          f"(by the reader: {reader}); {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert refused and reader and len(items) - refused > len(items) // 4


#: go-yaml v2's reader's problems
_READER_WORDS = (
    "control characters are not allowed", "invalid leading UTF-8 octet", "invalid trailing UTF-8 octet",
    "incomplete UTF-8 octet sequence", "invalid length of a UTF-8 sequence", "invalid Unicode character",
    "incomplete UTF-16 character", "unexpected low surrogate area", "incomplete UTF-16 surrogate pair",
    "expected low surrogate area",
)


#: (file text, the kubelet loads it)
FIXED = [
    (_HEAD + "cpuManagerPolicy: static\n---\nfoo: [1, 2\n", True),
    (_HEAD + "---\n\tfoo: 1\n", True),
    (_HEAD + '---\nfoo: "abc\n', True),
    (_HEAD + "---\n{{{{ not yaml ]]]\n", True),
    (_HEAD + "...\n}}}\n", True),
    (_HEAD + "---\n\x01\n", False),  # within the first 512 bytes the reader took
    (_HEAD + "# " + "p" * 600 + "\n---\nfoo: 1\n" + "q" * 600 + "\x01\n", True),  # past them
    (_HEAD + 'cpuManagerPolicy: "static\n', False),
    (_HEAD + "\tcpuManagerPolicy: static\n", False),
    # "{" first: JSON, the whole text
    ('{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}\n---\nfoo: 1\n', False),
    # the file's name plays no part: YAML in a .json file
    (_HEAD + "---\nfoo: [\n", True),
]


def test_fixed_files_as_the_kubelets_loader(oracle_binary: str, tmp_path: Path) -> None:
    paths = []
    for i, (text, _) in enumerate(FIXED):
        p = tmp_path / f"f{i}.{'json' if i == len(FIXED) - 1 else 'yaml'}"
        p.write_bytes(text.encode("utf-8"))
        paths.append(p)
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=120)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for (text, loads), path, answer in zip(FIXED, paths, answers, strict=True):
        assert ("error" not in answer) is loads, (text, answer)
        mine = _podnuma(path)
        assert (mine is None) is loads, (text, mine)


def straddling() -> list[tuple[str, bytes]]:
    """Files whose first read ends inside a character of two to four bytes
    (so that read carries one to three bytes over and every later read
    ends that much earlier than 512 * n), with the first document ending
    just before the second read's end and a control character placed
    byte by byte around it."""
    out = []
    for wide in ("\u00e9", "\u20ac", "\U0001f600"):
        width = len(wide.encode())
        for into in range(1, width):  # bytes of it in the first read
            comment = "# " + "p" * (512 - len(_HEAD) - 2 - into) + wide + "\n"
            assert len((_HEAD + comment).encode()) == 512 - into + width + 1
            for body in range(490 - width, 504 - width):
                first = _HEAD + comment + "# " + "q" * body + "\n---\n"
                size = len(first.encode())
                for gap in range(0, 12):
                    data = first.encode() + b"r" * gap + b"\x01" + b"\nfoo: [\n"
                    out.append((f"straddle-{width}-{into}-{size}-{gap}", data))
    return out


def test_reads_carry_an_incomplete_character_over(oracle_binary: str, tmp_path: Path) -> None:
    items = straddling()
    paths = []
    for i, (_, data) in enumerate(items):
        p = tmp_path / f"s{i:05d}.yaml"
        p.write_bytes(data)
        paths.append(p)
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=300)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    mismatches = []
    refused = 0
    for (name, _), path, answer in zip(items, paths, answers, strict=True):
        theirs, mine = answer.get("error"), _podnuma(path)
        refused += theirs is not None
        if (theirs is None) != (mine is None):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
    print(f"straddling reads: {len(items)} files, {refused} refused; {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert 0 < refused < len(items)
