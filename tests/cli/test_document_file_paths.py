"""A file a document names is resolved one way (docs/scenario.md, docs/cli.md):

* a scenario's or node form's field: the oracle's rule (a leading ``~/`` is
  ``$HOME``; a relative path joined to the document's directory and
  cleaned lexically as Go's ``filepath.Join`` cleans it; an absolute one
  opened as written) -- ``tests/oracle/test_document_file_paths_differential.py``
  compares it with the oracle;
* a kubeconfig's ``tokenFile``, ``certificate-authority``,
  ``client-certificate``, ``client-key``: client-go's ``ResolvePaths``
  (v0.37.2 ``tools/clientcmd/loader.go``): the same join and clean for a
  relative path, an absolute one opened as written, no ``~``;
* ``-`` is the file named ``-`` beside the document, named ``./-`` in every
  message (never the bare ``-`` that is standard input on the command line),
  ``sysfs`` included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.pathtext import referenced_text


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
                          check=False)


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize(("base", "ref", "home", "expected"), [
    (".", "m.json/", "/h", "m.json"),
    (".", "m.json/.", "/h", "m.json"),
    ("work", "lnk/../m.json", "/h", "work/m.json"),
    ("work", "../../m.json", "/h", "../m.json"),
    ("/s", "a//b/./c/", "/h", "/s/a/b/c"),
    (".", "~/kc.yaml", "/h", "/h/kc.yaml"),
    (".", "~/", "/h", "/h"),
    (".", "~/../x", "/h/", "/x"),
    ("work", "~/kc.yaml", "rel", "work/rel/kc.yaml"),  # (a relative $HOME is joined too, as Go joins it)
    ("work", "~/kc.yaml", "", "work/~/kc.yaml"),  # ($HOME empty: as written)
    ("work", "~", "/h", "work/~"),
    ("work", "~root/x", "/h", "work/~root/x"),
    (".", "/abs/m.json/", "/h", "/abs/m.json/"),  # (absolute: as written, refused by the system)
    (".", "/abs/lnk/../m.json", "/h", "/abs/lnk/../m.json"),
    (".", "-", "/h", "./-"),
    ("./", "./-", "/h", "./-"),
    ("d", "-", "/h", "d/-"),
])
def test_a_document_field_is_resolved_as_go_resolves_it(
        monkeypatch: pytest.MonkeyPatch, base: str, ref: str, home: str, expected: str) -> None:
    monkeypatch.setenv("HOME", home)
    assert referenced_text(base, ref) == expected


def test_a_kubeconfig_field_never_expands_the_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    """client-go's ``ResolvePaths`` joins ``~/tok`` to the kubeconfig's
    directory: there is no ``~`` in a kubeconfig."""
    monkeypatch.setenv("HOME", "/h")
    assert referenced_text("/k", "~/tok", home=False) == "/k/~/tok"
    assert referenced_text("/k", "tok/", home=False) == "/k/tok"


SYSFS_DASH = "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {name: nd, sysfs: \"-\"}\nsteps: []\n"


def test_sysfs_dash_in_a_scenario_is_named_as_the_file_beside_it(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SYSFS_DASH)
    line = _one_line(_run(["simulate", "s.yaml"], tmp_path))
    assert line.startswith("error: ./-: node.sysfs: cannot read: No such file or directory"), line


def test_sysfs_dash_in_a_node_form_is_named_as_the_file_beside_it(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text('name: nd\nsysfs: "-"\n')
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"
    (tmp_path / "pod.yaml").write_text(pod)
    line = _one_line(_run(["advise", "pod.yaml", "--node", "node.yaml"], tmp_path))
    assert line.startswith("error: ./-: sysfs: cannot read: No such file or directory"), line


def test_a_file_in_a_sysfs_dash_tree_is_named_under_dot_slash_dash(tmp_path: Path) -> None:
    """A tree named ``-`` that is there but no sysfs copy: its files are
    named under ``./-`` too."""
    (tmp_path / "-").mkdir()
    (tmp_path / "s.yaml").write_text(SYSFS_DASH)
    line = _one_line(_run(["simulate", "s.yaml"], tmp_path))
    assert line.startswith("error: ./-: node.sysfs: "), line


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {tokenFile: "TOKEN"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
"""


@pytest.mark.parametrize("token", ["tok/", "tok/.", "sub/../tok", "./tok/"])
def test_a_relative_token_file_is_read_as_client_go_reads_it(tmp_path: Path, token: str) -> None:
    """Joined and cleaned: the token is read and the (absent) server is
    what fails."""
    (tmp_path / "tok").write_text("abc\n")
    (tmp_path / "kc.yaml").write_text(KUBECONFIG.replace("TOKEN", token))
    line = _one_line(_run(["fleet", "analyze", "--kubeconfig", "kc.yaml"], tmp_path))
    assert "tokenFile" not in line, line
    assert "cannot reach the API server" in line, line


def test_an_absolute_token_file_ending_in_a_slash_is_refused_as_the_system_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("abc\n")
    (tmp_path / "kc.yaml").write_text(KUBECONFIG.replace("TOKEN", f"{tmp_path}/tok/"))
    line = _one_line(_run(["fleet", "analyze", "--kubeconfig", "kc.yaml"], tmp_path))
    assert line == (f"error: kc.yaml: users[0].user.tokenFile: {tmp_path}/tok/: cannot read token file: "
                    "Not a directory"), line


def _kubeconfig(cluster: dict[str, str], user: dict[str, str]) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "here",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", **cluster}}],
        "users": [{"name": "u", "user": {"token": "t", **user}}],
        "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}],
    })


def _layout(d: Path) -> None:
    (d / "pki").mkdir(parents=True)
    for f in ("ca.crt", "user.crt", "user.key"):
        (d / "pki" / f).write_text(f"{f}\n")


def test_relative_certificate_files_are_joined_and_cleaned(tmp_path: Path) -> None:
    pytest.importorskip("kubernetes")
    from podnuma.fleet.live import _api_client

    _layout(tmp_path)
    (tmp_path / "lnk").symlink_to(tmp_path / "pki")
    (tmp_path / "kc.json").write_text(_kubeconfig({"certificate-authority": "pki/ca.crt/"},
                                                  {"client-certificate": "lnk/../pki/user.crt",
                                                   "client-key": "pki/./user.key/."}))
    conf = _api_client(str(tmp_path / "kc.json"), None).configuration
    assert conf.ssl_ca_cert == str(tmp_path / "pki" / "ca.crt")
    assert (conf.cert_file, conf.key_file) == (str(tmp_path / "pki" / "user.crt"), str(tmp_path / "pki" / "user.key"))


@pytest.mark.parametrize(("field", "at"), [
    ("certificate-authority", "clusters[0].cluster.certificate-authority"),
    ("client-certificate", "users[0].user.client-certificate"),
    ("client-key", "users[0].user.client-key"),
])
def test_an_absolute_certificate_file_is_opened_as_written(tmp_path: Path, field: str, at: str) -> None:
    """``/pki/ca.crt/`` is no file (client-go opens it as written and the
    system refuses it); ``/lnk/../ca.crt`` is the file the system finds
    through the link, not ``/ca.crt``."""
    pytest.importorskip("kubernetes")
    from podnuma.fleet.live import _api_client

    _layout(tmp_path)
    name = {"certificate-authority": "ca.crt", "client-certificate": "user.crt", "client-key": "user.key"}[field]
    cluster, user = ({field: f"{tmp_path}/pki/{name}/"}, {}) if field == "certificate-authority" else \
        ({}, {field: f"{tmp_path}/pki/{name}/"})
    (tmp_path / "kc.json").write_text(_kubeconfig(cluster, user))
    with pytest.raises(InputError) as e:
        _api_client(str(tmp_path / "kc.json"), None)
    assert e.value.path == at
    assert e.value.message == f"{tmp_path}/pki/{name}/: cannot read: Not a directory"
    # through a link: the link's target's parent
    (tmp_path / "deep" / "inner").mkdir(parents=True)
    (tmp_path / "deep" / name).write_text("through the link\n")
    (tmp_path / "lnk").symlink_to(tmp_path / "deep" / "inner")
    (tmp_path / name).write_text("beside\n")
    written = f"{tmp_path}/lnk/../{name}"
    cluster, user = ({field: written}, {}) if field == "certificate-authority" else ({}, {field: written})
    (tmp_path / "kc.json").write_text(_kubeconfig(cluster, user))
    conf = _api_client(str(tmp_path / "kc.json"), None).configuration
    got = {"certificate-authority": conf.ssl_ca_cert, "client-certificate": conf.cert_file,
           "client-key": conf.key_file}[field]
    assert Path(got).read_text() == "through the link\n"


@pytest.mark.parametrize("spelling", ["~/kc.yaml", "../conf/kc.yaml/", "../conf/lnk/../kc.yaml"])
def test_a_fleet_configs_file_field_is_resolved_as_a_scenarios(tmp_path: Path, spelling: str) -> None:
    """A FleetConfig is one of podnuma's documents: its ``kubeletConfigFile``
    resolves by the same rule, reads what the inline configuration is, and
    is named as resolved (cleaned) where the report says where a node's
    configuration came from."""
    import shutil

    import yaml

    fleet = tmp_path / "fleet"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "fleet", fleet)
    inline = _run(["fleet", "analyze", str(fleet), "-o", "json"], tmp_path)
    assert inline.returncode == 0, inline.stderr
    doc = yaml.safe_load((fleet / "fleet.yaml").read_text())
    group = doc["nodeGroups"][0]
    kc = group.pop("kubeletConfig")
    home, conf = tmp_path / "home", tmp_path / "conf"
    (home / "deep").mkdir(parents=True)
    conf.mkdir()
    (conf / "lnk").symlink_to(home / "deep")
    where = home if spelling.startswith("~/") else conf
    (where / "kc.yaml").write_text(yaml.safe_dump(kc))
    group["kubeletConfigFile"] = spelling
    (fleet / "fleet.yaml").write_text(yaml.safe_dump(doc))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["HOME"] = str(home)
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    named = subprocess.run([*cmd, "fleet", "analyze", str(fleet), "-o", "json"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120, check=False)
    assert named.returncode == 0, named.stderr
    source = f"group general ({where / 'kc.yaml'})"
    assert source in named.stdout
    assert json.loads(named.stdout.replace(source, f"group general ({fleet / 'fleet.yaml'}#nodeGroups[0].kubeletConfig)")) \
        == json.loads(inline.stdout)


def test_a_node_file_under_the_home_directory_resolves_its_own_files_beside_it(tmp_path: Path) -> None:
    """``nodeFile: ~/node.yaml`` is read from ``$HOME``, and a relative
    ``machineInfoFile`` in it (``m.json/``, cleaned) is the file beside it
    there: the node group's machine is the one that file describes."""
    import re
    import shutil

    import yaml

    fleet = tmp_path / "fleet"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "fleet", fleet)
    doc = yaml.safe_load((fleet / "fleet.yaml").read_text())
    home = tmp_path / "home"
    home.mkdir()
    group = next(g for g in doc["nodeGroups"] if "node" in g)
    group.pop("node")
    group["nodeFile"] = "~/node.yaml"
    (fleet / "fleet.yaml").write_text(yaml.safe_dump(doc))
    (home / "node.yaml").write_text("machineInfoFile: m.json/\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["HOME"] = str(home)
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]

    def analyze() -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cmd, "fleet", "analyze", str(fleet), "-o", "json"], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=120, check=False)

    missing = analyze()
    assert f"{home / 'm.json'}: machineInfoFile: topology not usable: machine info file not found" in \
        missing.stderr, missing.stderr
    machine = {"num_cores": 2, "num_physical_cores": 2, "num_sockets": 1, "memory_capacity": 4294967296,
               "topology": [{"node_id": 0, "memory": 4294967296, "cores": [
                   {"core_id": 0, "thread_ids": [0], "socket_id": 0},
                   {"core_id": 1, "thread_ids": [1], "socket_id": 0}]}]}
    (home / "m.json").write_text(json.dumps(machine))
    read = analyze()
    assert read.returncode == 0, read.stderr
    assert "machineInfoFile" not in read.stderr, read.stderr
    sources = re.findall(r'"topologySource": "group ' + re.escape(group["name"]) + r' \(([^)]*)\)"', read.stdout)
    assert sources, read.stdout  # (the group's nodes replayed on the machine of home/m.json)


SYN = ('"node": {"name": "nd", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, '
       '"threadsPerCore": 1, "memoryPerNumaNode": "1Gi"}}')


@pytest.mark.parametrize(("field", "scenario"), [
    ("node.machineInfoFile", '"node": {"name": "nd", "machineInfoFile": "~/a\\u0000/"}'),
    ("node.sysfs", '"node": {"name": "nd", "sysfs": "a\\u0000"}'),
    ("kubeletConfigFile", 'SYN, "kubeletConfigFile": "a\\u0000/"'),
    ("state.cpuManagerFile", 'SYN, "state": {"cpuManagerFile": "a\\u0000"}'),
])
def test_a_file_field_holding_a_nul_byte_is_refused_at_its_field(tmp_path: Path, field: str, scenario: str) -> None:
    """No system call takes a NUL byte (the oracle's reader: ``invalid
    argument``): one line at the field, never an internal error."""
    scenario = scenario.replace("SYN", SYN)
    (tmp_path / "s.json").write_text('{"apiVersion": "podnuma.io/v1", "kind": "Scenario", ' + scenario
                                     + ', "steps": []}')
    line = _one_line(_run(["simulate", "s.json"], tmp_path))
    assert line.startswith(f"error: s.json: {field}: "), line
    assert "is no file name: it holds a NUL byte" in line, line


@pytest.mark.parametrize(("at", "cluster", "user"), [
    ("users[0].user.tokenFile", {}, {"tokenFile": "tok\u0000/"}),
    ("clusters[0].cluster.certificate-authority", {"certificate-authority": "/pki/\u0000/"}, {}),
])
def test_a_kubeconfig_file_holding_a_nul_byte_is_refused_at_its_field(
        tmp_path: Path, at: str, cluster: dict[str, str], user: dict[str, str]) -> None:
    (tmp_path / "kc.json").write_text(_kubeconfig(cluster, user))
    line = _one_line(_run(["fleet", "analyze", "--kubeconfig", "kc.json"], tmp_path))
    assert line.startswith(f"error: kc.json: {at}: "), line
    assert "is no file name: it holds a NUL byte" in line, line
