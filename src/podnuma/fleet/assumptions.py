"""What a node's own objects say against the kubelet configuration the
fleet analysis uses for it.

A node without configz (and without a node group giving its
configuration) is replayed under the kubelet's defaults: an assumption.
Two objects the dump usually holds can contradict it:

* the Node's ``status.allocatable``: the kubelet computes it as
  ``status.capacity`` minus ``kubeReserved`` and ``systemReserved``
  (``reservedSystemCPUs`` standing for the reserved CPU) minus, for memory,
  the ``memory.available`` hard eviction threshold
  (pkg/kubelet/cm/node_container_manager_linux.go, ``GetNodeAllocatableReservation``)
  and every huge page pool of the capacity (``nodestatus.MachineInfo``,
  pkg/kubelet/nodestatus/setters.go), floored at zero: the engine's own
  computation (:func:`~podnuma.cm.container_manager.node_status_allocatable`)
  on the node's dumped capacity; a CPU figure other than the machine's
  CPUs minus the configuration's reservation means the kubelet runs with
  another reservation. The memory and huge page capacities are taken as
  the kubelet holds them, not as the dumped text parses: an int64 of bytes
  (``CapacityFromMachineInfo``, pkg/kubelet/cadvisor/util.go), so a figure
  of 2^63 bytes or more wraps as there
  (:func:`~podnuma.cm.container_manager.go_int64`; the kubelet prints
  ``math.MinInt64`` as ``-9223372036854775808``), and a hand-written
  ``-8Ei`` (which ``ParseQuantity`` would cap at -(2^63-1)) is
  ``math.MinInt64`` too; the subtraction then has the
  kubelet's int64 quirks (see ``node_status_allocatable``);
* the NodeResourceTopology's ``attributes``: the topology exporter (RTE,
  NFD's topology-updater) publishes the kubelet's ``topologyManagerPolicy``
  and ``topologyManagerScope`` there.

:func:`contradictions` returns one sentence per disagreement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction

from podnuma.api.kubeletconfig import (
    KubeletConfig,
    node_allocatable_reservation,
    reserved_cpu_millis,
)
from podnuma.api.quantity import Quantity, QuantityError, parse_quantity
from podnuma.api.resources import is_hugepage_resource
from podnuma.cm.container_manager import go_int64, node_status_allocatable
from podnuma.errors import PodnumaError

__all__ = ["contradictions"]


def _qty(text: str | None) -> Quantity | None:
    if text is None:
        return None
    try:
        return parse_quantity(text)
    except (QuantityError, ValueError):
        return None


#: a quantity with a binary suffix: the only texts ParseQuantity caps (at
#: 2^63-1 in magnitude), so the only ones whose exact value is re-read here
_BINARY = re.compile(r"([+-]?)([0-9]*(?:\.[0-9]*)?)(Ki|Mi|Gi|Ti|Pi|Ei)")
_BINARY_SHIFT = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_CAPPED = (1 << 63) - 1


def _kubelet_bytes(text: str, parsed: Quantity) -> Quantity:
    """A dumped memory or huge page capacity as the kubelet holds it:
    ``resource.NewQuantity(int64(bytes), BinarySI)``. A whole number of
    bytes is wrapped to an int64 (:func:`go_int64`); a binary figure that
    ``ParseQuantity`` capped at 2^63-1 is re-read exactly first (``-8Ei``
    written by hand is ``math.MinInt64``, which the kubelet prints as
    ``-9223372036854775808``). Anything else (a
    fraction of a byte: no kubelet wrote it) is kept as parsed."""
    nanos = parsed.nanos
    exact: Fraction | None = None
    if abs(nanos) == _CAPPED * 10**9 and (m := _BINARY.fullmatch(text.strip())) and m.group(2) not in ("", "."):
        exact = Fraction(m.group(2)) * (1 << _BINARY_SHIFT[m.group(3)]) * (-1 if m.group(1) == "-" else 1)
    elif nanos % 10**9 == 0:
        exact = Fraction(nanos // 10**9)
    if exact is None or exact.denominator != 1:
        return parsed
    return Quantity.from_int(go_int64(int(exact)), binary=True)


def _cpus(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _mib(value: int) -> str:
    return f"{value / 2**20:.0f}Mi" if value % 2**20 == 0 else f"{value}"


def contradictions(
    config: KubeletConfig,
    machine_cpus: int,
    *,
    allocatable: Mapping[str, str],
    capacity: Mapping[str, str],
    nrt_attributes: Mapping[str, str],
) -> list[str]:
    """The disagreements between ``config`` (on a machine of
    ``machine_cpus`` CPUs) and the node's allocatable, capacity and NRT
    attributes; empty when nothing contradicts it (or nothing was dumped)."""
    out: list[str] = []
    try:
        reserved_milli = reserved_cpu_millis(config)
    except PodnumaError:
        return out
    got = _qty(allocatable.get("cpu"))
    cap = _qty(capacity.get("cpu"))
    if cap is not None and cap.milli_value() != machine_cpus * 1000:
        # the node form is another machine than the node's: the figures below
        # compare the node's own capacity and allocatable, not the form's
        out.append(
            f"status.capacity cpu is {_cpus(cap.milli_value())}, the node form has {machine_cpus} CPUs: "
            "the form is not this node's machine"
        )
    if got is not None:
        # the kubelet's allocatable: capacity - reserved, never below 0
        want = max(0, machine_cpus * 1000 - reserved_milli)
        if got.milli_value() != want:
            over = " (more than the machine has)" if reserved_milli > machine_cpus * 1000 else ""
            text = (f"status.allocatable cpu is {_cpus(got.milli_value())}, the configuration gives "
                    f"{_cpus(want)} ({machine_cpus} CPUs, {_cpus(reserved_milli)} reserved{over})")
            kept = (cap.milli_value() if cap is not None else machine_cpus * 1000) - got.milli_value()
            if kept >= 0:
                text += (f": the kubelet reserves {_cpus(kept)} CPUs of its "
                         f"{'status.capacity' if cap is not None else 'machine'} "
                         "(kubeReserved, systemReserved or reservedSystemCPUs)")
            else:
                text += ": more than the node's capacity"
            out.append(text)
    caps = {name: (_kubelet_bytes(text, q) if name == "memory" or is_hugepage_resource(name) else q)
            for name, text in capacity.items() if (q := _qty(text)) is not None}
    got_mem = _qty(allocatable.get("memory"))
    if "memory" in caps and got_mem is not None:
        try:
            reservation = node_allocatable_reservation(config, caps)
        except PodnumaError:
            return out
        want_mem = int(node_status_allocatable(caps, reservation)["memory"].value())
        if int(got_mem.value()) != want_mem:
            held = reservation.get("memory")
            pages = sum(int(q.value()) for name, q in caps.items() if is_hugepage_resource(name))
            out.append(
                f"status.allocatable memory is {_mib(int(got_mem.value()))}, the configuration gives "
                f"{_mib(want_mem)} (capacity {_mib(int(caps['memory'].value()))} - "
                f"{_mib(0 if held is None else int(held.value()))} kubeReserved, systemReserved and hard "
                f"eviction - {_mib(pages)} huge pages)"
            )
    for attr, value in (("topologyManagerPolicy", config.topology_manager_policy),
                        ("topologyManagerScope", config.topology_manager_scope)):
        seen = nrt_attributes.get(attr)
        if seen is not None and seen != value:
            out.append(f"the NodeResourceTopology's {attr} is {seen!r}, the configuration's {value!r}")
    return out
