"""A file named with a trailing ``/`` (``r.json/``, ``r.json/.``) names a
directory, as the system reads it: written, it is refused as the system
refuses to make a file there (``cannot write: Is a directory``, ``Not a
directory`` where a file is) before any work; read, in the system's words
(``Not a directory``). :mod:`pathlib` drops the ending (``Path("r.json/")``
is ``r.json``): before, every writer wrote ``r.json`` and every reader read
it."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.cli.fast import _parse
from podnuma.fileio import atomic_write, file_name_errno
from podnuma.inputs.pathtext import names_directory, open_text, path_text

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "static-dual-socket.yaml")
FLEET = str(ROOT / "examples" / "fleet")
WHATIF = ROOT / "examples" / "whatif"
ADVISE = [str(WHATIF / "trainer-pod.yaml"), "--node", str(WHATIF / "node.yaml"),
          "--kubelet-config", str(WHATIF / "kubelet-config.yaml")]

#: (option, command line with ``{x}`` for the file written)
WRITERS: list[tuple[str, list[str]]] = [
    ("--output-file", ["topology", SCENARIO, "--output-file", "{x}"]),
    ("--output-file", ["fleet", "analyze", FLEET, "-o", "json", "--output-file", "{x}"]),
    ("--as-scenario", ["simulate", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["explain", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["restart", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["advise", *ADVISE, "--as-scenario", "{x}"]),
]


#: the console script's entry point, in a process of its own
RUN = "import sys; from podnuma.cli import main; sys.exit(main(sys.argv[1:], own_process=True))"


def _tree(root: Path) -> list[tuple[str, bool]]:
    return sorted((str(p.relative_to(root)), p.is_dir()) for p in root.rglob("*"))


@pytest.mark.parametrize(("option", "argv"), WRITERS, ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
@pytest.mark.parametrize(("kind", "ending", "problem"), [
    ("missing", "/", "Is a directory"),
    ("missing", "/.", "Is a directory"),
    ("file", "/", "Not a directory"),
    ("directory", "/", "Is a directory"),
    ("no-parent", "/", "its directory does not exist"),
])
def test_a_file_written_under_a_directory_name_is_refused_before_any_work(
    tmp_path: Path, option: str, argv: list[str], kind: str, ending: str, problem: str
) -> None:
    target = tmp_path / ("no" if kind == "no-parent" else "") / "r.json"
    if kind == "file":
        target.write_text("kept\n")
    elif kind == "directory":
        target.mkdir()
    before = _tree(tmp_path)
    name = f"{target}{ending}"
    r = CliRunner().invoke(cli, [a.replace("{x}", name) for a in argv])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr == f"error: {name}: {option}: cannot write: {problem}\n"
    assert _tree(tmp_path) == before
    if kind == "file":
        assert target.read_text() == "kept\n"


def test_the_fast_path_of_fleet_analyze_says_it_in_the_same_words(tmp_path: Path) -> None:
    # (``fleet analyze INPUT --output-file FILE`` runs without click: a
    # directory's name is left to click, whose option refuses it)
    name = f"{tmp_path / 'r.json'}/"
    args = ["fleet", "analyze", FLEET, "-o", "json", "--output-file", name]
    # (left to click, which the fast path would otherwise skip)
    assert _parse(args) is None
    assert _parse([*args[:-1], name.rstrip("/")]) is not None
    r = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {name}: --output-file: cannot write: Is a directory\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ending", ["/", "/."])
def test_the_fast_path_of_simulate_reads_as_click_does(ending: str) -> None:
    args = ["simulate", SCENARIO + ending, "-o", "json"]
    assert _parse(args) is not None
    r = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"error: {SCENARIO}{ending}: cannot read scenario file: Not a directory\n"


@pytest.mark.parametrize("ending", ["/", "/."])
def test_a_file_read_under_a_directory_name_is_refused_in_the_systems_words(ending: str) -> None:
    r = CliRunner().invoke(cli, ["simulate", SCENARIO + ending, "-o", "json"])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {SCENARIO}{ending}: cannot read scenario file: Not a directory\n"
    node = str(WHATIF / "node.yaml") + ending
    r = CliRunner().invoke(cli, ["advise", str(WHATIF / "trainer-pod.yaml"), "--node", node,
                                 "--kubelet-config", str(WHATIF / "kubelet-config.yaml")])
    assert r.exit_code == 2
    assert r.stderr == f"error: {node}: cannot read node file: Not a directory\n"


def test_a_file_option_taken_as_a_path_is_refused_too(tmp_path: Path) -> None:
    name = f"{tmp_path / 'kubelet.sock'}/"
    r = CliRunner().invoke(cli, ["podresources", "list", "--socket", name])
    assert r.exit_code == 2
    assert r.stderr == f"error: {name}: --socket: no such socket\n"


@pytest.mark.parametrize(("kind", "code"), [
    ("missing", errno.EISDIR), ("file", errno.ENOTDIR), ("directory", errno.EISDIR),
])
def test_atomic_write_refuses_a_directory_name_and_makes_nothing(tmp_path: Path, kind: str, code: int) -> None:
    target = tmp_path / "r.json"
    if kind == "file":
        target.write_bytes(b"kept")
    elif kind == "directory":
        target.mkdir()
    before = _tree(tmp_path)
    for name in (f"{target}/", f"{target}/."):
        assert file_name_errno(name) == code
        with pytest.raises(OSError) as e:
            atomic_write(name, b"new")
        assert e.value.errno == code
        assert _tree(tmp_path) == before
    if kind == "file":
        assert target.read_bytes() == b"kept"
    # the same name without the ending is written as before
    if kind != "directory":
        atomic_write(str(target), b"new")
        assert target.read_bytes() == b"new"
        assert file_name_errno(str(target)) is None


#: (text, whether it ends as a directory's name that pathlib drops)
NAMES = [
    ("f", False), ("f/", True), ("f/.", True), ("f/./", True), ("f//", True), ("a/b/", True),
    ("a/b/.", True), ("/", False), ("//", False), ("///", False), ("/.", False), (".", False),
    ("./", True), ("..", False), ("../", True), ("a/..", False), ("a/../", True), ("/a/", True),
    ("//a/", True), ("a/./b", False), ("", False), ("f/.x", False), ("f./", True),
]


@pytest.mark.parametrize(("text", "ends"), NAMES)
def test_names_directory_and_open_text_against_pathlib(text: str, ends: bool) -> None:
    pure = str(PurePosixPath(text))
    assert path_text(text) == pure
    assert names_directory(text) is ends
    assert open_text(text) == (pure + "/" if ends else pure)


@pytest.mark.parametrize(("text", "ends"), [
    (t, e) for t, e in NAMES
    # (relative names of a file that can be made: not the working directory or its parent)
    if t and not t.startswith("/") and ".." not in t and str(PurePosixPath(t)) != "."
])
def test_open_text_opens_what_the_text_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              text: str, ends: bool) -> None:
    # every part a regular file where the text names a file: the system
    # refuses the name that ends as a directory's, and so does open_text's
    monkeypatch.chdir(tmp_path)
    target = PurePosixPath(text)
    (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / target).write_text("x")
    for name in (text, open_text(text)):
        try:
            os.close(os.open(name, os.O_RDONLY))
            opened = True
        except NotADirectoryError:
            opened = False
        assert opened is not ends, name


def test_files_a_document_names_are_refused_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario's ``kubeletConfigFile``, a node's ``machineInfoFile``, a
    FleetConfig's ``kubeletConfigFile`` and ``nodeFile``, a kubeconfig's
    ``tokenFile``, named by an absolute path: opened as written, as Go opens
    it (a relative one is joined and cleaned as Go's ``filepath.Join``
    cleans it: tests/cli/test_document_file_paths.py)."""
    monkeypatch.chdir(tmp_path)
    Path("kc.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    Path("info.json").write_text("{}")
    for ending in ("/", "/."):
        Path("s.yaml").write_text(f"apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {{synthetic: {{sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, memoryPerNumaNode: 1Gi}}}}\n"
                                  f"kubeletConfigFile: {tmp_path}/kc.yaml{ending}\nsteps: []\n")
        r = CliRunner().invoke(cli, ["simulate", "s.yaml", "-o", "json"])
        assert (r.exit_code, r.stdout) == (2, "")
        assert r.stderr.startswith("error: s.yaml: kubeletConfigFile: cannot read kubelet configuration "
                                   f"file '{tmp_path}/kc.yaml/': Not a directory"), r.stderr
        Path("s.yaml").write_text(f"apiVersion: podnuma.io/v1\nkind: Scenario\n"
                                  f"node: {{machineInfoFile: {tmp_path}/info.json{ending}}}\nsteps: []\n")
        r = CliRunner().invoke(cli, ["simulate", "s.yaml", "-o", "json"])
        assert (r.exit_code, r.stdout) == (2, "")
        assert r.stderr == (f"error: {tmp_path}/info.json/: node.machineInfoFile: cannot read machine info file: "
                            "Not a directory\n"), r.stderr
    fleet = tmp_path / "fleet"
    shutil.copytree(FLEET, fleet)
    for field in ("kubeletConfigFile", "nodeFile"):
        (fleet / "f.yaml").write_text("{}")
        (fleet / "fleet.yaml").write_text(
            f"apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups:\n- name: g\n  selector: a=b\n"
            f"  {field}: {fleet}/f.yaml/\n")
        r = CliRunner().invoke(cli, ["fleet", "analyze", str(fleet), "-o", "json"])
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"error: {fleet}/f.yaml/: nodeGroups[0].{field}: cannot read input file: "
                            "Not a directory\n"), r.stderr
    from podnuma.errors import InputError
    from podnuma.fleet.live import _read_token_file

    Path("tok").write_text("secret\n")
    doc = {"current-context": "c", "contexts": [{"name": "c", "context": {"user": "u"}}],
           "users": [{"name": "u", "user": {"tokenFile": f"{tmp_path}/tok/"}}]}
    with pytest.raises(InputError) as e:
        _read_token_file(doc, None, "kubeconfig", str(tmp_path))
    assert e.value.path == "users[0].user.tokenFile"
    assert e.value.message.endswith(": cannot read token file: Not a directory"), e.value.message
    doc["users"][0]["user"] = {"tokenFile": "tok"}  # type: ignore[index]
    _read_token_file(doc, None, "kubeconfig", str(tmp_path))
    assert doc["users"][0]["user"] == {"token": "secret"}  # type: ignore[index]
