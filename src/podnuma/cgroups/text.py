"""``podnuma cgroups plan`` as a tree people read.

One line per cgroup (indented under its parent, with what it is: QoS tier,
pod name, container name, and who writes it), then its files as
``name = value``. Files written only where the kernel offers them are
marked ``(if present)``.
"""

from __future__ import annotations

from podnuma.cgroups.plan import CgroupNode, CgroupPlan

__all__ = ["render_plan_text"]


def _label(node: CgroupNode) -> str:
    if node.kind == "container":
        return f"container {node.container} of {node.pod}"
    if node.kind == "sandbox":
        return f"pause sandbox of {node.pod}"
    if node.kind == "pod":
        return f"pod {node.pod}"
    if node.kind == "qos":
        return "QoS tier"
    if node.kind == "node":
        return "node allocatable"
    return "cgroup root"


def render_plan_text(plan: CgroupPlan) -> str:
    step = "the last step" if plan.step is None else f"step {plan.step}"
    lines = [
        f"cgroups after {step}  (driver {plan.driver}, cgroup v{plan.version}; "
        "container ids stand in for the runtime's)"
    ]
    paths = {n.path for n in plan.nodes}
    for node in plan.nodes:
        parent = node.path
        depth = 0
        while "/" in parent:
            parent = parent.rpartition("/")[0]
            if parent in paths:
                depth += 1
        name = node.path.rpartition("/")[2]
        if node.container_id is not None and len(name) > 40:
            name = name.replace(node.container_id, node.container_id[:12] + "…")
        pad = "    " * depth
        lines.append(f"{pad}{'/' if depth == 0 else ''}{name if depth else node.path}"
                     f"   [{_label(node)}; {node.writer}]")
        for f in node.files:
            mark = "  (if present)" if f.optional else ""
            lines.append(f"{pad}    {f.name} = {f.value}{mark}")
    if plan.unplanned:
        lines.append(
            "not planned (known only from a checkpoint, no pod spec): " + ", ".join(plan.unplanned)
        )
    return "\n".join(lines) + "\n"
