"""Shrinking a mismatching scenario to a minimal one, and keeping it.

``shrink(doc, fails)`` greedily tries smaller variants (steps dropped, pods'
containers dropped, resources and options removed, the node made smaller)
and keeps each one on which ``fails`` still holds. ``save_regression``
writes the result to ``tests/oracle/regressions/`` where
``test_regressions.py`` runs it from then on.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.oracle.harness import compare, run_oracle, run_podnuma, write_scenario

Doc = dict[str, Any]
REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def _variants(doc: Doc) -> Iterator[Doc]:
    steps = doc.get("steps") or []
    # whole steps, last first
    for i in reversed(range(len(steps))):
        if len(steps) > 1:
            d = copy.deepcopy(doc)
            del d["steps"][i]
            yield d
    if "state" in doc:
        d = copy.deepcopy(doc)
        del d["state"]
        yield d
    # containers and their resources
    for i, step in enumerate(steps):
        pod = step.get("addPod")
        if not pod:
            continue
        spec = pod.get("spec", {})
        for key in ("initContainers", "containers"):
            items = spec.get(key) or []
            for j in range(len(items)):
                if key == "containers" and len(items) == 1:
                    continue
                d = copy.deepcopy(doc)
                lst = d["steps"][i]["addPod"]["spec"][key]
                del lst[j]
                if not lst:
                    del d["steps"][i]["addPod"]["spec"][key]
                yield d
            for j, c in enumerate(items):
                res = c.get("resources") or {}
                for part in ("requests", "limits"):
                    for name in list(res.get(part) or {}):
                        if name in ("cpu", "memory"):
                            continue
                        d = copy.deepcopy(doc)
                        cr = d["steps"][i]["addPod"]["spec"][key][j]["resources"]
                        for p2 in ("requests", "limits"):
                            (cr.get(p2) or {}).pop(name, None)
                        yield d
    cfg = doc.get("kubeletConfig") or {}
    for field in ("cpuManagerPolicyOptions", "topologyManagerPolicyOptions", "featureGates"):
        for name in list(cfg.get(field) or {}):
            d = copy.deepcopy(doc)
            del d["kubeletConfig"][field][name]
            if not d["kubeletConfig"][field]:
                del d["kubeletConfig"][field]
            yield d
    node = doc.get("node") or {}
    syn = node.get("synthetic")
    if isinstance(syn, dict):
        for key in ("distances", "hugepagesPerNumaNode", "coresPerUncoreCache"):
            if key in syn:
                d = copy.deepcopy(doc)
                del d["node"]["synthetic"][key]
                yield d
        for key in ("coresPerNumaNode", "numaNodesPerSocket", "sockets", "threadsPerCore"):
            if syn.get(key, 1) > 1:
                d = copy.deepcopy(doc)
                d["node"]["synthetic"][key] = syn[key] - 1 if key != "threadsPerCore" else 1
                d["node"]["synthetic"].pop("distances", None)
                d["node"]["synthetic"].pop("coresPerUncoreCache", None)
                yield d
    for res in list(node.get("devices") or {}):
        devs = node["devices"][res]
        for j in range(len(devs)):
            if len(devs) > 1:
                d = copy.deepcopy(doc)
                del d["node"]["devices"][res][j]
                yield d


def shrink(doc: Doc, fails: Callable[[Doc], bool], budget: int = 300) -> Doc:
    """The smallest variant of ``doc`` found on which ``fails`` holds."""
    best = copy.deepcopy(doc)
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in _variants(best):
            tries += 1
            if tries > budget:
                break
            if fails(cand):
                best = cand
                improved = True
                break
    return best


def signature(diffs: list[str]) -> set[str]:
    """What a list of differences is about: each line's field path with
    list indices dropped, or its kind for whole-outcome differences."""
    out = set()
    for line in diffs:
        head = line.split(":", 1)[0]
        out.add(re.sub(r"\[\d+\]", "[]", head))
    return out


def oracle_mismatch(binary: str, diffs: list[str] | None = None) -> Callable[[Doc], bool]:
    """``fails`` for :func:`shrink`: the two engines still disagree, and
    (given the original ``diffs``) about the same fields, so that shrinking
    cannot drift to an unrelated difference such as both sides refusing a
    broken candidate in their own words."""
    wanted = signature(diffs) if diffs else None

    def fails(doc: Doc) -> bool:
        with tempfile.TemporaryDirectory(prefix="shrink-") as d:
            path = write_scenario(doc, Path(d) / "candidate.json")
            mine = run_podnuma(path)
            (theirs,) = run_oracle(binary, [path])
            found = compare(mine, theirs, doc)
            if not found:
                return False
            return wanted is None or bool(signature(found) & wanted)

    return fails


def save_regression(name: str, doc: Doc, diffs: list[str], directory: Path = REGRESSIONS) -> Path:
    """Write a shrunk scenario as ``NAME.yaml``, the differences on top."""
    directory.mkdir(parents=True, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)
    path = directory / f"{safe}.yaml"
    head = "".join(f"# {line}\n" for line in ["podnuma and kubelet v1.37.2 disagreed here:", *diffs[:8]])
    body = yaml.safe_dump(json.loads(json.dumps(doc)), sort_keys=False)
    path.write_text(head + body, encoding="utf-8")
    return path
