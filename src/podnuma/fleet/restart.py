"""``fleet analyze --what-if ...,restart``: per what-if, the pods a kubelet
restart would move or reject on each node (``podnuma restart`` per node),
and the totals over the nodes where the restart was replayed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["restart_section"]

_COUNTS = ("kept", "moved", "rejected", "unknown", "cpusTakenByNobody")


def restart_section(nodes: Sequence[Mapping[str, Any]], what_ifs: Sequence[str]) -> dict[str, Any]:
    """``{"restart": {label: {...}}}`` for the what-ifs with a restart (empty
    when none has one)."""
    out: dict[str, Any] = {}
    for label in what_ifs:
        runs = [
            (str(n["name"]), n["whatIfs"][label]["restart"])
            for n in nodes
            if "restart" in n.get("whatIfs", {}).get(label, {})
        ]
        if not runs:
            continue
        done = [(name, r) for name, r in runs if "error" not in r]
        section: dict[str, Any] = {"nodes": len(done), "notReplayed": len(runs) - len(done)}
        for key in _COUNTS:
            section[key] = sum(int(r[key]) for _, r in done)
        section["nodesThatWouldNotStartAgain"] = sorted(name for name, r in done if r["nextStartFails"])
        section["pods"] = [{"node": name, **p} for name, r in done for p in r["pods"]]
        out[label] = section
    return {"restart": out} if out else {}
