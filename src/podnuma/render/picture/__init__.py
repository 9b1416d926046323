"""``podnuma topology``: a picture of the machine, every CPU coloured by owner.

Like hwloc's ``lstopo``: Machine ⊃ Package (socket) ⊃ NUMANode (memory,
huge pages, memory pinned by pods) ⊃ L3 (uncore cache) ⊃ Core ⊃ PU (logical
CPU). Each PU box carries its CPU id and is filled with the colour of the
CPU's owner after a step of the run:

* ``reserved`` — the node's reserved CPUs (``reservedSystemCPUs`` or what the
  kubelet derived from ``kubeReserved``/``systemReserved``);
* ``node shared pool`` — the default CPU set minus the reserved CPUs (every
  CPU with the ``none`` policy, whose default set is empty);
* ``pod shared pool of NS/NAME`` — the CPUs of a pod's pod-level reservation
  (``podAllocation``) not held exclusively by one of its containers;
* ``exclusive: NS/NAME/CONTAINER`` — CPUs of a container with isolation
  ``container``. An init container's CPUs handed on to a later container
  show under the later container (the current owner);
* ``held outside the shared pool`` — anything else out of the default set
  (the CPUs of a stopped container, kept until its pod goes; stale
  checkpoint entries; leftovers of a rejected pod waiting for the kubelet's
  stale-state clean-up).

The pods the scenario's starting checkpoints (``state:``) hold run from the
start, as ``podnuma simulate`` runs them: their containers own their CPUs
and memory before any step and until a step removes them, named
NAMESPACE/NAME when ``state.pods`` gives the pod's spec, else by its UID.

Pure, one module per job: :mod:`.ownership` (:func:`ownership_after` replays
the restored pods and the step results), :mod:`.machine_tree` (the machine as a tree and its
labels), :mod:`.layout` (:func:`build_picture`, a drawing model), and the
renderers :mod:`.svg`, :mod:`.png` (drawn with Pillow, no system libraries
needed) and :mod:`.text`. No I/O here: the command in
``podnuma.cli.topology`` reads the scenario and writes the output.
"""

from __future__ import annotations

from podnuma.render.picture.layout import Box, LegendItem, Picture, build_picture
from podnuma.render.picture.ownership import (
    HELD,
    NODE_SHARED,
    RESERVED,
    Owner,
    OwnerKind,
    Ownership,
    ownership_after,
    ownership_document,
)
from podnuma.render.picture.png import render_png
from podnuma.render.picture.svg import render_svg
from podnuma.render.picture.text import render_text

__all__ = [
    "Owner",
    "OwnerKind",
    "ownership_document",
    "Ownership",
    "ownership_after",
    "Box",
    "LegendItem",
    "Picture",
    "build_picture",
    "render_svg",
    "render_png",
    "render_text",
    "RESERVED",
    "NODE_SHARED",
    "HELD",
]
