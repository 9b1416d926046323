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

from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.pods import load_config_file
from tests.oracle.harness import env_int, random_settings

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


def _padding(rng: random.Random, head: str) -> str:
    """A comment that brings the first document's end near a 512-byte
    boundary (or not)."""
    size = len(head.encode())
    if rng.random() < 0.3:
        return ""
    target = 512 * rng.choice((1, 1, 2)) + rng.randint(-8, 4)
    need = target - size - 3  # "#", " " and the newline
    return "# " + "p" * need + "\n" if need > 0 else ""


def corpus(seed: int, count: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
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
        text = first + sep + later
        if rng.random() < 0.35:
            # a control character somewhere around the end of the first
            # document (before or after the reader's chunk boundary)
            at = len(first) + len(sep) + rng.randint(0, 20) if rng.random() < 0.8 else rng.randint(0, len(first))
            at = min(at, len(text))
            text = text[:at] + rng.choice(_CONTROL) + text[at:]
            tags.append("control")
        if rng.random() < 0.08:
            text = json.dumps({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                               "maxPods": 110}) + "\n" + sep + later
            tags.append("json")
        out.append((f"d{i}-" + "+".join(tags or ["later"]), text))
    return out


def _podnuma(path: Path) -> str | None:
    try:
        load_config_file(path)
    except (InputError, KubeletStartupError) as e:
        return str(e)
    return None


def test_later_documents_as_the_kubelets_loader(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    paths = []
    for i, (_, text) in enumerate(items):
        p = tmp_path / f"{i:05d}.yaml"
        p.write_bytes(text.encode("utf-8"))
        paths.append(p)
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=300)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(items)
    mismatches = []
    refused = control = 0
    for (name, _), path, answer in zip(items, paths, answers, strict=True):
        theirs, mine = answer.get("error"), _podnuma(path)
        if (theirs is None) != (mine is None):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
            continue
        if theirs is None or mine is None:
            continue
        refused += 1
        said = "control characters are not allowed"
        if (said in theirs) != (said in mine):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
        control += said in theirs
    print(f"kubelet config file documents: {len(items)} files (seed {SEED}): {refused} refused "
          f"({control} for a control character); {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert refused and control and len(items) - refused > len(items) // 3


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
