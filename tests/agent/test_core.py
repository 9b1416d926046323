"""The agent's reconciliation in-process (no watcher, no socket): the
kubelet's file-source rules, restore from checkpoints, stale state."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent.core import Agent
from podnuma.agent.logs import setup_logging
from podnuma.agent.manifests import read_manifest
from podnuma.agent.state import StateDir
from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint
from podnuma.errors import KubeletStartupError
from podnuma.inputs.pods import load_config_file, load_node_file
from tests.agent.helpers import KUBELET_YAML, NODE_YAML, classic_pod, example_pod, write_manifest


class Env:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        (tmp / "node.yaml").write_text(NODE_YAML)
        (tmp / "kubelet.yaml").write_text(KUBELET_YAML)
        self.manifests = tmp / "manifests"
        self.manifests.mkdir()
        self.state = tmp / "state"
        self.stream = io.StringIO()

    def agent(self) -> Agent:
        return Agent(
            machine=load_node_file(self.tmp / "node.yaml"),
            config=load_config_file(self.tmp / "kubelet.yaml"),
            manifests=self.manifests,
            state=StateDir(self.state),
            logger=setup_logging(self.stream, logging.INFO),
        )

    def logs(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    def cpu_entries(self) -> dict[str, Any]:
        return dict(decode_cpu_checkpoint((self.state / "cpu_manager_state").read_bytes()).entries)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)




def test_names_uids_and_hidden_files(env: Env) -> None:
    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    (env.manifests / ".hidden.yaml").write_text(json.dumps(classic_pod("hidden")))
    (env.manifests / "sub").mkdir()
    a = env.agent()
    a.sync()
    (rec,) = a.records.values()
    assert (rec.pod.namespace, rec.pod.name) == ("default", "web-kep-node")
    # The UID follows the content and the file: same file, same pod -> same UID.
    m = read_manifest(env.manifests / "a.yaml", node_name="kep-node", gates=a.node.gates)
    assert m.pod.uid == rec.pod.uid and len(m.pod.uid) == 32
    write_manifest(env.manifests, "b.yaml", classic_pod("web2"))
    other = read_manifest(env.manifests / "b.yaml", node_name="kep-node", gates=a.node.gates)
    assert other.pod.uid != rec.pod.uid


def test_duplicate_name_skipped_like_the_kubelet(env: Env) -> None:
    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    write_manifest(env.manifests, "b.yaml", classic_pod("web", cpu="1"))
    a = env.agent()
    a.sync()
    assert [r.file for r in a.records.values()] == [str(env.manifests / "a.yaml")]
    err = a.errors[str(env.manifests / "b.yaml")]
    assert err.endswith("duplicate pod name 'web-kep-node' (the pod of " + str(env.manifests / "a.yaml") + "), ignoring")


def test_duplicate_uid_skipped_not_a_stop(env: Env) -> None:
    """Two manifests with one metadata.uid: the later (in file order) is
    left out and said, on the first sync and when it comes later; the
    agent goes on (it stopped, and could not start again)."""
    uid = "11111111-2222-3333-4444-555555555555"
    first = classic_pod("dup")
    first["metadata"]["uid"] = uid
    write_manifest(env.manifests, "a.yaml", first)
    a = env.agent()
    a.sync()
    second = classic_pod("other", cpu="1")
    second["metadata"]["uid"] = uid
    write_manifest(env.manifests, "b.yaml", second)
    a.sync()
    assert [r.file for r in a.records.values()] == [str(env.manifests / "a.yaml")]
    want = (f"{env.manifests / 'b.yaml'}: metadata.uid: duplicate pod UID {uid!r} "
            f"(the pod of {env.manifests / 'a.yaml'}), ignoring")
    assert a.errors == {str(env.manifests / "b.yaml"): want}
    assert [r["reason"] for r in env.logs() if r["msg"] == "Manifest skipped"] == ["duplicate"]
    # a new agent on the same files and state (a restart): the same
    b = env.agent()
    b.sync()
    assert [r.file for r in b.records.values()] == [str(env.manifests / "a.yaml")]
    assert b.errors == a.errors


def test_the_status_file_is_for_the_state_directory_s_group(env: Env) -> None:
    """The status file quotes the skipped files' errors, which may quote
    what the agent could read of them: 0640, as the state directory is
    0750, not readable by any user."""
    (env.manifests / "x.yaml").write_text('{"db_password": "secret"}')
    a = env.agent()
    a.sync()
    status = env.state / "podnuma-agent-status.json"
    assert "secret" in status.read_text()  # (the kubelet's words quote the object)
    assert status.stat().st_mode & 0o777 == 0o640


def test_a_manifest_that_is_a_directory_by_now_is_refused(tmp_path: Path) -> None:
    """Listed as a file, a directory by the time it is opened (the race the
    agent met while files were replaced): a refusal naming it, not a
    crash."""
    from podnuma.agent.manifests import read_manifest_bytes
    from podnuma.errors import InputError

    (tmp_path / "m.yaml").mkdir()
    with pytest.raises(InputError, match="manifest file is a directory"):
        read_manifest_bytes(tmp_path / "m.yaml")


def test_file_turning_malformed_removes_its_pod(env: Env) -> None:
    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    a = env.agent()
    a.sync()
    assert len(env.cpu_entries()) == 1
    (env.manifests / "a.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: []\n")
    a.sync()
    assert a.records == {}
    assert env.cpu_entries() == {}
    removed = [r for r in env.logs() if r["msg"] == "Pod removed"]
    assert removed[-1]["reason"] == "manifest invalid"
    assert a.errors[str(env.manifests / "a.yaml")].startswith(f"{env.manifests / 'a.yaml'}: spec: ")


def test_restart_keeps_assignments_and_drops_orphans(env: Env) -> None:
    write_manifest(env.manifests, "a.yaml", classic_pod("a"))
    write_manifest(env.manifests, "b.yaml", classic_pod("b"))
    write_manifest(env.manifests, "c.yaml", classic_pod("c"))
    first = env.agent()
    first.sync()
    before = env.cpu_entries()
    uid_b = first.records[str(env.manifests / "b.yaml")].pod.uid
    uid_c = first.records[str(env.manifests / "c.yaml")].pod.uid
    # While the agent is down: b disappears, a new pod d arrives.
    (env.manifests / "b.yaml").unlink()
    write_manifest(env.manifests, "d.yaml", classic_pod("d"))
    second = env.agent()
    second.sync()
    after = env.cpu_entries()
    assert uid_b not in after
    for uid in before:
        if uid != uid_b:
            assert after[uid] == before[uid]  # re-admitted, same CPUs
    stale = [r for r in env.logs() if r["msg"] == "Stale pod state removed"]
    assert [r["uid"] for r in stale] == [uid_b]
    # d reuses what b freed (the CPUs are free again) and c kept its own.
    uid_d = second.records[str(env.manifests / "d.yaml")].pod.uid
    assert after[uid_d] == before[uid_b]
    assert after[uid_c] == before[uid_c]


def test_corrupt_memory_checkpoint_refused_and_kept(env: Env) -> None:
    write_manifest(env.manifests, "a.yaml", example_pod("pod-scope-2-mixed.yaml"))
    env.agent().sync()
    mem = env.state / "memory_manager_state"
    mem.write_bytes(mem.read_bytes()[:-5])
    with pytest.raises(KubeletStartupError) as err:
        env.agent()
    assert str(err.value).startswith("could not restore state from checkpoint: ")
    assert str(err.value).endswith(
        f'please drain this node and delete the memory manager checkpoint file "{mem}" before restarting Kubelet'
    )


def test_stale_temp_files_removed_at_start(env: Env) -> None:
    env.state.mkdir()
    (env.state / ".cpu_manager_state.abc123").write_text("{half")
    (env.state / "unrelated").write_text("keep")
    a = env.agent()
    assert a.stale_temp_files == 1
    assert sorted(p.name for p in env.state.iterdir()) == ["unrelated"]


def test_a_manifest_replaced_by_a_pipe_with_a_silent_writer_is_skipped(tmp_path: Path) -> None:
    """Listed as a regular file, then replaced by a named pipe whose writer
    never writes: what was opened is looked at, and refused at once (the
    read would wait for ever, the agent's lock held)."""
    import os
    import re
    import threading

    from podnuma.api.kubeletconfig import load_kubelet_config
    from podnuma.errors import InputError

    fifo = tmp_path / "x.yaml"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that never writes
    got: list[BaseException | None] = []

    def read() -> None:
        try:
            read_manifest(fifo, node_name="n", gates=load_kubelet_config({}).feature_gates)
        except Exception as e:  # (what it raised is the outcome)
            got.append(e)
        else:
            got.append(None)

    reader = threading.Thread(target=read, daemon=True)
    try:
        reader.start()
        reader.join(120)  # (a hang guard: a read of the pipe would wait for ever)
        assert not reader.is_alive(), "read_manifest is reading the pipe"
    finally:
        os.close(writer)  # (a reader left waiting sees the end of the pipe)
    assert len(got) == 1 and isinstance(got[0], InputError), got
    assert re.search(r"x\.yaml: not a regular file$", str(got[0])), got[0]


def test_a_manifest_is_parsed_again_only_when_its_bytes_changed(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file is read at every sync (as the kubelet reads it), parsed
    again only when its bytes changed: not for a new time stamp nor a
    rewrite of the same bytes; a file too large to read is never parsed."""
    import os

    import podnuma.agent.core as core

    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    (env.manifests / "big.yaml").write_text("x: " + "y" * (11 * 2**20))  # refused: too large
    read: list[str] = []
    parsed: list[str] = []
    plain_read, plain_parse = core.read_manifest_bytes, core.parse_manifest

    def reading(path: Path) -> bytes:
        read.append(path.name)
        return plain_read(path)

    def parsing(raw: bytes, path: Path, **kwargs: Any) -> Any:
        parsed.append(path.name)
        return plain_parse(raw, path, **kwargs)

    monkeypatch.setattr(core, "read_manifest_bytes", reading)
    monkeypatch.setattr(core, "parse_manifest", parsing)
    a = env.agent()
    for _ in range(3):
        a.sync()
    assert sorted(read) == ["a.yaml"] * 3 + ["big.yaml"] * 3  # every time
    assert parsed == ["a.yaml"]  # once
    assert list(a.errors) == [str(env.manifests / "big.yaml")] and len(a.records) == 1
    parsed.clear()
    st = os.stat(env.manifests / "a.yaml")
    os.utime(env.manifests / "a.yaml", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    write_manifest(env.manifests, "a.yaml", (env.manifests / "a.yaml").read_text())  # same bytes
    a.sync()
    assert parsed == []
    write_manifest(env.manifests, "a.yaml", classic_pod("web2"))  # changed: parsed again
    a.sync()
    assert parsed == ["a.yaml"]
    assert [r.pod.name for r in a.records.values()] == ["web2-kep-node"]
    (env.manifests / "big.yaml").unlink()
    a.sync()
    assert not a.errors and str(env.manifests / "big.yaml") not in a._read_cache


def test_a_change_through_a_shared_mapping_is_seen(env: Env) -> None:
    """A manifest changed through a shared memory mapping, on a page already
    written through it: no size or time stamp changes (checked), the pod
    changes all the same (the agent trusts the bytes, not the metadata)."""
    import mmap
    import os

    def key(st: os.stat_result) -> tuple[int, ...]:
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    path = write_manifest(env.manifests, "a.yaml", classic_pod("web", cpu="2"))
    a = env.agent()
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, 0) as m:
            at = m.find(b"cpu: '2'") + len(b"cpu: '")
            for _ in range(5):  # (until the kernel stamped nothing in between)
                m[at:at + 1] = b"2"  # (the page made dirty: a later write stamps no time)
                a.sync()
                st = os.stat(path)
                m[at:at + 1] = b"4"  # 2 CPUs -> 4, the same size
                if key(os.stat(path)) == key(st):
                    break
                m[at:at + 1] = b"2"
            assert key(os.stat(path)) == key(st)
            first = next(iter(a.records.values()))
            assert str(a.node.pod_resources_of(first.pod).containers[0].cpu_ids) == "1-2"
            a.sync()
    finally:
        os.close(fd)
    (rec,) = a.records.values()
    assert rec.pod.uid != first.pod.uid
    assert str(a.node.pod_resources_of(rec.pod).containers[0].cpu_ids) == "1-4"


def test_the_pod_resources_are_answered_while_manifests_are_read(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest slow to read keeps no PodResources answer waiting: the
    files are read before the node's lock is taken."""
    import threading

    import podnuma.agent.core as core

    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    a = env.agent()
    a.sync()
    write_manifest(env.manifests, "b.yaml", classic_pod("slow"))
    reading, go_on = threading.Event(), threading.Event()
    plain = core.read_manifest_bytes

    def slow(path: Path) -> bytes:
        if path.name == "b.yaml":
            reading.set()
            go_on.wait(30)
        return plain(path)

    monkeypatch.setattr(core, "read_manifest_bytes", slow)
    syncing = threading.Thread(target=a.sync)
    syncing.start()
    try:
        assert reading.wait(30)
        answered: list[Any] = []
        asking = threading.Thread(target=lambda: answered.append(a.provider().list_pod_resources()))
        asking.start()
        asking.join(10)
        assert answered and [p.name for p in answered[0]] == ["web-kep-node"]
    finally:
        go_on.set()
        syncing.join(30)
    assert sorted(r.pod.name for r in a.records.values()) == ["slow-kep-node", "web-kep-node"]


def test_state_subdirectories_that_are_links(env: Env) -> None:
    """``pod-resources`` a link out of the state directory: refused before
    the default socket is made there (it was made, and removed, wherever
    the link led); ``device-plugins`` a link: the device checkpoint is not
    read (never through a link), said, and the agent starts, as the kubelet
    starts without a device checkpoint it cannot read (it refused to)."""
    from podnuma.agent.run import default_socket
    from podnuma.errors import InputError

    outside = env.tmp / "outside"
    outside.mkdir()
    env.state.mkdir()
    (env.state / "pod-resources").symlink_to(outside)
    with pytest.raises(InputError, match="pod-resources: a symbolic link"):
        default_socket(env.state)
    (env.state / "pod-resources").unlink()
    assert default_socket(env.state) == env.state / "pod-resources" / "kubelet.sock"
    (env.state / "device-plugins").symlink_to(outside)
    write_manifest(env.manifests, "a.yaml", classic_pod("web"))
    a = env.agent()
    a.sync()
    assert len(a.records) == 1
    (warned,) = [r for r in env.logs() if r["msg"].startswith("Device checkpoint not read")]
    assert "device-plugins/kubelet_internal_checkpoint" in warned["error"]
    assert list(outside.iterdir()) == []
