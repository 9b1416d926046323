"""UTF-16 kubelet configuration files (with a byte order mark), podnuma
against the kubelet's own loader (``kubelet-oracle kubeletconfig --file``).

go-yaml's reader decodes UTF-16 a read (512 bytes, less a character the
read before cut and carried over) at a time and refuses a lone low
surrogate (``unexpected low surrogate area``), a high one not followed by
a low one (``expected low surrogate area``), one cut by the end of the
file (``incomplete UTF-16 surrogate pair``), an odd last byte
(``incomplete UTF-16 character``) and a control character, each only when
a read the first document needs took it. podnuma decodes each read with
Python's codec and steps a character at a time only where the codec
stops (:class:`podnuma.inputs.documents._GoYAMLRead`): the seeded corpus
puts those problems, and characters of four bytes (surrogate pairs), near
the reads' ends and the first document's end, in both byte orders.
"""

from __future__ import annotations

import random
from pathlib import Path

from tests.oracle.harness import env_int, random_settings
from tests.oracle.kubeletconfig_files import outcomes
from tests.oracle.test_kubeletconfig_documents_differential import _READER_WORDS

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_KUBELETCONFIG_UTF16_COUNT", 300)

_HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 42\n"
_LATER = ("foo: 1\n", "foo: [1, 2\n", "\tbad: indent\n", "x: 1\n---\ny: 2\n", "")
#: what a problem brings (as UTF-16 code units: a lone surrogate is one)
_PROBLEMS = ("\ud800", "\udc00", "\ud83d", "\ude00", "\x01", "\x00", "\x1b", "\x7f", "\ufffe", "\x85")
_WIDE = ("p", "\u00e9", "\U0001f600", "\U0001f600", "\u4e2d")


def _units(text: str, codec: str) -> bytes:
    return text.encode(codec, "surrogatepass")


def corpus(seed: int, count: int) -> list[tuple[str, bytes]]:
    out = []
    for i in range(count):
        rng = random.Random(f"kubeletconfig-utf16:{seed}:{i}")
        codec = rng.choice(("utf-16-le", "utf-16-be"))
        bom = b"\xff\xfe" if codec == "utf-16-le" else b"\xfe\xff"
        # padding of wide characters so that the first document ends near
        # a read's end (256 code units a read)
        pad = "".join(rng.choice(_WIDE) for _ in range(rng.choice((0, 100, 200, 210, 230, 400, 470))))
        first = _HEAD + "# " + pad + "\n"
        sep = rng.choice(("---\n", "...\n", "---\n---\n"))
        body = first + sep + rng.choice(_LATER) + "# " + "".join(rng.choice(_WIDE) for _ in range(rng.randrange(300)))
        if rng.random() < 0.25:
            body = first  # (the file's end is the first document's: a cut there is read)
        tags = []
        for _ in range(rng.choice((0, 1, 1, 2))):
            roll = rng.random()
            if roll < 0.4:
                at = len(first) + rng.randint(-6, 6)  # near the first document's end
            elif roll < 0.8:
                units = 256 * rng.randint(1, 3) + rng.randint(-4, 4)  # near a read's end (in code units)
                at = len(_units(body[:units], codec).decode(codec, "surrogatepass")[:units])
            else:
                at = rng.randrange(len(body) + 1)
            at = max(0, min(at, len(body)))
            problem = rng.choice(_PROBLEMS)
            body = body[:at] + problem + body[at:]
            tags.append(f"U+{ord(problem):04X}")
        data = bom + _units(body, codec)
        if rng.random() < 0.15:
            data = data[:-rng.choice((1, 2, 3))]  # a unit or a pair cut at the end
            tags.append("cut")
        out.append((f"u{i}-{codec}-{'+'.join(tags) or 'clean'}", data))
    return out


def test_utf16_as_the_kubelets_reader(oracle_binary: str, tmp_path: Path) -> None:
    items = corpus(SEED, COUNT)
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "yaml")
    reader: dict[str, int] = {}
    for name, mine, theirs in refused:
        said = next((w for w in _READER_WORDS if f"yaml: {w}" in theirs), None)
        if said is not None:
            reader[said] = reader.get(said, 0) + 1
            if f"invalid YAML: {said}" not in mine:
                mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
    print(f"kubelet config UTF-16: {len(items)} files (seed {SEED}): {loaded} loaded, refused by the reader: "
          f"{reader}; {len(mismatches)} differences")
    assert not mismatches, "\n".join(mismatches[:10])
    assert loaded and len(reader) >= 4
