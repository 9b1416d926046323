"""``podnuma restart`` as a table: per pod, kept / moved / rejected (with
the kubelet's reason), then the node's totals after the restart and whether
the kubelet would start again from the state it leaves."""

from __future__ import annotations

from podnuma.analysis.restart import KEPT, MOVED, REJECTED, UNKNOWN, UPSTREAM_ISSUE, RestartReport
from podnuma.fieldkit import inert
from podnuma.render.colour import HEADER_RULES
from podnuma.render.state import HEADER_LINES_RULE, fitted_table, output_width, shown, wrapped

__all__ = ["RESTART_COLOURS", "render_restart", "restart_lines"]

_MARK = {KEPT: "✓ kept", MOVED: "↻ moved", REJECTED: "✗ rejected", UNKNOWN: "? unknown"}


#: the colours of :func:`render_restart` on a terminal
#: (:func:`~podnuma.render.colour.painted`): the outcomes, the pods moved or
#: rejected, the CPUs taken by nobody and whether the kubelet starts again
#: (a wrapped line's continuation coloured as its first)
RESTART_COLOURS: tuple[tuple[str, str], ...] = (
    *HEADER_RULES,
    HEADER_LINES_RULE,
    (r"(?m)^after the restart$", "bold"),
    (r"✓ kept", "green"),
    (r"↻ moved", "yellow"),
    (r"✗ rejected", "bold red"),
    (r"\? unknown", "magenta"),
    (r"(?m)^\S+ rejected: .*(?:\n {4}.*)*", "red"),
    (r"(?m)^\S+ moved: .*(?:\n {4}.*)*", "yellow"),
    (r"\b[1-9][0-9]*\s+taken\s+by\s+nobody(\s+\([^)]*\))?", "yellow"),
    (r"the\s+kubelet\s+starts\s+from\s+the\s+state\s+left", "green"),
    (r"the\s+kubelet\s+would\s+not\s+start:.*(?:\n {14}.*)*", "bold red"),
    (r"(?m)^note: .*(?:\n {2}.*)*", "dim"),
    (r"(?m)^warning: .*(?:\n {2}.*)*", "yellow"),
)

#: the restart table's columns left out, in this order, while it cannot fit
#: the width (pod and outcome always shown); with ``-o wide``
_DROP = ("NUMA before", "NUMA after", "CPUs before", "reason", "CPUs after")
_DROP_WIDE = ("NUMA before", "NUMA after", "created", "step", "CPUs before", "reason", "CPUs after", "why")
_CPU_COLUMNS = ("CPUs before", "CPUs after", "NUMA before", "NUMA after")


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
    return [shown(line) for line in lines]  # (names and messages from files escaped)


def render_restart(r: RestartReport, *, wide: bool = False, width: int | None = None) -> str:
    """The restart as text ``width`` terminal cells wide (default: standard
    output's, :func:`~podnuma.render.state.output_width`): every line fits
    it, the table's optional columns left out (and named) when they cannot
    (``wide``: with the creation times, steps and why)."""
    width = output_width(width)
    node = r.run.node
    # (each line wrapped at the width, its continuation indented: 2, 4 for
    # a pod's lines, 14 for the totals' values; the colours follow them)
    paras: list[tuple[str, int]] = [
        (f"kubelet restart on node {node.name}   CPUs {node.cpus} ({node.cpus.size()})   "
         f"reserved {node.reserved_cpus or '-'}   ({inert(r.state.source)})", 2),
        ("every running pod re-admitted as kubelet v1.37.2 does, oldest first", 2),
        *([("kubelet configuration with --set " + " --set ".join(r.overrides), 2)] if r.overrides else []),
    ]
    out = [line for text, hang in paras for line in wrapped(text, width, hang)]
    out.append("")
    head = ["pod", "outcome", "CPUs before", "CPUs after", "NUMA before", "NUMA after", "reason"]
    if wide:
        head += ["created", "step", "why"]
    rows: list[list[str]] = [head]
    for o in r.pods:
        after = o.after
        row = [
            shown(o.ref) + (" (pod-level)" if o.pod_level else ""),
            _MARK[o.outcome],
            str(o.before.cpus) or "-",
            "-" if after is None else (str(after.cpus) or "-"),
            ",".join(map(str, o.before.numa)) or "-",
            "-" if after is None else (",".join(map(str, after.numa)) or "-"),
            shown(o.reason or ""),
        ]
        if wide:
            row += [shown(o.created or "-"), "-" if o.step is None else str(o.step), shown(o.why)]
        rows.append(row)
    if len(rows) > 1:
        out += fitted_table(rows, width, drop=_DROP_WIDE if wide else _DROP, cpus=_CPU_COLUMNS,
                            whole=("outcome", "created"))
    else:
        out += wrapped("no pod runs on the node", width)
    out.append("")
    paras = []  # (what follows the table)
    for o in r.pods:
        if o.outcome == REJECTED:
            paras.append((f"{o.ref} rejected: {o.reason}: {o.message}", 4))
            held = o.entries_after.cpus if o.entries_after is not None else None
            if held:
                paras.append((
                    f"  its entries hold CPUs {held} until the CPU manager collects them "
                    "(its reconcile loop, or the next allocation)", 4,
                ))  # fmt: skip
            if o.left_behind:
                paras.append((
                    f"  CPUs {o.left_behind} it held before are in no entry and out of the shared pool: "
                    "taken by nobody until the CPU manager state is reset (drain, delete cpu_manager_state)", 4,
                ))  # fmt: skip
        elif o.outcome == MOVED:
            paras.append((
                f"{o.ref} moved: CPUs {o.left_behind} are left in no entry and out of the shared pool: "
                "taken by nobody until the CPU manager state is reset (drain, delete cpu_manager_state)", 4,
            ))  # fmt: skip
        elif o.outcome == UNKNOWN:
            paras.append((f"{o.ref}: {o.why}", 4))
    if any(o.pod_level and o.outcome in (MOVED, REJECTED) for o in r.pods):
        paras.append((
            f"pod-level pods are allocated afresh when re-admitted in v1.37.2 ({UPSTREAM_ISSUE}, fixed "
            "after 1.37); per-container pods keep what they hold", 2,
        ))  # fmt: skip
    t = r.totals
    paras += [
        ("", 0),
        ("after the restart", 0),
        (f"  pods        {len(r.pods)}: {r.count(KEPT)} kept, {r.count(MOVED)} moved, "
         f"{r.count(REJECTED)} rejected, {r.count(UNKNOWN)} unknown", 14),
        (f"  CPUs        {t.cpus}: {t.reserved} reserved, {t.free} free (shared pool), "
         f"{t.held_by_running} held by running pods, {t.held_by_rejected} held by rejected pods, "
         f"{t.taken_by_nobody} taken by nobody" + (f" ({t.taken_by_nobody_cpus})" if t.taken_by_nobody else ""), 14),
        ("  next start  " + ("the kubelet starts from the state left" if r.next_start is None
                             else f"the kubelet would not start: {r.next_start}"), 14),
    ]
    for n in r.notes:
        paras.append((n if n.startswith("warning: ") else f"note: {n}", 2))
    out += [line for text, hang in paras for line in wrapped(text, width, hang)]
    return "\n".join(out) + "\n"
