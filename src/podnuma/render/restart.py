"""``podnuma restart`` as a table: per pod, kept / moved / rejected (with
the kubelet's reason), then the node's totals after the restart and whether
the kubelet would start again from the state it leaves."""

from __future__ import annotations

from podnuma.analysis.restart import KEPT, MOVED, REJECTED, UNKNOWN, UPSTREAM_ISSUE, RestartReport
from podnuma.fieldkit import inert
from podnuma.render.colour import HEADER_RULES
from podnuma.render.state import text_table

__all__ = ["RESTART_COLOURS", "render_restart", "restart_lines"]

_MARK = {KEPT: "✓ kept", MOVED: "↻ moved", REJECTED: "✗ rejected", UNKNOWN: "? unknown"}


#: the colours of :func:`render_restart` on a terminal
#: (:func:`~podnuma.render.colour.painted`): the outcomes, the pods moved or
#: rejected, the CPUs taken by nobody and whether the kubelet starts again
RESTART_COLOURS: tuple[tuple[str, str], ...] = (
    *HEADER_RULES,
    (r"(?m)^after the restart$", "bold"),
    (r"✓ kept", "green"),
    (r"↻ moved", "yellow"),
    (r"✗ rejected", "bold red"),
    (r"\? unknown", "magenta"),
    (r"(?m)^\S+ rejected: .*$", "red"),
    (r"(?m)^\S+ moved: .*$", "yellow"),
    (r"\b[1-9][0-9]* taken by nobody( \([^)]*\))?", "yellow"),
    (r"the kubelet starts from the state left", "green"),
    (r"the kubelet would not start: .*", "bold red"),
    (r"(?m)^note: .*$", "dim"),
    (r"(?m)^warning: .*$", "yellow"),
)


def restart_lines(r: RestartReport) -> list[str]:
    """The summary lines other reports (compare, advise, explain) show."""
    lines = [
        f"kubelet restart (v1.37.2): {r.count(KEPT)} kept, {r.count(MOVED)} moved, "
        f"{r.count(REJECTED)} rejected" + (f", {r.count(UNKNOWN)} unknown" if r.count(UNKNOWN) else "")
    ]
    for o in r.pods:
        if o.outcome == MOVED:
            assert o.after is not None
            lines.append(
                f"  {o.ref}: moved {o.before.cpus} -> {o.after.cpus}; CPUs {o.left_behind} stay taken by nobody"
            )
        elif o.outcome == REJECTED:
            lines.append(f"  {o.ref}: rejected: {o.reason}: {o.message}")
    t = r.totals
    if t.taken_by_nobody:
        lines.append(f"  CPUs taken by nobody after the restart: {t.taken_by_nobody} ({t.taken_by_nobody_cpus})")
    if r.next_start is not None:
        lines.append(f"  the next kubelet start fails: {r.next_start}")
    return lines


def render_restart(r: RestartReport, *, wide: bool = False) -> str:
    node = r.run.node
    out = [
        f"kubelet restart on node {node.name}   CPUs {node.cpus} ({node.cpus.size()})   "
        f"reserved {node.reserved_cpus or '-'}   ({inert(r.state.source)})",
        "every running pod re-admitted as kubelet v1.37.2 does, oldest first",
        *(["kubelet configuration with --set " + " --set ".join(r.overrides)] if r.overrides else []),
        "",
    ]
    head = ["pod", "outcome", "CPUs before", "CPUs after", "NUMA before", "NUMA after", "reason"]
    if wide:
        head += ["created", "step", "why"]
    rows: list[list[str]] = [head]
    for o in r.pods:
        after = o.after
        row = [
            o.ref + (" (pod-level)" if o.pod_level else ""),
            _MARK[o.outcome],
            str(o.before.cpus) or "-",
            "-" if after is None else (str(after.cpus) or "-"),
            ",".join(map(str, o.before.numa)) or "-",
            "-" if after is None else (",".join(map(str, after.numa)) or "-"),
            o.reason or "",
        ]
        if wide:
            row += [o.created or "-", "-" if o.step is None else str(o.step), o.why]
        rows.append(row)
    if len(rows) > 1:
        out += text_table(rows)
    else:
        out.append("no pod runs on the node")
    out.append("")
    for o in r.pods:
        if o.outcome == REJECTED:
            out.append(f"{o.ref} rejected: {o.reason}: {o.message}")
            held = o.entries_after.cpus if o.entries_after is not None else None
            if held:
                out.append(
                    f"  its entries hold CPUs {held} until the CPU manager collects them "
                    "(its reconcile loop, or the next allocation)"
                )
            if o.left_behind:
                out.append(
                    f"  CPUs {o.left_behind} it held before are in no entry and out of the shared pool: "
                    "taken by nobody until the CPU manager state is reset (drain, delete cpu_manager_state)"
                )
        elif o.outcome == MOVED:
            out.append(
                f"{o.ref} moved: CPUs {o.left_behind} are left in no entry and out of the shared pool: "
                "taken by nobody until the CPU manager state is reset (drain, delete cpu_manager_state)"
            )
        elif o.outcome == UNKNOWN:
            out.append(f"{o.ref}: {o.why}")
    if any(o.pod_level and o.outcome in (MOVED, REJECTED) for o in r.pods):
        out.append(
            f"pod-level pods are allocated afresh when re-admitted in v1.37.2 ({UPSTREAM_ISSUE}, fixed "
            "after 1.37); per-container pods keep what they hold"
        )
    t = r.totals
    out += [
        "",
        "after the restart",
        f"  pods        {len(r.pods)}: {r.count(KEPT)} kept, {r.count(MOVED)} moved, "
        f"{r.count(REJECTED)} rejected, {r.count(UNKNOWN)} unknown",
        f"  CPUs        {t.cpus}: {t.reserved} reserved, {t.free} free (shared pool), "
        f"{t.held_by_running} held by running pods, {t.held_by_rejected} held by rejected pods, "
        f"{t.taken_by_nobody} taken by nobody" + (f" ({t.taken_by_nobody_cpus})" if t.taken_by_nobody else ""),
        "  next start  " + ("the kubelet starts from the state left" if r.next_start is None
                            else f"the kubelet would not start: {r.next_start}"),
    ]
    for n in r.notes:
        out.append(n if n.startswith("warning: ") else f"note: {n}")
    return "\n".join(out) + "\n"
