"""What pod-level resources (KEP-5526) change for a pod: ``compare`` (the
pod as written vs its other form) and ``advise`` (the pod-level rewrite and
what it saves), on a node and kubelet configuration given as inputs or the
built-in ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podnuma.analysis.advise import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    TEMPLATE_PATHS,
    Advice,
    SharedPoolTooLarge,
    advice_document,
    advise_pod,
    machine_node_document,
    node_config_document,
    proposal_scenario,
    shape_scenario,
    workload_pod,
)
from podnuma.analysis.compare import (
    SCOPES,
    Comparison,
    compare_pod,
    comparison_document,
    run_scenario,
)
from podnuma.api.kubeletconfig import API_VERSION as KUBELET_CONFIG_API_VERSION
from podnuma.api.kubeletconfig import KIND as KUBELET_CONFIG_KIND
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.errors import InputError, InputErrors
from podnuma.fieldkit import wrong_type
from podnuma.fleet.whatif import MAX_SHARED_POOL_CPUS, SHARED_POOL_BOUND
from podnuma.golang import jsonnumbers as json_numbers
from podnuma.inputs.documents import parse_document
from podnuma.inputs.overrides import Override, effective_config, request_overrides
from podnuma.inputs.pods import (
    DEFAULT_KUBELET_CONFIG_YAML,
    DEFAULT_NODE_YAML,
    PodSource,
    config_document,
    load_pod_sources,
    node_and_config,
)
from podnuma.inputs.text import TextInput, request_name
from podnuma.machine.topology import Machine
from podnuma.service.advice_replay import beyond_cpus, cgroup_changes
from podnuma.service.messages import no_pod, not_modelled_notes
from podnuma.service.restart import PodRisk, pod_restart_risks
from podnuma.service.scenario import scenario_pod

__all__ = [
    "MAX_SHARED_POOL_CPUS", "Advices", "Comparisons", "Setting", "advise", "builtin_defaults", "compare",
    "compare_scenario_names", "parse_shared_pool", "shared_pool_problem", "whatif_request",
    "write_compare_scenarios",
]

Note = Callable[[str], None]

#: an input, or a function that reads it when it is needed (so that a door
#: reading files reads them in the order the checks need them)
Source = TextInput | Callable[[], TextInput]


def _get(src: Source) -> TextInput:
    return src if isinstance(src, TextInput) else src()


def _where(src: PodSource, sources: Sequence[PodSource]) -> str:
    """The field path of ``src`` in its file (none for a file of one object)."""
    if len(sources) > 1 or src.item is not None:
        return f"documents[{src.document}]" + ("" if src.item is None else f".items[{src.item}]")
    return ""


@dataclass(frozen=True)
class Setting:
    """The node and kubelet configuration a what-if runs on, and where each
    came from (a file's name, or the built-in one)."""

    machine: Machine
    config: KubeletConfig
    node_from: str
    cfg_from: str
    # ``--set`` overrides, and the configuration document they were applied
    # to (the given one, or the built-in one)
    overrides: tuple[Override, ...] = ()
    config_doc: Mapping[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        doc = node_config_document(self.machine, self.config, self.node_from, self.cfg_from)
        if self.overrides:
            # the whole configuration the runs used: a scenario with it
            # inline replays them
            doc["kubeletConfig"]["set"] = [str(o) for o in self.overrides]
            doc["kubeletConfig"]["effective"] = effective_config(self.config_doc, self.overrides)
        return doc


def _effective(setting: Setting) -> dict[str, Any] | None:
    """The configuration document the runs used under ``--set`` (else
    ``None``: the input's own)."""
    return effective_config(setting.config_doc, setting.overrides) if setting.overrides else None


def _setting(
    node: Source | None, config: Source | None, note: Note | None,
    overrides: tuple[Override, ...] = (),
) -> Setting:
    cfg_input = None if config is None else _get(config)
    setting = Setting(
        *node_and_config(None if node is None else _get(node), cfg_input, overrides),
        overrides=overrides,
        config_doc=config_document(cfg_input) if overrides else None,
    )
    if note is not None:
        for line in not_modelled_notes(setting.config, setting.cfg_from, prefix=""):
            note(line)
    return setting


@dataclass(frozen=True)
class Comparisons:
    """``podnuma compare``: each Pod's comparison; the objects skipped (not
    Pods); where the node and configuration came from."""

    setting: Setting
    comparisons: list[Comparison]
    skipped: list[str]
    #: each pod in both forms and scopes, alone on the node, then a kubelet restart
    restart: list[PodRisk] = field(default_factory=list)
    #: where each comparison's object is in its input (one per comparison)
    sources: list[PodSource] = field(default_factory=list)
    #: the comparison (its index in ``comparisons``) each restart entry is of:
    #: two pods of the input may have the same name (variants of one pod)
    restart_pods: list[int] = field(default_factory=list)
    #: per comparison, the scenario of each of its runs (in the order of
    #: ``runs``): it replays the run's figures in ``podnuma simulate``
    scenarios: list[list[dict[str, Any]]] = field(default_factory=list)

    def restart_of(self, index: int) -> list[PodRisk]:
        """The restart entries of ``comparisons[index]`` (by position, not
        by name: two pods of the input may share one)."""
        return [r for r, i in zip(self.restart, self.restart_pods, strict=True) if i == index]

    def source_document(self, index: int) -> dict[str, Any] | None:
        """Where ``comparisons[index]`` is in the input: its file, the index
        of its YAML document, and of the item in a ``List`` (else null)."""
        if index >= len(self.sources):
            return None
        src = self.sources[index]
        return {"file": src.file, "document": src.document, "item": src.item}

    def source_words(self, index: int) -> str | None:
        """Where ``comparisons[index]`` is, for people (``pods.yaml
        documents[1]``), when another comparison has the same pod name
        (else ``None``: its name says which it is)."""
        if index >= len(self.sources):
            return None
        name = self.comparisons[index].pod
        if sum(1 for c in self.comparisons if c.pod == name) < 2:
            return None
        src = self.sources[index]
        return f"{src.file} documents[{src.document}]" + ("" if src.item is None else f".items[{src.item}]")

    def document(self) -> dict[str, Any]:
        """``podnuma compare -o json``: ``pods[i]`` and the ``restart[]``
        entries of that pod both carry ``podIndex`` (``i``) and ``source``."""
        doc = self.setting.document()
        doc["node"]["numaNodes"] = list(self.setting.machine.numa_ids())
        pods = []
        for i, c in enumerate(self.comparisons):
            d = comparison_document(c)
            d["podIndex"] = i
            d["source"] = self.source_document(i)
            if i < len(self.scenarios):
                for run, scenario in zip(d["runs"], self.scenarios[i], strict=True):
                    run["scenario"] = scenario
            pods.append(d)
        doc["pods"] = pods
        restart = []
        for j, r in enumerate(self.restart):
            d = r.document()
            if j < len(self.restart_pods):
                d["podIndex"] = self.restart_pods[j]
                d["source"] = self.source_document(self.restart_pods[j])
            restart.append(d)
        doc["restart"] = restart
        return doc


def compare(
    pod_source: Source, node: Source | None = None, config: Source | None = None,
    *, note: Note | None = None, overrides: tuple[Override, ...] = (),
) -> Comparisons:
    """Compare every Pod of ``pod_source``, and the pod of every workload
    (the kinds ``advise`` reads: Deployment, StatefulSet, DaemonSet,
    ReplicaSet, Job, CronJob...; other kinds of objects are skipped) on the
    node and configuration (default: the built-in ones; ``overrides``:
    ``--set``); ``note`` receives the notes on configuration not
    modelled."""
    node = None if node is None else _get(node)  # read once: the restart section reads it again
    config = None if config is None else _get(config)
    setting = _setting(node, config, note, overrides)
    pod = _get(pod_source)
    sources = load_pod_sources(pod.text, name=pod.name)
    out: list[Comparison] = []
    where: list[PodSource] = []
    skipped: list[str] = []
    for src in sources:
        kind = src.data.get("kind") if isinstance(src.data, Mapping) else None
        data, label, prefix = src.data, None, ""
        if isinstance(kind, str) and kind in TEMPLATE_PATHS:
            label, data, error = workload_pod(src.data, kind)
            prefix = ".".join(TEMPLATE_PATHS[kind])
            if data is None:
                assert error is not None
                raise src.locate(InputError(error.message, path=error.path, file=pod.name)).at(
                    _where(src, sources)
                )
        elif kind is not None and kind != "Pod":
            skipped.append(f"{src.where}: not a Pod or a workload (kind {kind}), skipped")
            continue
        try:
            got = compare_pod(data, setting.machine, setting.config)
            out.append(got if label is None else dataclasses.replace(got, pod=label))
            where.append(src)
        except InputError as e:
            if e.file is not None:
                raise
            raise src.locate(InputError(e.message, path=e.path, file=pod.name).at(prefix)).at(
                _where(src, sources)
            ) from None
    if not out:
        raise no_pod(pod.name)
    forms = [{c.written: c.original, c.rewrite.direction: c.rewrite.manifest} for c in out]
    restart = pod_restart_risks(
        [(c.pod, f) for c, f in zip(out, forms, strict=True)],
        node, config, SCOPES, config_doc=_effective(setting),
    )
    # pod_restart_risks answers, in order, an entry per form and scope of each pod
    restart_pods = [i for i, f in enumerate(forms) for _ in range(len(f) * len(SCOPES))]
    assert len(restart_pods) == len(restart)
    # each run's replay: the node as a CPU table, the configuration the runs
    # used (the effective one under --set)
    cfg_doc = _effective(setting) or dict(config_document(config))
    node_doc = machine_node_document(setting.machine)
    scenarios = [[run_scenario(c, m, node_doc, cfg_doc) for m in c.runs] for c in out]
    return Comparisons(setting, out, skipped, restart, where, restart_pods, scenarios)


#: a run's file name part for its form
_FORM_FILE = {"perContainer": "per-container", "podLevel": "pod-level"}


def compare_scenario_names(got: Comparisons) -> list[list[str]]:
    """The file name of each run's scenario (``compare --as-scenario DIR``),
    per comparison in the order of its runs: ``NAMESPACE.NAME.FORM.scope-
    SCOPE.yaml`` (a workload's: ``KIND.NAMESPACE.NAME...``), with
    ``_podIndex`` after the name when another pod of the input has the
    same one (variants of one pod: ``_`` is in no object's name, so no
    other pod's file has that name), ``pod-INDEX`` for a name too long to
    be a file's."""
    counts: dict[str, int] = {}
    for c in got.comparisons:
        counts[c.pod] = counts.get(c.pod, 0) + 1
    out: list[list[str]] = []
    for i, c in enumerate(got.comparisons):
        base = c.pod.replace(" ", ".").replace("/", ".")
        if counts[c.pod] > 1:
            base = f"{base}_{i}"
        if len(base) > 180 or base.startswith("."):  # (NAME_MAX is 255 bytes: the rest takes 37)
            base = f"pod-{i}"
        out.append([f"{base}.{_FORM_FILE.get(m.label, m.label)}.scope-{m.scope}.yaml" for m in c.runs])
    return out


def write_compare_scenarios(got: Comparisons, directory: Path, created: Sequence[Path] = ()) -> int:
    """Write each run's scenario into ``directory`` (new or empty; files
    mode 0644; names: :func:`compare_scenario_names`), all or none (a
    failure leaves nothing, nor ``directory`` when it, or a parent in
    ``created``, was made for it). Returns the number of files."""
    from podnuma.fileio import atomic_write
    from podnuma.render.yaml_text import dump_safe_yaml
    from podnuma.service.fleet import staged_directory

    written = 0
    try:
        with staged_directory(directory, created) as stage:
            for names, scenarios in zip(compare_scenario_names(got), got.scenarios, strict=True):
                for name, doc in zip(names, scenarios, strict=True):
                    try:
                        atomic_write(stage / name, dump_safe_yaml(doc).encode("utf-8"), mode=0o644)
                    except OSError as e:
                        raise InputError(f"--as-scenario: cannot write: {e.strerror or e}",
                                         file=str(directory / name)) from None
                    written += 1
    except OSError as e:  # (the staging directory, or a rename into place)
        raise InputError(f"--as-scenario: cannot write: {e.strerror or e}", file=str(directory)) from None
    return written


@dataclass(frozen=True)
class Advices:
    """``podnuma advise``: the advice for each Pod, the messages of the
    inputs that could not be advised on, where the node and configuration
    came from."""

    setting: Setting
    advices: list[Advice]
    errors: list[str]
    #: each rewritten pod as written and pod-level, alone on the node, then a kubelet restart
    restart: list[PodRisk] = field(default_factory=list)
    #: the advice (its index in ``advices``) each restart entry is of: two
    #: pods of one name are told apart by it, not by name
    restart_pods: list[int] = field(default_factory=list)
    # advise's own parts: the search settings, the replay scenario, and per
    # advice what the rewrite changes beyond CPUs
    strategy: str = DEFAULT_STRATEGY
    shared_pool: str = "auto"
    scenario: dict[str, Any] | None = None
    replay: list[dict[str, Any]] = field(default_factory=list)
    #: the scenario of each other node shape proposed (a node of its own):
    #: the ``replay[]`` entry with ``shape`` k sits in the k-th (from 1)
    shape_scenarios: list[dict[str, Any]] = field(default_factory=list)
    cgroups: list[dict[str, Any]] = field(default_factory=list)
    beyond: list[list[str]] = field(default_factory=list)

    @property
    def machine(self) -> Machine:
        return self.setting.machine

    @property
    def config(self) -> KubeletConfig:
        return self.setting.config

    def document(self) -> dict[str, Any]:
        """``podnuma advise -o json``."""
        pods = []
        for i, a in enumerate(self.advices):
            d = advice_document(a)
            d["cgroups"] = self.cgroups[i] if i < len(self.cgroups) else {}
            d["beyondCpus"] = self.beyond[i] if i < len(self.beyond) else []
            pods.append(d)
        for i, d in enumerate(pods):
            d["podIndex"] = i
        restart = []
        for r, i in zip(self.restart, self.restart_pods, strict=True):
            d = r.document()
            d["podIndex"] = i  # (the entry of pods[] it is of)
            restart.append(d)
        return {
            **self.setting.document(),
            "search": {"strategy": self.strategy, "sharedPoolCpus": self.shared_pool},
            "pods": pods,
            "replay": self.replay,
            "errors": self.errors,
            "restart": restart,
        }


def shared_pool_problem(n: int, written: str | None = None) -> str | None:
    """What is wrong with ``n`` CPUs as the pod shared pool asked for (the
    words after the option's name; ``written``: ``n`` as given), else
    ``None``: at most :data:`~podnuma.fleet.whatif.MAX_SHARED_POOL_CPUS`,
    the bound and the words of the fleet's ``shared-pool-cpus=N`` (the
    most CPUs Linux runs on a node: a larger pool fits on none)."""
    if n < 1:
        return f"expected auto or a whole number of CPUs >= 1, found {n}"
    if n > MAX_SHARED_POOL_CPUS:
        if written is None:
            written = str(n) if n.bit_length() < 130 else "a number of 40 digits or more"
        elif len(written) > 40:
            written = f"{written[:20]}... ({len(written)} digits)"
        return f"{written}: {SHARED_POOL_BOUND}"
    return None


def parse_shared_pool(value: object) -> int | None:
    """``--shared-pool-cpus`` / ``sharedPoolCpus``: ``auto`` (None, the
    default: searched) or a whole number of CPUs from 1 to
    :data:`MAX_SHARED_POOL_CPUS`; refused (``InputError`` at the path
    ``sharedPoolCpus``) otherwise."""
    if value is None or value == "auto":
        return None
    if isinstance(value, bool):
        raise InputError("expected auto or a whole number of CPUs >= 1", path="sharedPoolCpus")
    written = None
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        written = value.strip()
        digits = written.lstrip("0") or "0"
        # (thousands of digits are not converted: Python refuses past 4300)
        n = int(digits) if len(digits) <= 40 else MAX_SHARED_POOL_CPUS + 1
    else:
        shown = value if not isinstance(value, str) or len(value) <= 60 else f"{value[:60]}..."
        raise InputError(f"expected auto or a whole number of CPUs >= 1, found {shown!r}",
                         path="sharedPoolCpus")
    problem = shared_pool_problem(n, written)
    if problem is not None:
        raise InputError(problem, path="sharedPoolCpus")
    return n


def advise(
    pods: Sequence[Source], node: Source | None = None, config: Source | None = None,
    *, shared_pool_cpus: int | None = None, note: Note | None = None,
    strategy: str = DEFAULT_STRATEGY, sidecars: Sequence[str] = (), with_scenario: bool = False,
    overrides: tuple[Override, ...] = (), progress: Callable[[int, int], None] | None = None,
    request: bool = False,
) -> Advices:
    """Advise on every Pod of ``pods``; an input that cannot be read, and an
    invalid pod, are listed in ``errors`` (with file and field path), every
    one of them found (the doors then print no advice: the command names
    each and exits 2, the web API answers 400). ``shared_pool_cpus``: None searches (auto);
    ``strategy``: one of :data:`podnuma.analysis.advise.STRATEGIES`;
    ``sidecars``: container names to treat as sidecars; ``with_scenario``:
    also build the scenario that replays every figure; ``overrides``:
    ``--set`` on the configuration; ``progress``: told ``(done, total)``
    pods as each pod's search ends (every input read first); ``request``:
    a refused option is named by the web API's field (``sidecars[0]``,
    ``sharedPoolCpus``), not the command's (``--sidecar``)."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r} (expected one of {', '.join(STRATEGIES)})",
                         path="strategy")
    node = None if node is None else _get(node)  # read once: the restart section reads it again
    config = None if config is None else _get(config)
    setting = _setting(node, config, note, overrides)
    advices: list[Advice] = []
    errors: list[str] = []
    # every input read first (the count of pods for the progress), its
    # errors told in the order of the inputs, as before
    read: list[tuple[str | None, list[Any]]] = []
    for pod_source in pods:
        try:
            pod = _get(pod_source)
            sources = load_pod_sources(pod.text, name=pod.name)
        except InputError as e:
            read.append((str(e), []))
            continue
        read.append((None if sources else str(no_pod(pod.name)), list(sources)))
    # a --sidecar no pod read has a container of: a typo, refused before any search
    datas = [src.data for _, sources in read for src in sources]
    unknown = _unknown_sidecars(sidecars, datas, request) + _init_container_sidecars(sidecars, datas, request)
    if unknown:  # (every bad input named, a line each, as the doors tell errors)
        return Advices(setting, [], [problem for problem, _ in read if problem is not None] + unknown)
    total = sum(len(sources) for _, sources in read)
    done = 0
    for problem, sources in read:
        if problem is not None:
            errors.append(problem)
        for src in sources:
            done += 1
            if progress is not None:
                progress(done - 1, total)
            try:
                advice = advise_pod(
                    src.data, setting.machine, setting.config, where=src.where,
                    shared_pool_cpus=shared_pool_cpus, strategy=strategy, sidecars=tuple(sidecars),
                    other_shapes=True,
                )
            except SharedPoolTooLarge as e:  # the option's fault: named as the door names it
                raise (InputError(e.message, path="sharedPoolCpus") if request
                       else InputError(f"--shared-pool-cpus {e.message}")) from None
            if advice.error is not None:
                # an invalid Pod is invalid input: named by file and field path
                bad = advice.error
                errors.append(
                    str(src.locate(InputError(bad.message, path=bad.path, file=src.file)).at(_where(src, sources)))
                )
                continue
            advices.append(advice)
    if progress is not None and total:
        progress(total, total)
    restarted = [
        (i, a.pod or a.where, {"perContainer": a.original, "podLevel": a.rewrite.manifest})
        for i, a in enumerate(advices)
        if a.status == "rewritten" and a.original is not None and a.rewrite is not None
    ]
    scopes = (setting.config.topology_manager_scope,)
    restart = pod_restart_risks([(name, forms) for _, name, forms in restarted], node, config, scopes,
                                config_doc=_effective(setting))
    # pod_restart_risks answers, in order, an entry per form and scope of each pod
    restart_pods = [i for i, _, forms in restarted for _ in range(len(forms) * len(scopes))]
    assert len(restart_pods) == len(restart)
    return _advise_extras(Advices(setting, advices, errors, restart, restart_pods), config, shared_pool_cpus,
                          strategy, with_scenario)


def _container_names(data: object, *, regular_init: bool = False) -> set[str]:
    """The names of the containers and init containers of a Pod, or of the
    pod a workload makes (:data:`TEMPLATE_PATHS`); none for what is
    neither (it is skipped, or refused, by its own check). With
    ``regular_init``: the names of its containers and native sidecars
    (``restartPolicy: Always``) left out, those of its other init
    containers only."""
    kind = data.get("kind") if isinstance(data, Mapping) else None
    if isinstance(data, Mapping) and isinstance(kind, str) and kind in TEMPLATE_PATHS:
        _, data, _ = workload_pod(data, kind)
    spec = data.get("spec") if isinstance(data, Mapping) else None
    names: set[str] = set()
    if isinstance(spec, Mapping):
        for key in ("initContainers",) if regular_init else ("containers", "initContainers"):
            ctrs = spec.get(key)
            if isinstance(ctrs, list):
                names.update(c["name"] for c in ctrs
                             if isinstance(c, Mapping) and isinstance(c.get("name"), str)
                             and not (regular_init and c.get("restartPolicy") == "Always"))
    return names


def _init_container_sidecars(sidecars: Sequence[str], pods: Sequence[object], request: bool) -> list[str]:
    """A line for each of ``sidecars`` (``--sidecar`` / ``sidecars[i]``)
    that names, in ``pods``, only init containers that are not sidecars (no
    ``restartPolicy: Always``): such a container runs to its end before the
    others start and the rewrite never moves it, so the name would have no
    effect. A name that is also a container's or a native sidecar's, in
    any pod read, is taken."""
    if not sidecars:
        return []
    init: set[str] = set()
    for data in pods:
        init |= _container_names(data, regular_init=True)
    if not init:
        return []
    others: set[str] = set()
    for data in pods:
        others |= _container_names(data) - _container_names(data, regular_init=True)
    out: list[str] = []
    why = "an init container that is not a sidecar (no restartPolicy: Always): naming it would have no effect"
    for i, name in enumerate(sidecars):
        if name not in init or name in others:
            continue
        shown = name if len(name) <= 60 else f"{name[:60]}... ({len(name)} characters)"
        if request:
            out.append(str(InputError(f"container {shown!r} is {why}", path=f"sidecars[{i}]")))
        else:
            out.append(f"--sidecar {shown}: that container is {why}")
    return out


def _unknown_sidecars(sidecars: Sequence[str], pods: Sequence[object], request: bool) -> list[str]:
    """A line for each of ``sidecars`` (``--sidecar`` / ``sidecars[i]``)
    that names no container of any of ``pods`` (with the closest name when
    one is close: a typo)."""
    if not sidecars:
        return []
    import difflib  # (the suggestion)

    known: set[str] = set()
    for data in pods:
        known |= _container_names(data)
    out: list[str] = []
    for i, name in enumerate(sidecars):
        if name in known:
            continue
        hint = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        more = f' (did you mean "{hint[0]}"?)' if hint else ""
        shown = name if len(name) <= 60 else f"{name[:60]}... ({len(name)} characters)"
        if request:
            out.append(str(InputError(f"no container named {shown!r} in any pod read{more}",
                                      path=f"sidecars[{i}]")))
        else:
            out.append(f"--sidecar {shown}: no container of that name in any pod read{more}")
    return out


def _advise_extras(
    got: Advices, config: Source | None, shared_pool_cpus: int | None, strategy: str,
    with_scenario: bool,
) -> Advices:
    """The cgroup changes and words beyond CPUs of each advice, and the
    replay scenario (``with_scenario``)."""
    cfg_doc = dict(config_document(None if config is None else _get(config)))
    if got.setting.overrides:
        cfg_doc = effective_config(cfg_doc, got.setting.overrides)
    cgroups = [cgroup_changes(a, got.machine, cfg_doc) for a in got.advices]
    beyond = [beyond_cpus(a, c) for a, c in zip(got.advices, cgroups, strict=True)]
    scenario: dict[str, Any] | None = None
    replay: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = []
    if with_scenario:
        scenario, index = proposal_scenario(got.advices, got.machine, cfg_doc)
        replay = [{**ix.as_dict(), "shape": None} for ix in index]
        # then each other node shape proposed, in a scenario of its own
        for i, a in enumerate(got.advices):
            shaped = shape_scenario(a, cfg_doc)
            if shaped is None:
                continue
            doc, ix = shaped
            shapes.append(doc)
            replay.append({**dataclasses.replace(ix, pod_index=i).as_dict(), "shape": len(shapes)})
    return dataclasses.replace(
        got, strategy=strategy, shared_pool="auto" if shared_pool_cpus is None else str(shared_pool_cpus),
        scenario=scenario, replay=replay, shape_scenarios=shapes, cgroups=cgroups, beyond=beyond,
    )


def whatif_request(
    req: Mapping[str, Any], advise_it: bool, note: Note | None = None
) -> dict[str, Any]:
    """The web API's ``/api/compare`` and ``/api/advise``: ``req`` holds
    ``pod`` (text) with optional ``node`` and ``kubeletConfig`` texts, or a
    ``scenario`` text and the ``step`` whose pod to take (its node and
    configuration come along); ``*Name`` keys name them in messages. No file
    any of them names is read. ``note`` receives what the commands note on
    standard error: the notes on configuration not modelled, and (compare)
    the objects skipped."""
    pod_name = request_name(req.get("podName"), "pod.yaml")
    node_name = request_name(req.get("nodeName"), "node.yaml")
    cfg_name = request_name(req.get("kubeletConfigName"), "kubelet-config.yaml")
    pod_text: str | None
    node_text: str | None
    cfg_text: str | None
    if req.get("scenario") is not None:
        sc_name = request_name(req.get("scenarioName"), "scenario.yaml")
        if req.get("step") is None:
            raise InputError("give the step whose pod to take (step)", file=sc_name)
        step = int(req["step"])
        pod_data, node_data, cfg_data = scenario_pod(TextInput(req["scenario"], sc_name), step)
        if cfg_data is not None:  # (the scenario's: v1beta1 when it names no type, as the contract has it)
            cfg_data = {"apiVersion": KUBELET_CONFIG_API_VERSION, "kind": KUBELET_CONFIG_KIND, **cfg_data}
        pod_text, node_text, cfg_text = (json_numbers.dumps(d, ensure_ascii=False)
                                         for d in (pod_data, node_data, cfg_data))
        pod_name = f"{sc_name} (steps[{step}].addPod)"
        node_name, cfg_name = f"{sc_name} (node)", f"{sc_name} (kubeletConfig)"
    else:
        pod_text, node_text, cfg_text = req.get("pod"), req.get("node"), req.get("kubeletConfig")
        if pod_text is None:
            raise InputError("give a Pod manifest (pod) or a scenario and a step")
    pod = TextInput(pod_text, pod_name)
    node = None if node_text is None else TextInput(node_text, node_name)
    config = None if cfg_text is None else TextInput(cfg_text, cfg_name)
    overrides = request_overrides(req.get("set"))
    if advise_it:
        # a request's one pod text that does not parse is a bad request (400),
        # not a line of the report
        load_pod_sources(pod.text, name=pod.name)
        return _advise_request(req, pod, node, config, overrides, note)
    got = compare(pod, node, config, note=note, overrides=overrides)
    if note is not None:
        for line in got.skipped:  # (as the command notes them)
            note(line)
    return got.document()


def _advise_request(
    req: Mapping[str, Any], pod: TextInput, node: TextInput | None, config: TextInput | None,
    overrides: tuple[Override, ...] = (), note: Note | None = None,
) -> dict[str, Any]:
    """``/api/advise``: ``sharedPoolCpus`` (auto or N), ``strategy``,
    ``sidecars`` (names); ``asScenario``: the replay scenario in the answer
    (``scenario``), and the scenario of each other node shape proposed
    (``shapeScenarios``: the ``replay[]`` entry with ``shape`` k is in the
    k-th, from 1)."""
    raw = req.get("sidecars") or []
    # (a list as given, each name as the command line takes it: its index is
    # the one a refusal names; a text is a comma-separated list)
    names = [n.strip() for n in raw.split(",")] if isinstance(raw, str) else list(raw)
    for i, n in enumerate(names):
        if not isinstance(n, str):
            raise wrong_type(f"sidecars[{i}]", "a string (a container name)", n)
    got = advise(
        [pod], node, config, shared_pool_cpus=parse_shared_pool(req.get("sharedPoolCpus")),
        strategy=str(req.get("strategy") or DEFAULT_STRATEGY), sidecars=names,
        with_scenario=bool(req.get("asScenario")), overrides=overrides, note=note, request=True,
    )
    if got.errors:  # a pod of the request that is not valid: a bad request, as on the command line
        raise InputErrors(got.errors)  # (a line each: the web answers them as a list too)
    doc = got.document()
    if req.get("asScenario"):
        doc["scenario"] = got.scenario
        doc["shapeScenarios"] = got.shape_scenarios
    return doc


def builtin_defaults() -> dict[str, Any]:
    """The node form and the kubelet configuration the commands use without
    ``--node`` / ``--kubelet-config`` (the web page starts its scenario
    builder from them): the node as a mapping, the configuration as its
    YAML text."""
    node = parse_document(DEFAULT_NODE_YAML, name="built-in node").data
    return {"node": node, "kubeletConfig": DEFAULT_KUBELET_CONFIG_YAML}
