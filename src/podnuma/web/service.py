"""What the web API computes: text in, the CLI's JSON documents out.

Each function takes the request's content as text (never a path), runs it
through the same code paths as the command line (the scenario loader, the
runner, the output document, explain, the topology picture, compare and
advise) and returns the document the matching command prints with
``-o json``. Errors are the CLI's: :class:`~podnuma.errors.InputError`
naming the file (the uploaded file's name) and the field path, or
:class:`~podnuma.errors.KubeletStartupError`.

No file is read on behalf of a request: a scenario that names a file
(``kubeletConfigFile``, ``state.*File``, ``node.machineInfoFile``,
``node.sysfs``) is refused at that field before anything is loaded; the
worker process that runs these functions also refuses any file access
(:mod:`podnuma.web.worker`).

The functions run inside a worker process, so every module they need is
imported here, at the top (the worker preloads this module).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import podnuma
from podnuma.analysis.advise import advice_document, advise_pod, node_config_document
from podnuma.analysis.compare import compare_pod, comparison_document
from podnuma.analysis.explain import explain_run, run_for_explain
from podnuma.api.kubeletconfig import KubeletConfig, load_kubelet_config
from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.container_manager import Node
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import wrong_type
from podnuma.inputs.discover import load_node
from podnuma.inputs.documents import Document, parse_document
from podnuma.inputs.pods import (
    DEFAULT_KUBELET_CONFIG_YAML,
    DEFAULT_NODE_YAML,
    PodSource,
    load_pod_sources,
)
from podnuma.inputs.scenario import Scenario, load_scenario_text
from podnuma.inputs.startup import StartupFailure, startup_failure
from podnuma.machine.topology import Machine
from podnuma.render.picture import Ownership, ownership_after, ownership_document, render_svg
from podnuma.scenario.document import build_document
from podnuma.scenario.run import RunResult, run_scenario

__all__ = [
    "FILE_FIELDS",
    "cli_message",
    "safe_name",
    "simulate",
    "explain",
    "topology_svg",
    "topology_owners",
    "compare",
    "advise",
    "whatif",
    "fleet_html",
]

#: The packages the service runs (the engine and the layers between it and
#: the web edge), imported whole when this module is: the worker processes
#: may not open files, so nothing may be left to import lazily in them.
PRELOAD = (
    "podnuma.api", "podnuma.machine", "podnuma.cm", "podnuma.cm.container_manager",
    "podnuma.cm.results", "podnuma.cm.podresources_view", "podnuma.scenario", "podnuma.render",
    "podnuma.units",
    "podnuma.analysis", "podnuma.inputs", "podnuma.golang", "podnuma.gostrconv",
    "podnuma.errors", "podnuma.fileio",
)


def _preload() -> None:
    for info in pkgutil.walk_packages(podnuma.__path__, "podnuma."):
        if info.name.startswith(PRELOAD):
            importlib.import_module(info.name)


_preload()

#: Fields of a scenario that name a file on the machine that reads it.
FILE_FIELDS = (
    ("kubeletConfigFile", "give the configuration inline (kubeletConfig)"),
    ("state.cpuManagerFile", "give the checkpoint inline (state.cpuManager)"),
    ("state.memoryManagerFile", "give the checkpoint inline (state.memoryManager)"),
    ("node.machineInfoFile", "give the machine inline (machineInfo, synthetic or cpus)"),
    ("node.sysfs", "give the machine inline (machineInfo, synthetic or cpus)"),
)

NO_FILES = "the server reads no files named in a request"
_NOWHERE = Path("/nonexistent")  # never read: every field that would is refused first


def safe_name(name: str | None, default: str) -> str:
    """The name used in messages for uploaded content: the last part of
    what the browser sent (never a path on the server), at most 100
    characters, or ``default``."""
    if not name:
        return default
    base = PurePosixPath(name.replace("\\", "/")).name.strip()
    base = "".join(ch for ch in base if ch.isprintable())[:100]
    return base or default


def cli_message(err: Exception) -> str:
    """The text after ``error:`` the command line prints for ``err``
    (the guard in :mod:`podnuma.cli.app`)."""
    if isinstance(err, InputError):
        return str(err)
    if isinstance(err, CheckpointError):
        return f"invalid checkpoint: {err}"
    if isinstance(err, KubeletStartupError):
        where = err.location() if isinstance(err, StartupFailure) else ""
        return f"kubelet would not start: {err}" + (f" ({where})" if where else "")
    return f"internal error: {type(err).__name__}: {err}"


def _refuse_files(doc: Document) -> None:
    data = doc.data
    if not isinstance(data, Mapping):
        return
    for path, instead in FILE_FIELDS:
        head, _, key = path.rpartition(".")
        holder: Any = data.get(head) if head else data
        if isinstance(holder, Mapping) and key in holder:
            raise doc.enrich(InputError(f"{NO_FILES}: {instead}", path=path))


def _load(text: str, name: str) -> Scenario:
    _refuse_files(parse_document(text, name=name))
    return load_scenario_text(text, name=name, base_dir=_NOWHERE)


def _run(text: str, name: str) -> tuple[Scenario, RunResult]:
    scenario = _load(text, name)
    return scenario, run_scenario(scenario)


def simulate(text: str, name: str, detail: bool = False) -> dict[str, Any]:
    """``podnuma simulate -o json`` (``detail``: ``--detail``)."""
    _, result = _run(text, name)
    return build_document(result, detail=detail)


def explain(
    text: str, name: str, step: int | None, pod: str | None, search: bool
) -> dict[str, Any]:
    """``podnuma explain -o json [--step N] [--pod REF] [--no-search]``."""
    scenario = _load(text, name)
    # one step or pod: the run keeps the node just before it for the search
    prepared = run_for_explain(
        scenario, step=step if search else None, pod=pod if search else None
    )
    doc = explain_run(
        scenario, prepared.run, step=step, pod=pod, search=search, snapshots=prepared.snapshots
    )
    if (step is not None or pod is not None) and not doc["admissions"]:
        what = []
        if step is not None:
            what.append(f"step {step}")
        if pod is not None:
            what.append(f"pod {pod}")
        raise InputError(f"no addPod step matches {' and '.join(what)}", file=name)
    return doc


def _ownership(text: str, name: str, step: int | None) -> tuple[RunResult, Ownership]:
    _, result = _run(text, name)
    return result, ownership_after(result, step)


def topology_svg(text: str, name: str, step: int | None) -> str:
    """``podnuma topology --format svg [--step N]``."""
    result, own = _ownership(text, name, step)
    return render_svg(result.machine, own)


def topology_owners(text: str, name: str, step: int | None) -> dict[str, Any]:
    """``podnuma topology -o json [--step N]`` (who owns which CPUs after
    the step), plus what the page draws with: each owner's colour
    (``colors``), the owner of each CPU (``cpuOwner``) and its NUMA node
    (``numaOfCpu``)."""
    result, own = _ownership(text, name, step)
    doc: dict[str, Any] = dict(ownership_document(result.machine, own))
    doc["colors"] = {o.name: o.color for o in own.owners}
    doc["cpuOwner"] = {str(cpu): own.owners[i].name for cpu, i in sorted(own.cpu_owner.items())}
    doc["numaOfCpu"] = {
        str(cpu): info.numa_node for cpu, info in sorted(result.machine.topology.cpu_info.items())
    }
    return doc


# --------------------------------------------------------------------------
# compare / advise


def _mapping_text(text: str, name: str, what: str) -> tuple[Mapping[str, Any], Document]:
    doc = parse_document(text, name=name)
    if doc.data is None:
        raise InputError(f"the {what} is empty", file=name)
    if not isinstance(doc.data, Mapping):
        raise wrong_type("", f"a mapping (the {what})", doc.data).in_file(name)
    return doc.data, doc


def _node(text: str | None, name: str) -> tuple[Machine, str]:
    if text is None:
        text, name = DEFAULT_NODE_YAML, "built-in node"
        origin = "built-in (2 sockets x 8 cores x 2 threads, 64Gi per NUMA node)"
    else:
        origin = name
    data, doc = _mapping_text(text, name, "node")
    prefix = ""
    if "node" in data and isinstance(data.get("node"), Mapping):
        data, prefix = data["node"], "node"
    for field, instead in FILE_FIELDS:
        if field.startswith("node.") and field[5:] in data:
            raise doc.enrich(InputError(f"{NO_FILES}: {instead}", path=field if prefix else field[5:]))
    try:
        return load_node(data, base_dir=_NOWHERE), origin
    except InputError as e:
        raise doc.enrich(e.at(prefix)) from None


def _config(text: str | None, name: str, machine: Machine) -> tuple[KubeletConfig, str]:
    if text is None:
        text, name = DEFAULT_KUBELET_CONFIG_YAML, "built-in kubelet configuration"
        origin = "built-in (static CPU, Static memory, restricted, scope pod, reserved CPUs 0,16)"
    else:
        origin = name
    data, doc = _mapping_text(text, name, "kubelet configuration")
    prefix = ""
    if data.get("kind") == "Scenario" or "kubeletConfig" in data:
        if "kubeletConfigFile" in data:
            raise doc.enrich(InputError(f"{NO_FILES}: {FILE_FIELDS[0][1]}", path="kubeletConfigFile"))
        raw = data.get("kubeletConfig") or {}
        if not isinstance(raw, Mapping):
            raise doc.enrich(wrong_type("kubeletConfig", "a mapping", raw))
        data, prefix = raw, "kubeletConfig"
    config: KubeletConfig | None = None
    try:
        config = load_kubelet_config(data)
        Node(machine, config)  # the node as configured must start
    except InputError as e:
        raise doc.enrich(e.at(prefix)) from None
    except StartupFailure:
        raise
    except KubeletStartupError as e:
        raise startup_failure(e, file=name, config=config, kubelet_config_file=name) from None
    return config, origin


def _prefix(src: PodSource, sources: list[PodSource]) -> str:
    if len(sources) > 1 or src.item is not None:
        return f"documents[{src.document}]" + ("" if src.item is None else f".items[{src.item}]")
    return ""


def _pods(
    pod_text: str, pod_name: str, node_text: str | None, node_name: str,
    config_text: str | None, config_name: str,
) -> tuple[list[PodSource], Machine, KubeletConfig, dict[str, Any]]:
    machine, node_from = _node(node_text, node_name)
    config, cfg_from = _config(config_text, config_name, machine)
    sources = load_pod_sources(pod_text, name=pod_name)
    return sources, machine, config, node_config_document(machine, config, node_from, cfg_from)


def compare(
    pod_text: str, pod_name: str, node_text: str | None = None, node_name: str = "node.yaml",
    config_text: str | None = None, config_name: str = "kubelet-config.yaml",
) -> dict[str, Any]:
    """``podnuma compare POD [--node N] [--kubelet-config C] -o json``."""
    sources, machine, config, doc = _pods(
        pod_text, pod_name, node_text, node_name, config_text, config_name
    )
    pods: list[dict[str, Any]] = []
    for src in sources:
        kind = src.data.get("kind") if isinstance(src.data, Mapping) else None
        if kind is not None and kind != "Pod":
            continue  # the CLI notes it on standard error
        try:
            pods.append(comparison_document(compare_pod(src.data, machine, config)))
        except InputError as e:
            if e.file is not None:
                raise
            raise InputError(e.message, path=e.path, file=pod_name).at(_prefix(src, sources)) from None
    if not pods:
        raise InputError("no Pod in the file", file=pod_name)
    doc["node"]["numaNodes"] = list(machine.numa_ids())
    doc["pods"] = pods
    return doc


def advise(
    pod_text: str, pod_name: str, node_text: str | None = None, node_name: str = "node.yaml",
    config_text: str | None = None, config_name: str = "kubelet-config.yaml",
    shared_pool_cpus: int | None = None,
) -> dict[str, Any]:
    """``podnuma advise FILE [--node N] [--kubelet-config C] -o json``:
    invalid pods are listed under ``errors`` with the CLI's messages."""
    sources, machine, config, doc = _pods(
        pod_text, pod_name, node_text, node_name, config_text, config_name
    )
    pods: list[dict[str, Any]] = []
    errors: list[str] = []
    if not sources:
        errors.append(str(InputError("no Pod in the file", file=pod_name)))
    for src in sources:
        advice = advise_pod(
            src.data, machine, config, where=src.where, shared_pool_cpus=shared_pool_cpus
        )
        if advice.error is not None:
            bad = advice.error
            errors.append(
                str(InputError(bad.message, path=bad.path, file=src.file).at(_prefix(src, sources)))
            )
            continue
        pods.append(advice_document(advice))
    doc["pods"] = pods
    doc["errors"] = errors
    return doc


def scenario_pod(text: str, name: str, step: int) -> tuple[str, str, str]:
    """The pod manifest of ``addPod`` step ``step``, the scenario's node and
    its kubelet configuration, as JSON texts for :func:`compare` and
    :func:`advise` (the scenario is validated first)."""
    scenario = _load(text, name)
    if not 0 <= step < len(scenario.steps) or scenario.steps[step].op != "addPod":
        adds = [s.index for s in scenario.steps if s.op == "addPod"]
        raise InputError(
            f"step {step} is not an addPod step (addPod steps: {', '.join(map(str, adds)) or 'none'})",
            file=name,
        )
    assert scenario.document is not None
    data = scenario.document.data
    pod = data["steps"][step]["addPod"]
    cfg = data.get("kubeletConfig") or {}
    return json.dumps(pod), json.dumps(data["node"]), json.dumps(cfg)


def whatif(req: Mapping[str, Any], advise_it: bool) -> dict[str, Any]:
    """``/api/compare`` and ``/api/advise``: ``req`` holds ``pod`` (text)
    with optional ``node`` and ``kubeletConfig`` texts, or a ``scenario``
    text and the ``step`` whose pod to take (its node and configuration
    come along); ``*Name`` keys name them in messages."""
    pod_name = safe_name(req.get("podName"), "pod.yaml")
    node_name = safe_name(req.get("nodeName"), "node.yaml")
    cfg_name = safe_name(req.get("kubeletConfigName"), "kubelet-config.yaml")
    pod_text: str | None
    node_text: str | None
    cfg_text: str | None
    if req.get("scenario") is not None:
        sc_name = safe_name(req.get("scenarioName"), "scenario.yaml")
        if req.get("step") is None:
            raise InputError("give the step whose pod to take (step)", file=sc_name)
        pod_text, node_text, cfg_text = scenario_pod(req["scenario"], sc_name, int(req["step"]))
        step = int(req["step"])
        pod_name = f"{sc_name} (steps[{step}].addPod)"
        node_name, cfg_name = f"{sc_name} (node)", f"{sc_name} (kubeletConfig)"
    else:
        pod_text, node_text, cfg_text = req.get("pod"), req.get("node"), req.get("kubeletConfig")
        if pod_text is None:
            raise InputError("give a Pod manifest (pod) or a scenario and a step")
    if advise_it:
        return advise(pod_text, pod_name, node_text, node_name, cfg_text, cfg_name,
                      shared_pool_cpus=req.get("sharedPoolCpus"))
    return compare(pod_text, pod_name, node_text, node_name, cfg_text, cfg_name)


# --------------------------------------------------------------------------
# fleet reports


def fleet_html(text: str, name: str) -> str:
    """A ``podnuma fleet analyze -o json`` report (a ``FleetReport``
    document) drawn by the fleet's own HTML renderer, charts included."""
    from podnuma.render.fleet_html import render_html  # needs plotly (the fleet extra)

    doc = parse_document(text, name=name, json_only=True)
    data = doc.data
    if not isinstance(data, Mapping):
        raise wrong_type("", "a mapping (a fleet report)", data).in_file(name)
    for key, want in (("apiVersion", "podnuma.io/v1"), ("kind", "FleetReport")):
        if data.get(key) != want:
            raise doc.enrich(InputError(f"must be {want!r}, got {data.get(key)!r}", path=key))
    try:
        return render_html(data, {})
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise InputError(
            f"not a complete fleet report ({type(e).__name__}: {e}): "
            "give the JSON that podnuma fleet analyze -o json wrote", file=name,
        ) from None
