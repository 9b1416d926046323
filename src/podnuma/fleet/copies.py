"""Which dump a node's pod comes from, and the copies of one pod that two
dumps hold (or one dump lists twice).

The replay reads a node's pods from every dump that holds some
(:class:`~podnuma.fleet.model.NodeSpec`'s ``pod_files``, read whole, and
``pod_ranges``), a pod found in several of them once: its first copy, the
dumps read whole first, then the dumps indexed by byte ranges, each group
in path order. :class:`NodeDumps` reads the node's pods again one dump at a
time, only when something asks: the dump a pod the replay refuses was read
from (its issue names it), and, for a node some of whose pods are in two
dumps, the pods whose copies differ in what the replay reads (a resize, a
restart between two ``kubectl get`` runs), and the copies of a pod one
dump lists twice (a damaged dump; the copies after the first are in
``pod_repeats`` where the dump is indexed): a warning naming the pod, the
dump whose copy is replayed and the others.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from podnuma.fleet.model import Issue, NodeSpec
from podnuma.fleet.pods import ACTIVE_PHASES, _key, _node_name, _phase, is_pod, read_node_pods
from podnuma.fleet.podscan import Range, pods_of_ranges

__all__ = ["NodeDumps"]

#: how many of a pod's differing fields a warning names
_SAID = 3


class NodeDumps:
    """The dumps a node's pods are read from (``spec``), in the order the
    replay takes a pod's first copy; each dump's pods of the node read
    (once) when asked for."""

    def __init__(self, spec: NodeSpec) -> None:
        self.spec = spec
        whole = sorted(set(spec.pod_files))
        ranged: dict[str, list[Range]] = {}
        for r in sorted(spec.pod_ranges):
            ranged.setdefault(r[0], []).append(r)
        self.order: list[tuple[str, Any]] = [(f, None) for f in whole]
        self.order.extend((f, rs) for f, rs in ranged.items() if f not in whole)
        self.names = [str(f) for f, _ in self.order]
        self._pods: list[list[dict[str, Any]]] | None = None

    def _read(self) -> list[list[dict[str, Any]]]:
        """Each dump's active pods of the node, every copy of a pod it
        lists twice too, in the order the dump lists them."""
        if self._pods is None:
            node = self.spec.name
            repeats: dict[str, list[Range]] = {}
            for r in self.spec.pod_repeats:
                repeats.setdefault(r[0], []).append(r)
            out: list[list[dict[str, Any]]] = []
            for f, rs in self.order:
                if rs is None:
                    out.append(read_node_pods([f], [node], every_copy=True)[0][node])
                else:
                    got, _ = pods_of_ranges({node: sorted([*rs, *repeats.get(f, ())])})
                    out.append([p for p in got[node] if is_pod(p) and _node_name(p) == node
                                and _phase(p) in ACTIVE_PHASES])
            self._pods = out
        return self._pods

    def source(self, doc: Mapping[str, Any]) -> str | None:
        """The dump the replay read ``doc`` (one of the node's pods) from:
        the first that holds it (``None``: the node's pods are inline, a
        live answer's, or no dump holds it any more)."""
        if len(self.names) <= 1:
            return self.names[0] if self.names else None
        key = _key(doc)
        for name, pods in zip(self.names, self._read(), strict=True):
            if any(_key(p) == key for p in pods):
                return name
        return None

    def differing_copies(self) -> list[Issue]:
        """A warning for each pod of the node held by several dumps, or
        listed twice by one, whose copies differ in what the replay reads
        (its phase aside: only the active copies are read), naming the
        dump whose copy is replayed and the others, with the first fields
        that differ. The copy replayed is the first read: of the first
        dump (in the order of :attr:`names`), as that dump first lists it."""
        first: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        differ: dict[tuple[str, str, str], list[tuple[str, list[str], bool]]] = {}
        seen: set[tuple[tuple[str, str, str], str]] = set()
        for name, pods in zip(self.names, self._read(), strict=True):
            for p in pods:
                k = _key(p)
                again = (k, name) in seen  # listed again by this dump
                seen.add((k, name))
                had = first.get(k)
                if had is None:
                    first[k] = (name, _read_fields(p))
                    continue
                diff = _differences(had[1], _read_fields(p), "")
                if diff:
                    differ.setdefault(k, []).append((name, diff, again))
        issues: list[Issue] = []
        for k in sorted(differ):
            kept = first[k][0]
            others = differ[k]
            fields = sorted({d for _, ds, _ in others for d in ds})
            said = ", ".join(fields[:_SAID]) + (" and more" if len(fields) > _SAID else "")
            who = f"pod {k[0]}/{k[1]} (uid {k[2] or 'none'})"
            if not any(again for _, _, again in others):
                text = (f"{who} is in {1 + len(others)} dumps whose copies differ ({said}): the copy of "
                        f"{kept} is replayed (the first read), not that of {', '.join(n for n, _, _ in others)}; "
                        "dumps taken at different times? (the figures are those of the copy replayed)")
            else:
                text = (f"{who} has {1 + len(others)} copies that differ ({said}): the copy of {kept} is "
                        "replayed (the first read), not "
                        + ", ".join(f"that listed again in {n}" if again else f"that of {n}"
                                    for n, _, again in others)
                        + "; a dump that lists a pod twice is damaged (`kubectl get` lists each pod once)"
                        " (the figures are those of the copy replayed)")
            issues.append(Issue("warning", text, node=self.spec.name, file=kept))
        return issues


def _read_fields(pod: Mapping[str, Any]) -> Any:
    """What the replay reads of a compact pod, as plain JSON values (its
    phase aside), to compare two copies by."""
    doc = json.loads(json.dumps(pod, default=str))
    status = doc.get("status")
    if isinstance(status, dict):
        status.pop("phase", None)
    return doc


def _differences(a: Any, b: Any, at: str) -> list[str]:
    """The field paths where ``a`` and ``b`` (JSON values) differ (the
    first few, in order)."""
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b)):
            out.extend(_differences(a.get(k), b.get(k), f"{at}.{k}" if at else str(k)))
            if len(out) > _SAID:
                break
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(_differences(x, y, f"{at}[{i}]"))
            if len(out) > _SAID:
                break
        return out
    return [at or "the pod"]
