"""``podnuma topology``: CPU ownership after a step, and its SVG, PNG and
text pictures."""

from __future__ import annotations

import copy
import io
import json
import struct
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.topology import topology_command
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.errors import InputError
from podnuma.inputs.scenario import load_scenario, load_scenario_text
from podnuma.machine.cpuset import CPUSet
from podnuma.render.picture import (
    HELD,
    NODE_SHARED,
    RESERVED,
    Ownership,
    build_picture,
    ownership_after,
    render_png,
    render_svg,
    render_text,
)
from podnuma.scenario.run import RunResult, run_scenario

from ..scenario.helpers import base, dump, pod

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src/podnuma/scenario/demo/demo.yaml"
DUAL = ROOT / "examples/static-dual-socket.yaml"
SNC = ROOT / "examples/topology/pod-scope.yaml"
SVG_NS = "{http://www.w3.org/2000/svg}"

POD_LEVEL: dict[str, Any] = {
    "apiVersion": "podnuma.io/v1",
    "kind": "Scenario",
    "node": {
        "name": "pl-node",
        "synthetic": {
            "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
            "threadsPerCore": 2, "memoryPerNumaNode": "16Gi",
        },
    },
    "kubeletConfig": {
        "featureGates": {"PodLevelResourceManagers": True},
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": "pod",
    },
    "steps": [
        {"addPod": {
            "metadata": {"name": "app", "namespace": "ns"},
            "spec": {
                "resources": {
                    "requests": {"cpu": "6", "memory": "4Gi"},
                    "limits": {"cpu": "6", "memory": "4Gi"},
                },
                "containers": [
                    {"name": "pinned", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
                    {"name": "helper"},
                    {"name": "helper2"},
                ],
            },
        }},
        {"addPod": {
            "metadata": {"name": "burst", "namespace": "ns"},
            "spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "1"}}}]},
        }},
        {"removeContainer": {"pod": "ns/app", "container": "pinned"}},
        {"removePod": "ns/app"},
    ],
}


def _run_doc(doc: dict[str, Any], tmp_path: Path | None = None) -> RunResult:
    return run_scenario(
        load_scenario_text(dump(doc), name="t.yaml", base_dir=tmp_path or Path.cwd())
    )


@pytest.fixture(scope="module")
def demo() -> RunResult:
    return run_scenario(load_scenario(DEMO))


@pytest.fixture(scope="module")
def dual() -> RunResult:
    return run_scenario(load_scenario(DUAL))


@pytest.fixture(scope="module")
def pod_level() -> RunResult:
    return _run_doc(POD_LEVEL)


def _names(own: Ownership) -> dict[str, str]:
    return {o.name: str(o.cpus) for o in own.owners}


def _check_partition(result: RunResult, own: Ownership) -> None:
    """Owners partition the machine's CPUs; each agrees with the step."""
    cpus = result.machine.topology.cpus()
    seen = CPUSet()
    for o in own.owners:
        assert not o.cpus.is_empty()
        assert (seen & o.cpus).is_empty(), o.name
        seen |= o.cpus
        for c in o.cpus.list():
            assert own.owner_of(c) is o
    assert seen == cpus
    step = own.step
    if step is None or step.default_cpuset.is_empty():
        return
    shared = next((o.cpus for o in own.owners if o.name == NODE_SHARED), CPUSet())
    reserved = next((o.cpus for o in own.owners if o.name == RESERVED), CPUSet())
    # Static policy: the default set is the reserved CPUs plus the shared pool.
    assert shared | reserved == step.default_cpuset
    assert reserved == result.node.reserved_cpus


# -- ownership ----------------------------------------------------------------

DEMO_EXPECTED: dict[int, dict[str, str]] = {
    0: {RESERVED: "0,16", NODE_SHARED: "3-15,19-31", "exclusive: shop/web/nginx": "1-2,17-18"},
    3: {
        RESERVED: "0,16",
        NODE_SHARED: "6-15,22-31",
        "exclusive: shop/web/nginx": "1-2,17-18",
        # the init container "migrate" had 3-5,19-21: all handed on
        "exclusive: shop/db/log-shipper": "3,19",
        "exclusive: shop/db/postgres": "4-5,20-21",
    },
    4: {  # the rejected pod changes nothing
        RESERVED: "0,16",
        NODE_SHARED: "6-15,22-31",
        "exclusive: shop/web/nginx": "1-2,17-18",
        "exclusive: shop/db/log-shipper": "3,19",
        "exclusive: shop/db/postgres": "4-5,20-21",
    },
    5: {
        RESERVED: "0,16",
        NODE_SHARED: "1-2,6-15,17-18,22-31",
        "exclusive: shop/db/log-shipper": "3,19",
        "exclusive: shop/db/postgres": "4-5,20-21",
    },
    6: {
        RESERVED: "0,16",
        NODE_SHARED: "2,6-15,18,22-31",
        "exclusive: shop/db/log-shipper": "3,19",
        "exclusive: shop/db/postgres": "4-5,20-21",
        "exclusive: shop/cache/redis": "1,17",
    },
}


@pytest.mark.parametrize("step", sorted(DEMO_EXPECTED))
def test_demo_owners(demo: RunResult, step: int) -> None:
    own = ownership_after(demo, step)
    assert _names(own) == DEMO_EXPECTED[step]
    _check_partition(demo, own)


def test_default_step_is_the_last(demo: RunResult) -> None:
    last = ownership_after(demo)
    assert last.step is demo.steps[-1]
    assert _names(last) == DEMO_EXPECTED[6]
    # Legend order: reserved, shared pool, then pods in admission order.
    assert [o.name for o in last.owners][:3] == [
        RESERVED, NODE_SHARED, "exclusive: shop/db/log-shipper"
    ]
    # memory pinned by running pods: db (1Gi + 8Gi), metrics 512Mi, cache 2Gi
    assert last.pinned == {(0,): {"memory": (9 << 30) + (512 << 20) + (2 << 30)}}


def test_exclusive_owners_match_every_step(demo: RunResult, dual: RunResult) -> None:
    for result in (demo, dual):
        for i in range(len(result.steps)):
            own = ownership_after(result, i)
            _check_partition(result, own)
            for o in own.owners:
                if o.kind == "exclusive":
                    assert o.cpus.size() > 0
                    assert o.pod is not None and o.container is not None


def test_static_dual_socket(dual: RunResult) -> None:
    # step 2: db has 4 whole cores' threads, odd is rejected, api is shared
    assert _names(ownership_after(dual, 2)) == {
        RESERVED: "0,16",
        NODE_SHARED: "3-15,19-31",
        "exclusive: shop/db/postgres": "1-2,17-18",
    }
    assert _names(ownership_after(dual)) == {RESERVED: "0,16", NODE_SHARED: "1-15,17-31"}


def test_pod_level_pod_scope(pod_level: RunResult) -> None:
    alloc = pod_level.steps[0].pod_allocation
    assert alloc is not None and str(alloc.cpus) == "1-3,9-11"
    own = ownership_after(pod_level, 1)
    assert _names(own) == {
        RESERVED: "0",
        NODE_SHARED: "4-8,12-15",
        "pod shared pool of ns/app": "2-3,10-11",
        "exclusive: ns/app/pinned": "1,9",
    }
    _check_partition(pod_level, own)
    pool = own.by_name("pod shared pool of ns/app")
    assert (pool.kind, pool.pod, pool.container) == ("pod", "ns/app", None)
    assert own.pinned == {(0,): {"memory": 4 << 30}}  # the pod's budget, once
    # the helpers run on the pod shared pool
    helpers = [c for c in pod_level.steps[0].containers if c.isolation == "pod"]
    assert [c.name for c in helpers] == ["helper", "helper2"]
    assert all(c.cpus == pool.cpus for c in helpers)
    # removeContainer: the pod runs on; its pinned container's CPUs go back
    # to the pod's pool (the reservation stays with the pod)
    after = ownership_after(pod_level, 2)
    _check_partition(pod_level, after)
    assert after.by_name("pod shared pool of ns/app").cpus == alloc.cpus
    assert "exclusive: ns/app/pinned" not in _names(after)
    # removePod: everything back to the node
    assert _names(ownership_after(pod_level, 3)) == {RESERVED: "0", NODE_SHARED: "1-15"}


def test_init_container_leftover_stays_with_it() -> None:
    result = run_scenario(load_scenario(SNC))
    own = ownership_after(result, 2)
    # migrate (init) had 1-2,17-18; the sidecar took 1 and the server 2,18:
    # 17 is still the init container's.
    assert own.by_name("exclusive: demo/pipeline/migrate").cpus == CPUSet.parse("17")
    assert own.by_name("exclusive: demo/pipeline/proxy").cpus == CPUSet.parse("1")
    assert own.by_name("exclusive: demo/pipeline/server").cpus == CPUSet.parse("2-3,18-19")
    _check_partition(result, own)


def test_checkpoint_pod_holds_its_cpus_until_removed(tmp_path: Path) -> None:
    # a pod restored from the starting checkpoint (no spec: named by its
    # UID) runs from the start: its CPUs are its own, not "held"
    doc = base()
    data = CPUCheckpointData(
        "static", CPUSet.parse("0,2-8,10-15"), {"uid-old": {"app": CPUSet.parse("1,9")}}
    )
    doc["state"] = {"cpuManager": json.loads(encode_cpu_checkpoint(data))}
    doc["steps"] = [{"addPod": pod("a", "2", uid="uid-a")}, {"removePod": "uid-old"}]
    result = _run_doc(doc, tmp_path)
    own = ownership_after(result, 0)
    old = own.by_name("exclusive: uid-old/app")
    assert (old.kind, old.pod, old.container) == ("exclusive", "uid-old", "app")
    assert old.cpus == CPUSet.parse("1,9")
    assert HELD not in _names(own)
    _check_partition(result, own)
    after = ownership_after(result, 1)
    assert HELD not in _names(after) and "exclusive: uid-old/app" not in _names(after)
    assert CPUSet.parse("1,9").is_subset_of(after.by_name(NODE_SHARED).cpus)


def test_policy_none_everything_shared() -> None:
    doc = base()
    doc["kubeletConfig"] = {"cpuManagerPolicy": "none"}
    result = _run_doc(doc)
    own = ownership_after(result)
    assert _names(own) == {NODE_SHARED: "0-15"}


def test_no_steps() -> None:
    doc = base()
    doc["steps"] = []
    result = _run_doc(doc)
    own = ownership_after(result)
    assert own.step is None and _names(own) == {RESERVED: "0", NODE_SHARED: "1-15"}
    with pytest.raises(InputError):
        ownership_after(result, 0)


@pytest.mark.parametrize("step", [-1, 7, 100])
def test_bad_step(demo: RunResult, step: int) -> None:
    with pytest.raises(InputError, match="no such step"):
        ownership_after(demo, step)


# -- SVG ------------------------------------------------------------------------


def _svg_checks(result: RunResult, own: Ownership) -> ET.Element:
    svg = render_svg(result.machine, own)
    root = ET.fromstring(svg)  # valid XML
    assert root.tag == f"{SVG_NS}svg"
    pus = [e for e in root.iter(f"{SVG_NS}rect") if "data-cpu" in e.attrib]
    cpus = [int(e.attrib["data-cpu"]) for e in pus]
    assert sorted(cpus) == result.machine.topology.cpus().list()  # exactly one each
    legend = {
        e.attrib["data-owner"]: e.attrib["fill"]
        for e in root.iter(f"{SVG_NS}rect")
        if e.attrib.get("class") == "swatch"
    }
    entries = [
        e.attrib["data-owner"]
        for e in root.iter(f"{SVG_NS}g")
        if e.attrib.get("class") == "legend-entry"
    ]
    assert entries == [o.name for o in own.owners]
    assert len(set(legend.values())) == len(legend)  # distinct colours
    for e in pus:
        cpu = int(e.attrib["data-cpu"])
        owner = own.owner_of(cpu)
        assert e.attrib["data-owner"] == owner.name
        assert e.attrib["fill"] == legend[owner.name]
    return root


@pytest.mark.parametrize("step", [0, 3, 6])
def test_svg_demo(demo: RunResult, step: int) -> None:
    root = _svg_checks(demo, ownership_after(demo, step))
    pus = {e.attrib["data-cpu"]: e for e in root.iter(f"{SVG_NS}rect") if "data-cpu" in e.attrib}
    if step == 3:
        assert pus["4"].attrib["data-owner"] == "exclusive: shop/db/postgres"
        assert pus["0"].attrib["data-owner"] == RESERVED
        assert pus["0"].attrib["fill"] != pus["4"].attrib["fill"]
    text = ET.tostring(root, encoding="unicode")
    for label in ("Machine demo-node", "Package 0", "Package 1", "NUMANode 0 (32Gi)", "L3 0", "Core 15"):
        assert label in text


def test_svg_dual_and_pod_level(dual: RunResult, pod_level: RunResult) -> None:
    _svg_checks(dual, ownership_after(dual, 0))
    root = _svg_checks(pod_level, ownership_after(pod_level, 1))
    pus = {e.attrib["data-cpu"]: e for e in root.iter(f"{SVG_NS}rect") if "data-cpu" in e.attrib}
    assert pus["2"].attrib["data-owner"] == "pod shared pool of ns/app"
    assert pus["1"].attrib["data-owner"] == "exclusive: ns/app/pinned"


def test_svg_escapes_names() -> None:
    doc = base()
    p = pod("a", "2", uid="uid-a")
    p["metadata"]["namespace"] = "n-1"
    p["spec"]["containers"][0]["name"] = "x-y"
    doc["steps"] = [{"addPod": p}]
    doc["node"]["name"] = "node<&>\"'"
    result = _run_doc(doc)
    _svg_checks(result, ownership_after(result))


def test_layout_nests(demo: RunResult) -> None:
    pic = build_picture(demo.machine, ownership_after(demo))
    machine = pic.boxes[0]
    assert machine.kind == "machine"
    for b in pic.boxes[1:]:
        assert machine.x <= b.x and b.x + b.w <= machine.x + machine.w
        assert machine.y <= b.y and b.y + b.h <= machine.y + machine.h
    pus = [b for b in pic.boxes if b.kind == "pu"]
    for a in pus:  # no two PU boxes overlap
        for b in pus:
            if a is not b:
                assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
    assert pic.width >= machine.w and pic.height > machine.h


# -- PNG ------------------------------------------------------------------------


def test_png(demo: RunResult) -> None:
    png = render_png(demo.machine, ownership_after(demo))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert 600 < width < 4000 and 300 < height < 3000
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    colors = {c for _, c in img.getcolors(maxcolors=1 << 20) or []}
    # the owners' fills are in the picture
    own = ownership_after(demo)
    for o in own.owners:
        rgb = tuple(int(o.color[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in colors, o.name


# -- text -----------------------------------------------------------------------


def test_text_has_every_cpu(demo: RunResult) -> None:
    own = ownership_after(demo, 3)
    text = render_text(demo.machine, own)
    assert text.isascii()
    assert "\x1b" not in text
    for cpu in range(32):
        o = own.owner_of(cpu)
        assert f"{cpu:>2}{o.key}" in text
    for o in own.owners:
        assert f" {o.key}  {o.name}" in text
    assert "[ 4b 20b]" in text or "[ 4c 20c]" in text


def test_text_colour(demo: RunResult) -> None:
    text = render_text(demo.machine, ownership_after(demo), color=True)
    assert "\x1b[48;2;" in text


def _big_machine() -> dict[str, Any]:
    doc = copy.deepcopy(base())
    doc["node"]["synthetic"] = {
        "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 16,
        "threadsPerCore": 2, "memoryPerNumaNode": "64Gi",
    }
    doc["kubeletConfig"]["reservedSystemCPUs"] = "0,32"
    doc["steps"] = [
        {"addPod": pod(f"p{i}", str(2 + 2 * i), namespace="big")} for i in range(5)
    ]
    return doc


def test_text_fits_100_columns_on_64_cpus() -> None:
    result = _run_doc(_big_machine())
    own = ownership_after(result)
    text = render_text(result.machine, own)
    assert max(len(line) for line in text.splitlines()) <= 100
    for cpu in range(64):
        assert f"{cpu:>2}{own.owner_of(cpu).key}" in text
    _svg_checks(result, own)


# -- the command ----------------------------------------------------------------


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_command_text(runner: CliRunner) -> None:
    res = runner.invoke(topology_command, [str(DEMO), "--step", "3"])
    assert res.exit_code == 0, res.output
    assert "after step 3: addPod shop/db" in res.output
    assert "exclusive: shop/db/postgres" in res.output


def test_command_svg_stdout_and_files(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(topology_command, [str(DEMO), "-o", "svg"])
    assert res.exit_code == 0
    ET.fromstring(res.output)
    out = tmp_path / "t.png"
    res = runner.invoke(topology_command, [str(DEMO), "--output-file", str(out)])  # format from suffix
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = tmp_path / "t.svg"
    res = runner.invoke(topology_command, [str(DEMO), "--output-file", str(out), "--step", "0"])
    assert res.exit_code == 0
    ET.fromstring(out.read_text())
    res = runner.invoke(topology_command, [str(DEMO), "-o", "png"])
    assert res.exit_code == 0
    assert res.stdout_bytes[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--step", "7"], "--step 7: no such step"),
        (["--step", "-1"], "no such step"),
        (["--output-file", "/nonexistent-dir/x.svg"], "/nonexistent-dir/x.svg: --output-file: cannot write"),
        (["-o", "gif"], "Invalid value"),
    ],
)
def test_command_errors(runner: CliRunner, args: list[str], message: str) -> None:
    res = runner.invoke(topology_command, [str(DEMO), *args])
    assert res.exit_code == 2
    assert message in res.output


def test_command_bad_scenario(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(topology_command, [str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2
    assert res.output.startswith("error:")
