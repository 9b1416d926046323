"""Questions about a scenario: run it, explain its admissions, draw its
machine; and the embedded demo.

A scenario arrives as a :class:`~podnuma.inputs.text.TextInput`; one whose
``base_dir`` is ``None`` (a web request) may name no file: the fields that
would (:data:`~podnuma.inputs.text.FILE_FIELDS`) are refused before
anything is loaded.
"""

from __future__ import annotations

import _thread
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from podnuma.cm.results import StepResult
from podnuma.errors import InputError, PodnumaError, step_out_of_range
from podnuma.inputs import text as _text
from podnuma.inputs.documents import parse_document
from podnuma.inputs.overrides import Override, effective_config
from podnuma.inputs.scenario import (
    Scenario,
    Step,
    load_scenario_document,
    load_scenario_text,
    open_scenario_stream,
    open_scenario_text,
)
from podnuma.inputs.scenario_stream import JSONStepReader, ScenarioFile
from podnuma.inputs.text import TextInput, refuse_files
from podnuma.scenario.document import (
    build_document,
    node_document,
    ordered_checkpoints,
    step_document,
)
from podnuma.scenario.run import RunResult, StreamedRun, run_scenario
from podnuma.service.messages import no_step_matches, not_modelled_notes

if TYPE_CHECKING:  # imported where used: simulate needs none of them
    from podnuma.analysis.nearest import SearchReport
    from podnuma.inputs.scenario_yaml import YAMLStepReader
    from podnuma.render.picture import Ownership

__all__ = [
    "DEMO_NAME",
    "POD_LEVEL_DEMO_NAME",
    "Demo",
    "Explanation",
    "Topology",
    "candidate_scenario",
    "candidate_scenario_at",
    "demo",
    "config_record",
    "demo_text",
    "effective_scenario",
    "explain",
    "load",
    "run",
    "scenario_pod",
    "simulate",
    "stream",
    "topology",
    "topology_owners",
]

DEMO_NAME = "demo.yaml"
POD_LEVEL_DEMO_NAME = "pod-level.yaml"


Note = Callable[[str], None]


def load(
    src: TextInput, *, note: Note | None = None, overrides: tuple[Override, ...] = ()
) -> Scenario:
    """The scenario, validated (field-path errors naming ``src.name``);
    ``note`` receives the notes on configuration not modelled; ``overrides``
    (``--set``) change its kubelet configuration."""
    if src.base_dir is None:  # parsed once: the fields naming files refused first
        scenario = _read_text(src, overrides)
    else:
        scenario = load_scenario_text(
            src.text, name=src.name, base_dir=src.base_dir, overrides=overrides
        )
    _notes(scenario, note)
    return scenario


#: Scenarios read from a text that may name no file (a web request's): the
#: text, its name and the overrides are all they depend on. The last few
#: are kept, so that a server's job process answers the questions a page
#: asks about one scenario (simulate, explain, the topology after each
#: step, each rejected step's explanation) from one reading. Only texts of
#: up to KEEP_TEXT characters are kept; a scenario is never changed once
#: read (its pods, machine and configuration are immutable or only read).
KEEP_SCENARIOS = 4
KEEP_TEXT = 1 << 16
_kept: OrderedDict[tuple[str, str, str], Scenario] = OrderedDict()
_kept_lock = _thread.allocate_lock()  # threading.Lock, without importing threading


def _read_text(src: TextInput, overrides: tuple[Override, ...]) -> Scenario:
    key = (src.text, src.name, repr(overrides)) if len(src.text) <= KEEP_TEXT else None
    if key is not None:
        with _kept_lock:
            found = _kept.get(key)
            if found is not None:
                _kept.move_to_end(key)
                return found
    doc = parse_document(src.text, name=src.name)
    refuse_files(doc)
    scenario = load_scenario_document(doc, base_dir=_text.NOWHERE, overrides=overrides)
    if key is not None and KEEP_SCENARIOS > 0:
        with _kept_lock:
            _kept[key] = scenario
            while len(_kept) > KEEP_SCENARIOS:
                _kept.popitem(last=False)
    return scenario


def _notes(scenario: Scenario, note: Note | None) -> None:
    if note is not None:
        for line in not_modelled_notes(scenario.config, scenario.name):
            note(line)


def stream(
    src: TextInput | ScenarioFile, *, note: Note | None = None, pod_resources: bool = True,
    overrides: tuple[Override, ...] = (),
) -> StreamedRun:
    """The scenario's run with its steps read, validated and played one at
    a time as :meth:`StreamedRun.results` is consumed (a file's steps are
    never held whole: a :class:`~podnuma.inputs.scenario_stream.ScenarioFile`,
    JSON or YAML, is read in one pass, a :class:`TextInput` as
    :func:`~podnuma.inputs.scenario.open_scenario_text` says);
    ``pod_resources``: whether each step's result carries the PodResources
    list after it. A bad step raises when it is reached. A
    :class:`ScenarioFile` that cannot be read in one pass raises
    :class:`~podnuma.inputs.scenario_stream.ReadWhole` (with its text: run
    that instead), possibly after some steps were played."""
    if isinstance(src, ScenarioFile):
        return _stream_file(src, note=note, pod_resources=pod_resources, overrides=overrides)
    steps: Iterator[Step]
    if src.base_dir is None:
        scenario = load(src, note=note, overrides=overrides)
        steps = iter(scenario.steps)
    else:
        scenario, steps = open_scenario_text(
            src.text, name=src.name, base_dir=src.base_dir, overrides=overrides
        )
        _notes(scenario, note)
    return StreamedRun(scenario, steps, step_pod_resources=pod_resources)


def _stream_file(
    src: ScenarioFile, *, note: Note | None, pod_resources: bool, overrides: tuple[Override, ...]
) -> StreamedRun:
    """A file's run read in one pass (JSON, or else YAML, as reading it
    whole tells them apart). Any error about it gives the file's refusal as
    a whole first (as reading it whole would); the notes on configuration
    not modelled are held until the input is known good (the end of the
    run) or an error that is not the file's refusal."""
    reader: JSONStepReader | YAMLStepReader
    if src.name.lower().endswith(".json"):
        reader = JSONStepReader(src)
    else:
        from podnuma.inputs import scenario_yaml  # (PyYAML: for YAML files only)

        reader = scenario_yaml.YAMLStepReader(src)
    notes: list[str] = []
    steps: _Steps | None = None
    try:
        scenario, stepping = open_scenario_stream(reader, overrides=overrides)
        if not isinstance(reader, JSONStepReader):  # a YAML file's (see _answer)
            stepping = steps = _Steps(stepping)
        _notes(scenario, notes.append)
        return _OnePassRun(scenario, stepping, steps, reader, notes, note, pod_resources)
    except PodnumaError:
        _answer(reader, steps, notes, note)
        raise


class _Steps:
    """The steps of a file read in one pass, and whether one of them was
    refused."""

    def __init__(self, steps: Iterator[Step]) -> None:
        self._steps = steps
        self.refused: PodnumaError | None = None

    def __iter__(self) -> _Steps:
        return self

    def __next__(self) -> Step:
        try:
            return next(self._steps)
        except PodnumaError as e:
            self.refused = e
            raise


def _answer(
    reader: JSONStepReader | YAMLStepReader, steps: _Steps | None, notes: list[str],
    note: Note | None,
) -> None:
    """Before an error about a file read in one pass is raised: the whole
    read's refusal of the file comes first. A YAML file read whole has
    every step validated before the node starts or any step is played (and
    before the notes): the first step refused is then the answer, without
    the notes (a JSON file read whole validates each step when it is
    reached, as one pass does)."""
    reader.check()
    if steps is not None:  # (given for a YAML file only)
        if steps.refused is None:
            try:
                for _ in steps:
                    pass
            except PodnumaError:
                notes.clear()
                raise
        else:
            # (a step read ahead of the one that failed may have been refused
            # already: that refusal is the answer)
            notes.clear()
            raise steps.refused
    _flush(notes, note)


def _flush(notes: list[str], note: Note | None) -> None:
    if note is not None:
        for line in notes:
            note(line)
    notes.clear()


class _OnePassRun(StreamedRun):
    """A :class:`StreamedRun` of a file read in one pass (see
    :func:`_stream_file`)."""

    def __init__(
        self, scenario: Scenario, steps: Iterator[Step], stepping: _Steps | None,
        reader: JSONStepReader | YAMLStepReader, notes: list[str], note: Note | None,
        pod_resources: bool,
    ) -> None:
        super().__init__(scenario, steps, step_pod_resources=pod_resources)
        self._reader, self._held, self._note, self._stepping = reader, notes, note, stepping

    def results(self) -> Iterator[StepResult]:
        try:
            yield from super().results()
        except PodnumaError:
            _answer(self._reader, self._stepping, self._held, self._note)
            raise
        _flush(self._held, self._note)


def run(
    src: TextInput, *, note: Note | None = None, overrides: tuple[Override, ...] = ()
) -> tuple[Scenario, RunResult]:
    """The scenario and its run through the engine."""
    scenario = load(src, note=note, overrides=overrides)
    return scenario, run_scenario(scenario)


def simulate(
    src: TextInput, *, detail: bool = False, overrides: tuple[Override, ...] = (),
    note: Note | None = None,
) -> dict[str, Any]:
    """``podnuma simulate -o json`` (``detail``: ``--detail``); with
    ``overrides``, the document records the configuration it ran with
    (:func:`config_record`); ``note`` receives the notes on configuration
    not modelled. Built as the steps are played: no checkpoint files are
    encoded, no PodResources lists built unless ``detail`` shows them."""
    played = stream(src, note=note, pod_resources=detail, overrides=overrides)
    steps = [step_document(s, detail=detail) for s in played.results()]
    doc = {
        "node": node_document(played.node),
        "steps": steps,
        "checkpoints": ordered_checkpoints(played.checkpoints()),
    }
    doc.update(config_record(played.scenario))
    return doc


#: the file fields of a scenario that a written copy makes absolute (so the
#: copy replays wherever it is written)
_PATH_FIELDS = (
    ("node", "sysfs"), ("node", "machineInfoFile"),
    ("state", "cpuManagerFile"), ("state", "memoryManagerFile"), ("state", "deviceManagerFile"),
)


def config_record(scenario: Scenario) -> dict[str, Any]:
    """What a result document adds when ``--set`` changed the scenario's
    configuration: ``{"kubeletConfig": {"set": [...], "effective": DOC}}``
    (the overrides as given, and the whole configuration document the run
    used); nothing without overrides (the scenario itself says it)."""
    if not scenario.overrides:
        return {}
    return {"kubeletConfig": {
        "set": [str(o) for o in scenario.overrides],
        "effective": effective_config(scenario.config_document, ()),
    }}


def effective_scenario(scenario: Scenario) -> dict[str, Any]:
    """The scenario as it ran: its own document with the kubelet
    configuration it ran with inline (``--set`` overrides applied, a
    ``kubeletConfigFile`` read in) and the files it names made absolute, so
    that ``podnuma simulate`` and the kubelet oracle replay it to the same
    figures wherever it is written."""
    assert scenario.document is not None
    data = scenario.document.data
    out: dict[str, Any] = dict(data)
    out.pop("kubeletConfigFile", None)
    doc = effective_config(scenario.config_document, ())
    if doc or "kubeletConfig" in data or "kubeletConfigFile" in data:
        out["kubeletConfig"] = doc
    # keep the contract's key order: kubeletConfig after node
    order = ["apiVersion", "kind", "node", "kubeletConfig", "state", "steps"]
    out = {k: out[k] for k in order if k in out}
    from pathlib import Path  # (a file's run does not import it: docs/speed.md)

    if scenario.base_dir != _text.NOWHERE:
        for head, key in _PATH_FIELDS:
            holder = out.get(head)
            if isinstance(holder, dict) and isinstance(holder.get(key), str):
                p = Path(holder[key])
                if not p.is_absolute():
                    out[head] = {**holder, key: str((scenario.base_dir / p).resolve())}
    return out


class Explanation:
    """``podnuma explain``: the decision trail (``document``, the ``-o
    json`` output) and the run it explains (for pictures); each rejection's
    search report (step index -> report) for :func:`candidate_scenario`."""

    scenario: Scenario
    run: RunResult
    document: dict[str, Any]
    reports: Mapping[int, SearchReport]

    def __init__(
        self,
        scenario: Scenario,
        run: RunResult,
        document: dict[str, Any],
        reports: Mapping[int, SearchReport] | None = None,
    ) -> None:
        self.scenario = scenario
        self.run = run
        self.document = document
        self.reports = dict() if reports is None else reports

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(scenario={self.scenario!r}, run={self.run!r}, document={self.document!r}, reports={self.reports!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Explanation) or other.__class__ is not self.__class__:
            return False
        return (self.scenario, self.run, self.document, self.reports) == (other.scenario, other.run, other.document, other.reports)

    def __hash__(self) -> int:
        return hash((self.scenario, self.run, self.document, self.reports))


def explain(
    src: TextInput, *, step: int | None = None, pod: str | None = None, search: bool = True,
    progress: Callable[[int, int], None] | None = None, time_budget: float | None = None,
    note: Note | None = None, overrides: tuple[Override, ...] = (),
) -> Explanation:
    """``podnuma explain [--step N] [--pod REF] [--no-search] [--set ...]``
    (with ``--set``, the document records the configuration it explains:
    :func:`config_record`). The doors call
    :func:`podnuma.service.explain.explain`: this, and what a kubelet
    restart does to each pod-level rewrite suggested."""
    from podnuma.analysis.explain import explain_run, run_for_explain
    from podnuma.analysis.restart import explain_restart

    scenario = load(src, note=note, overrides=overrides)
    if step is not None and not 0 <= step < len(scenario.steps):
        raise step_out_of_range(step, len(scenario.steps), src.name)
    # one step or pod: the run keeps the node just before it for the search
    prepared = run_for_explain(
        scenario, step=step if search else None, pod=pod if search else None
    )
    reports: dict[int, SearchReport] = {}
    doc = explain_run(
        scenario, prepared.run, step=step, pod=pod, search=search, progress=progress,
        snapshots=prepared.snapshots, time_budget=time_budget, reports=reports,
    )
    if (step is not None or pod is not None) and not doc["admissions"]:
        raise no_step_matches(step, pod, src.name)
    doc.update(config_record(scenario))
    restart = explain_restart(scenario, [a["podUID"] for a in doc["admissions"]])
    if restart is not None:
        doc["restart"] = restart
    return Explanation(scenario, prepared.run, doc, reports)


def candidate_scenario(explanation: Explanation, *, candidate: int | None = None,
                       step: int | None = None, pod: str | None = None) -> dict[str, Any]:
    """``podnuma explain --candidate N|nearest --as-scenario FILE``: the
    scenario that replays one change the search tried (``candidate``: its
    number in the search's ``candidates``, from 1; ``None``: the nearest
    admitted one) for the one rejected admission explained, built on the
    scenario as it ran (:func:`effective_scenario`: ``--set`` overrides
    included). ``podnuma simulate`` on it gives that change's admission
    and, after it, the later steps the search compared its side effects on
    (see :func:`candidate_scenario_at`, which also says where the change
    is). ``step`` / ``pod``: what the explanation was asked for (``--step``,
    ``--pod``), for the words when none of it was rejected: there is
    nothing to change."""
    return candidate_scenario_at(explanation, candidate=candidate, step=step, pod=pod)[0]


def candidate_scenario_at(explanation: Explanation, *, candidate: int | None = None,
                          step: int | None = None, pod: str | None = None) -> tuple[dict[str, Any], int]:
    """:func:`candidate_scenario`, and the index of the step of the changed
    pod in it (a removal inserted before it, a step that no longer applies
    left out, move it from the explained step's index)."""
    name = explanation.scenario.name
    admissions = explanation.document["admissions"]
    rejected = [a for a in admissions if a["admitted"] is False]
    if not rejected:
        if step is not None:
            got = [a for a in admissions if a.get("step") == step]
            what = f"step {step}" + (f" ({got[0].get('pod')})" if got else "") + " was admitted"
        elif pod is not None:
            what = f"pod {pod} was admitted" + ("" if len(admissions) == 1 else " each time")
        else:
            what = "no admission was rejected"
        raise InputError(f"{what}: nothing to change (--candidate writes a change the search tried for a "
                         "rejected admission)", file=name)
    if len(rejected) != 1:
        steps = ", ".join(str(a["step"]) for a in rejected)
        choose = (f"pod {pod} was rejected at steps {steps}: choose one with --step"
                  if pod is not None and step is None else
                  f"{len(rejected)} are explained (steps {steps}): choose one with --step or --pod")
        raise InputError(f"--as-scenario writes the change tried for one rejected admission; {choose}",
                         file=name)
    step = rejected[0]["step"]
    report = explanation.reports.get(step)
    if report is None:
        raise InputError("--as-scenario needs the search (drop --no-search)", file=name)
    tried = report.tried_outcomes
    if candidate is None:
        outcome = report.nearest
        if outcome is None:
            raise InputError(
                f"no change tried admits the pod of step {step}: pick one with --candidate N "
                f"(1-{len(tried)})" if tried else f"no change was tried for step {step}",
                file=name,
            )
    elif 1 <= candidate <= len(tried):
        outcome = tried[candidate - 1]
    else:
        raise InputError(
            f"--candidate {candidate}: the search of step {step} tried {len(tried)} change(s)", file=name
        )
    from podnuma.analysis.nearest import candidate_scenario as nearest_scenario

    scenario = explanation.scenario
    try:
        doc = nearest_scenario(
            scenario, step, outcome.variation, base=effective_scenario(scenario),
            through=outcome.through, gone=outcome.gone,
        )
    except ValueError as e:
        raise InputError(str(e), file=name) from None
    at = step - sum(1 for i in outcome.gone if i < step) + (outcome.variation.kind == "removePod")
    return doc, at


class Topology:
    """``podnuma topology``: the run and who owns each CPU after the step."""

    scenario: Scenario
    run: RunResult
    ownership: Ownership

    def __init__(self, scenario: Scenario, run: RunResult, ownership: Ownership) -> None:
        self.scenario = scenario
        self.run = run
        self.ownership = ownership

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(scenario={self.scenario!r}, run={self.run!r}, ownership={self.ownership!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Topology) or other.__class__ is not self.__class__:
            return False
        return (self.scenario, self.run, self.ownership) == (other.scenario, other.run, other.ownership)

    def __hash__(self) -> int:
        return hash((self.scenario, self.run, self.ownership))

    def document(self) -> dict[str, object]:
        """``podnuma topology -o json``."""
        from podnuma.render.picture import ownership_document

        return ownership_document(self.run.machine, self.ownership)


def topology(
    src: TextInput, *, step: int | None = None, note: Note | None = None,
    overrides: tuple[Override, ...] = (),
) -> Topology:
    """The machine after ``step`` (default: the last), each CPU's owner."""
    from podnuma.render.picture import ownership_after

    scenario, result = run(src, note=note, overrides=overrides)
    if step is not None and not 0 <= step < len(result.steps):
        raise step_out_of_range(step, len(result.steps), src.name)
    return Topology(scenario, result, ownership_after(result, step))


def topology_owners(
    src: TextInput, *, step: int | None = None, overrides: tuple[Override, ...] = (),
    note: Note | None = None,
) -> dict[str, Any]:
    """``podnuma topology -o json`` plus what the web page draws with: each
    owner's colour (``colors``), the owner of each CPU (``cpuOwner``) and
    its NUMA node (``numaOfCpu``); ``note`` receives the notes on
    configuration not modelled."""
    topo = topology(src, step=step, note=note, overrides=overrides)
    own, machine = topo.ownership, topo.run.machine
    doc: dict[str, Any] = dict(topo.document())
    doc["colors"] = {o.name: o.color for o in own.owners}
    doc["cpuOwner"] = {str(cpu): own.owners[i].name for cpu, i in sorted(own.cpu_owner.items())}
    doc["numaOfCpu"] = {
        str(cpu): info.numa_node for cpu, info in sorted(machine.topology.cpu_info.items())
    }
    return doc


def demo_text(name: str = DEMO_NAME) -> str:
    """An embedded demo scenario."""
    from importlib import resources  # the package's data: only for the demo

    return (resources.files("podnuma.scenario") / "demo" / name).read_text(encoding="utf-8")


class Demo:
    """``podnuma demo``: the demo's run, and the training pod per-container
    and with pod-level resources."""

    run: RunResult
    pod_level: RunResult

    def __init__(self, run: RunResult, pod_level: RunResult) -> None:
        self.run = run
        self.pod_level = pod_level

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(run={self.run!r}, pod_level={self.pod_level!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Demo) or other.__class__ is not self.__class__:
            return False
        return (self.run, self.pod_level) == (other.run, other.pod_level)

    def __hash__(self) -> int:
        return hash((self.run, self.pod_level))

    def document(self) -> dict[str, Any]:
        """``podnuma demo -o json``."""
        doc = build_document(self.run)
        doc["podLevelDemo"] = {
            "perContainer": step_document(self.pod_level.steps[0]),
            "podLevel": step_document(self.pod_level.steps[2]),
        }
        return doc


def demo() -> Demo:
    """Run the embedded demo scenarios."""
    from pathlib import Path

    runs = [
        run(TextInput(demo_text(name), name, Path.cwd()))[1]
        for name in (DEMO_NAME, POD_LEVEL_DEMO_NAME)
    ]
    return Demo(runs[0], runs[1])


def scenario_pod(src: TextInput, step: int) -> tuple[Any, Any, Any]:
    """The pod manifest of ``addPod`` step ``step``, the scenario's node and
    its kubelet configuration, as data (the scenario is validated first)."""
    scenario = load(src)
    if not 0 <= step < len(scenario.steps) or scenario.steps[step].op != "addPod":
        adds = [s.index for s in scenario.steps if s.op == "addPod"]
        raise InputError(
            f"step {step} is not an addPod step (addPod steps: {', '.join(map(str, adds)) or 'none'})",
            file=src.name,
        )
    assert scenario.document is not None
    data = scenario.document.data
    return data["steps"][step]["addPod"], data["node"], data.get("kubeletConfig") or {}
