"""Review fixes: a sysfs MemTotal cadvisor refuses (or whose bytes wrap) and
a node memory quantity the quantity parser caps are refused, not taken as
another figure; JSON numbers past the float range keep their text (as YAML
reads them); the node's name is one the kubelet can run under."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.inputs.discover import load_node
from podnuma.inputs.discover.sysfs import read_sysfs
from podnuma.inputs.documents import load_json, load_json_streamed, parse_document

UINT64_MAX = (1 << 64) - 1
INT64_MAX = (1 << 63) - 1
SYNTH = {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, "threadsPerCore": 1}


def sysfs_tree(root: Path, node_kb: str, machine_kb: str | None = None) -> Path:
    """Two CPUs on NUMA node 0 whose ``meminfo`` says ``node_kb`` kB; with
    ``machine_kb``, a ``proc/meminfo`` beside ``sys/``."""
    sys_root = root / "sys"
    for cpu in (0, 1):
        topo = sys_root / "devices/system/cpu" / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu}\n")
        (topo / "physical_package_id").write_text("0\n")
    node = sys_root / "devices/system/node/node0"
    node.mkdir(parents=True)
    for cpu in (0, 1):
        (node / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
    (node / "meminfo").write_text(f"Node 0 MemTotal:       {node_kb} kB\nNode 0 MemFree: 1 kB\n")
    (node / "distance").write_text("10\n")
    if machine_kb is not None:
        (root / "proc").mkdir()
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {machine_kb} kB\n")
    return root


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def scenario(tmp_path: Path, node: dict[str, Any], limits: str = '{cpu: "1", memory: 1Gi}') -> Path:
    text = (
        "apiVersion: podnuma.io/v1\nkind: Scenario\n"
        + yaml.safe_dump({"node": node}, sort_keys=False)
        + 'kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}\n'
        "steps:\n  - addPod:\n      metadata: {name: a, namespace: x}\n"
        f"      spec: {{containers: [{{name: c, resources: {{limits: {limits}}}}}]}}\n"
    )
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return path


# --------------------------------------------------------------- 1. MemTotal


@pytest.mark.parametrize(
    ("kb", "words"),
    [
        # strconv.ParseUint(.., 10, 64) fails: cadvisor's getNodeMemInfo returns the error
        ("99999999999999999999999999", "MemTotal '99999999999999999999999999' kB: value out of range"),
        (str(UINT64_MAX + 1), f"MemTotal '{UINT64_MAX + 1}' kB: value out of range"),
        ("9" * 5000, "kB: value out of range"),  # (more digits than Python's int() takes)
    ],
)
def test_a_node_memtotal_cadvisor_cannot_hold_is_refused_naming_the_file(
    tmp_path: Path, kb: str, words: str
) -> None:
    root = sysfs_tree(tmp_path, kb)
    meminfo = root / "sys/devices/system/node/node0/meminfo"
    with pytest.raises(InputError) as exc:
        read_sysfs(root / "sys")
    assert exc.value.file == str(meminfo)
    assert words in exc.value.message
    got = invoke("node", "discover", "--sysfs", str(root))
    assert got.exit_code == 2 and got.stdout == ""
    (line,) = got.stderr.splitlines()
    assert line.startswith(f"error: {meminfo}: MemTotal ") and words in line
    assert len(line) < 400


@pytest.mark.parametrize(
    ("kb", "memory"),
    [
        # parses, and kB * 1024 wraps in cadvisor's uint64 (as cadvisor hands it on)
        (str(1 << 54), 0),
        (str((1 << 54) + 3), 3072),
        (str(UINT64_MAX), 18446744073709550592),
    ],
)
def test_a_node_memtotal_whose_bytes_wrap_is_cadvisors_wrapped_figure(tmp_path: Path, kb: str, memory: int) -> None:
    root = sysfs_tree(tmp_path, kb)
    info = read_sysfs(root / "sys")
    assert [n.memory for n in info.topology] == [memory]
    assert info.memory_capacity == memory  # (no proc/meminfo: the nodes' sum)
    root2 = sysfs_tree(tmp_path / "m", "1024", machine_kb=kb)
    assert read_sysfs(root2 / "sys").memory_capacity == memory


def test_the_machine_memtotal_is_read_as_cadvisor_reads_it(tmp_path: Path) -> None:
    root = sysfs_tree(tmp_path, "1024", machine_kb="99999999999999999999999999")
    with pytest.raises(InputError) as exc:
        read_sysfs(root / "sys")
    assert exc.value.file == str(root / "proc/meminfo")
    assert "value out of range" in exc.value.message


def test_the_largest_memtotal_that_fits_round_trips_through_node_discover(tmp_path: Path) -> None:
    """2^54-1 kB: the most bytes cadvisor's uint64 holds (past 2^63-1, so
    no binary suffix can carry it: printed as the plain number), and the
    mapping printed loads back into that figure."""
    kb = (1 << 54) - 1
    root = sysfs_tree(tmp_path, str(kb))
    assert read_sysfs(root / "sys").topology[0].memory == kb * 1024
    got = invoke("node", "discover", "--sysfs", str(root), "-o", "json")
    assert got.exit_code == 0, got.output
    node = json.loads(got.stdout)["node"]
    assert node["memory"] == {"0": {"memory": str(kb * 1024)}}
    assert load_node(node, base_dir=tmp_path).numa_nodes[0].memory == kb * 1024


def test_a_memtotal_after_a_vertical_tab_does_not_match_as_in_go(tmp_path: Path) -> None:
    """Go's ``\\s`` is ``[\\t\\n\\f\\r ]``: a vertical tab before the figure
    leaves cadvisor's regular expression without a match (Python's ``\\s``
    would take it)."""
    root = sysfs_tree(tmp_path, "1024")
    meminfo = root / "sys/devices/system/node/node0/meminfo"
    meminfo.write_text("Node 0 MemTotal:\x0b1024 kB\n")
    with pytest.raises(InputError) as exc:
        read_sysfs(root / "sys")
    assert exc.value.message == "failed to match MemTotal in node meminfo"


# ------------------------------------------------- 1. node memory quantities


@pytest.mark.parametrize(
    ("memory", "bytes_"),
    [
        ("7Ei", 7 << 60),
        ("9007199254740991.9990234375Ki", INT64_MAX),  # exactly 2^63-1
        # capped at 2^63-1 by the quantity parser, as resource.ParseQuantity caps them
        ("8Ei", INT64_MAX),
        ("99999999999999999999999999Ki", INT64_MAX),
        (str(INT64_MAX + 1), INT64_MAX + 1),  # a plain number is not capped (cadvisor's uint64)
        (str(UINT64_MAX), UINT64_MAX),
    ],
)
def test_node_memory_is_read_as_the_quantity_parser_reads_it(tmp_path: Path, memory: str, bytes_: int) -> None:
    node = {"cpus": [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}], "memory": {0: {"memory": memory}}}
    assert load_node(node, base_dir=tmp_path).numa_nodes[0].memory == bytes_


@pytest.mark.parametrize(("memory", "capacity"), [
    (str(INT64_MAX + 1), "-9223372036854775808"), (str(UINT64_MAX - 1023), "-1024"),
])
def test_a_node_memory_past_an_int64_stops_the_kubelet_as_its_capacity_wraps(
    tmp_path: Path, memory: str, capacity: str
) -> None:
    """The kubelet's capacity is ``int64(MemoryCapacity)``: 2^63 bytes or
    more wrap to a negative capacity, which the node allocatable check
    refuses (the oracle's answer, word for word)."""
    node = {"cpus": [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}, {"id": 1, "core": 1, "socket": 0,
            "numaNode": 0}], "memory": {0: {"memory": memory}}}
    path = scenario(tmp_path, node)
    got = invoke("simulate", str(path))
    assert got.exit_code == 2 and got.stdout == ""
    assert "invalid Node Allocatable configuration. Resource \"memory\" has a reservation of {{104857600 0} " \
        f"{{<nil>}}  BinarySI}} but capacity of {{{{{capacity} 0}} {{<nil>}}  BinarySI}}. Expected capacity " \
        ">= reservation." in got.stderr, got.stderr


# ----------------------------------------------------------- 2. JSON numbers


def test_a_json_number_past_the_float_range_keeps_its_text() -> None:
    text = '{"a": 1e400, "b": [-1E+400, 1e308, 2.5, 7], "c": 0.1}'
    want = {"a": "1e400", "b": ["-1E+400", 1e308, 2.5, 7], "c": 0.1}
    assert load_json(text, name="x.json") == want
    assert parse_document(text, name="x.json").data == want
    stream = load_json_streamed('{"k": 1, "items": [{"q": 1e999}, {"q": 5e-1}]}', name="x.json", key="items")
    assert not isinstance(stream, dict)
    assert list(stream.items()) == [{"q": "1e999"}, {"q": 0.5}]
    assert stream.top == {"k": 1}


def _pod(cpu: str) -> str:
    return ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"s"},"spec":{"containers":'
            '[{"name":"c","resources":{"limits":{"cpu":' + cpu + ',"memory":"1Gi"}}}]}}')


@pytest.mark.parametrize("command", ["advise", "compare"])
def test_a_json_pod_quantity_past_the_float_range_reads_as_in_yaml(tmp_path: Path, command: str) -> None:
    (tmp_path / "p.json").write_text(_pod("1e400"))
    (tmp_path / "p.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: s}\nspec:\n  containers:\n  - name: c\n"
        "    resources:\n      limits: {cpu: 1e400, memory: 1Gi}\n"
    )
    from_json = invoke(command, str(tmp_path / "p.json"))
    from_yaml = invoke(command, str(tmp_path / "p.yaml"))
    assert from_json.exit_code == from_yaml.exit_code == 2
    (jline,) = from_json.stderr.splitlines()
    (yline,) = from_yaml.stderr.splitlines()
    head = "spec.containers[0].resources.limits[cpu]: cpu 10e399 is 100000000000... (404 digits) millicores"
    assert jline.startswith(f"error: {tmp_path / 'p.json'}: {head}")
    assert "regular expression" not in jline
    # the same words, each with where the value is in its file
    assert jline.endswith("(line 1, column 136)"), jline
    assert yline.endswith("(line 8, column 21)"), yline
    assert yline.replace("p.yaml", "p.json").rsplit(" (line", 1)[0] == jline.rsplit(" (line", 1)[0]


def test_a_pods_dump_quantity_past_the_float_range_is_the_quantity_written(tmp_path: Path) -> None:
    """``restart --pods`` reads the dump with ``parse_document(json_only)``:
    the cpu limit is the quantity 1e400 (as the API server's decoder reads
    the number's text), found at its line and column, not infinity."""
    from podnuma.inputs.state import read_pods_dump

    dump = tmp_path / "pods.json"
    dump.write_text('{"kind":"List","items":[{"metadata":{"uid":"u","name":"a","namespace":"s"},\n'
                    '"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":1e400}}}]}}]}')
    (ref,) = read_pods_dump(dump).values()
    assert ref.manifest is not None
    assert ref.manifest["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "1e400"
    doc = parse_document(dump.read_text(), name=str(dump), json_only=True)
    second = dump.read_text().splitlines()[1]
    assert doc.locate("items[0].spec.containers[0].resources.limits[cpu]") == (2, second.index("1e400") + 1)


# ------------------------------------------------------------- 3. node names


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("   ", 'Invalid value: "   ": the kubelet\'s node name is its hostname with the white space around it '
               "trimmed, and nothing is left (the kubelet: empty hostname is invalid)"),
    ],
)
def test_a_node_name_the_kubelet_cannot_run_under_is_refused(tmp_path: Path, name: str, words: str) -> None:
    with pytest.raises(InputError) as exc:
        load_node({"synthetic": SYNTH, "name": name}, base_dir=tmp_path)
    assert (exc.value.path, exc.value.message) == ("name", words)
    path = scenario(tmp_path, {"name": name, "synthetic": SYNTH})
    got = invoke("simulate", str(path))
    assert got.exit_code == 2 and got.stdout == ""
    (line,) = got.stderr.splitlines()
    assert line == f"error: {path}: node.name: {words} (line 4, column 9)"
    root = sysfs_tree(tmp_path, "1024")
    got = invoke("node", "discover", "--sysfs", str(root), "--name", name)
    assert got.exit_code == 2 and got.stdout == ""
    assert got.stderr.splitlines() == [f"error: --name: {words}"]


@pytest.mark.parametrize("name", ["node", "worker-1.example.com", "a" * 300, "1e3", 'node<&>"x', "Worker-1",
                                  " node"])
def test_a_node_name_the_kubelet_runs_under_is_taken(tmp_path: Path, name: str) -> None:
    """Only a blank name is refused: the kubelet checks nothing else of its
    hostname (it trims and lowercases it: the name given is taken as the
    one it runs under)."""
    assert load_node({"synthetic": SYNTH, "name": name}, base_dir=tmp_path).name == name
    root = sysfs_tree(tmp_path, "1024")
    got = invoke("node", "discover", "--sysfs", str(root), "--name", name, "-o", "json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["node"]["name"] == name


def test_a_json_scenario_reads_a_number_past_the_float_range_as_yaml_does(tmp_path: Path) -> None:
    """The scenario read in one pass (``scenario_stream``) and whole: the
    cpu limit ``1e400`` is the quantity written, and the run is the YAML
    scenario's, figure for figure."""
    node = {"cpus": [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}, {"id": 1, "core": 1, "socket": 0,
            "numaNode": 0}], "memory": {0: {"memory": "8Gi"}}}
    yaml_path = scenario(tmp_path, node, limits="{cpu: 1e400, memory: 1Gi}")
    doc = yaml.safe_load(yaml_path.read_text().replace("1e400", "HUGE"))
    json_path = tmp_path / "s.json"
    json_path.write_text(json.dumps(doc).replace('"HUGE"', "1e400"))
    from_yaml = invoke("simulate", str(yaml_path), "-o", "json")
    from_json = invoke("simulate", str(json_path), "-o", "json")
    assert from_yaml.exit_code == from_json.exit_code == 0, from_json.output
    assert from_json.stdout == from_yaml.stdout


@pytest.mark.parametrize(
    ("relpath", "content", "words"),
    [
        # strconv.ParseUint: ASCII digits only, at most 2^64-1 (str.isdigit takes '²',
        # which int() then refuses; int() refuses more than 4300 digits)
        ("distance", "10 \u00b2\n", "cannot convert '\u00b2' to int"),
        ("distance", "10 \u0663\n", "cannot convert '\u0663' to int"),
        ("distance", "1" * 5000 + "\n", "... (5000 characters) to int"),
        ("distance", f"{UINT64_MAX + 1}\n", f"cannot convert '{UINT64_MAX + 1}' to int"),
        # Sscanf's %d into a uint64: no sign, no more than 2^64-1
        ("hugepages/hugepages-2048kB/nr_hugepages", "+5\n",
         'could not parse file nr_hugepage for hugepages-2048kB, contents "+5" (expected integer)'),
        ("hugepages/hugepages-2048kB/nr_hugepages", "9" * 5000 + "\n", "... (5000 characters)"),
        ("hugepages/hugepages-\u00b2kB/nr_hugepages", "1\n", "cannot parse the page size"),
        ("hugepages/hugepages-" + "2" * 200 + "kB/nr_hugepages", "1\n", "cannot parse the page size"),
    ],
)
def test_numbers_in_node_files_are_read_as_go_reads_them(
    tmp_path: Path, relpath: str, content: str, words: str
) -> None:
    root = sysfs_tree(tmp_path, "1024")
    target = root / "sys/devices/system/node/node0" / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    with pytest.raises(InputError) as exc:
        read_sysfs(root / "sys")
    assert words in exc.value.message
    assert exc.value.file in (str(target), str(target.parent))
    assert len(exc.value.message) < 200


def test_the_largest_distance_go_parses_is_taken(tmp_path: Path) -> None:
    root = sysfs_tree(tmp_path, "1024")
    (root / "sys/devices/system/node/node0/distance").write_text(f"{UINT64_MAX}\n")
    assert read_sysfs(root / "sys").topology[0].distances == (UINT64_MAX,)
