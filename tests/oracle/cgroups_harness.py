"""Differential harness for cgroup values: ``podnuma cgroups plan`` against
``kubelet-oracle cgroups`` (the kubelet's ResourceConfigForPod and its
cgroup manager for pod cgroups, the runtime manager's container resources
and PreCreateContainer for containers, the runc cgroup library's writers
for the files).

Compared, field by field, for the pods running after a step: every pod
cgroup (path and files) and every container cgroup (files; container
cgroups are named by runtime ids, so they are matched by pod UID and
container name), the node allocatable cgroup (``kubepods``) and the
Burstable and BestEffort tiers (path and files: the container manager's
node allocatable configuration and the QoS container manager's Start and
UpdateCgroups with the running pods), the cgroup root the kubelet updates
without ``cgroupsPerQOS``, and the pods known only from a checkpoint
(``unplanned``). The cgroup root and ``cgroupsPerQOS`` are the scenario's
kubelet configuration's, or ``--cgroup-root`` given to both. ``kubepods``' ``pids.max`` (from the host's
``pid_max``, which a scenario does not describe) is left out by both.

The step compared is the last one, unless the two engines' runs part by a
random device pick (see :func:`tests.oracle.harness.compare`): then it is
the step of that pick (CPUs and memory still agree there; cgroups hold no
device ids).
"""

from __future__ import annotations

import json
import posixpath
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.oracle.harness import (
    WALK_LIMIT,
    Outcome,
    _reports_livelock,
    compare,
    device_numa,
    run_oracle,
    walk_size,
)

__all__ = ["VERSIONS", "Cgroups", "plan_podnuma", "plan_oracle", "compare_cgroups", "cgroup_differences"]

#: Runs of the kubelet's code tried again for a scenario with devices whose
#: answer differs (see :func:`cgroup_differences`).
DEVICE_RETRIES = 5

#: (cgroup version, driver) pairs compared: v2 with systemd, v1 with cgroupfs.
VERSIONS: tuple[tuple[int, str], ...] = ((2, "systemd"), (1, "cgroupfs"))


@dataclass
class Cgroups:
    """One engine's cgroups after a step, or its failure."""

    doc: dict[str, Any] | None = None
    error: str = ""


def _podnuma_run(path: Path) -> tuple[Any, Any, Outcome]:
    """(scenario, run, simulate outcome) in-process; scenario is None on failure."""
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.errors import InputError, KubeletStartupError
    from podnuma.inputs.scenario import load_scenario
    from podnuma.scenario.document import build_document
    from podnuma.scenario.run import run_scenario

    try:
        scn = load_scenario(path)
        run = run_scenario(scn)
    except InputError as e:
        return None, None, Outcome(kind="input", message=str(e))
    except CheckpointError as e:
        return None, None, Outcome(kind="startup", message=str(e))
    except KubeletStartupError as e:
        return None, None, Outcome(kind="startup", message=str(getattr(e, "message", e)))
    except Exception as e:  # noqa: BLE001 - a podnuma bug is a mismatch, not a test crash
        return None, None, Outcome(kind="crash", message=f"{type(e).__name__}: {e}")
    doc = json.loads(json.dumps(build_document(run)))
    return scn, run, Outcome(doc=doc, files=dict(run.checkpoint_files))


def plan_podnuma(
    scn: Any, run: Any, step: int | None, version: int, driver: str, cgroup_root: str | None = None
) -> Cgroups:
    """``cgroup_root``: the kubelet's ``--cgroup-root`` (``None``: the
    configuration's ``cgroupRoot``)."""
    from podnuma.cgroups import plan_cgroups
    from podnuma.cgroups.plan import plan_document
    from podnuma.errors import InputError, KubeletStartupError

    try:
        plan = plan_cgroups(scn, run, step=step, driver=driver, version=version,  # type: ignore[arg-type]
                            cgroup_root=cgroup_root)
    except (InputError, KubeletStartupError) as e:  # (a start-up refusal of the cgroup settings)
        return Cgroups(error=str(e))
    return Cgroups(doc=json.loads(json.dumps(plan_document(plan))))


def plan_oracle(
    binary: str, paths: Sequence[Path], version: int, driver: str, step: int | None = None, timeout: float = 600.0,
    cgroup_root: str | None = None,
) -> list[Cgroups]:
    """``kubelet-oracle cgroups`` over many scenarios (JSON Lines);
    ``cgroup_root``: the kubelet's ``--cgroup-root`` flag (``None``: the
    configuration's ``cgroupRoot``)."""
    if not paths:
        return []
    args = [binary, "cgroups", *[str(p) for p in paths], "--cgroup-version", str(version), "--driver", driver]
    if step is not None:
        args += ["--step", str(step)]
    if cgroup_root is not None:
        args.append(f"--cgroup-root={cgroup_root}")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    if len(paths) == 1:
        if proc.returncode == 0:
            return [Cgroups(doc=json.loads(proc.stdout))]
        return [Cgroups(error=proc.stderr.strip() or f"exit {proc.returncode}")]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or len(lines) != len(paths):
        return [plan_oracle(binary, [p], version, driver, step, timeout, cgroup_root)[0] for p in paths]
    out = []
    for line in lines:
        obj = json.loads(line)
        out.append(Cgroups(error=obj["error"]) if set(obj) == {"file", "error"} else Cgroups(doc=obj))
    return out


def _index(doc: Mapping[str, Any]) -> dict[tuple[str, ...], dict[str, Any]]:
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for c in doc.get("cgroups") or []:
        kind = c.get("kind")
        if (kind == "root" and c.get("files")) or kind in ("node", "qos"):
            # (root: the cgroup root the kubelet updates without
            # cgroupsPerQOS.) The kubelet's cgroupfs name is "/" +
            # path.Join(...): "/." is the root "/" podnuma names
            path = posixpath.normpath(c["path"]) if c["path"] in ("/.", "/") else c["path"]
            out[(kind, path)] = {"path": path, "pod": path, "files": c.get("files") or {}}
        elif kind == "reserved":
            out[("reserved", c["path"])] = {"path": c["path"], "pod": c["path"], "files": c.get("files") or {}}
        elif kind == "pod":
            out[("pod", c["podUID"])] = {"path": c["path"], "pod": c.get("pod"), "files": c.get("files") or {}}
        elif kind == "container":
            out[("container", c["podUID"], c["container"])] = {"pod": c.get("pod"), "files": c.get("files") or {}}
    return out


#: the words of podnuma's plan when runc refuses every sandbox
RUNC_REFUSES = "runc's systemd driver refuses"


def compare_cgroups(mine: Cgroups, theirs: Cgroups, coverage: dict[str, int] | None = None) -> list[str]:
    """The differences between podnuma's plan and the oracle's cgroups.
    ``coverage`` counts, per ``KIND FILE``, the files both engines wrote
    with the same value."""
    if mine.doc is None or theirs.doc is None:
        if mine.doc is None and theirs.doc is None:
            return []
        return [f"outcome: podnuma {mine.error or 'a plan'} != oracle {theirs.error or 'cgroups'}"]
    diffs: list[str] = []
    a, b = _index(mine.doc), _index(theirs.doc)
    if any(RUNC_REFUSES in n for n in mine.doc.get("notes") or ()):
        # without cgroupsPerQOS and with systemd the kubelet still computes
        # each container's resources, but runc refuses the sandbox's
        # default path and none is created
        # (tests/oracle/test_runtime_paths_differential.py)
        if [k for k in a if k[0] == "container"]:
            diffs.append("podnuma plans containers runc refuses to create")
        b = {k: v for k, v in b.items() if k[0] != "container"}
    for key in sorted(set(a) | set(b)):
        name = "/".join(key)
        if key not in a:
            diffs.append(f"{name}: missing in podnuma (oracle {json.dumps(b[key]['files'])})")
            continue
        if key not in b:
            diffs.append(f"{name}: missing in oracle (podnuma {json.dumps(a[key]['files'])})")
            continue
        x, y = a[key], b[key]
        if key[0] == "pod" and x["path"] != y["path"]:
            diffs.append(f"{name}: path: podnuma {x['path']} != oracle {y['path']}")
        for f in sorted(set(x["files"]) | set(y["files"])):
            if coverage is not None and f in x["files"] and x["files"][f] == y["files"].get(f):
                coverage[f"{key[0]} {f}"] = coverage.get(f"{key[0]} {f}", 0) + 1
            if x["files"].get(f) != y["files"].get(f):
                diffs.append(f"{name} ({x['pod']}): {f}: podnuma {x['files'].get(f)!r} != oracle {y['files'].get(f)!r}")
    if sorted(mine.doc.get("unplanned") or []) != sorted(theirs.doc.get("unplanned") or []):
        diffs.append(f"unplanned: podnuma {mine.doc.get('unplanned')} != oracle {theirs.doc.get('unplanned')}")
    return diffs


def cgroup_differences(
    binary: str,
    items: Sequence[tuple[str, Mapping[str, Any], Path]],
    stats: dict[str, int],
    coverage: dict[int, dict[str, int]] | None = None,
) -> list[tuple[str, list[str]]]:
    """Every (name, scenario, path) through both engines, both cgroup
    versions; the scenarios whose cgroups differ. ``stats`` counts
    ``scenarios``, ``compared`` (scenario x version pairs), ``failed_alike``
    (both refuse the scenario), ``not_sent`` (as the main suite: a picker
    livelock or a huge merge walk), ``engines_differ`` (the simulate
    documents differ: the main suite reports it), ``device_pick``.
    ``coverage``, by cgroup version: the files compared equal (see
    :func:`compare_cgroups`)."""
    runs = [_podnuma_run(path) for _, _, path in items]
    ask = [i for i, (_, _, o) in enumerate(runs) if not _reports_livelock(o) and walk_size(o) <= WALK_LIMIT]
    stats["scenarios"] = stats.get("scenarios", 0) + len(items)
    stats["not_sent"] = stats.get("not_sent", 0) + len(items) - len(ask)
    sims = dict(zip(ask, run_oracle(binary, [items[i][2] for i in ask]), strict=True))
    steps: dict[int, int | None] = {}
    for i in ask:
        scn, _, mine = runs[i]
        notes: list[str] = []
        diffs = compare(mine, sims[i], items[i][1], notes=notes)
        if diffs:
            stats["engines_differ"] = stats.get("engines_differ", 0) + 1
            continue
        if scn is None or sims[i].kind != "ok":
            stats["failed_alike"] = stats.get("failed_alike", 0) + 1
            continue
        step: int | None = None
        for note in notes:
            if note.startswith("random device pick at step "):
                step = int(note.split()[5].rstrip(":"))
                stats["device_pick"] = stats.get("device_pick", 0) + 1
        steps[i] = step
    out: list[tuple[str, list[str]]] = []
    for version, driver in VERSIONS:
        last = [i for i, s in steps.items() if s is None]
        theirs = dict(zip(last, plan_oracle(binary, [items[i][2] for i in last], version, driver), strict=True))
        for i, s in steps.items():
            if s is not None:
                theirs[i] = plan_oracle(binary, [items[i][2]], version, driver, step=s)[0]
        for i in sorted(steps):
            scn, run, _ = runs[i]
            mine = plan_podnuma(scn, run, steps[i], version, driver)
            seen: dict[str, int] = {}
            diffs = compare_cgroups(mine, theirs[i], seen)
            if coverage is not None and not diffs:
                per = coverage.setdefault(version, {})
                for k, v in seen.items():
                    per[k] = per.get(k, 0) + v
            stats["compared"] = stats.get("compared", 0) + 1
            if diffs and device_numa(items[i][1]):
                # The device manager picks among equivalent devices at
                # random, and this run of the kubelet's code is not the one
                # the simulate documents were compared on: its picks may
                # part from podnuma's earlier and change later placements.
                # podnuma's answer stands when some run of the kubelet
                # gives it.
                for _ in range(DEVICE_RETRIES):
                    if not compare_cgroups(mine, plan_oracle(binary, [items[i][2]], version, driver, step=steps[i])[0]):
                        diffs = []
                        stats["device_retry"] = stats.get("device_retry", 0) + 1
                        break
            if diffs:
                out.append((f"{items[i][0]} (cgroup v{version}, {driver})", diffs))
    return out
