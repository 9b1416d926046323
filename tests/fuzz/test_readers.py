"""Hypothesis fuzzing of the readers behind the doors: agent manifests,
fleet dumps and configz, checkpoints (a state directory, the agent's
restore), cgroups inputs (``cgroups apply`` under a throw-away root).

Each input comes from ``tests/fuzz/hostile.py``. Expectation: a valid
result, or podnuma's one-line invalid-input error (``InputError``, the
kubelet's start-up refusal; on the command line exit code 2) -- never
another exception, a traceback or a file outside the root.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from podnuma.agent.manifests import read_manifest
from podnuma.agent.state import StateDir
from podnuma.api.featuregates import FeatureGates
from podnuma.cli import cli
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.pods import load_config_file
from podnuma.inputs.state import read_state_dir
from tests.fuzz.hostile import FUZZ, HEAVY, binary, dump, hostile_text, mutated

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _cli_ok(res: Result) -> None:
    """Exit 0, or exit 2 with one ``error:`` line; never a crash."""
    crashed = res.exception is not None and not isinstance(res.exception, SystemExit)
    assert not crashed, f"{type(res.exception).__name__}: {res.exception}"
    assert res.exit_code in (0, 2), res.output[-2000:]
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output[-2000:]
    if res.exit_code == 2:  # nothing printed before the inputs validate: one line
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), res.output[-2000:]


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A fresh directory for one example."""
    d = Path(tempfile.mkdtemp(prefix="pnfuzz"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


# -- agent manifests -------------------------------------------------------------------

POD = _load(EXAMPLES / "agent" / "pods" / "train.yaml")
GATES = FeatureGates.defaults()


@FUZZ
@given(hostile_text(POD))
def test_agent_manifests(data: bytes) -> None:
    with scratch() as d:
        path = d / "pod.yaml"
        path.write_bytes(data)
        try:
            m = read_manifest(path, node_name="fuzz-node", gates=GATES)
        except InputError as err:
            assert "\n" not in str(err)
            assert str(err).startswith(str(path))
        else:
            assert m.pod.name and len(m.digest) == 32


# -- fleet dumps and configz -----------------------------------------------------------

FLEET = EXAMPLES / "fleet"
FLEET_FILES = sorted(
    str(p.relative_to(FLEET)) for p in FLEET.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml")
)


def _fleet_doc(name: str) -> Any:
    doc = _load(FLEET / name)
    # keep the dumps small: the fuzz is about reading, not replaying
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        doc = {**doc, "items": doc["items"][:6]}
    return doc


@HEAVY
@given(st.sampled_from(FLEET_FILES).flatmap(lambda n: st.tuples(st.just(n), hostile_text(_fleet_doc(n)))))
def test_fleet_dumps_and_configz(case: tuple[str, bytes]) -> None:
    name, data = case
    with scratch() as d:
        fleet = d / "fleet"
        shutil.copytree(FLEET, fleet)
        (fleet / name).write_bytes(data)
        res = CliRunner().invoke(cli, ["-q", "fleet", "analyze", str(fleet), "-o", "json"])
    _cli_ok(res)


# -- checkpoints -------------------------------------------------------------------------

CPU_VECTORS = json.loads((ROOT / "tests/cm/cpumanager/cpu_checkpoint_vectors.json").read_text())["loads"]
def _json_docs(blobs: list[str]) -> list[Any]:
    out = []
    for b in blobs:
        try:
            d = json.loads(b)
        except json.JSONDecodeError:
            continue
        if isinstance(d, dict):
            out.append(d)
    return out


CPU_DOCS = _json_docs([v["blob"] for v in CPU_VECTORS if isinstance(v.get("blob"), str)])[:20]
MEMORY_DOCS = _json_docs([
    b for v in json.loads((ROOT / "tests/cm/memorymanager/memory_checkpoint_vectors.json").read_text()).values()
    if isinstance(v, dict) for b in v.values() if isinstance(b, str)
])[:20]  # fmt: skip


def _checkpoint_bytes(docs: list[Any]) -> st.SearchStrategy[bytes]:
    def deep(depth: int) -> bytes:
        return ("[" * depth + "]" * depth).encode()

    return st.sampled_from(docs).flatmap(
        lambda d: st.one_of(
            mutated(d).map(str.encode),
            binary(json.dumps(d)),
            st.integers(2, 60).map(deep),
            st.just(json.dumps({**d, "entries": {f"p{i}": {"c": "0"} for i in range(3000)}}).encode()),
        )
    )


KUBELET = load_config_file(EXAMPLES / "agent" / "kubelet-config.yaml")


@HEAVY
@given(st.sampled_from(["cpu_manager_state", "memory_manager_state"]).flatmap(
    lambda n: st.tuples(st.just(n), _checkpoint_bytes(CPU_DOCS if n.startswith("cpu") else MEMORY_DOCS))))  # fmt: skip
def test_checkpoints_in_a_state_directory(case: tuple[str, bytes]) -> None:
    name, data = case
    with scratch() as d:
        (d / name).write_bytes(data)
        try:
            read_state_dir(d)
        except InputError as err:
            assert "\n" not in str(err)
        try:
            StateDir(d).restore(KUBELET)
        except (InputError, KubeletStartupError) as err:
            assert "\n" not in str(err)
        res = CliRunner().invoke(cli, ["-q", "state", "inspect", str(d), "-o", "json"])
    _cli_ok(res)


# -- cgroups inputs --------------------------------------------------------------------------

CGROUP_SCENARIO = _load(ROOT / "tests" / "cgroups" / "full.yaml")
uids = st.one_of(
    st.text(min_size=1, max_size=300),
    st.sampled_from(["..", ".", "a/../../../etc", "a\x00b", "x" * 256, "x" * 240, "é" * 130, "-", "a\nb",
                     "\ud800", "a\udfffb"]),
)


def _with_uid(uid: str) -> bytes:
    doc = json.loads(json.dumps(CGROUP_SCENARIO))
    doc["steps"][1]["addPod"]["metadata"]["uid"] = uid
    return json.dumps(doc).encode()


@HEAVY
@given(
    st.one_of(hostile_text(CGROUP_SCENARIO), uids.map(_with_uid)),
    st.sampled_from(["systemd", "cgroupfs"]),
    st.sampled_from(["1", "2"]),
    st.sampled_from(["/", "podnuma", "a/b", "../x", "x" * 300]),
)
def test_cgroups_inputs(data: bytes, driver: str, version: str, cgroup_root: str) -> None:
    with scratch() as d:
        scenario = d / "s.yaml"
        scenario.write_bytes(data)
        root = d / "root"
        root.mkdir()
        res = CliRunner().invoke(cli, [
            "-q", "cgroups", "apply", str(scenario), "--driver", driver, "--cgroup-version", version,
            "--cgroup-root", cgroup_root, "--root", str(root),
        ])  # fmt: skip
        _cli_ok(res)
        outside = sorted(p.name for p in d.iterdir() if p.name not in ("s.yaml", "root"))
        assert outside == []
        if res.exit_code == 2:
            assert list(root.iterdir()) == []  # refused before the first write


def test_the_fuzz_corpora_are_not_empty() -> None:
    assert len(CPU_DOCS) >= 5 and len(MEMORY_DOCS) >= 3 and len(FLEET_FILES) >= 4
    assert dump(POD)
