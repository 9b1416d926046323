"""advise's last resort: when no pod-level form of a pod is admitted on the
node, the nearest other node shape that admits one.

The shapes tried, smallest change first: one, two, then four more physical
cores on every NUMA node (each with the node's threads per core, on the
NUMA node's socket and uncore cache), then twice the memory of every NUMA
node, then both (four more cores and twice the memory). The kubelet
configuration stays as it is. Each shape is a real machine: its scenario
``node`` (the ``cpus`` table form of
:func:`podnuma.analysis.advise.machine_node_document`) is loaded as any
node is, and the pod-level rewrites are measured on it exactly as on the
node given. The pod as written is measured on that shape too: when it is
admitted there, the bigger node alone is enough and the report says so
(with both densities), rather than crediting the rewrite. The figures
replay: a scenario with that ``node``, the node's kubelet configuration
(with the gates the rewrite needs), the pod as written and the rewritten
pod (:func:`podnuma.analysis.advise.shape_scenario`) gives the same
admission, exclusive CPUs and densities in ``podnuma simulate`` and in the
kubelet oracle.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnuma.analysis.measure import Measurement
from podnuma.errors import PodnumaError
from podnuma.inputs.discover import load_node
from podnuma.machine.topology import Machine

__all__ = ["ShapeFit", "ShapeProposal", "nearest_shape", "shapes"]


@dataclass(frozen=True)
class ShapeFit:
    """A pod-level form admitted on a shape: its pod shared pool (measured),
    budget, manifest and figures; the pod as written measured on the same
    shape (None when it could not be); the pool size asked for."""

    pool_cpus: int
    budget_cpus: str
    pod: Mapping[str, Any]
    measured: Measurement
    as_written: Measurement | None = None
    asked_cpus: int | None = None


@dataclass(frozen=True)
class ShapeProposal:
    """The nearest shape that admits a pod-level form: what changes, the
    scenario ``node``, the rewrite admitted there and its figures, the pod
    as written measured there (``as_written``), and the shapes tried before
    it (change, why refused)."""

    change: str
    node: Mapping[str, Any]
    pod: Mapping[str, Any]
    pool_cpus: int
    budget_cpus: str
    measured: Measurement
    tried: tuple[tuple[str, str], ...]
    as_written: Measurement | None = None

    @property
    def node_alone_enough(self) -> bool:
        """The pod as written is admitted on the shape too: the bigger node,
        not the rewrite, is what admits the pod."""
        return self.as_written is not None and self.as_written.admitted

    def as_dict(self) -> dict[str, Any]:
        m, w = self.measured, self.as_written
        return {
            "change": self.change,
            "node": dict(self.node),
            "pod": dict(self.pod),
            "sharedPoolCpus": self.pool_cpus,
            "budgetCpus": self.budget_cpus,
            "admitted": m.admitted,
            "exclusiveCpus": m.exclusive_cpus.size(),
            "cpusTakenFromNode": m.held_cpus.size(),
            "density": m.density,
            "gatesForced": list(m.gates_forced),
            "nodeAloneEnough": self.node_alone_enough,
            "asWritten": None if w is None else {
                "admitted": w.admitted,
                "reason": w.reason,
                "message": w.message,
                "exclusiveCpus": w.exclusive_cpus.size(),
                "cpusTakenFromNode": w.held_cpus.size(),
                "density": w.density,
            },
            "tried": [{"change": c, "refused": r} for c, r in self.tried],
        }


def _more_cores(doc: Mapping[str, Any], cores: int) -> dict[str, Any]:
    """``doc`` (the ``cpus`` table form) with ``cores`` more physical cores
    on every NUMA node."""
    out = copy.deepcopy(dict(doc))
    rows: list[dict[str, Any]] = list(out["cpus"])
    next_cpu = max(r["id"] for r in rows) + 1
    next_core = max(r["core"] for r in rows) + 1
    by_node: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_node.setdefault(r["numaNode"], []).append(r)
    for node in sorted(by_node):
        mine = by_node[node]
        threads = max(1, len(mine) // len({r["core"] for r in mine}))
        socket, cache = mine[0]["socket"], mine[0]["uncoreCache"]
        for _ in range(cores):
            for _ in range(threads):
                rows.append({"id": next_cpu, "core": next_core, "socket": socket, "numaNode": node,
                             "uncoreCache": cache})
                next_cpu += 1
            next_core += 1
    if isinstance(out.get("cpuCapacity"), int):  # (offline CPUs counted: they stay counted)
        out["cpuCapacity"] += len(rows) - len(doc["cpus"])
    out["cpus"] = rows
    out.pop("name", None)
    out["name"] = doc.get("name", "node")
    return out


def _more_memory(doc: Mapping[str, Any], factor: int) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    memory = out.get("memory") or {}
    for entry in memory.values():
        text = str(entry.get("memory", "0"))
        digits = "".join(ch for ch in text if ch.isdigit())
        entry["memory"] = f"{int(digits) * factor}{text[len(digits):]}" if digits else text
    out.pop("memoryCapacity", None)
    return out


def shapes(node_doc: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The shapes tried, smallest change first: (what changes, node doc)."""
    per_node = {r["numaNode"] for r in node_doc["cpus"]}
    for cores in (1, 2, 4):
        yield f"{cores} more physical core(s) on each of the {len(per_node)} NUMA node(s)", _more_cores(node_doc, cores)
    yield "twice the memory of each NUMA node", _more_memory(node_doc, 2)
    yield "4 more physical cores and twice the memory on each NUMA node", _more_memory(_more_cores(node_doc, 4), 2)


#: measure(machine) -> the first admitted form, or the reason none is
Measure = Callable[[Machine], "ShapeFit | str"]


def nearest_shape(node_doc: Mapping[str, Any], measure: Measure) -> ShapeProposal | None:
    """The first shape of :func:`shapes` on which ``measure`` admits a form."""
    tried: list[tuple[str, str]] = []
    for change, doc in shapes(node_doc):
        try:
            machine = load_node(doc, base_dir=Path.cwd())
        except PodnumaError as e:  # a shape the node reader refuses: say so
            tried.append((change, f"not a valid node ({e})"))
            continue
        got = measure(machine)
        if isinstance(got, str):
            tried.append((change, got))
            continue
        return ShapeProposal(change, doc, got.pod, got.pool_cpus, got.budget_cpus, got.measured, tuple(tried),
                             got.as_written)
    return None


