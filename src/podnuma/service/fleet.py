"""``podnuma fleet analyze`` and ``fleet generate``; and a fleet report
drawn as HTML.

Fleet modules (the Kubernetes client, Dask, plotly) are imported by the
function that needs them, so the other questions never load them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podnuma.errors import InputError
from podnuma.fieldkit import type_name, wrong_type
from podnuma.fleet.inputs import FleetInputs
from podnuma.fleet.report import BASELINE
from podnuma.fleet.whatif import WhatIf, parse_what_if
from podnuma.inputs.documents import parse_document, parse_documents
from podnuma.inputs.limits import FLEET_LIMITS
from podnuma.inputs.overrides import Override, apply_overrides
from podnuma.inputs.pathcheck import check_directory, check_empty
from podnuma.inputs.text import NO_FILES, TextInput

if TYPE_CHECKING:
    from podnuma.fleet.replay import DensityScenario

__all__ = [
    "analyze",
    "analyze_files",
    "check_dump",
    "dump_size_problem",
    "MAX_DUMP_DIRS",
    "MAX_DUMP_FILES",
    "executor",
    "Generated",
    "generate",
    "load",
    "prepare_scenario_dir",
    "refuse_stopped_by_set",
    "scenario_dir_unused",
    "staged_directory",
    "renamed",
    "renamed_error",
    "report_html",
    "report_html_of_document",
    "what_ifs",
    "write_scenarios",
    "with_overrides",
]

Progress = Callable[[int], None]


def what_ifs(values: Sequence[str], *, workers: int | None, dask_target: str | None) -> list[WhatIf]:
    """The ``--what-if`` values parsed, checked with the executor options."""
    from podnuma.fleet.execute import parse_dask_target

    if workers is not None and dask_target is not None:
        raise InputError("give --workers or --dask, not both")
    parsed = [parse_what_if(w) for w in values]
    if len({w.label for w in parsed}) != len(parsed):
        raise InputError("--what-if: the same what-if is given twice")
    if dask_target is not None:
        try:
            parse_dask_target(dask_target)
        except ValueError as e:
            raise InputError(str(e)) from None
    return parsed


def executor(*, workers: int | None = None, dask_target: str | None = None) -> Any:
    """The executor the options choose (a context manager): give it to
    :func:`load` and :func:`analyze` so that both the reading of the dumps
    and the replay run there."""
    from podnuma.fleet.execute import open_executor

    return open_executor(workers=workers, dask_target=dask_target)


def load(
    paths: Sequence[Path], *, kubeconfig: str | None = None, context: str | None = None,
    executor: Any = None, bases: Mapping[str, str] | None = None,
) -> FleetInputs:
    """The cluster: dumps (files or directories), or read live through
    ``kubeconfig`` (a file, a pipe, or ``-``: standard input; ``paths``
    then add node groups and machine files).
    With ``executor`` the dumps are read where it runs. ``bases``: the
    directory the relative references of a file resolve against, by path,
    when not its own (standard input's copy: the working directory)."""
    from podnuma.fleet.inputs import load_fleet

    if kubeconfig is not None:
        from podnuma.fleet.live import load_live

        return load_live(kubeconfig, context=context, extra=list(paths), bases=bases)
    if not paths:
        raise InputError("give the dumps (files or directories) or --kubeconfig")
    if executor is None:
        return nothing_unreadable_alone(load_fleet(paths, bases=bases))
    return nothing_unreadable_alone(load_fleet(paths, map_files=executor.map, parts=executor.parts,
                                               runners=executor.runners, bases=bases))


def nothing_unreadable_alone(fleet: FleetInputs) -> FleetInputs:
    """The inputs, unless they hold no node and a file that could not be
    read: then there is no report to give, only that file's error
    (:class:`InputError`, exit 2 / HTTP 400)."""
    if fleet.nodes:
        return fleet
    for issue in fleet.issues:
        if issue.severity == "error" and issue.file is not None:
            raise InputError(issue.message, file=issue.file, path=issue.path)
    return fleet


def with_overrides(fleet: FleetInputs, overrides: Sequence[Override]) -> FleetInputs:
    """The fleet with ``--set`` applied on top of each node's own kubelet
    configuration (its configz, its group's, or the kubelet's defaults)."""
    if not overrides:
        return fleet
    said = " with --set " + ", ".join(str(o) for o in overrides)
    nodes = [
        dataclasses.replace(n, config=apply_overrides(n.config, overrides),
                            config_source=n.config_source + said)
        for n in fleet.nodes
    ]
    return dataclasses.replace(fleet, nodes=nodes)


def _gate_changes(report: dict[str, Any], what_ifs: Sequence[WhatIf]) -> None:
    """The ``gates`` what-ifs: the pods that change, fleet-wide
    (``changedPods``: label -> rows with their node), and their count in
    the what-if's summary."""
    changed: dict[str, list[dict[str, Any]]] = {}
    for w in what_ifs:
        if not w.gates:
            continue
        rows = [
            {"node": n["name"], **c}
            for n in report["nodes"]
            for c in (n.get("whatIfs", {}).get(w.label, {}).get("changedPods") or [])
        ]
        changed[w.label] = rows
        if w.label in report["summary"]:
            report["summary"][w.label]["changedPods"] = len(rows)
    if changed:
        report["changedPods"] = changed


def for_one_run() -> None:
    """This process runs one fleet analysis and ends (the ``podnuma``
    command's own process): the pods it keeps for its replay are left out
    of the garbage collector's passes (:func:`~podnuma.fleet.podscan.freeze_kept_pods`)."""
    from podnuma.fleet.podscan import freeze_kept_pods

    freeze_kept_pods()


def analyze(
    fleet: FleetInputs, what_ifs: Sequence[WhatIf], *, workers: int | None = None,
    dask_target: str | None = None, progress: Progress | None = None,
    overrides: Sequence[Override] = (), executor: Any = None,
) -> dict[str, Any]:
    """Every node replayed as it runs and under each what-if, on
    ``executor`` or the one the options choose: the ``FleetReport``
    document. With ``overrides`` (``--set``), every run uses each node's
    configuration with them applied, and the report lists them (``set``)."""
    from podnuma.fleet.execute import run_fleet
    from podnuma.fleet.report import fleet_report

    fleet = with_overrides(fleet, overrides)
    results = run_fleet(fleet.nodes, what_ifs, workers=workers, dask_target=dask_target,
                        progress=progress, executor=executor)
    report = fleet_report(fleet, results, [w.label for w in what_ifs])
    _gate_changes(report, what_ifs)
    if overrides:
        report["set"] = [str(o) for o in overrides]
    return report


_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def check_scenario_names(fleet: FleetInputs, directory: Path) -> None:
    """``InputError`` when a node's name cannot name a scenario file: a
    name from the dump becomes a file name, so a plain DNS subdomain only
    (no ``/``, no ``..``)."""
    for spec in fleet.nodes:
        if not _NODE_NAME.match(spec.name):
            raise InputError(f"node {spec.name[:100]!r}: not a DNS subdomain name, no scenario file "
                             "can be named after it", file=str(directory))


def scenario_file_names(node: str, what_ifs: Sequence[WhatIf]) -> dict[str, str]:
    """File name of each run's scenario: ``NODE.yaml`` as running,
    ``NODE.whatif-N.yaml`` for the N-th what-if (as the report numbers them),
    and ``NODE.whatif-N.restart.yaml`` for the kubelet restart after it
    (a ``restart`` what-if; keyed ``LABEL (restart)``). A run's density
    figures go beside its file (:func:`density_file_name`)."""
    names = {"as running": f"{node}.yaml"}
    for i, w in enumerate(what_ifs, 1):
        names[w.label] = f"{node}.whatif-{i}.yaml"
        if w.restart:
            names[f"{w.label} (restart)"] = f"{node}.whatif-{i}.restart.yaml"
    return names


def density_file_name(run_file: str, index: int) -> str:
    """The file replaying the ``index``-th (from 1) density figure of the
    run whose scenario is ``run_file``: ``NODE.density-K.yaml`` as running,
    ``NODE.whatif-N.density-K.yaml`` under the N-th what-if (K: the
    workload's place in the run's ``density``, workloads in name order)."""
    return f"{run_file.removesuffix('.yaml')}.density-{index}.yaml"


def _density_comment(d: DensityScenario) -> str:
    """The first line of a density scenario: which figure it replays (names
    escaped: one line whatever a dump holds)."""
    def plain(text: str) -> str:
        return json.dumps(text)[1:-1]

    end = (f"then the first refused ({plain(d.stop)}) at step {d.copies}" if d.stop is not None else
           "the count stopped there (its cap)" if d.capped else "none refused")
    return (f"# density of {plain(d.workload)} ({plain(d.kind)}), {plain(d.run)}: {d.copies} copies fit on an "
            f"empty node, {end}\n")


@contextlib.contextmanager
def staged_directory(directory: Path, created: Sequence[Path] = ()) -> Iterator[Path]:
    """Write the files of the empty (or missing) ``directory`` all or none:
    yields a staging directory made inside it (so on its file system, a
    mount point too), whose entries are renamed into ``directory`` once
    everything was written. When anything fails (a full disk, Ctrl-C),
    what was written is removed, and so is ``directory`` itself when it,
    or a parent in ``created`` (the directories the caller made for it,
    deepest first), was made for this and is empty again: a re-run finds
    nothing left behind."""
    import shutil
    import tempfile

    made = list(created)
    if not directory.exists():
        missing = [directory, *(p for p in directory.parents if not p.exists())]
        directory.mkdir(parents=True)
        made = [*missing, *made]
    moved: list[Path] = []
    stage: Path | None = None
    try:
        stage = Path(tempfile.mkdtemp(prefix=".podnuma-staging-", dir=directory))
        yield stage
        for entry in sorted(os.listdir(stage)):
            target = directory / entry
            if os.path.lexists(target):  # (another writer meanwhile: nothing of it replaced)
                raise InputError("cannot write: the directory was written to meanwhile", file=str(target))
            os.rename(stage / entry, target)
            moved.append(target)
        os.rmdir(stage)
    except BaseException:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        for target in moved:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    target.unlink()
        for d in made:
            with contextlib.suppress(OSError):  # (only when empty)
                d.rmdir()
        raise


def scenario_dir_unused(directory: Path) -> None:
    """``InputError`` (naming it) when ``directory`` holds anything: the
    scenarios go into a new or empty directory (as ``fleet generate
    --output-dir``), so that none left by an earlier run stays beside them
    matching no figure of the new report. Checked before any work, in the
    one wording of a directory option (:mod:`podnuma.inputs.pathcheck`)."""
    check_empty(directory, "--as-scenario", "the scenarios go into a new or empty directory")


def prepare_scenario_dir(fleet: FleetInputs, what_ifs: Sequence[WhatIf], directory: Path) -> None:
    """Make ``directory`` ready for :func:`write_scenarios`, or
    ``InputError`` (naming it, or the file in the way) for what would stop
    the writing there: a node name that cannot name a file, a directory
    that cannot be created (a missing or read-only parent, a file in the
    way), one that cannot be written into, or a directory where a scenario
    file goes. Run before any output, so that the writing after it fails
    only for what cannot be foreseen (a full disk)."""
    import os
    import stat
    import tempfile

    check_scenario_names(fleet, directory)
    check_directory(directory, "--as-scenario", must_exist=False)  # (changed since the options were read)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--as-scenario: cannot create: {e.strerror or e}", file=str(directory)) from None
    try:  # (access() answers yes to root on a read-only file system: a file made and removed)
        fd, probe = tempfile.mkstemp(prefix=".podnuma-probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"--as-scenario: cannot write: {e.strerror or e}",
                         file=str(directory)) from None
    for spec in fleet.nodes:
        for name in scenario_file_names(spec.name, what_ifs).values():
            target = directory / name
            try:
                in_the_way = stat.S_ISDIR(os.lstat(target).st_mode)
            except OSError:
                continue  # (nothing there)
            if in_the_way:
                raise InputError("cannot write: a directory is in the way", file=str(target))


def write_scenarios(fleet: FleetInputs, what_ifs: Sequence[WhatIf], directory: Path,
                    created: Sequence[Path] = ()) -> int:
    """Write every replayable node's runs as scenarios into ``directory``
    (created; files mode 0644): ``podnuma simulate`` and the kubelet oracle
    replay each to the figures of the report (read after the final
    ``reconcile`` step; a restart scenario to the what-if's ``restart``
    figures). All or none (:func:`staged_directory`): on a failure (a full
    disk) no scenario is left behind, nor ``directory`` when it is among
    ``created`` (the directories made for it, deepest first). Returns the
    number of files."""
    from podnuma.fileio import atomic_write
    from podnuma.fleet.replay import node_scenarios_with_density
    from podnuma.fleet.restart import restart_scenario_of
    from podnuma.render.yaml_text import dump_safe_yaml

    prepare_scenario_dir(fleet, what_ifs, directory)
    written = 0
    try:
        with staged_directory(directory, created) as stage:
            for spec in fleet.nodes:
                runs, densities = node_scenarios_with_density(spec, what_ifs)
                for w in what_ifs:
                    if w.restart and w.label in runs:
                        restarted = restart_scenario_of(runs[w.label], spec.name)
                        if restarted is not None:
                            runs[f"{w.label} (restart)"] = restarted
                names = scenario_file_names(spec.name, what_ifs)
                files = [(names[label], dump_safe_yaml(doc)) for label, doc in runs.items()]
                files += [(density_file_name(names[d.run], d.index), _density_comment(d) + dump_safe_yaml(d.scenario))
                          for d in densities]
                for name, text in files:
                    target = directory / name
                    try:
                        atomic_write(stage / name, text.encode("utf-8"), mode=0o644)
                    except OSError as e:
                        raise InputError(f"cannot write: {e.strerror or e}", file=str(target)) from None
                    written += 1
    except OSError as e:  # (the staging directory, or a rename into place)
        raise InputError(f"cannot write: {e.strerror or e}", file=str(directory)) from None
    return written


def report_html(fleet: FleetInputs | None, report: Mapping[str, Any]) -> str:
    """The report as one HTML page (charts, sortable node table) with the
    drill-down pictures of its nodes when ``fleet`` (the inputs it was made
    from) is given."""
    from podnuma.render.fleet_html import render_html  # needs plotly (the fleet extra)

    if fleet is None:
        return render_html(report, {})
    from podnuma.fleet.pictures import drill_down

    pics, drill = drill_down(fleet, report)
    return render_html(report, pics, drill=drill)


def report_html_of_document(src: TextInput) -> str:
    """A ``FleetReport`` document (``fleet analyze -o json``) drawn as
    :func:`report_html` draws it; no inputs, so no pictures."""
    from podnuma.render.fleet_html import render_html  # needs plotly (the fleet extra)

    doc = parse_document(src.text, name=src.name, json_only=True)
    data = doc.data
    if not isinstance(data, Mapping):
        raise wrong_type("", "a mapping (a fleet report)", data).in_file(src.name)
    for key, want in (("apiVersion", "podnuma.io/v1"), ("kind", "FleetReport")):
        if data.get(key) != want:
            raise doc.enrich(InputError(f"must be {json.dumps(want)}, got {_json_value(data.get(key))}",
                                        path=key))
    try:
        _check_report(data)
    except InputError as e:
        raise doc.enrich(e) from None
    try:
        return render_html(data, {})
    except (KeyError, TypeError, AttributeError, ValueError, IndexError):
        # (a part deeper than _check_report looks at): no Python words
        raise InputError(
            "not a complete fleet report (a field the drawing reads is missing or of another type): "
            "give the JSON that podnuma fleet analyze -o json wrote", file=src.name,
        ) from None


def _json_value(value: object) -> str:
    """A document's value as a message shows it: a scalar as JSON writes
    it (``null``, ``"Scenario"``; shortened), anything else by its kind."""
    if value is None or isinstance(value, bool | int | float | str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else f"{text[:60]}... ({len(text)} characters)"
    return type_name(value)


def _check_report(report: Mapping[str, Any]) -> None:
    """The shape of a ``FleetReport`` document as its drawing reads it
    (:func:`~podnuma.render.fleet_html.render_html`): each part it needs
    present and of its type, named by its field path in the one wording
    (``nodes[2]: must be a mapping, got a list``)."""

    def need(path: str, value: object, want: str, kind: type | tuple[type, ...]) -> Any:
        if not isinstance(value, kind):
            if value is None:
                raise InputError(f"required field is missing (expected {want})", path=path)
            raise wrong_type(path, want, value)
        return value

    what_ifs = need("whatIfs", report.get("whatIfs"), "a list of what-if labels", list)
    for i, label in enumerate(what_ifs):
        need(f"whatIfs[{i}]", label, "a string", str)
    fleet = need("fleet", report.get("fleet"), "a mapping", Mapping)
    need("fleet.nodeStatus", fleet.get("nodeStatus"), "a mapping", Mapping)
    for key in ("nodes", "podsReplayed"):
        need(f"fleet.{key}", fleet.get(key), "an integer", int)
    summary = need("summary", report.get("summary"), "a mapping", Mapping)
    for label in (BASELINE, *what_ifs):
        need(f"summary[{label}]", summary.get(label), "a mapping", Mapping)
    need("workloads", report.get("workloads"), "a mapping", Mapping)
    for name, workload in report["workloads"].items():
        need(f"workloads[{name}]", workload, "a mapping", Mapping)
    need("rejected", report.get("rejected"), "a mapping", Mapping)
    for label, rows in report["rejected"].items():
        for i, row in enumerate(need(f"rejected[{label}]", rows, "a list", list)):
            need(f"rejected[{label}][{i}]", row, "a mapping", Mapping)
    for i, issue in enumerate(need("issues", report.get("issues"), "a list", list)):
        need(f"issues[{i}]", issue, "a mapping", Mapping)
        need(f"issues[{i}].severity", issue.get("severity"), "a string", str)
    for i, node in enumerate(need("nodes", report.get("nodes"), "a list", list)):
        need(f"nodes[{i}]", node, "a mapping", Mapping)
        need(f"nodes[{i}].name", node.get("name"), "a string", str)
        need(f"nodes[{i}].status", node.get("status"), "a string", str)
        for key in ("baseline", "whatIfs", "config", "machine"):
            if node.get(key) is not None:
                need(f"nodes[{i}].{key}", node[key], "a mapping", Mapping)
        if node.get("issues") is not None:
            need(f"nodes[{i}].issues", node["issues"], "a list", list)


@dataclasses.dataclass(frozen=True)
class Generated:
    """What :func:`generate` wrote: the directory, the counts and the files
    (relative to it, sorted)."""

    directory: Path
    nodes: int
    pods: int
    files: tuple[str, ...]

    def line(self) -> str:
        """The sentence for people (``fleet generate``'s note)."""
        return f"wrote {self.nodes} nodes, {self.pods} pods in {len(self.files)} files to {self.directory}"

    def document(self) -> dict[str, Any]:
        """The document of ``fleet generate -o json|yaml``."""
        return {"directory": str(self.directory),
                "counts": {"nodes": self.nodes, "pods": self.pods, "files": len(self.files)},
                "files": list(self.files)}


def generate(out: Path, *, nodes: int, pods_per_node: int, seed: int = 0,
             progress: Progress | None = None, nodes_per_pods_file: int | None = None) -> Generated:
    """Write a synthetic, realistic fleet as the dumps a real cluster gives
    into the empty directory ``out`` (the pods of ``nodes_per_pods_file``
    nodes a dump, default 100; 0: all in one); what was written. All or
    none (:func:`staged_directory`): a failure (a full disk) leaves nothing
    behind, so that a re-run does not find the directory not empty."""
    from podnuma.fleet.generate import generate_fleet

    # (/dev/null, a pipe, a file, '-': docs/cli.md: nothing is ever written to a file named '-')
    check_empty(out, "--output-dir", "the fleet goes into a new or empty directory: all or nothing is written")
    try:
        with staged_directory(out) as stage:
            g = generate_fleet(stage, nodes=nodes, pods_per_node=pods_per_node, seed=seed, progress=progress,
                               **({} if nodes_per_pods_file is None else
                                  {"nodes_per_pods_file": nodes_per_pods_file}))
    except OSError as e:  # (a directory that cannot be made, a file in the way, a full disk...)
        failed = out if e.filename is None else _outside(Path(e.filename), stage_of=out)
        raise InputError(f"--output-dir: cannot write: {e.strerror or e}", file=str(failed)) from None
    # (the directory was empty: every file in it was written now)
    files = tuple(sorted((Path(top) / name).relative_to(out).as_posix()
                         for top, _, names in os.walk(out) for name in names))
    if len(files) != g.files:  # pragma: no cover - another writer in the directory meanwhile
        raise InputError(f"{out}: {len(files)} files in the output directory, {g.files} written: "
                         "was it written to meanwhile?")
    return Generated(out, g.nodes, g.pods, files)


def _outside(path: Path, *, stage_of: Path) -> Path:
    """``path`` as it would be once in place: a file of the staging
    directory of :func:`staged_directory` inside ``stage_of`` named as in
    ``stage_of`` (messages name the files the user asked for)."""
    try:
        rel = path.relative_to(stage_of)
    except ValueError:
        return path
    parts = rel.parts
    if parts and parts[0].startswith(".podnuma-staging-"):
        return stage_of.joinpath(*parts[1:])
    return path


#: Fields of a FleetConfig node group that name a file, and what to give instead.
GROUP_FILE_FIELDS = (
    ("kubeletConfigFile", "give the configuration inline (kubeletConfig)"),
    ("nodeFile", "give the node form inline (node)"),
    ("node.machineInfoFile", "give the machine inline (machineInfo, synthetic or cpus)"),
    ("node.sysfs", "give the machine inline (machineInfo, synthetic or cpus)"),
)
#: The bounds on the file names of a dump given as texts (``/api/fleet/analyze``),
#: so that every name can be laid out beneath a temporary directory on any
#: file system: a part (directory or file name) of at most
#: 255 bytes (``NAME_MAX``), a whole name of at most 1024 bytes and 16 parts
#: (a dump's names are ``nodes.json``, ``configz/NODE.json`` and the like).
MAX_DUMP_PART = 255
MAX_DUMP_NAME = 1024
MAX_DUMP_DEPTH = 16
#: The most files, and distinct directories, a dump given as texts may lay
#: out: writing a file or a directory costs the server its creation and its
#: removal (a fraction of a millisecond to a millisecond each), so the
#: caps bound that work. A real dump is a few files per node group
#: (``nodes.json``, ``pods.json``, a ``FleetConfig``, NodeResourceTopology
#: objects) and at most a configz file per node: a few hundred files in a
#: directory or two.
MAX_DUMP_FILES = 4096
MAX_DUMP_DIRS = 512
#: a plain part of a dump's file name (matched whole: no line break at the end)
_DUMP_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DUMP_SUFFIXES = (".json", ".yaml", ".yml")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: the most characters of a file name an error message shows
_SHOWN = 100


def shown_name(name: str, limit: int = _SHOWN) -> str:
    """A request's file name as an error message shows it: characters that
    do not print (a line break, a lone surrogate, which has no UTF-8) as
    Python escapes them, and a name longer than ``limit`` characters cut
    short, with its length."""
    head = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        for ch in name[: limit + 1]
    )
    if len(name) <= limit and len(head) <= limit:
        return head
    return f"{head[: limit - 30]}... ({len(name)} characters)"


def _dump_dirs(names: Iterable[str]) -> set[str]:
    """The distinct directories the names lay out (``a/b/c.json``: ``a``
    and ``a/b``); a name past the length or depth bounds lays none out
    (:func:`check_dump` refuses it, naming it)."""
    dirs: set[str] = set()
    for name in names:
        if len(name) > MAX_DUMP_NAME or name.count("/") >= MAX_DUMP_DEPTH:
            continue
        end = name.rfind("/")
        while end > 0 and name[:end] not in dirs:
            dirs.add(name[:end])
            end = name.rfind("/", 0, end)
    return dirs


def dump_size_problem(files: Mapping[str, str]) -> str | None:
    """What makes a dump given as texts too large to lay out (more than
    :data:`MAX_DUMP_FILES` files or :data:`MAX_DUMP_DIRS` distinct
    directories), or ``None``: counted before any name is checked, so a
    dump refused for its size costs the server no more than the count."""
    if len(files) > MAX_DUMP_FILES:
        return (f"{len(files)} files, more than the limit of {MAX_DUMP_FILES} files a dump "
                "may hold")
    dirs = len(_dump_dirs(files))
    if dirs > MAX_DUMP_DIRS:
        return (f"{dirs} distinct directories, more than the limit of {MAX_DUMP_DIRS} a dump "
                "may lay out")
    return None


def _dump_key(name: str) -> str:
    """A dump's file name as its error message names it: the name itself
    (:func:`shown_name`), or, for an empty name, the request's key
    (``files[""]``), so that the message always names one."""
    return shown_name(name) if name else 'files[""]'


def check_dump(files: Mapping[str, str]) -> None:
    """Refuse, before anything is written, a dump whose files cannot all be
    laid out as given: more files or directories than the limits
    (:func:`dump_size_problem`), a name that is not a plain relative name
    of a data file (directories separated by ``/``: a backslash is
    refused, not read as a separator), a part longer than
    :data:`MAX_DUMP_PART` bytes, a name longer than :data:`MAX_DUMP_NAME`
    bytes or of more than :data:`MAX_DUMP_DEPTH` parts, two names of the
    same file, a name both a file and a directory (``a.json`` and
    ``a.json/b.json``), text that has no UTF-8 (a lone surrogate, from a
    ``"\\udc80"`` escape of the JSON body). ``InputError`` naming the file
    (:func:`shown_name`; ``files[""]`` for an empty name)."""
    problem = dump_size_problem(files)
    if problem is not None:
        raise InputError(f"the dump has {problem}", file="files")
    as_files: dict[tuple[str, ...], str] = {}
    as_dirs: dict[tuple[str, ...], str] = {}
    for name, text in files.items():
        shown = _dump_key(name)
        if "\\" in name:
            raise InputError("a backslash in the name: separate directories with /", file=shown)
        parts = tuple(name.split("/"))
        if not all(_DUMP_PART.fullmatch(p) for p in parts) or not parts[-1].lower().endswith(
            _DUMP_SUFFIXES
        ):
            raise InputError("not a plain relative name of a .json, .yaml or .yml file", file=shown)
        # (plain parts are ASCII: a character is a byte)
        longest = max(len(p) for p in parts)
        if longest > MAX_DUMP_PART:
            raise InputError(f"a part of the name is {longest} bytes long, more than the limit of "
                             f"{MAX_DUMP_PART} bytes", file=shown)
        if len(name) > MAX_DUMP_NAME:
            raise InputError(f"the name is {len(name)} bytes long, more than the limit of "
                             f"{MAX_DUMP_NAME} bytes", file=shown)
        if len(parts) > MAX_DUMP_DEPTH:
            raise InputError(f"the name has {len(parts)} parts, more than the limit of "
                             f"{MAX_DUMP_DEPTH} (directories and the file)", file=shown)
        lone = _LONE_SURROGATE.search(text)
        if lone is not None:
            raise InputError(f"not Unicode text: a lone surrogate at character {lone.start()}",
                             file=shown)
        if parts in as_files:
            raise InputError(f"the same file as {shown_name(as_files[parts])}", file=shown)
        if parts in as_dirs:
            raise InputError(f"both a file and a directory: {shown_name(as_dirs[parts])} is "
                             "given too", file=shown)
        for i in range(1, len(parts)):
            if parts[:i] in as_files:
                raise InputError(f"{'/'.join(parts[:i])} is both a file and a directory: "
                                 f"{shown_name(as_files[parts[:i]])} is given too", file=shown)
        as_files[parts] = name
        for i in range(1, len(parts)):
            as_dirs.setdefault(parts[:i], name)


def _refuse_group_files(name: str, text: str) -> None:
    """A FleetConfig of a request may name no file."""
    try:
        docs = [d.data for d in parse_documents(text, name=name, limits=FLEET_LIMITS)]
    except InputError:
        return  # the fleet's reader reports it
    for doc in docs:
        if not isinstance(doc, Mapping) or doc.get("kind") != "FleetConfig":
            continue
        groups = doc.get("nodeGroups")
        for i, g in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(g, Mapping):
                continue
            for field, instead in GROUP_FILE_FIELDS:
                head, _, key = field.rpartition(".")
                holder = g.get(head) if head else g
                if isinstance(holder, Mapping) and key in holder:
                    raise InputError(f"{NO_FILES}: {instead}", path=f"nodeGroups[{i}].{field}",
                                     file=name)


def renamed(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` (a report, or part of one) with each path of ``names``
    replaced by the name it stands for, in every text (a key, a file field,
    a configuration source, a message): files read under another name than
    the one they were given by (a request's dump laid out in a temporary
    directory, standard input's copy)."""
    if not names:
        return value
    if isinstance(value, str):
        for path, name in names.items():
            if path in value:
                value = value.replace(path, name)
        return value
    if isinstance(value, dict):
        return {renamed(k, names): renamed(v, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [renamed(v, names) for v in value]
    return value


def renamed_error(err: InputError, names: Mapping[str, str]) -> InputError:
    """``err`` naming its files as :func:`renamed` names them (changed in
    place, to be raised again)."""
    if names:
        if err.file is not None:
            err.file = renamed(err.file, names)
        err.message = renamed(err.message, names)
        err.args = (err.message,)
    return err


def write_dump(files: Mapping[str, str], root: Path, check: Callable[[], None] | None = None) -> None:
    """Lay a cluster dump given as texts (relative file name -> text) out
    under the empty directory ``root``: every name checked before any file
    is written (:func:`check_dump`), nothing parsed; each directory made
    once, then each file written; ``check`` (a deadline's, say) is called
    before each, and what it raises stops the writing. ``InputError``
    naming the file when one still cannot be written."""
    if not files:
        raise InputError("give the dump's files (files: name -> text)")
    check_dump(files)
    for directory in sorted(_dump_dirs(files), key=lambda d: d.count("/")):
        if check is not None:
            check()
        try:
            root.joinpath(*directory.split("/")).mkdir(mode=0o700)
        except OSError as e:
            raise InputError(f"cannot be laid out in the temporary directory: {e.strerror or e}",
                             file=shown_name(directory)) from None
    for name, text in files.items():
        if check is not None:
            check()
        target = root.joinpath(*name.split("/"))
        try:
            target.write_text(text, encoding="utf-8")
        except (OSError, UnicodeError, RecursionError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
            raise InputError(f"cannot be laid out in the temporary directory: {why}",
                             file=shown_name(name)) from None


def analyze_written_dump(files: Mapping[str, str], root: Path,
                         what_if_values: Sequence[str] = (),
                         overrides: Sequence[Override] = ()) -> str:
    """The report page of a dump :func:`write_dump` laid out under
    ``root`` (``files``: the same texts, checked here for FleetConfigs
    naming files); reads only beneath ``root``. ``overrides``: ``--set``
    on every node's own configuration."""
    parsed = what_ifs(what_if_values, workers=None, dask_target=None)
    for name, text in files.items():
        _refuse_group_files(name, text)
    names = {f"{root}/": ""}  # (named as the request named them)
    try:
        fleet = load([root])
    except InputError as e:
        raise renamed_error(e, names) from None
    fleet = with_overrides(fleet, overrides)
    report = renamed(analyze(fleet, parsed), names)
    if overrides:
        report["set"] = [str(o) for o in overrides]
        refuse_stopped_by_set(report)
    return report_html(fleet, report)


#: how a node's issue says its kubelet configuration stopped it
_STOPPED = ("the kubelet would not start: ", "invalid kubelet configuration: ")


def refuse_stopped_by_set(report: Mapping[str, Any]) -> None:
    """For a report of a run with ``--set`` (its ``set``): when no node was
    replayed and the kubelet would not start on some of them with their
    configuration (``--set`` applied), ``InputError`` (exit 2, HTTP 400:
    the input was ``--set``), in ``simulate``'s words, naming the first
    such node and how many more; else nothing (a node replayed: the report,
    its other nodes' errors in it)."""
    nodes = report.get("nodes") or []
    if not nodes or any(n.get("status") == "ok" for n in nodes):
        return
    stopped = [(str(n["name"]), str(i["message"])) for n in nodes for i in n.get("issues", ())
               if i.get("severity") == "error" and str(i.get("message", "")).startswith(_STOPPED)]
    if not stopped:
        return
    node, message = stopped[0]
    what = message.removeprefix("the kubelet would not start: ")
    more = f", and {len(stopped) - 1} more" if len(stopped) > 1 else ""
    raise InputError(f"kubelet would not start: {what} (--set: {', '.join(report.get('set', ()))}; "
                     f"node {node}{more}; no node replayed)")


def analyze_files(
    files: Mapping[str, str], what_if_values: Sequence[str] = (), overrides: Sequence[Override] = ()
) -> str:
    """A cluster dump given as texts (relative file name -> text: nodes,
    pods, NodeResourceTopology objects, configz, FleetConfig) analysed as
    ``podnuma fleet analyze DIR -o html`` analyses the directory: the same
    report page, drill-down pictures included. No file the dump names is
    read (a node group's ``kubeletConfigFile``, ``nodeFile`` and file node
    forms are refused); the report names the files as they were given."""
    import tempfile  # (not on the command line's path)

    with tempfile.TemporaryDirectory(prefix="podnuma-fleet-") as tmp:
        write_dump(files, Path(tmp))
        return analyze_written_dump(files, Path(tmp), what_if_values, overrides)
