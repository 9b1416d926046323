"""``podnuma node discover``: a machine's sysfs tree as the scenario's
``node`` mapping, in the ``cpus`` table form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podnuma.errors import InputError
from podnuma.inputs.discover.export import node_document
from podnuma.inputs.discover.machineinfo import build_machine
from podnuma.inputs.discover.sysfs import offline_cpus, read_sysfs

__all__ = ["discover"]


def discover(root: Path, name: str | None = None) -> dict[str, Any]:
    """``{"node": {...}}`` for the sysfs tree at ``root`` (read by the same
    reader as the scenario's ``sysfs`` form, so the mapping gives the very
    machine that form gives)."""
    try:
        info = read_sysfs(root)
        build_machine(info)  # the kubelet's own checks (e.g. no online CPU)
        offline = offline_cpus(root)
    except InputError as err:
        raise err if err.file else err.in_file(str(root)) from None
    return {"node": node_document(info, offline=offline, name=name)}
