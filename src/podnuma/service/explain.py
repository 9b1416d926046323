"""``podnuma explain``: the explanation (:func:`podnuma.service.scenario.explain`)
and, for each pod-level rewrite its search finds admitted, what a kubelet
restart does to it (kubelet v1.37.2, kubernetes#140989), told as ``compare``
and ``advise`` tell it: :func:`podnuma.service.restart.pod_restart_risks`.

(A module of its own: the restart service reads scenarios with
:mod:`podnuma.service.scenario`.)"""

from __future__ import annotations

from collections.abc import Callable

from podnuma.inputs.overrides import Override, effective_config
from podnuma.inputs.text import TextInput
from podnuma.service import scenario as _scenario
from podnuma.service.scenario import Explanation

__all__ = ["explain", "pod_level_restarts"]


def explain(
    src: TextInput, *, step: int | None = None, pod: str | None = None, search: bool = True,
    progress: Callable[[int, int], None] | None = None, time_budget: float | None = None,
    note: Callable[[str], None] | None = None, overrides: tuple[Override, ...] = (),
) -> Explanation:
    """``podnuma explain [--step N] [--pod REF] [--no-search] [--set ...]``:
    :func:`podnuma.service.scenario.explain`, each admitted pod-level
    suggestion with its ``restart`` (:func:`pod_level_restarts`)."""
    got = _scenario.explain(
        src, step=step, pod=pod, search=search, progress=progress, time_budget=time_budget,
        note=note, overrides=overrides,
    )
    pod_level_restarts(src, got)
    return got


def pod_level_restarts(src: TextInput, explanation: Explanation) -> None:
    """Add to each admitted pod-level rewrite among the suggestions (an
    ``alternatives`` entry of kind ``podLevel``) what a kubelet restart does
    to it, as ``compare`` and ``advise`` compute it: the rewritten pod alone
    on the node (``src``'s node; the configuration explained, with its
    topology scope and the two feature gates on), then a restart. It goes
    in the entry as ``restart`` (the fields of ``advise``'s ``restart[]``
    entries, and ``upstreamIssue``)."""
    from podnuma.analysis.nearest import candidate_manifest
    from podnuma.analysis.restart import UPSTREAM_ISSUE
    from podnuma.service.restart import pod_restart_risks

    scenario = explanation.scenario
    config_doc = effective_config(scenario.config_document, ())
    scope = scenario.config.topology_manager_scope
    for adm in explanation.document["admissions"]:
        report = explanation.reports.get(adm["step"])
        if report is None:
            continue
        for alt, outcome in zip(adm["alternatives"], report.outcomes, strict=True):
            if outcome.variation.kind != "podLevel" or not outcome.admitted:
                continue
            manifest = candidate_manifest(scenario, adm["step"], outcome.variation)
            if manifest is None:
                continue
            (risk,) = pod_restart_risks(
                [(adm["pod"], {"podLevel": manifest})], src, None, (scope,), config_doc=config_doc
            )
            alt["restart"] = {**risk.document(), "upstreamIssue": UPSTREAM_ISSUE}
