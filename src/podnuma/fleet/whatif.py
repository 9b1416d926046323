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
  (the budget = the exclusive slices + N CPUs; N at most 8192, the most
  CPUs Linux runs on a machine);
* ``scope=container|pod``: ``topologyManagerScope``;
* ``policy=none|best-effort|restricted|single-numa-node``:
  ``topologyManagerPolicy``;
* ``cpu-policy=none|static``, ``memory-policy=None|Static``;
* ``cpu-option=NAME`` (``cpuManagerPolicyOptions: {NAME: "true"}``) and
  ``topology-option=NAME`` (``topologyManagerPolicyOptions``);
* ``restart``: then the kubelet restarts: every pod running on the node is
  re-admitted as kubelet v1.37.2 does (``podnuma restart``), and the pods it
  would move or reject are listed (alone: the node as it runs today).

E.g. ``--what-if pod-level,scope=pod``. The changed configuration goes
through the same loader and validation as the node's own, so a what-if the
kubelet would refuse to start with is reported per node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.api.kubeletconfig import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
)
from podnuma.errors import InputError

__all__ = ["WhatIf", "parse_what_if", "apply_config", "MAX_SHARED_POOL_CPUS", "SHARED_POOL_BOUND"]

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


class WhatIf:
    """One parsed ``--what-if``."""

    __slots__ = ("label", "pod_level", "fields", "options", "shared_pool_cpus", "restart", "gates")

    label: str
    pod_level: bool
    fields: tuple[tuple[str, str], ...]  # KubeletConfiguration field -> value
    options: tuple[tuple[str, str], ...]  # options map field -> option name
    shared_pool_cpus: int | None  # pod-level: advise --shared-pool-cpus
    restart: bool  # then a kubelet restart (podnuma restart)
    gates: bool  # the pod-level gates on, pods unchanged

    def __init__(
        self, label: str, pod_level: bool = False, fields: tuple[tuple[str, str], ...] = (),
        options: tuple[tuple[str, str], ...] = (), shared_pool_cpus: int | None = None,
        restart: bool = False, gates: bool = False,
    ) -> None:
    # written out, with the comparison, the hash and the repr (a frozen
    # ``dataclass`` would make them when the module is imported, on every
    # ``fleet`` command's start); not frozen at run time
        self.label = label
        self.pod_level = pod_level
        self.fields = fields
        self.options = options
        self.shared_pool_cpus = shared_pool_cpus
        self.restart = restart
        self.gates = gates

    def _fields(self) -> tuple[Any, ...]:
        return (self.label, self.pod_level, self.fields, self.options, self.shared_pool_cpus,
                self.restart, self.gates)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(label={self.label!r}, pod_level={self.pod_level!r}, "
                f"fields={self.fields!r}, options={self.options!r}, "
                f"shared_pool_cpus={self.shared_pool_cpus!r}, restart={self.restart!r}, "
                f"gates={self.gates!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, WhatIf)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


#: the largest ``shared-pool-cpus=N``: Linux's most CPUs on one machine
#: (x86-64 ``CONFIG_NR_CPUS`` at most 8192, the bound podnuma puts on a
#: machine's CPUs: :data:`podnuma.inputs.discover._fields.MAX_CPUS`): a
#: larger pool fits on no node, and would only overflow the pod's budget
MAX_SHARED_POOL_CPUS = 8192

#: the words of a shared pool past :data:`MAX_SHARED_POOL_CPUS`, after the
#: value (``--what-if shared-pool-cpus=N``, ``advise --shared-pool-cpus N``,
#: the web's ``sharedPoolCpus``)
SHARED_POOL_BOUND = (f"at most {MAX_SHARED_POOL_CPUS} CPUs (Linux runs at most {MAX_SHARED_POOL_CPUS} CPUs "
                     "on a node: a larger shared pool fits on none)")


def parse_what_if(text: str) -> WhatIf:
    """Parse one ``--what-if`` value; ``InputError`` naming the bad part."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InputError("--what-if: empty")
    pod_level = False
    fields: dict[str, str] = {}
    options: list[tuple[str, str]] = []
    shared: int | None = None
    restart = False
    gates = False
    for part in parts:
        if part == "pod-level":
            pod_level = True
            continue
        if part == "restart":
            restart = True
            continue
        if part == "gates":
            gates = True
            continue
        key, sep, value = part.partition("=")
        if key.strip() in ("gates", "pod-level", "restart"):  # (a change that takes no value)
            raise InputError(f"--what-if: {part}: {key.strip()} takes no value (write {key.strip()}, "
                             "without =VALUE)")
        if key == "shared-pool-cpus" and sep:
            digits = value.lstrip("0")  # (read as a number only when short: int() of a long one is slow)
            if not (value.isascii() and value.isdigit()) or not digits:
                raise InputError(f"--what-if: {part}: expected a whole number of CPUs >= 1")
            if len(digits) > 5 or int(digits) > MAX_SHARED_POOL_CPUS:
                raise InputError(f"--what-if: {part}: {SHARED_POOL_BOUND}")
            shared = int(value)
            continue
        if not sep or not value:
            raise InputError(
                f"--what-if: {part!r}: expected gates, pod-level, restart or KEY=VALUE with KEY one of "
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
                f"--what-if: unknown change {key!r} (expected gates, pod-level, restart, shared-pool-cpus=, "
                f"{', '.join(f'{k}=' for k in [*_FIELDS, *_OPTIONS])})"
            )
    # One key once: two values of it would contradict each other (the last
    # silently winning). cpu-option= and topology-option= name different
    # options, so there the key is KEY=NAME.
    seen: set[str] = set()
    for part in parts:
        once = part if part.partition("=")[0] in _OPTIONS else part.partition("=")[0]
        if once in seen:
            raise InputError(f"--what-if: {once} given twice in {text!r}")
        seen.add(once)
    if shared is not None and not pod_level:
        raise InputError("--what-if: shared-pool-cpus=N goes with pod-level")
    return WhatIf(label=",".join(parts), pod_level=pod_level,
                  fields=tuple(sorted(fields.items())), options=tuple(options),
                  shared_pool_cpus=shared, gates=gates, restart=restart)


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
