"""What-ifs of ``podnuma fleet analyze --what-if``.

A what-if is a comma-separated list of changes, applied to every node:

* ``gates``: the node's own configuration with the feature gates
  PodLevelResources and PodLevelResourceManagers on, the pods unchanged
  (the pods that already set ``spec.resources`` are the ones that change:
  the report lists them and how, :mod:`podnuma.fleet.gates`);
* ``pod-level``: every Guaranteed per-container pod rewritten to its
  pod-level form exactly as ``podnuma advise`` rewrites it (and only when
  advise would: the rewrite verified on an empty node of the same shape),
  with the gates PodLevelResources and PodLevelResourceManagers on;
* ``shared-pool-cpus=N`` (with ``pod-level``): the rewrite sizes each pod's
  shared pool to N CPUs, as ``podnuma advise --shared-pool-cpus N`` does
  (the budget = the exclusive slices + N CPUs);
* ``scope=container|pod``: ``topologyManagerScope``;
* ``policy=none|best-effort|restricted|single-numa-node``:
  ``topologyManagerPolicy``;
* ``cpu-policy=none|static``, ``memory-policy=None|Static``;
* ``cpu-option=NAME`` (``cpuManagerPolicyOptions: {NAME: "true"}``) and
  ``topology-option=NAME`` (``topologyManagerPolicyOptions``).

E.g. ``--what-if pod-level,scope=pod``. The changed configuration goes
through the same loader and validation as the node's own, so a what-if the
kubelet would refuse to start with is reported per node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podnuma.api.kubeletconfig import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
)
from podnuma.errors import InputError

__all__ = ["WhatIf", "parse_what_if", "apply_config"]

_FIELDS = {
    "scope": "topologyManagerScope",
    "policy": "topologyManagerPolicy",
    "cpu-policy": "cpuManagerPolicy",
    "memory-policy": "memoryManagerPolicy",
}
_OPTIONS = {
    "cpu-option": "cpuManagerPolicyOptions",
    "topology-option": "topologyManagerPolicyOptions",
}
_VALUES = {
    "scope": TOPOLOGY_MANAGER_SCOPES,
    "policy": TOPOLOGY_MANAGER_POLICIES,
    "cpu-policy": CPU_MANAGER_POLICIES,
    "memory-policy": MEMORY_MANAGER_POLICIES,
}
POD_LEVEL_GATES = ("PodLevelResources", "PodLevelResourceManagers")


@dataclass(frozen=True)
class WhatIf:
    label: str
    pod_level: bool = False
    fields: tuple[tuple[str, str], ...] = ()  # KubeletConfiguration field -> value
    options: tuple[tuple[str, str], ...] = ()  # options map field -> option name
    shared_pool_cpus: int | None = None  # pod-level: advise --shared-pool-cpus
    gates: bool = False  # the pod-level gates on, pods unchanged


def parse_what_if(text: str) -> WhatIf:
    """Parse one ``--what-if`` value; ``InputError`` naming the bad part."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InputError("--what-if: empty")
    pod_level = False
    fields: dict[str, str] = {}
    options: list[tuple[str, str]] = []
    shared: int | None = None
    gates = False
    for part in parts:
        if part == "pod-level":
            pod_level = True
            continue
        if part == "gates":
            gates = True
            continue
        key, sep, value = part.partition("=")
        if key == "shared-pool-cpus" and sep:
            if not value.isdigit():
                raise InputError(f"--what-if: {part}: expected a whole number of CPUs")
            shared = int(value)
            continue
        if not sep or not value:
            raise InputError(
                f"--what-if: {part!r}: expected gates, pod-level or KEY=VALUE with KEY one of "
                f"{', '.join([*_FIELDS, *_OPTIONS])}"
            )
        if key in _FIELDS:
            allowed = _VALUES[key]
            if value not in allowed:
                raise InputError(f"--what-if: {key}={value}: expected one of {', '.join(allowed)}")
            fields[_FIELDS[key]] = value
        elif key in _OPTIONS:
            options.append((_OPTIONS[key], value))
        else:
            raise InputError(
                f"--what-if: unknown change {key!r} (expected gates, pod-level, shared-pool-cpus=, "
                f"{', '.join(f'{k}=' for k in [*_FIELDS, *_OPTIONS])})"
            )
    if shared is not None and not pod_level:
        raise InputError("--what-if: shared-pool-cpus=N goes with pod-level")
    return WhatIf(label=",".join(parts), pod_level=pod_level,
                  fields=tuple(sorted(fields.items())), options=tuple(options),
                  shared_pool_cpus=shared, gates=gates)


def apply_config(config: Mapping[str, Any] | None, w: WhatIf) -> dict[str, Any]:
    """The KubeletConfiguration document ``config`` changed by ``w``."""
    out: dict[str, Any] = dict(config or {})
    for k, v in w.fields:
        out[k] = v
    for k, name in w.options:
        opts = dict(out.get(k) or {})
        opts[name] = "true"
        out[k] = opts
    if w.pod_level or w.gates:
        gates = dict(out.get("featureGates") or {})
        for g in POD_LEVEL_GATES:
            gates[g] = True
        out["featureGates"] = gates
    return out
