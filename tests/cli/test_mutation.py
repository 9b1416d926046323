"""CLI mutation run: the repository's example scenarios and pods, mutated,
through the real ``podnuma`` command line (``podnuma.cli.main`` in this
process, for speed).

``PODNUMA_MUTATIONS`` inputs (default 2,000; seeded by
``PODNUMA_MUTATION_SEED``, default 22), spread over the commands that read
them: ``simulate`` and ``cgroups plan`` (scenarios), ``advise`` and
``compare`` (pods), ``state inspect`` (checkpoint directories). Each input
is a valid file with one to three mutations tried (a duplicate key where
the chosen holder is not a mapping leaves the document as it was):

- a mapping entry deleted, or duplicated with another value (a duplicate
  key, which YAML readers must refuse);
- a value retyped: a list, a mapping, a string, a boolean, null, a huge
  integer (10**400), a huge or malformed quantity, a 100 KiB string;
- YAML anchors and aliases: a value replaced by an alias of a small nest
  of aliases put at the top of the document (at most 10**4 nodes once
  expanded); in a document that is a list, by a plain string;
- nesting: a value wrapped in 60 lists;
- bytes: the file cut at a random offset, a random byte overwritten,
  invalid UTF-8 or a NUL inserted.

Expectation: exit code 0 or 2, nothing else, and never a traceback or an
"internal error" in the output. The test prints how many inputs ran, per
command and per exit code.
"""

from __future__ import annotations

import collections
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIOS = sorted(
    p for p in [*EXAMPLES.glob("*.yaml"), *EXAMPLES.glob("pod-level/*.yaml"), *EXAMPLES.glob("topology/*.yaml")]
)
PODS = sorted([*EXAMPLES.glob("agent/pods/*.yaml"), EXAMPLES / "whatif" / "trainer-pod.yaml"])
COUNT = int(os.environ.get("PODNUMA_MUTATIONS", "2000"))
SEED = int(os.environ.get("PODNUMA_MUTATION_SEED", "22"))


# -- mutations of the decoded document -----------------------------------------------


def _containers(doc: Any) -> list[tuple[Any, Any]]:
    """Every (holder, key) pair of the document, depth first."""
    out: list[tuple[Any, Any]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((doc, k))
            out += _containers(v)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((doc, i))
            out += _containers(v)
    return out


def _retyped(rng: random.Random) -> Any:
    return rng.choice([
        [], {}, [1, "a"], {"x": 1}, "", "x", True, False, None, 0, -1, 10**400, -(10**30),
        1e308, "1e400", "99999999999999999999999Ki", "0.000000001m", "-5", "1.5Gi", "0-1023",
        "NaN", "inf", "a" * 100_000, "\u202e\u0000\ufeff", "9" * 400,
    ])  # fmt: skip


def _mutate_doc(doc: Any, rng: random.Random) -> tuple[Any, str | None]:
    """One structural mutation; returns the new document and, for YAML-only
    forms (aliases, duplicate keys), the text to use instead."""
    slots = _containers(doc)
    if not slots:
        return _retyped(rng), None
    holder, key = rng.choice(slots)
    kind = rng.choice(["delete", "retype", "retype", "nest", "alias", "duplicate"])
    if kind == "delete":
        del holder[key]
    elif kind == "retype":
        holder[key] = _retyped(rng)
    elif kind == "nest":
        value = holder[key]
        for _ in range(60):
            value = [value]
        holder[key] = value
    elif kind == "alias":
        marker = f"__alias_{rng.randrange(10**9)}__"
        holder[key] = marker
        text = yaml.safe_dump(doc, sort_keys=False, width=1 << 20)
        width, depth = rng.randint(2, 10), rng.randint(1, 4)  # at most 10**4 nodes expanded
        lines = [f"__a0: &a0 [{json.dumps(rng.choice(['x', 1, True]))}]"]
        for level in range(1, depth + 1):
            lines.append(f"__a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
        if isinstance(doc, dict):
            text = "\n".join(lines) + "\n" + text
            return doc, text.replace(f"'{marker}'", f"*a{depth}").replace(marker, f"*a{depth}")
        return doc, text.replace(marker, "x")
    elif kind == "duplicate" and isinstance(holder, dict):
        text = yaml.safe_dump(doc, sort_keys=False, width=1 << 20)
        lines = text.splitlines()
        prefix = f"{key}:"
        for i, line in enumerate(lines):
            if line.strip().startswith(prefix):
                indent = line[: len(line) - len(line.lstrip())]
                lines.insert(i + 1, f"{indent}{key}: {json.dumps(_retyped(rng), default=str)[:200]}")
                return doc, "\n".join(lines) + "\n"
    return doc, None


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    kind = rng.choice(["cut", "flip", "utf8", "nul"])
    pos = rng.randrange(len(data) + 1)
    if kind == "cut":
        return data[:pos]
    if kind == "flip" and data:
        b = bytearray(data)
        b[min(pos, len(b) - 1)] = rng.randrange(256)
        return bytes(b)
    if kind == "utf8":
        return data[:pos] + b"\xff\xfe\xc3" + data[pos:]
    return data[:pos] + b"\x00" + data[pos:]


def mutate(path: Path, rng: random.Random) -> bytes:
    docs = list(yaml.safe_load_all(path.read_text()))
    text: str | None = None
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            base = (text or yaml.safe_dump_all(docs, sort_keys=False)).encode()
            return _mutate_bytes(base, rng)
        i = rng.randrange(len(docs))
        docs[i], text = _mutate_doc(docs[i], rng)
        if text is not None:
            break
    if text is None:
        text = yaml.safe_dump_all(docs, sort_keys=False, width=1 << 20)
    return text.encode("utf-8", "surrogatepass")


# -- the commands ----------------------------------------------------------------------


def _scenario_commands(f: str) -> list[list[str]]:
    return [
        ["simulate", f, "-o", "json"],
        ["simulate", f],
        ["cgroups", "plan", f, "--driver", "systemd", "--cgroup-version", "2", "-o", "json"],
    ]


def _pod_commands(f: str) -> list[list[str]]:
    return [["advise", f, "-o", "json"], ["compare", f, "-o", "json"]]


def _state_commands(d: str) -> list[list[str]]:
    return [["state", "inspect", d, "-o", "json"]]


def _blobs() -> dict[str, list[str]]:
    cpu = json.loads((ROOT / "tests/cm/cpumanager/cpu_checkpoint_vectors.json").read_text())["loads"]
    memory = json.loads((ROOT / "tests/cm/memorymanager/memory_checkpoint_vectors.json").read_text())
    return {
        "cpu_manager_state": [v["blob"] for v in cpu if isinstance(v.get("blob"), str)],
        "memory_manager_state": [
            b for v in memory.values() if isinstance(v, dict)
            for b in v.values() if isinstance(b, str) and b.startswith("{")
        ],
    }  # fmt: skip


BLOBS = _blobs()


def _state_dir(tmp: Path, i: int, rng: random.Random) -> Path:
    """A state directory with one mutated checkpoint of either kind."""
    name = rng.choice(sorted(BLOBS))
    data = rng.choice(BLOBS[name]).encode("utf-8", "surrogatepass")
    try:
        doc = json.loads(data)
    except json.JSONDecodeError:
        doc = None
    if rng.random() < 0.5 or not isinstance(doc, dict):
        blob = _mutate_bytes(data, rng)
    else:
        doc, _ = _mutate_doc(doc, rng)
        blob = json.dumps(doc, default=str).encode()
    d = tmp / f"state-{i}"
    d.mkdir()
    (d / name).write_bytes(blob)
    return d


def test_mutated_inputs_exit_0_or_2(tmp_path: Path, record_property: Callable[[str, object], None]) -> None:
    rng = random.Random(SEED)
    runner = CliRunner()
    codes: collections.Counter[tuple[str, int]] = collections.Counter()
    bad: list[str] = []
    for i in range(COUNT):
        pick = rng.random()
        if pick < 0.55:
            source = rng.choice(SCENARIOS)
            target = tmp_path / f"m{i}{source.suffix}"
            target.write_bytes(mutate(source, rng))
            args = rng.choice(_scenario_commands(str(target)))
        elif pick < 0.9:
            source = rng.choice(PODS)
            target = tmp_path / f"m{i}.yaml"
            target.write_bytes(mutate(source, rng))
            args = rng.choice(_pod_commands(str(target)))
        else:
            target = _state_dir(tmp_path, i, rng)
            args = rng.choice(_state_commands(str(target)))
        res = runner.invoke(cli, ["-q", *args], catch_exceptions=True)
        command = " ".join(args[:2]) if args[0] in ("cgroups", "state") else args[0]
        codes[(command, res.exit_code)] += 1
        out = res.output
        crashed = res.exception is not None and not isinstance(res.exception, SystemExit)
        if res.exit_code not in (0, 2) or crashed or "Traceback" in out or "internal error" in out:
            kept = tmp_path / "failures" / f"{i}-{target.name}"
            kept.parent.mkdir(exist_ok=True)
            if target.is_file():
                kept.write_bytes(target.read_bytes())
            why = repr(res.exception) if crashed else out.strip().splitlines()[-1:] or [""]
            bad.append(f"#{i} podnuma {' '.join(args)} -> exit {res.exit_code}: {str(why)[:300]}")
        if target.is_file():
            target.unlink()
    summary = ", ".join(f"{c} exit {e}: {n}" for (c, e), n in sorted(codes.items()))
    record_property("mutation_figures", f"{COUNT} mutated inputs (seed {SEED}): {summary}; failures: {len(bad)}")
    print(f"\n{COUNT} mutated inputs: {summary}")
    assert sum(codes.values()) == COUNT
    assert not bad, f"{len(bad)} of {COUNT} inputs failed:\n" + "\n".join(bad[:30])
