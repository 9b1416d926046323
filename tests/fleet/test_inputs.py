from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.nrt import nrt_node_form
from podnuma.fleet.replay import replay_node
from podnuma.fleet.selectors import parse_selector, selector_matches
from podnuma.inputs.discover import load_node

from .conftest import EXAMPLE

A1 = "ip-10-20-1-17.eu-west-1.compute.internal"
A2 = "ip-10-20-2-41.eu-west-1.compute.internal"
B1 = "ip-10-20-3-9.eu-west-1.compute.internal"
C1 = "ip-10-20-1-88.eu-west-1.compute.internal"
D1 = "ip-10-20-2-200.eu-west-1.compute.internal"
GONE = "ip-10-20-3-250.eu-west-1.compute.internal"


def test_example_sources_per_node() -> None:
    fleet = load_fleet([EXAMPLE])
    nodes = {n.name: n for n in fleet.nodes}
    assert sorted(nodes) == sorted([A1, A2, B1, C1, D1])
    assert nodes[A1].config_source.startswith("configz ")
    assert nodes[A1].topology_source.startswith("NodeResourceTopology ")
    assert nodes[A2].topology_source.startswith("group m6i.16xlarge")
    assert nodes[C1].config_source.startswith("group general")
    assert nodes[D1].topology is None
    assert any(i.severity == "error" and "no topology data" in i.message for i in nodes[D1].issues)
    gone = [i for i in fleet.issues if i.node == GONE]
    assert len(gone) == 1 and "not in the nodes dump" in gone[0].message
    # The Succeeded pod of C1 is not replayed: 3 DaemonSet pods + 3 others.
    assert replay_node(nodes[C1])["podCount"] == 6


def test_nrt_gives_the_same_machine_as_the_instance_type_form() -> None:
    nrt = json.loads((EXAMPLE / "noderesourcetopologies.json").read_text())["items"][0]
    form, notes = nrt_node_form(nrt, threads_per_core=2)
    from_nrt = load_node(form, base_dir=Path("."))
    synthetic = load_node({"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 16,
                                         "threadsPerCore": 2, "memoryPerNumaNode": "128Gi"}},
                          base_dir=Path("."))
    assert from_nrt.topology == synthetic.topology
    assert [n.memory for n in from_nrt.numa_nodes] == [n.memory for n in synthetic.numa_nodes]
    assert from_nrt.numa_node(0).distances == (10, 21)
    assert any("counts, not ids" in n for n in notes)


def test_nrt_forms_of_one_shape_are_made_once_and_are_those_of_each_object() -> None:
    """Objects that differ in their names only get one layout, named after
    each; another shape, another thread count, an unusable object (twice),
    zones that are not JSON values: each as :func:`nrt_node_form` has it."""
    import copy

    import pytest

    from podnuma.fleet import nrt as nrt_module
    from podnuma.fleet.nrt import NrtForms

    base = json.loads((EXAMPLE / "noderesourcetopologies.json").read_text())["items"][0]
    renamed = copy.deepcopy(base)
    renamed["metadata"]["name"] = "another-node"
    bigger = copy.deepcopy(base)
    for z in bigger["zones"]:
        for r in z.get("resources", []):
            if r["name"] == "cpu":
                r["capacity"] = int(r["capacity"]) * 2
    broken = copy.deepcopy(base)
    broken["zones"][0]["name"] = "numa0"
    odd = copy.deepcopy(base)
    odd["zones"][0]["extra"] = {1, 2}  # not a JSON value (the form does not read it)
    as_tuple = {**base, "zones": tuple(base["zones"])}  # not a list: refused, unlike the list
    as_floats = copy.deepcopy(base)
    for z in as_floats["zones"]:
        for r in z.get("resources", []):
            r["capacity"] = float(r["capacity"])  # not whole numbers as a form reads them
    objects = [(base, 2), (renamed, 2), (bigger, 2), (base, 1), (renamed, 2), (odd, 2),
               (as_tuple, 2), (as_floats, 2), (base, 2)]
    made = []
    real = nrt_module.nrt_node_form

    def counting(nrt: dict[str, object], *, threads_per_core: int) -> object:
        made.append(nrt["metadata"]["name"])  # type: ignore[index]
        return real(nrt, threads_per_core=threads_per_core)

    def outcome(make: Any, obj: Any, threads: int) -> object:
        try:
            return make(obj, threads_per_core=threads)
        except ValueError as e:
            return f"ValueError: {e}"

    forms = NrtForms()
    nrt_module.nrt_node_form = counting  # type: ignore[assignment]
    try:
        for obj, threads in objects:
            assert outcome(forms.form, obj, threads) == outcome(real, obj, threads)
        assert forms.form(renamed, threads_per_core=2)[0]["name"] == "another-node"
        for _ in range(2):
            with pytest.raises(ValueError) as err:
                forms.form(broken, threads_per_core=2)
            with pytest.raises(ValueError) as want:
                real(broken, threads_per_core=2)
            assert str(err.value) == str(want.value)
    finally:
        nrt_module.nrt_node_form = real
    # the first object, the bigger one, one thread per core, the odd one, the tuple, the
    # floats, the broken one
    assert len(made) == 7, made


def test_selectors() -> None:
    labels = {"a": "1", "b": "2"}
    assert selector_matches(parse_selector("a=1,b!=3", path="s", file="f"), labels)
    assert not selector_matches(parse_selector("a=1,!b", path="s", file="f"), labels)
    assert selector_matches(parse_selector("a in (1,5),c notin (x)", path="s", file="f"), labels)
    assert selector_matches(parse_selector({"matchLabels": {"b": "2"}, "matchExpressions": [
        {"key": "a", "operator": "Exists"}]}, path="s", file="f"), labels)
    assert not selector_matches(parse_selector({"matchLabels": {"b": "3"}}, path="s", file="f"), labels)


def test_truncated_pods_dump_is_read_up_to_its_last_complete_pod(example: Path) -> None:
    text = (example / "pods.json").read_text()
    (example / "pods.json").write_text(text[: len(text) * 2 // 3])
    fleet = load_fleet([example])
    trunc = [i for i in fleet.issues if "truncated dump" in i.message]
    assert len(trunc) == 1 and trunc[0].severity == "warning"
    full = load_fleet([EXAMPLE])
    got = sum(replay_node(n)["podCount"] for n in fleet.nodes)
    want = sum(replay_node(n)["podCount"] for n in full.nodes)
    assert 0 < got < want
    # Every node says its pod list may be incomplete, and is replayed all the same.
    for n in fleet.nodes:
        assert any("may be incomplete" in i.message for i in n.issues)
    assert replay_node(next(n for n in fleet.nodes if n.name == A1))["status"] != "error"


def test_configz_the_kubelet_refuses_stops_that_node_only(example: Path) -> None:
    p = example / "configz" / f"{A2}.json"
    doc = json.loads(p.read_text())
    doc["kubeletconfig"]["reservedSystemCPUs"] = "0-3,200"  # CPU 200 does not exist
    p.write_text(json.dumps(doc))
    fleet = load_fleet([example])
    reports = {n.name: replay_node(n) for n in fleet.nodes}
    assert reports[A2]["status"] == "error"
    assert any("would not start" in i["message"] for i in reports[A2]["issues"])
    assert reports[A1]["status"] == "ok" and "baseline" in reports[A1]


def test_configz_of_a_newer_kubelet_keeps_the_node_with_the_kubelets_warning(example: Path) -> None:
    # A field unknown to v1.37 and a duplicated one: the kubelet's codec
    # decodes such a file leniently (the last duplicate wins) and logs the
    # strict error; the node is replayed, with that warning.
    p = example / "configz" / f"{A1}.json"
    doc = json.loads(p.read_text())
    cfg = doc["kubeletconfig"]
    cfg["cpuManagerPolicyy"] = "static"
    body = json.dumps(cfg)
    policy = cfg["cpuManagerPolicy"]
    body = body[:-1] + ', "cpuManagerPolicy": "none", "cpuManagerPolicy": ' + json.dumps(policy) + "}"
    p.write_text('{"kubeletconfig": ' + body + "}")
    fleet = load_fleet([example])
    r = replay_node(next(n for n in fleet.nodes if n.name == A1))
    assert r["status"] != "error" and "baseline" in r
    assert r["config"]["cpuManagerPolicy"] == policy
    warnings = [i["message"] for i in r["issues"] if i["severity"] == "warning"]
    assert any(
        'strict decoding error: unknown field "cpuManagerPolicyy", duplicate field "cpuManagerPolicy"' in m
        and "Using lenient decoding as strict decoding failed" in m
        for m in warnings
    ), warnings


def test_unknown_feature_gate_in_configz_is_a_newer_kubelet_not_a_failed_start(example: Path) -> None:
    p = example / "configz" / f"{A1}.json"
    doc = json.loads(p.read_text())
    doc["kubeletconfig"].setdefault("featureGates", {})["SomeGateFromV139"] = True
    p.write_text(json.dumps(doc))
    fleet = load_fleet([example])
    r = replay_node(next(n for n in fleet.nodes if n.name == A1))
    assert r["status"] != "error" and "baseline" in r
    assert not any("would not start" in i["message"] for i in r["issues"])
    assert any("SomeGateFromV139" in i["message"] and "most likely a newer one" in i["message"]
               for i in r["issues"] if i["severity"] == "warning")


def test_a_pod_in_two_dumps_is_replayed_once(example: Path) -> None:
    pods = json.loads((example / "pods.json").read_text())
    a1 = [p for p in pods["items"] if p["spec"]["nodeName"] == A1]
    (example / "more-pods.json").write_text(json.dumps({"kind": "List", "items": a1[:3]}))
    node = next(n for n in load_fleet([example]).nodes if n.name == A1)
    assert len(set(node.pod_files) | {r[0] for r in node.pod_ranges}) == 2
    assert replay_node(node)["podCount"] == len(a1)
