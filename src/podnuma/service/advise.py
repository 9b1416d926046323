"""Which pod each part of ``podnuma advise``'s report is of.

Two pods of the input may have the same namespace/name (variants of one
pod, advised side by side: a legitimate input). The report then tells them
apart by position, as ``compare``'s does: ``pods[i]`` is the ``i``-th
object advised (``podIndex``), and every ``restart[]`` and ``replay[]``
entry carries the ``podIndex`` of the ``pods[]`` entry it is of, whatever
the names; for people, a pod whose name another pod also has is named with
its place in the input (``x/a (pods.yaml#1)``, the words of its heading).

The advices themselves are :func:`podnuma.service.whatif.advise`'s.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from podnuma.analysis.advise import Advice
from podnuma.service.restart import PodRisk

if TYPE_CHECKING:
    from podnuma.service.whatif import Advices

__all__ = ["labelled_restart", "pod_labels", "replay_label"]


def pod_labels(advices: Sequence[Advice]) -> list[str]:
    """Each advice's name for people: its pod's name (``x/a``,
    ``Deployment ml/trainer``), followed by where it is in the input
    (``x/a (pods.yaml#1)``) when another advice has the same name; its
    place alone when it has no name."""
    counts = Counter(a.pod for a in advices if a.pod is not None)
    out: list[str] = []
    for a in advices:
        if a.pod is None:
            out.append(a.where)
        elif counts[a.pod] > 1:
            out.append(f"{a.pod} ({a.where})")
        else:
            out.append(a.pod)
    return out



def labelled_restart(got: Advices) -> list[PodRisk]:
    """``got.restart``, each entry named by :func:`pod_labels` (for
    people: the lines of two pods of one name tell which is which)."""
    labels = pod_labels(got.advices)
    return [dataclasses.replace(r, pod=labels[i]) for r, i in zip(got.restart, got.restart_pods, strict=True)]



def replay_label(labels: Sequence[str], entry: Mapping[str, Any]) -> str:
    """The name for people of the advice a ``replay[]`` entry is of (by its
    ``podIndex``; its ``pod`` without one)."""
    i = entry.get("podIndex")
    if isinstance(i, int) and 0 <= i < len(labels):
        return labels[i]
    return str(entry.get("pod"))
