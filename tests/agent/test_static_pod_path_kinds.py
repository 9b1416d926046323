"""What ``podnuma agent --manifests`` may name: what the kubelet's
``staticPodPath`` may be.

The file source's ``listConfig`` (pkg/kubelet/config/file.go) looks at the
path with ``stat`` (trailing separators dropped first, ``NewSourceFile``):

- a directory: its ``[^.]*`` files, each a pod;
- one regular file (``extractFromFile``): its pod is the source's whole
  set; a refused file logs the error and sends no update, so the pod
  already there stays;
- nothing (``ENOENT``): no error at start, an empty set sent (``path does
  not exist, ignoring``, logged), looked at again (the ticker, the watch's
  retry every second), so pods appear once the path is made;
- behind a regular file (``ENOTDIR``): an error logged, no update, looked
  at again, so pods appear once the path is made there too.

A real agent on real files; the start checks through the CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from tests.agent.helpers import AgentProcess, classic_pod, write_manifest


def _admitted(status: dict[str, object]) -> list[str]:
    pods = status["pods"]
    assert isinstance(pods, list)
    return sorted(p["name"] for p in pods if p["admitted"])


def _stop(agent: AgentProcess) -> None:
    assert agent.proc is not None
    if agent.proc.poll() is None:
        agent.signal()


def test_static_pod_path_may_be_one_file(tmp_path: Path) -> None:
    """``--manifests FILE``: that file's pod admitted; an edit to a pod
    the kubelet refuses keeps the one admitted (no update), a valid edit
    replaces it, and the file removed removes it."""
    agent = AgentProcess(tmp_path)
    shutil.rmtree(agent.manifests)
    pod_file = write_manifest(tmp_path, "pod.yaml", classic_pod("p"))
    agent.manifests = pod_file
    agent.start()
    try:
        agent.wait(lambda s: _admitted(s) == ["p-kep-node"], "the pod admitted")
        write_manifest(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n")
        agent.wait(lambda s: "Manifests not read, pods kept" in agent.log(), "the refusal logged")
        status = agent.status()
        assert status is not None and _admitted(status) == ["p-kep-node"]
        write_manifest(tmp_path, "pod.yaml", classic_pod("q"))
        agent.wait(lambda s: _admitted(s) == ["q-kep-node"], "the edited pod admitted instead")
        write_manifest(tmp_path, "other.yaml", classic_pod("other"))  # (beside it: not read)
        pod_file.unlink()
        agent.wait(lambda s: s["pods"] == [], "the pod gone with its file")
    finally:
        _stop(agent)


def test_static_pod_path_made_after_the_start(tmp_path: Path) -> None:
    """A path that does not exist yet: the agent starts with no static
    pods (``path does not exist, ignoring``, logged) and takes the pods
    once the directory is made; removed again, they go."""
    agent = AgentProcess(tmp_path)
    agent.manifests.rmdir()
    agent.start()
    try:
        agent.wait(lambda s: s["syncs"] >= 1, "the first sync, with no manifest directory")
        assert "Static pod path does not exist, ignoring" in agent.log()
        agent.manifests.mkdir()
        write_manifest(agent.manifests, "pod.yaml", classic_pod("p"))
        agent.wait(lambda s: _admitted(s) == ["p-kep-node"], "the pod admitted")
        shutil.rmtree(agent.manifests)
        agent.wait(lambda s: s["pods"] == [], "the pod gone with its directory")
    finally:
        _stop(agent)


def test_static_pod_path_under_a_file_is_read_once_made(tmp_path: Path) -> None:
    """A path behind a regular file (``afile/sub``: ``stat`` fails with
    ``ENOTDIR``): the kubelet's file source logs the error, sends no update
    and looks again at every re-list and watch retry, reading the pods once
    ``afile`` is a directory holding ``sub``. The agent starts on it, logs
    that the manifests are not read, and admits the pods once the path is
    made."""
    agent = AgentProcess(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("")
    agent.manifests = afile / "sub"
    agent.start()
    try:
        deadline = time.monotonic() + 60
        while "Manifests not read, pods kept" not in agent.log():
            assert agent.proc is not None and agent.proc.poll() is None, agent.log()
            assert time.monotonic() < deadline, agent.log()
            time.sleep(0.05)
        assert "Not a directory" in agent.log()
        afile.unlink()
        (afile / "sub").mkdir(parents=True)
        write_manifest(afile / "sub", "pod.yaml", classic_pod("p"))
        agent.wait(lambda s: _admitted(s) == ["p-kep-node"], "the pod admitted once the path is made")
    finally:
        _stop(agent)


def _start_line(tmp_path: Path, manifests: str) -> tuple[int, str]:
    """The exit code and standard error of an agent whose start is refused."""
    state = tmp_path / "state"
    (tmp_path / "node.yaml").write_text("name: n\nsynthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 2, "
                                        "threadsPerCore: 1, memoryPerNumaNode: 1Gi}\n")
    r = CliRunner().invoke(cli, ["agent", "--manifests", manifests, "--state-dir", str(state),
                                 "--node", str(tmp_path / "node.yaml")], prog_name="podnuma")
    return r.exit_code, r.stderr


@pytest.mark.parametrize("case", ["fifo", "loop", "dash"])
def test_what_the_agent_still_refuses_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    """A path more likely a mistake than one still to be made (its ``stat``
    fails but for ``ENOENT`` and ``ENOTDIR``, or it is neither a directory
    nor a regular file) is refused at start, one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    if case == "fifo":
        os.mkfifo(tmp_path / "fifo")
        given, problem = str(tmp_path / "fifo"), "not a directory (a named pipe)"
    elif case == "loop":
        os.symlink("loop", tmp_path / "loop")
        given = str(tmp_path / "loop")
        problem = "cannot reach it: Too many levels of symbolic links"
    else:
        given, problem = "-", "'-' names no directory"
    code, err = _start_line(tmp_path, given)
    assert code == 2
    assert err.startswith(f"error: {given}: --manifests: {problem}"), err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "state").exists()


def test_the_status_names_the_path_as_resolved(tmp_path: Path) -> None:
    """The manifests directory given through a link: the files (and so
    the pods' UIDs, hashed with the file's name) are named in the resolved
    directory, whatever the spelling."""
    agent = AgentProcess(tmp_path)
    write_manifest(agent.manifests, "pod.yaml", classic_pod("p"))
    (tmp_path / "link").symlink_to("manifests")
    agent.manifests = tmp_path / "link"
    agent.start()
    try:
        status = agent.wait(lambda s: _admitted(s) == ["p-kep-node"], "the pod admitted")
        assert [p["file"] for p in status["pods"]] == [str(tmp_path / "manifests" / "pod.yaml")]
        assert json.loads(json.dumps(status))["manifests"] == str(tmp_path / "manifests")
    finally:
        _stop(agent)
