"""``podnuma node discover``: a machine's sysfs tree as the scenario's
``node`` mapping, in the ``cpus`` table form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podnuma.errors import InputError
from podnuma.inputs.discover._fields import expect_name
from podnuma.inputs.discover.export import node_document
from podnuma.inputs.discover.machineinfo import build_machine
from podnuma.inputs.discover.sysfs import offline_cpus, read_sysfs

__all__ = ["discover"]


def discover(root: Path, name: str | None = None) -> dict[str, Any]:
    """``{"node": {...}}`` for the sysfs tree at ``root`` (read by the same
    reader as the scenario's ``sysfs`` form, so the mapping gives the very
    machine that form gives). ``name`` must be what the node form takes as
    ``name`` (a non-empty string)."""
    if name is not None:
        try:
            expect_name(name, "name")  # (as the node form takes it: no control characters)
        except InputError as err:
            raise InputError(f"--name: {err.message}") from None
    try:
        info = read_sysfs(root)
        build_machine(info)  # the kubelet's own checks (e.g. no online CPU)
        offline = offline_cpus(root)
    except InputError as err:
        raise err if err.file else err.in_file(str(root)) from None
    negative = sorted({n.id for n in info.topology if n.id < 0})
    if negative:
        # cadvisor's getCPUTopology (no devices/system/node/node*): one node
        # per physical package, its id the package id, -1 on an arm64 kernel
        # that cannot tell the package. NUMA ids are bit positions of the
        # kubelet's topology hints, from 0: the cpus form does not take them.
        raise InputError(
            f"NUMA node {negative[0]}: this tree has no NUMA node directories and its CPUs'"
            f" physical_package_id is {negative[0]}, which cadvisor makes a NUMA node id; the"
            " cpus form takes NUMA node ids from 0 (use the tree itself as the node:"
            f" {{sysfs: {root}}})",
            file=str(root),
        )
    return {"node": node_document(info, offline=offline, name=name)}
