"""Every file field of a scenario (``node.machineInfoFile``, ``node.sysfs``,
``kubeletConfigFile``, ``state.cpuManagerFile``, ``state.memoryManagerFile``)
names the same file to podnuma and to the oracle (``resolve`` in
``oracle/internal/scenario/scenario.go``): a leading ``~/`` -- and only that,
not a bare ``~`` nor ``~user/`` -- is ``$HOME`` (kept as written when
``$HOME`` is empty); a relative path is joined to the scenario's directory
and cleaned lexically as Go's ``filepath.Join`` cleans it (``m.json/`` is
``m.json``; ``lnk/../m.json`` is ``m.json`` beside the scenario, never
through the link); an absolute path is opened as written (``/x/m.json/`` is
refused by the system). Each case runs ``simulate`` on both with ``HOME``
set to a directory of the test, and compares whether they read a file and
what they made of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MACHINE = ('{"num_cores": 2, "num_physical_cores": 2, "num_sockets": 1, "memory_capacity": 4294967296,'
           ' "topology": [{"node_id": 0, "memory": 4294967296, "cores": ['
           '{"core_id": 0, "thread_ids": [0], "socket_id": 0}, {"core_id": 1, "thread_ids": [1], "socket_id": 0}]}]}\n')
SYNTHETIC = ("node: {name: nd, synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 4, "
             "threadsPerCore: 1, memoryPerNumaNode: 4Gi}}\n")
POD_STEP = ("steps:\n- addPod:\n    metadata: {name: p}\n"
            "    spec: {containers: [{name: c, resources: {limits: {cpu: \"2\", memory: 1Gi}}}]}\n")
KUBELET_CONFIG = 'cpuManagerPolicy: static\nreservedSystemCPUs: "0"\n'
CPU_STATE = '{"policyName":"none","defaultCpuSet":"","checksum":1353318690}'

#: field -> (the scenario around the value, the file's text, what of the output shows it read)
FIELDS: dict[str, tuple[str, str, str]] = {
    "machineInfoFile": ("node: {name: nd, machineInfoFile: VALUE}\nsteps: []\n", MACHINE, "node"),
    "kubeletConfigFile": (SYNTHETIC + "kubeletConfigFile: VALUE\n" + POD_STEP, KUBELET_CONFIG, "steps"),
    "cpuManagerFile": (SYNTHETIC + "state: {cpuManagerFile: VALUE}\nsteps: []\n", CPU_STATE, "checkpoints"),
}

#: spelling -> (the value written, where the file is put: relative to the test's directory)
SPELLINGS: dict[str, tuple[str, str]] = {
    "tilde-slash": ("~/f", "home/f"),
    "tilde-slash-dot-dot": ("~/../f", "f"),
    "bare-tilde": ("~", "work/~"),
    "tilde-user": ("~root/f", "work/~root/f"),
    "trailing-slash": ("f/", "work/f"),
    "trailing-slash-dot": ("f/.", "work/f"),
    "dot-dot-after-a-link": ("lnk/../f", "work/f"),
    "dot-dot-out-of-the-directory": ("../f", "f"),
    "absolute-trailing-slash": ("ABS/work/f/", "work/f"),
    "absolute-dot-dot-after-a-link": ("ABS/work/lnk/../f", "home/f"),
}


def _podnuma(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                          check=False)


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["HOME"] = home
    return env


def _both(oracle: str, work: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str],
                                                                  subprocess.CompletedProcess[str]]:
    theirs = subprocess.run([oracle, "simulate", "s.yaml", "-o", "json"], capture_output=True, text=True,
                            env=env, cwd=work, timeout=120, check=False)
    return theirs, _podnuma(["simulate", "s.yaml", "-o", "json"], work, env)


def _part(out: str, key: str) -> Any:
    doc = json.loads(out)
    if key == "steps":  # (the CPUs the static policy gave: "1-2" with the file read, shared without)
        return [(c["name"], c["cpus"]) for c in doc["steps"][0]["containers"]]
    return doc[key]


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("field", list(FIELDS))
def test_a_file_field_names_the_file_the_oracle_reads(
        oracle_binary: str, tmp_path: Path, field: str, spelling: str) -> None:
    (tmp_path / "home" / "deep").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "lnk").symlink_to(tmp_path / "home" / "deep")
    template, content, key = FIELDS[field]
    value, where = SPELLINGS[spelling]
    value = value.replace("ABS", str(tmp_path))
    target = tmp_path / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    (work / "s.yaml").write_text("apiVersion: podnuma.io/v1\nkind: Scenario\n"
                                 + template.replace("VALUE", json.dumps(value)))
    theirs, ours = _both(oracle_binary, work, _env(str(tmp_path / "home")))
    assert (ours.returncode == 0) == (theirs.returncode == 0), (ours.stderr, theirs.stderr)
    if theirs.returncode == 0:
        assert _part(ours.stdout, key) == _part(theirs.stdout, key)
        if key == "steps":
            assert _part(ours.stdout, key) == [("c", "1-2")]
    else:
        assert ours.returncode == 2 and ours.stdout == "", ours.stderr
        assert len(ours.stderr.splitlines()) == 1, ours.stderr
    # (the cases read a file, or are refused by both, as Go reads them)
    refused = spelling == "absolute-trailing-slash"
    assert (theirs.returncode != 0) == refused, theirs.stderr


def test_tilde_slash_without_a_home_is_a_directory_named_tilde_beside_the_scenario(
        oracle_binary: str, tmp_path: Path) -> None:
    """``$HOME`` empty: Go's ``os.UserHomeDir`` fails and the oracle keeps
    ``~/f`` as written, the file ``~/f`` beside the scenario."""
    work = tmp_path / "work"
    (work / "~").mkdir(parents=True)
    (work / "~" / "f").write_text(MACHINE)
    (work / "s.yaml").write_text('apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {name: nd, machineInfoFile: "~/f"}\n'
                                 "steps: []\n")
    theirs, ours = _both(oracle_binary, work, _env(""))
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert _part(ours.stdout, "node") == _part(theirs.stdout, "node")
    assert _part(ours.stdout, "node")["cpus"] == "0-1"


@pytest.mark.parametrize("spelling", ["tilde-slash", "trailing-slash", "dot-dot-after-a-link"])
def test_a_sysfs_tree_is_found_where_the_oracle_finds_it(oracle_binary: str, tmp_path: Path, spelling: str) -> None:
    """``node.sysfs`` resolves as every file field does: a tree that is
    missing where both look is refused by both at that field, a tree put
    where the oracle looks is read by both."""
    value, where = {"tilde-slash": ("~/sys", "home/sys"), "trailing-slash": ("sys/", "work/sys"),
                    "dot-dot-after-a-link": ("lnk/../sys", "work/sys")}[spelling]
    (tmp_path / "home" / "deep").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    (work / "lnk").symlink_to(tmp_path / "home" / "deep")
    (work / "s.yaml").write_text('apiVersion: podnuma.io/v1\nkind: Scenario\n'
                                 f"node: {{name: nd, sysfs: {json.dumps(value)}}}\nsteps: []\n")
    env = _env(str(tmp_path / "home"))
    theirs, ours = _both(oracle_binary, work, env)
    assert theirs.returncode != 0 and ours.returncode == 2, (theirs.stderr, ours.stderr)
    assert "node.sysfs" in ours.stderr
    cpu = tmp_path / where / "devices" / "system" / "cpu"
    for n in (0, 1):
        topo = cpu / f"cpu{n}" / "topology"
        topo.mkdir(parents=True)
        for name, text in (("core_id", str(n)), ("physical_package_id", "0"), ("thread_siblings_list", str(n))):
            (topo / name).write_text(text + "\n")
    (cpu / "online").write_text("0-1\n")
    node0 = tmp_path / where / "devices" / "system" / "node" / "node0"
    node0.mkdir(parents=True)
    for n in (0, 1):
        (node0 / f"cpu{n}").symlink_to(f"../../cpu/cpu{n}")
    (node0 / "cpulist").write_text("0-1\n")
    (node0 / "meminfo").write_text("Node 0 MemTotal:       4194304 kB\n")
    (node0 / "distance").write_text("10\n")
    theirs, ours = _both(oracle_binary, work, env)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert _part(ours.stdout, "node") == _part(theirs.stdout, "node")
    assert _part(ours.stdout, "node")["cpus"] == "0-1"
