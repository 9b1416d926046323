"""The agent decodes static pods as the kubelet's file source does
(pkg/kubelet/config/common.go, v1.37.2), end to end in-process: pod-level
limits alone get no pod-level requests (the file source never runs the
registry's PrepareForCreate), and an edit that only writes out a default
keeps the pod's UID, so the pod is not removed and admitted again."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

from podnuma.agent.core import Agent
from podnuma.agent.logs import setup_logging
from podnuma.agent.state import StateDir
from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint
from podnuma.inputs.pods import load_config_file, load_node_file
from tests.agent.helpers import KUBELET_YAML, NODE_YAML, write_manifest

LIMITS_ONLY = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  resources: {limits: {cpu: "2", memory: 1Gi}}
  containers: [{name: c, image: nginx}]
"""

GUARANTEED = """\
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: c
    image: postgres
    resources: {limits: {cpu: "2", memory: 1Gi}}
"""


def _agent(tmp: Path) -> tuple[Agent, Path, io.StringIO]:
    (tmp / "node.yaml").write_text(NODE_YAML)
    (tmp / "kubelet.yaml").write_text(KUBELET_YAML)
    manifests = tmp / "manifests"
    manifests.mkdir()
    stream = io.StringIO()
    agent = Agent(
        machine=load_node_file(tmp / "node.yaml"),
        config=load_config_file(tmp / "kubelet.yaml"),
        manifests=manifests,
        state=StateDir(tmp / "state"),
        logger=setup_logging(stream, logging.INFO),
    )
    return agent, manifests, stream


def _logs(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _exclusive(tmp: Path) -> dict[str, Any]:
    return dict(decode_cpu_checkpoint((tmp / "state" / "cpu_manager_state").read_bytes()).entries)


def test_pod_level_limits_alone_are_burstable_and_not_pinned(tmp_path: Path) -> None:
    agent, manifests, _ = _agent(tmp_path)
    write_manifest(manifests, "web.yaml", LIMITS_ONLY)
    agent.sync()
    (rec,) = agent.records.values()
    assert rec.admitted, rec.message
    assert rec.qos_class == "Burstable"
    assert rec.pod.resources is not None and dict(rec.pod.resources.requests) == {}
    assert _exclusive(tmp_path) == {}


def test_writing_out_a_default_does_not_readmit(tmp_path: Path) -> None:
    agent, manifests, stream = _agent(tmp_path)
    write_manifest(manifests, "db.yaml", GUARANTEED)
    agent.sync()
    (before,) = agent.records.values()
    assert before.admitted and before.qos_class == "Guaranteed"
    pinned = _exclusive(tmp_path)
    assert list(pinned) == [before.pod.uid]
    # imagePullPolicy Always is the default of an untagged image; requests
    # equal to the limits are the default too
    write_manifest(manifests, "db.yaml", GUARANTEED.replace(
        "resources: {limits: {cpu: \"2\", memory: 1Gi}}",
        "imagePullPolicy: Always\n    resources: {limits: {cpu: \"2\", memory: 1Gi},"
        " requests: {cpu: \"2\", memory: 1Gi}}"))
    agent.sync()
    (after,) = agent.records.values()
    assert after.pod.uid == before.pod.uid
    assert after is before  # the same decision: not removed and admitted again
    assert [r for r in _logs(stream) if r["msg"] == "Pod removed"] == []
    assert _exclusive(tmp_path) == pinned
    # a real change is a new pod
    write_manifest(manifests, "db.yaml", GUARANTEED.replace("image: postgres", "image: postgres:17"))
    agent.sync()
    (changed,) = agent.records.values()
    assert changed.pod.uid != before.pod.uid


def test_a_yaml_syntax_error_is_logged_in_the_kubelets_words(tmp_path: Path) -> None:
    agent, manifests, stream = _agent(tmp_path)
    write_manifest(manifests, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: a: b\n")
    write_manifest(manifests, "lone.yaml", 'apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: {a: "\\ud800"}}\n')
    agent.sync()
    skipped = {Path(r["file"]).name: r["error"] for r in _logs(stream) if r["msg"] == "Manifest skipped"}
    assert skipped["bad.yaml"].endswith(
        "bad.yaml: couldn't parse as pod(yaml: line 5: mapping values are not allowed in this context), "
        "please check config file")
    assert "couldn't parse as pod(yaml: line 3: found invalid Unicode character escape code)" in skipped["lone.yaml"]
    assert agent.records == {}


def test_a_lone_surrogate_escape_in_json_is_replaced(tmp_path: Path) -> None:
    agent, manifests, _ = _agent(tmp_path)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "annotations": {"a": "X"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    write_manifest(manifests, "web.json", json.dumps(pod).replace('"X"', '"\\ud800"'))
    agent.sync()
    (rec,) = agent.records.values()
    assert rec.admitted, rec.message
    # the same pod, U+FFFD written: the same UID, the same decision
    write_manifest(manifests, "web.json", json.dumps(pod).replace('"X"', '"\\ufffd"'))
    agent.sync()
    (again,) = agent.records.values()
    assert again is rec


def test_a_time_written_in_another_zone_does_not_readmit(tmp_path: Path) -> None:
    agent, manifests, stream = _agent(tmp_path)
    timed = LIMITS_ONLY.replace("metadata: {name: web}", "metadata: {name: web, creationTimestamp: '@'}")
    write_manifest(manifests, "web.yaml", timed.replace("@", "2024-01-01T08:00:00Z"))
    agent.sync()
    (before,) = agent.records.values()
    write_manifest(manifests, "web.yaml", timed.replace("@", "2024-01-01T10:00:00.000+02:00"))
    agent.sync()
    (after,) = agent.records.values()
    assert after is before and [r for r in _logs(stream) if r["msg"] == "Pod removed"] == []
    write_manifest(manifests, "web.yaml", timed.replace("@", "2024-01-01T10:00:00Z"))
    agent.sync()
    (changed,) = agent.records.values()
    assert changed.pod.uid != before.pod.uid


# ---------------------------------------------------------------- the text as go-yaml's reader gives it
# (the kubelet's verdicts are checked against the oracle in
# tests/oracle/test_staticpod_text.py; these run without it)

_POD = b"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: x}]}\n"


def _verdict(raw: bytes, name: str = "web.yaml") -> str:
    from podnuma.agent.manifests import parse_manifest
    from podnuma.api.kubeletconfig import load_kubelet_config
    from podnuma.errors import InputError

    try:
        m = parse_manifest(raw, Path("/m") / name, node_name="node-a", gates=load_kubelet_config({}).feature_gates)
    except InputError as e:
        return str(e)
    return f"admitted {m.pod.name} {m.pod.uid}"


def test_a_bad_character_past_the_first_document_is_not_read() -> None:
    far = _POD + b"---\n" + b"# pad\n" * 100
    assert _verdict(far + b"\x01").startswith("admitted")
    assert _verdict(far + b"\xff").startswith("admitted")
    assert _verdict(_POD + b"---\n# caf\xe9\n").startswith("admitted")  # (incomplete at the read's end)
    # (in the read that ends the first document: refused)
    assert "yaml: control characters are not allowed" in _verdict(_POD + b"---\n\x01\n")
    assert "yaml: invalid trailing UTF-8 octet" in _verdict(_POD + b"---\n# caf\xe9 \n")
    # (no second document: the whole file is read)
    assert "yaml: control characters are not allowed" in _verdict(_POD + b"# pad\n" * 100 + b"\x01")
    # (the UID as without the later document)
    assert _verdict(far + b"\x01").split()[2] == _verdict(_POD).split()[2]


def test_utf16_with_a_byte_order_mark_is_read() -> None:
    plain = _verdict(_POD)
    assert _verdict(b"\xff\xfe" + _POD.decode().encode("utf-16-le")) == plain
    assert _verdict(b"\xfe\xff" + _POD.decode().encode("utf-16-be")) == plain
    assert "yaml: incomplete UTF-16 character" in _verdict(b"\xff\xfe" + _POD.decode().encode("utf-16-le") + b"#")
    # (a UTF-16 ``{`` is no ``{`` to hasJSONPrefix: YAML, whose flow mapping reads it)
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}'
    assert _verdict(b"\xff\xfe" + text.encode("utf-16-le"), "web.json").startswith("admitted")


def test_unicode_space_before_json_sends_it_to_the_json_decoder() -> None:
    text = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}'
    for lead, shown in (("\x85", "'\u00c2'"), ("\u2028", "'\u00e2'"), ("\v", "'\\v'"), (" \xa0", "'\u00c2'")):
        got = _verdict(lead.encode() + text, "web.json")
        assert (f"couldn't parse as pod(couldn't get version/kind; json parse error: invalid character {shown} "
                "looking for beginning of value)") in got, got
    assert _verdict(b" \n\t" + text, "web.json").startswith("admitted")


def test_a_bom_starting_a_later_line_is_a_character() -> None:
    raw = b"apiVersion: v1\nkind: Pod\nmetadata:\n\xef\xbb\xbf  name: web\nspec: {containers: [{name: c, image: x}]}\n"
    assert "name is needed for the pod" in _verdict(raw)
    assert _verdict(b"\xef\xbb\xbf" + _POD).startswith("admitted")


def test_a_tag_takes_a_comma_in() -> None:
    raw = _POD.replace(b"{name: web}", b"{name: web, annotations: {a: !!str, b: c}}")
    assert "couldn't parse as pod(yaml: line 2: did not find expected ',' or '}')" in _verdict(raw)
    args = _POD.replace(b"image: x}", b"image: x, args: [!!str, a]}")
    assert _verdict(args) == _verdict(_POD.replace(b"image: x}", b"image: x, args: [a]}"))


def test_podnumas_own_limits_are_in_its_words() -> None:
    deep = _POD + b"x: " + b"[" * 1200 + b"]" * 1200 + b"\n"
    got = _verdict(deep)
    assert "nested more than" in got and "podnuma" in got and "couldn't parse as pod" not in got
    bad = _POD.replace(b"{name: web}", b'{name: web, annotations: {a: !!binary "AB*"}}')
    assert "couldn't parse as pod(yaml: !!binary value contains invalid base64 data)" in _verdict(bad)


def test_a_number_kept_with_its_text_is_a_number_in_messages() -> None:
    # 1e0's repr is not its text: it is kept as a JSONFloat, still a number to Go
    raw = b'{"apiVersion":"v1","kind":1e0,"metadata":{"name":"x"}}'
    got = _verdict(raw, "x.json")
    assert "json: cannot unmarshal number into Go struct field .kind of type string" in got, got
