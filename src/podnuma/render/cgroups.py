"""``podnuma cgroups plan`` as a tree people read.

Renders the plan's document (``podnuma.cgroups.plan.plan_document``, the
same data ``-o json`` prints): one line per cgroup, indented under its
parent, with what it is (QoS tier, pod, container) and who writes it, then
its files as ``name = value``. Files written only where the kernel offers
them are marked ``(if present)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PLAN_COLOURS", "render_plan_text"]

#: the colours of :func:`render_plan_text` on a terminal
#: (:func:`~podnuma.render.colour.painted`): each cgroup's name, what it is
#: and who writes it dim, the values as they are
PLAN_COLOURS: tuple[tuple[str, str], ...] = (
    (r"(?m)^cgroups after .*$", "bold"),
    (r"(?m)^ *\S+(?=   \[)", "bold cyan"),
    (r"(?m)   \[[^\]\n]*\]$", "dim"),
    (r"(?m)  \(if present\)$", "dim"),
    (r"(?m)^not planned .*$", "yellow"),
)


def _label(node: Mapping[str, Any]) -> str:
    kind = node.get("kind")
    if kind == "container":
        return f"container {node.get('container')} of {node.get('pod')}"
    if kind == "sandbox":
        return f"pause sandbox of {node.get('pod')}"
    if kind == "pod":
        return f"pod {node.get('pod')}"
    if kind == "qos":
        return "QoS tier"
    if kind == "node":
        return "node allocatable"
    if kind == "reserved":
        return "reserved (must exist; updated, never created)"
    return "cgroup root"


def render_plan_text(doc: Mapping[str, Any]) -> str:
    step = doc.get("step")
    lines = [
        f"cgroups after {'the last step' if step is None else f'step {step}'}  "
        f"(driver {doc.get('driver')}, cgroup v{doc.get('cgroupVersion')}; "
        "container ids stand in for the runtime's)"
    ]
    nodes: list[Mapping[str, Any]] = list(doc.get("cgroups", ()))
    paths = {str(n["path"]) for n in nodes}
    for node in nodes:
        path = str(node["path"])
        parent, depth = path, 0
        while parent.count("/") > 1:
            parent = parent.rpartition("/")[0]
            if parent in paths:
                depth += 1
        name = path.rpartition("/")[2]
        cid = node.get("containerID")
        if isinstance(cid, str) and len(name) > 40:
            name = name.replace(cid, cid[:12] + "…")
        pad = "    " * depth
        lines.append(f"{pad}{name if depth else path}   [{_label(node)}; {node.get('writer')}]")
        optional = set(node.get("ifPresent", ()))
        for fname, value in dict(node.get("files", {})).items():
            mark = "  (if present)" if fname in optional else ""
            lines.append(f"{pad}    {fname} = {value}{mark}")
    unplanned = list(doc.get("unplanned", ()))
    if unplanned:
        lines.append("not planned (known only from a checkpoint, no pod spec): " + ", ".join(unplanned))
    lines.extend(f"note: {note}" for note in doc.get("notes", ()))
    return "\n".join(lines) + "\n"
