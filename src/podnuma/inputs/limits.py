"""The bounds every YAML and JSON input is read within.

One set of numbers for every door (files, standard input, HTTP bodies,
agent manifests, fleet dumps, live API answers); a door may only lower a
bound or, for bytes, pick the size that fits what it reads (a manifest, a
request body, a cluster dump). docs/limits.md gives each value and why.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_LIMITS",
    "FLEET_LIMITS",
    "MANIFEST_LIMITS",
    "ReadLimits",
]

MiB = 1 << 20


class ReadLimits:
    """Bounds on one input.

    * ``max_bytes``: the largest file or body read (its bytes, before decoding);
    * ``max_depth``: the deepest nesting of mappings and lists;
    * ``max_nodes``: the most values (scalars, mappings, lists) a document may
      hold once every alias is expanded;
    * ``max_alias_nodes``: the most values YAML aliases may add to a document
      (the expanded size minus the written size); 0 refuses every alias.
    """

    max_bytes: int
    max_depth: int
    max_nodes: int
    max_alias_nodes: int

    def __init__(
        self,
        max_bytes: int = 64 * MiB,
        max_depth: int = 100,
        max_nodes: int = 5_000_000,
        max_alias_nodes: int = 100_000,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.max_alias_nodes = max_alias_nodes

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(max_bytes={self.max_bytes!r}, max_depth={self.max_depth!r}, max_nodes={self.max_nodes!r}, max_alias_nodes={self.max_alias_nodes!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReadLimits) or other.__class__ is not self.__class__:
            return False
        return (self.max_bytes, self.max_depth, self.max_nodes, self.max_alias_nodes) == (other.max_bytes, other.max_depth, other.max_nodes, other.max_alias_nodes)

    def __hash__(self) -> int:
        return hash((self.max_bytes, self.max_depth, self.max_nodes, self.max_alias_nodes))

    def with_bytes(self, max_bytes: int) -> ReadLimits:
        return ReadLimits(max_bytes, self.max_depth, self.max_nodes, self.max_alias_nodes)


#: files and standard input of the commands (scenarios, pods, nodes, configurations)
DEFAULT_LIMITS = ReadLimits()
#: a static-pod manifest: the kubelet's own limit on a manifest file (10 MiB)
MANIFEST_LIMITS = ReadLimits(max_bytes=10 * MiB, max_nodes=1_000_000)
#: cluster dumps (``kubectl get pods -A -o json`` of a large cluster) and live answers
FLEET_LIMITS = ReadLimits(max_bytes=2048 * MiB, max_nodes=200_000_000)
