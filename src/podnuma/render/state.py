"""``podnuma state inspect`` as text: the files, each pod and container with
its CPUs, NUMA nodes and memory blocks, the memory manager's per-NUMA
tables, the devices when the device manager's checkpoint is there, then
the inconsistencies (or a line saying there are none)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podnuma.analysis.state import StateReport
from podnuma.cm.memorymanager.state import Block
from podnuma.units import format_bytes

__all__ = ["STATE_COLOURS", "render_state_text", "text_table"]

#: the colours of :func:`render_state_text` on a terminal
#: (:func:`~podnuma.render.colour.painted`): the headers, and the
#: inconsistencies (none: green)
STATE_COLOURS: tuple[tuple[str, str], ...] = (
    (r"(?m)^.*\S.*$(?=\n─)", "bold"),  # (a table's header: the line above its rule)
    (r"(?m)^─[─ ]*$", "dim"),
    (r"(?m)^kubelet state in .*$", "bold"),
    (r"(?m)^no inconsistencies$", "green"),
    (r"(?m)^[0-9]+ inconsistenc(y|ies):$", "bold red"),
    (r"(?m)^  \[[^\]\n]+\] .*$", "yellow"),
)


def _bytes(value: int) -> str:
    return format_bytes(value, largest="Gi")


def _blocks(blocks: tuple[Block, ...]) -> str:
    if not blocks:
        return "-"
    return ", ".join(
        f"{b.type} {_bytes(b.size)} @{','.join(map(str, b.numa_affinity))}" for b in blocks
    )


def _devices(devices: Mapping[str, tuple[str, ...]]) -> str:
    if not devices:
        return "-"
    return ", ".join(f"{r} {','.join(ids)}" for r, ids in devices.items())


def text_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows of plain text as aligned columns, a rule under the first (the
    header); the tables of ``state inspect`` and ``restart``."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("─" * w for w in widths))
    return out


def render_state_text(report: StateReport) -> str:
    files = report.files
    head = [f"kubelet state in {files.directory}"]
    if files.cpu is not None:
        head.append(
            f"  cpu_manager_state     format v{files.cpu_version}, policy {files.cpu.policy_name!r}, "
            f"default CPU set {files.cpu.default_cpuset or '(empty)'}"
        )
    else:
        head.append("  cpu_manager_state     (none)")
    if files.memory is not None:
        head.append(
            f"  memory_manager_state  format v{files.memory_version}, policy {files.memory.policy_name!r}"
        )
    else:
        head.append("  memory_manager_state  (none)")
    devices = files.devices
    if devices is not None:
        registered = ", ".join(f"{r} ({len(ids)})" for r, ids in sorted(devices.registered.items()))
        head.append(
            "  kubelet_internal_checkpoint  "
            + (f"unreadable (the kubelet ignores it): {devices.error}" if devices.error is not None
               else f"registered {registered or '(none)'}")
        )  # fmt: skip
    lines = [*head, ""]
    with_devices = devices is not None and devices.error is None
    rows = [["pod", "container", "CPUs", "NUMA", "memory", *(["devices"] if with_devices else [])]]
    for p in report.pods:
        label = str(p.ref) if p.ref is not None else p.uid
        first = True
        if p.cpus is not None or p.memory:
            numa = sorted({n for b in p.memory for n in b.numa_affinity})
            rows.append([label, "(pod budget)", str(p.cpus) if p.cpus is not None else "-",
                         ",".join(map(str, numa)) or "-", _blocks(p.memory),
                         *(["-"] if with_devices else [])])  # fmt: skip
            first = False
        for c in p.containers:
            rows.append([
                label if first else "",
                c.name,
                str(c.cpus) if c.cpus is not None else "-",
                ",".join(map(str, c.numa_nodes)) or "-",
                _blocks(c.memory),
                *([_devices(c.devices)] if with_devices else []),
            ])  # fmt: skip
            first = False
        if p.ref is not None:
            rows.append(["  " + p.uid, "", "", "", "", *([""] if with_devices else [])])
    if len(rows) > 1:
        lines += text_table(rows)
    else:
        lines.append("no pod holds an assignment")
    if files.memory is not None and files.memory.machine_state:
        lines.append("")
        mrows = [["NUMA", "type", "total", "systemReserved", "allocatable", "reserved", "free", "assignments"]]
        for nid, st in sorted(files.memory.machine_state.items()):
            for name, t in sorted(st.memory_map.items()):
                mrows.append([
                    str(nid), name, _bytes(t.total), _bytes(t.system_reserved), _bytes(t.allocatable),
                    _bytes(t.reserved), _bytes(t.free), str(st.number_of_assignments),
                ])  # fmt: skip
        lines += text_table(mrows)
    lines.append("")
    if report.issues:
        n = len(report.issues)
        lines.append(f"{n} inconsistenc{'y' if n == 1 else 'ies'}:")
        lines += [f"  [{i.kind}] {i.message}" for i in report.issues]
    else:
        lines.append("no inconsistencies")
    return "\n".join(lines) + "\n"
