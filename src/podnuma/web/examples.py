"""The example scenarios the page offers: a fixed list, shipped with the
package (``podnuma/web/examples`` is the repository's ``examples/``
directory, installed as package data). A request names an example by its
id in :data:`EXAMPLES`; no path from a request ever reaches the file system.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

__all__ = ["Example", "EXAMPLES", "example_text", "describe", "WHATIF_POD", "WHATIF_NODE", "WHATIF_CONFIG"]


@dataclass(frozen=True)
class Example:
    id: str
    path: str  # inside the examples directory
    group: str

    @property
    def name(self) -> str:
        """The file name messages use (as the CLI run from the repository)."""
        return f"examples/{self.path}"


def _ex(group: str, path: str) -> Example:
    return Example(path.rsplit("/", 1)[-1].removesuffix(".yaml"), path, group)


#: In the order the page lists them: pod-level first (what the page is for).
EXAMPLES: tuple[Example, ...] = (
    _ex("pod-level resources (KEP-5526)", "pod-level/tutorial-1-pod-scope-mixed.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/tutorial-2-empty-shared-pool.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/tutorial-3-container-scope-mixed.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/pod-scope-1-shared.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/pod-scope-2-mixed.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/pod-scope-3-empty-shared-pool.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/container-scope-1-mixed.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/container-scope-2-pod-only.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/init-and-sidecars.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/lifecycle.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/restart.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/full-pcpus-only.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/gates-off.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/gates-off-podlevelresources.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/pod-scope-table.yaml"),
    _ex("pod-level resources (KEP-5526)", "pod-level/container-scope-table.yaml"),
    _ex("topology manager policies", "topology/none.yaml"),
    _ex("topology manager policies", "topology/best-effort.yaml"),
    _ex("topology manager policies", "topology/restricted.yaml"),
    _ex("topology manager policies", "topology/single-numa-node.yaml"),
    _ex("topology manager policies", "topology/prefer-closest-numa-nodes.yaml"),
    _ex("topology manager policies", "topology/pod-scope.yaml"),
    _ex("CPU manager", "static-dual-socket.yaml"),
    _ex("CPU manager", "real-node/this-node.yaml"),
)

#: The what-if example: a pod, a node and a kubelet configuration.
WHATIF_POD = "whatif/trainer-pod.yaml"
WHATIF_NODE = "whatif/node.yaml"
WHATIF_CONFIG = "whatif/kubelet-config.yaml"


def example_text(path: str) -> str:
    """The text of a shipped example (``path`` from this module, never from
    a request)."""
    return (resources.files("podnuma.web") / "examples" / path).read_text(encoding="utf-8")


def describe(text: str) -> tuple[str, str]:
    """The title (first line) and description (the rest) of the comment
    block that opens an example."""
    lines: list[str] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    title = lines[0] if lines else ""
    return title, "\n".join(lines[1:]).strip()
