"""``podnuma node discover``: the discovered ``cpus`` table loads into the
very machine the ``sysfs`` form gives, on every shared snapshot and on
this machine; ``online: false`` rows; bad trees name the missing file."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.inputs.discover import load_node
from podnuma.inputs.scenario import load_scenario

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "sysfs"
HEADER = "apiVersion: podnuma.io/v1\nkind: Scenario\n"


def _missing(reason: str) -> None:
    """The shared sysfs snapshots live beside the repository, not in it:
    where they are absent (a bare checkout) these tests skip."""
    pytest.skip(reason)


def _safe_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    if not member.name.lstrip("./").startswith("sys/devices/system"):
        return None
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    if not FIXTURES.is_dir():
        _missing(f"shared sysfs snapshots not found at {FIXTURES} (../shared/fixtures/sysfs)")
    out: dict[str, Path] = {}
    base = tmp_path_factory.mktemp("discover-snapshots")
    for archive in sorted(FIXTURES.glob("*.tar.gz")):
        dest = base / archive.name.removesuffix(".tar.gz")
        dest.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter=_safe_member)
        out[dest.name] = dest / "sys"
    assert out, f"no snapshot in {FIXTURES}"
    yield out


def _discover(runner: CliRunner, root: Path, output: str = "yaml") -> str:
    res = runner.invoke(cli, ["node", "discover", "--sysfs", str(root), "-o", output])
    assert res.exit_code == 0, res.output
    return res.output


def _same_machine_through_simulate(tmp_path: Path, discovered: str, root: Path) -> None:
    """The output, pasted unchanged into a scenario, gives the machine of
    the sysfs form, and ``simulate`` runs it."""
    table = tmp_path / "table.yaml"
    table.write_text(HEADER + discovered + "steps: []\n")
    sysfs = tmp_path / "sysfs.yaml"
    sysfs.write_text(HEADER + yaml.safe_dump({"node": {"sysfs": str(root)}, "steps": []}))
    assert load_scenario(table).machine == load_scenario(sysfs).machine
    # simulate runs both the same way: the same document, or (a snapshot
    # without memory: the default eviction reservation exceeds a capacity of
    # 0) the same start-up refusal
    runs = [CliRunner().invoke(cli, ["simulate", str(f), "-o", "json"]) for f in (table, sysfs)]
    assert runs[0].exit_code in (0, 2), runs[0].output
    assert runs[0].exit_code == runs[1].exit_code
    assert runs[0].output.replace(str(table), "S") == runs[1].output.replace(str(sysfs), "S")
    if runs[0].exit_code == 2:
        assert "kubelet would not start" in runs[0].output


def test_every_snapshot_round_trips(snapshots: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    for name, root in snapshots.items():
        sub = tmp_path / name
        sub.mkdir()
        _same_machine_through_simulate(sub, _discover(runner, root), root)
        doc = json.loads(_discover(runner, root, "json"))
        assert load_node(doc["node"], base_dir=sub) == load_node({"sysfs": str(root)}, base_dir=sub)


def test_offline_snapshot_lists_offline_cpus(snapshots: dict[str, Path]) -> None:
    name = "linux-amd64-offlineCPUs"
    if name not in snapshots:
        _missing(f"snapshot {name} not in {FIXTURES}")
    doc = json.loads(_discover(CliRunner(), snapshots[name], "json"))
    rows = doc["node"]["cpus"]
    assert [r["id"] for r in rows] == [0, 1, 2, 3]
    assert [r.get("online", True) for r in rows] == [True, True, False, False]
    assert rows[2] == {"id": 2, "numaNode": 0, "online": False}


def test_dual_socket_snapshot_memory_and_distances(snapshots: dict[str, Path]) -> None:
    name = "linux-amd64-8581cf3a529e5d8b97ea876eade2f60d"
    if name not in snapshots:
        _missing(f"snapshot {name} not in {FIXTURES}")
    node = yaml.safe_load(_discover(CliRunner(), snapshots[name]))["node"]
    assert node["memory"][0] == {"memory": "32980312Ki", "hugepages-2Mi": 0, "hugepages-1Gi": 0}
    assert node["distances"] == {0: [10, 20], 1: [20, 10]}
    assert len(node["cpus"]) == 24


def test_this_machine(tmp_path: Path) -> None:
    root = Path("/sys")
    if not (root / "devices" / "system" / "cpu").is_dir():
        _missing("this machine has no /sys/devices/system/cpu")
    out = _discover(CliRunner(), root)
    _same_machine_through_simulate(tmp_path, out, root)


def test_not_a_sysfs_tree_is_input_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tmp_path)])
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {tmp_path}: not a sysfs root: devices/system is missing"


def test_partial_tree_names_the_missing_file(tmp_path: Path) -> None:
    cpu = tmp_path / "devices" / "system" / "cpu" / "cpu0" / "topology"
    cpu.mkdir(parents=True)
    (cpu / "core_id").write_text("0\n")
    (cpu / "physical_package_id").write_text("0\n")
    node = tmp_path / "devices" / "system" / "node" / "node0"
    (node / "hugepages" / "hugepages-2048kB").mkdir(parents=True)
    (node / "cpu0").mkdir()
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tmp_path)])
    assert res.exit_code == 2
    missing = node / "hugepages" / "hugepages-2048kB" / "nr_hugepages"
    assert res.output.strip() == f"error: {missing}: missing nr_hugepages"


# ---------------------------------------------------------- online: false rows


def _table(rows: list[dict[str, object]]) -> dict[str, object]:
    return {"cpus": rows, "memory": {0: {"memory": "1Gi"}}}


def test_offline_row_is_left_out_like_sysfs(tmp_path: Path) -> None:
    machine = load_node(
        _table(
            [
                {"id": 0, "core": 0, "socket": 0, "numaNode": 0},
                {"id": 1, "core": 1, "socket": 0, "numaNode": 0},
                {"id": 2, "online": False},
                {"id": 3, "core": 3, "socket": 0, "numaNode": 0, "online": False},
            ]
        ),
        base_dir=tmp_path,
    )
    assert machine.topology.cpus().list() == [0, 1]
    assert machine.topology.num_cpus == 2


@pytest.mark.parametrize(
    ("rows", "path", "message"),
    [
        ([{"id": 0, "online": "no"}], "cpus[0].online", "must be true or false"),
        ([{"id": 0, "socket": 0, "numaNode": 0}], "cpus[0].core", "required field is missing"),
        (
            [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}, {"id": 0, "online": False}],
            "cpus[1].id",
            "CPU 0 is already listed at cpus[0]",
        ),
        ([{"id": 1, "online": False, "numaNode": -1}], "cpus[0].numaNode", "must be a non-negative integer, got -1"),
    ],
)
def test_bad_online_rows(tmp_path: Path, rows: list[dict[str, object]], path: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        load_node(_table(rows), base_dir=tmp_path)
    assert info.value.path == path and info.value.message == message


def test_every_cpu_offline_is_the_kubelet_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="could not detect number of cpus"):
        load_node(_table([{"id": 0, "online": False}]), base_dir=tmp_path)
