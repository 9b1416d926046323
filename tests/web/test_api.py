"""The HTTP API over a real server (uvicorn on a loopback ephemeral port):
the same JSON as the CLI's -o json, the CLI's messages for bad input, and
each limit (body size, time, file access, host header)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import running

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def call(url: str, body: bytes | None = None, ctype: str = "application/yaml",
         headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype, **(headers or {})})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read()


def ok_json(url: str, body: bytes | None = None, ctype: str = "application/yaml") -> Any:
    status, _, data = call(url, body, ctype)
    assert status == 200, data
    return json.loads(data)


def error_of(url: str, body: bytes | None = None, ctype: str = "application/yaml") -> tuple[int, str]:
    status, ctype_out, data = call(url, body, ctype)
    assert "json" in ctype_out
    return status, json.loads(data)["error"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=cwd,
                          capture_output=True, text=True)


def q(**params: Any) -> str:
    return "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


SCENARIOS = [
    "pod-level/pod-scope-2-mixed.yaml",
    "pod-level/lifecycle.yaml",
    "topology/single-numa-node.yaml",
    "static-dual-socket.yaml",
]


@pytest.mark.parametrize("rel", SCENARIOS)
def test_simulate_is_the_cli_json(server: str, rel: str) -> None:
    path = EXAMPLES / rel
    want = json.loads(cli("simulate", path.name, "-o", "json", cwd=path.parent).stdout)
    got = ok_json(server + "/api/simulate" + q(name=path.name), path.read_bytes())
    assert got == want


def test_simulate_takes_json_too(server: str) -> None:
    import yaml

    path = EXAMPLES / "pod-level/pod-scope-1-shared.yaml"
    as_json = json.dumps(yaml.safe_load(path.read_text())).encode()
    got = ok_json(server + "/api/simulate", as_json, "application/json")
    assert got == ok_json(server + "/api/simulate", path.read_bytes())


@pytest.mark.parametrize("rel", SCENARIOS[:2])
def test_explain_is_the_cli_json(server: str, rel: str) -> None:
    path = EXAMPLES / rel
    want = json.loads(cli("explain", path.name, "-o", "json", "--no-search", cwd=path.parent).stdout)
    got = ok_json(server + "/api/explain" + q(name=path.name, search="false"), path.read_bytes())
    assert got == want


def test_explain_one_rejected_step_with_search(server: str) -> None:
    path = EXAMPLES / "static-dual-socket.yaml"
    want = json.loads(cli("explain", path.name, "-o", "json", "--step", "1", cwd=path.parent).stdout)
    got = ok_json(server + "/api/explain" + q(name=path.name, step=1), path.read_bytes())
    assert got == want
    assert got["admissions"][0]["reason"] == "SMTAlignmentError"
    assert got["admissions"][0]["alternatives"]


def test_topology_svg_is_the_cli_picture(server: str) -> None:
    path = EXAMPLES / "pod-level/lifecycle.yaml"
    want = cli("topology", path.name, "-o", "svg", "--step", "1", cwd=path.parent).stdout
    status, ctype, data = call(server + "/api/topology" + q(name=path.name, step=1), path.read_bytes())
    assert status == 200 and ctype.startswith("image/svg+xml")
    assert data.decode() == want


def test_topology_owners_match_the_picture(server: str) -> None:
    path = EXAMPLES / "pod-level/pod-scope-2-mixed.yaml"
    owners = ok_json(server + "/api/topology" + q(step=0, format="json"), path.read_bytes())
    want = json.loads(cli("topology", path.name, "-o", "json", "--step", "0", cwd=path.parent).stdout)
    assert {k: v for k, v in owners.items() if k in want} == want
    assert set(owners) - set(want) == {"colors", "cpuOwner", "numaOfCpu"}
    _, _, svg = call(server + "/api/topology" + q(step=0), path.read_bytes())
    in_svg = dict(re.findall(r'data-cpu="(\d+)" data-owner="([^"]+)"', svg.decode()))
    assert in_svg == owners["cpuOwner"]
    assert owners["cpuOwner"]["1"] == "exclusive: kep/pod-scope-mixed/container-1"


def test_compare_and_advise_are_the_cli_json(server: str) -> None:
    w = EXAMPLES / "whatif"
    body = json.dumps({
        "pod": (w / "trainer-pod.yaml").read_text(), "podName": "trainer-pod.yaml",
        "node": (w / "node.yaml").read_text(), "nodeName": "node.yaml",
        "kubeletConfig": (w / "kubelet-config.yaml").read_text(),
        "kubeletConfigName": "kubelet-config.yaml",
    }).encode()
    for command in ("compare", "advise"):
        want = json.loads(cli(command, "trainer-pod.yaml", "--node", "node.yaml", "--kubelet-config",
                              "kubelet-config.yaml", "-o", "json", cwd=w).stdout)
        got = ok_json(server + f"/api/{command}", body, "application/json")
        assert got == want, command
    advice = ok_json(server + "/api/advise", body, "application/json")
    assert advice["pods"][0]["status"] == "rewritten"


SMALL_NODE = """name: small
synthetic: {sockets: 2, numaNodesPerSocket: 1, coresPerNumaNode: 4, threadsPerCore: 2, memoryPerNumaNode: 16Gi}
"""
SMALL_CONFIG = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
"""
BIG_POD = """apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  initContainers:
  - {name: log, restartPolicy: Always, resources: {limits: {cpu: "1", memory: 256Mi}}}
  containers:
  - {name: train, resources: {limits: {cpu: "8", memory: 4Gi}}}
"""


def test_advise_as_scenario_answers_the_cli_files(server: str, tmp_path: Path) -> None:
    """asScenario: the answer's scenario and the other node shape's
    (shapeScenarios) are the files --as-scenario writes, and replay[] is
    the CLI's, its shape entry pointing into shapeScenarios."""
    for name, text in (("pod.yaml", BIG_POD), ("node.yaml", SMALL_NODE), ("config.yaml", SMALL_CONFIG)):
        (tmp_path / name).write_text(text)
    body = json.dumps({"pod": BIG_POD, "podName": "pod.yaml", "node": SMALL_NODE, "nodeName": "node.yaml",
                       "kubeletConfig": SMALL_CONFIG, "kubeletConfigName": "config.yaml",
                       "asScenario": True}).encode()
    got = ok_json(server + "/api/advise", body, "application/json")
    want = json.loads(cli("advise", "pod.yaml", "--node", "node.yaml", "--kubelet-config", "config.yaml",
                          "--as-scenario", "replay.json", "-o", "json", cwd=tmp_path).stdout)
    assert got["replay"] == want["replay"]
    assert [r["shape"] for r in got["replay"]] == [None, 1]
    assert got["scenario"] == json.loads((tmp_path / "replay.json").read_text())
    assert got["shapeScenarios"] == [json.loads((tmp_path / "replay.shape-1.json").read_text())]
    assert not (tmp_path / "replay.shape-2.json").exists()


def test_advise_controls_are_the_cli_options(server: str, tmp_path: Path) -> None:
    """The advise form's shared-pool control, strategy and sidecar names go
    through the same service function as the CLI's options."""
    w = EXAMPLES / "whatif"
    body = json.dumps({
        "pod": (w / "trainer-pod.yaml").read_text(), "podName": "trainer-pod.yaml",
        "node": (w / "node.yaml").read_text(), "nodeName": "node.yaml",
        "kubeletConfig": (w / "kubelet-config.yaml").read_text(),
        "kubeletConfigName": "kubelet-config.yaml",
        "sharedPoolCpus": 1, "strategy": "keep-cpus", "sidecars": ["train"], "asScenario": True,
    }).encode()
    want = json.loads(cli("advise", "trainer-pod.yaml", "--node", "node.yaml", "--kubelet-config",
                          "kubelet-config.yaml", "--shared-pool-cpus", "1", "--strategy", "keep-cpus",
                          "--sidecar", "train", "-o", "json", cwd=w).stdout)
    got = ok_json(server + "/api/advise", body, "application/json")
    scenario = got.pop("scenario")
    replay = got.pop("replay")
    assert got.pop("shapeScenarios") == []
    want.pop("replay")
    assert got == {k: v for k, v in want.items() if k != "replay"}
    assert got["search"] == {"strategy": "keep-cpus", "sharedPoolCpus": "1"}
    # the user's sidecar name is a rule of its own: train moves to the pool too
    assert got["pods"][0]["sidecars"][-1] == {"name": "train", "rule": "--sidecar train"}
    assert got["pods"][0]["savings"]["exclusiveCpusAfter"] == 0
    assert scenario["kind"] == "Scenario" and replay[0]["pod"] == "ml/trainer"
    bad = json.dumps({"pod": (w / "trainer-pod.yaml").read_text(), "sharedPoolCpus": "many"}).encode()
    status, _, _ = call(server + "/api/advise", bad, "application/json")
    assert status in (400, 422)
    # an invalid pod among the request's documents: a bad request naming it, no advice
    invalid = "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers:\n" \
              "  - name: a\n    resources: {limits: {cpu: two}}\n"
    two = json.dumps({"pod": (w / "trainer-pod.yaml").read_text() + "---\n" + invalid,
                      "podName": "pods.yaml"}).encode()
    status, _, data = call(server + "/api/advise", two, "application/json")
    text = data.decode()
    assert status == 400, text
    assert "pods.yaml" in text and "containers[0].resources.limits[cpu]" in text
    # two invalid pods: a line each, as the CLI prints them (its "error: " lines)
    three = json.dumps({"pod": (w / "trainer-pod.yaml").read_text() + "---\n" + invalid + "---\n"
                        + invalid.replace("name: b}", "name: c}").replace("cpu: two", "cpu: -1"),
                        "podName": "pods.yaml"}).encode()
    status, _, data = call(server + "/api/advise", three, "application/json")
    assert status == 400, data
    doc = json.loads(data)
    (tmp_path / "pods.yaml").write_text(json.loads(three)["pod"])
    lines = cli("advise", "pods.yaml", "-o", "json", cwd=tmp_path).stderr.splitlines()
    assert [f"error: {e}" for e in doc["errors"]] == [x for x in lines if x.startswith("error: ")]
    assert len(doc["errors"]) == 2 and doc["error"] == "\n".join(doc["errors"])


def test_compare_a_pod_of_a_scenario(server: str) -> None:
    path = EXAMPLES / "pod-level/pod-scope-2-mixed.yaml"
    body = json.dumps({"scenario": path.read_text(), "scenarioName": path.name, "step": 0}).encode()
    doc = ok_json(server + "/api/compare", body, "application/json")
    assert doc["node"]["name"] == "kep-node"
    assert doc["pods"][0]["pod"] == "kep/pod-scope-mixed"
    assert doc["pods"][0]["asWritten"] == "podLevel"
    status, message = error_of(server + "/api/compare",
                               json.dumps({"scenario": path.read_text(), "step": 5}).encode(),
                               "application/json")
    assert status == 400 and "step 5 is not an addPod step" in message


BAD = {
    "syntax.yaml": "steps: [\n",
    "field.yaml": (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text().replace(
        'limits: {cpu: "4"', 'limits: {cpu: "four"'),
    "startup.yaml": (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text().replace(
        "cpuManagerPolicy: static", "cpuManagerPolicy: statik"),
    "step.yaml": (EXAMPLES / "static-dual-socket.yaml").read_text().replace(
        "removePod: shop/db", "removePod: shop/nobody"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_400_with_the_cli_message(server: str, tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(BAD[name])
    run = cli("simulate", name, cwd=tmp_path)
    assert run.returncode == 2
    want = run.stderr.strip().removeprefix("error: ")
    status, message = error_of(server + "/api/simulate" + q(name=name), BAD[name].encode())
    assert status == 400
    assert message == want
    assert f"{name}: " in message


def test_not_utf8(server: str) -> None:
    status, message = error_of(server + "/api/simulate" + q(name="x.yaml"), b"a: \xff\n")
    assert status == 400 and message == "x.yaml: scenario file is not UTF-8 text (byte 3)"


def test_bad_parameter(server: str) -> None:
    body = (EXAMPLES / "static-dual-socket.yaml").read_bytes()
    status, message = error_of(server + "/api/topology" + q(step="two"), body)
    assert status == 422 and message.startswith("step: ")
    status, message = error_of(server + "/api/topology" + q(step=99), body)
    assert status == 400 and "no such step" in message


# ------------------------------------------------------------------ safety


@pytest.mark.parametrize("field, yaml_text", [
    ("kubeletConfigFile", "kubeletConfigFile: /etc/hostname\n"),
    ("node.sysfs", ""),
    ("node.machineInfoFile", ""),
    ("state.cpuManagerFile", "state: {cpuManagerFile: /etc/hostname}\n"),
])
def test_no_server_side_file_is_read(server: str, field: str, yaml_text: str) -> None:
    node = "node: {name: n, synthetic: {sockets: 1, coresPerNumaNode: 2}}\n"
    if field == "node.sysfs":
        node = "node: {name: n, sysfs: /}\n"
    if field == "node.machineInfoFile":
        node = "node: {name: n, machineInfoFile: /etc/hostname}\n"
    body = f"apiVersion: podnuma.io/v1\nkind: Scenario\n{node}{yaml_text}steps: []\n".encode()
    status, message = error_of(server + "/api/simulate" + q(name="s.yaml"), body)
    assert status == 400
    assert message.startswith(f"s.yaml: {field}: the server reads no files named in a request")


def test_no_file_for_compare_node(server: str) -> None:
    body = json.dumps({"pod": "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n",
                       "node": "sysfs: /\n", "nodeName": "n.yaml"}).encode()
    status, message = error_of(server + "/api/compare", body, "application/json")
    assert status == 400 and message.startswith("n.yaml: sysfs: the server reads no files")


def test_job_processes_refuse_files_and_commands() -> None:
    from podnuma.web.worker import REFUSAL, JobError, Limits, WorkerPool

    pool = WorkerPool(Limits(time_limit=60))
    assert pool.run(sum, [1, 2, 3]) == 6
    for fn, arg in ((Path.read_text, Path(__file__)), (os.system, "true"), (os.listdir, "/")):
        with pytest.raises(JobError) as info:
            pool.run(fn, arg)
        assert REFUSAL in info.value.message


def _write(path: Path) -> None:
    path.write_text("x")


def test_a_job_reads_only_beneath_its_own_directory(tmp_path: Path) -> None:
    """The fleet jobs read their request's files laid out by the server:
    reading and listing there pass; writing there, reading elsewhere, and
    a symlink out of the directory are refused."""
    from podnuma.web.worker import REFUSAL, Encoded, JobError, Limits, WorkerPool

    mine = tmp_path / "dump"
    (mine / "sub").mkdir(parents=True)
    (mine / "sub" / "nodes.json").write_text("{}")
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    (mine / "escape.json").symlink_to(secret)
    pool = WorkerPool(Limits(time_limit=60))
    root = str(mine)
    assert pool.run(Path.read_text, mine / "sub" / "nodes.json", readable=root) == Encoded(
        b"{}", "text/plain; charset=utf-8")
    listed = pool.run(os.listdir, root, readable=root)
    assert sorted(json.loads(listed.body)) == ["escape.json", "sub"]
    for fn, arg in ((Path.read_text, secret), (Path.read_text, mine / "escape.json"),
                    (_write, mine / "new.json"), (_write, mine / "sub" / "nodes.json"),
                    (os.listdir, str(tmp_path)), (os.system, "true")):
        with pytest.raises(JobError) as info:
            pool.run(fn, arg, readable=root)
        assert REFUSAL in info.value.message, fn
    assert (mine / "sub" / "nodes.json").read_text() == "{}"
    assert not (mine / "new.json").exists()


def test_fleet_endpoints_run_in_limited_jobs() -> None:
    """Both fleet endpoints draw in a job, under the job's limits: an
    address space too small for the fleet's work fails the request with the
    limit's message, and the server goes on."""
    dump = EXAMPLES / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*")) if p.is_file()}
    run = cli("fleet", "analyze", "examples/fleet", "-o", "json", cwd=ROOT)
    assert run.returncode == 0, run.stderr
    with running(memory=64 << 20, time_limit=120) as url:
        body = json.dumps({"files": files, "whatIfs": ["pod-level"]}).encode()
        for path, data in (("/api/fleet/analyze", body), ("/api/fleet/html", run.stdout.encode())):
            status, message = error_of(url + path, data, "application/json")
            assert status == 422, (path, message)
            assert "more memory than the server allows" in message
        assert call(url + "/api/examples")[0] == 200


def test_body_size_limit() -> None:
    with running(max_body=4096) as url:
        small = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_bytes()
        assert len(small) < 4096
        assert call(url + "/api/simulate", small)[0] == 200
        big = small + b"#" * 5000
        status, message = error_of(url + "/api/simulate", big)
        assert status == 413
        assert message == "the request body is larger than the server's limit of 4096 bytes"
        # no Content-Length: the body arrives in chunks and is cut off all the same
        host, port = urllib.parse.urlsplit(url).netloc.split(":")
        conn = http.client.HTTPConnection(host, int(port))
        conn.request("POST", "/api/simulate", body=iter([big[:3000], big[3000:]]),
                     headers={"Content-Type": "application/yaml"}, encode_chunked=True)
        resp = conn.getresponse()
        assert resp.status == 413
        assert json.loads(resp.read())["error"] == message
        conn.close()


def heavy_scenario(pods: int = 4000) -> bytes:
    """A scenario the engine needs minutes for, compiled or not: 4,000
    one-CPU pods on 8,192 CPUs, every one admitted (an explanation's work
    grows with the pods already there), about 650 KB: far past the 10 s
    limit of the tests below, and far inside the request size limit."""
    steps = [{"addPod": {"metadata": {"name": f"p{i}", "namespace": "load"}, "spec": {
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}
        for i in range(pods)]
    return json.dumps({
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"name": "big", "synthetic": {"sockets": 4, "numaNodesPerSocket": 2,
                 "coresPerNumaNode": 512, "threadsPerCore": 2, "memoryPerNumaNode": "1024Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                          "topologyManagerPolicy": "restricted"},
        "steps": steps,
    }).encode()


def test_time_limit() -> None:
    # A limit far above what the small scenario needs, even on a loaded
    # machine, and far below what the heavy one does.
    with running(time_limit=10.0) as url:
        small = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_bytes()
        assert call(url + "/api/simulate", small)[0] == 200
        status, message = error_of(url + "/api/explain", heavy_scenario(), "application/json")
        assert status == 422
        assert message.startswith("the simulation took longer than the server's limit of 10 s")
        # the server goes on serving
        assert call(url + "/api/simulate", small)[0] == 200


def test_host_header_must_be_loopback(server: str) -> None:
    status, _, _ = call(server + "/api/examples", headers={"Host": "attacker.example"})
    assert status == 400
    assert call(server + "/api/examples", headers={"Host": "localhost"})[0] == 200


def test_page_headers(server: str) -> None:
    req = urllib.request.Request(server + "/")
    with urllib.request.urlopen(req) as resp:
        assert "default-src 'self'" in resp.headers["Content-Security-Policy"]
        assert b"podnuma" in resp.read()


# ------------------------------------------------------------------ examples, OpenAPI


def _is_scenario(path: Path) -> bool:
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return isinstance(doc, dict) and doc.get("kind") == "Scenario"


def test_examples_are_the_repository_files(server: str) -> None:
    from podnuma.web.examples import EXAMPLES as LISTED

    listed = ok_json(server + "/api/examples")
    assert [e["id"] for e in listed] == [e.id for e in LISTED]
    # every scenario of the repository (the what-if and fleet inputs are not scenarios)
    scenarios = {p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.yaml")
                 if _is_scenario(p)}
    assert {e.path for e in LISTED} == scenarios
    for e in LISTED:
        one = ok_json(server + "/api/examples/" + e.id)
        assert one["text"] == (EXAMPLES / e.path).read_text()
        assert one["title"]


def test_example_ids_are_not_paths(server: str) -> None:
    for bad in ("..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "nope"):
        status, _, _ = call(server + "/api/examples/" + bad)
        assert status == 404


def test_openapi_lists_the_api(server: str) -> None:
    spec = ok_json(server + "/openapi.json")
    for path in ("/api/simulate", "/api/explain", "/api/topology", "/api/compare",
                 "/api/advise", "/api/examples"):
        assert path in spec["paths"], path
    assert "application/yaml" in spec["paths"]["/api/simulate"]["post"]["requestBody"]["content"]


# ------------------------------------------------------------------ the command


def test_podnuma_serve_listens_on_loopback() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnuma.cli", "serve", "--port", "0"],
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.match(r"podnuma: serving on http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        listed = ok_json(f"http://127.0.0.1:{m.group(1)}/api/examples")
        assert listed
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def test_memory_limit() -> None:
    # An address space far below what any run needs: the job fails with a
    # clear message and the server goes on.
    with running(memory=64 << 20, time_limit=120) as url:
        status, message = error_of(url + "/api/simulate?detail=true", heavy_scenario(), "application/json")
        assert status == 422
        assert "more memory than the server allows" in message


def test_fleet_report_drawn_in_a_sandbox(server: str) -> None:
    run = cli("fleet", "analyze", "examples/fleet", "-o", "json", cwd=ROOT)
    assert run.returncode == 0, run.stderr
    got = ok_json(server + "/api/fleet/html" + q(name="r.json"), run.stdout.encode(), "application/json")
    status, ctype, page = call(server + got["url"])
    assert status == 200 and ctype.startswith("text/html")
    assert b"<h1>podnuma fleet report</h1>" in page
    with urllib.request.urlopen(server + got["url"]) as resp:
        assert resp.headers["Content-Security-Policy"].startswith("sandbox allow-scripts;")
    status, message = error_of(server + "/api/fleet/html" + q(name="r.json"),
                               b'{"apiVersion": "podnuma.io/v1", "kind": "Scenario"}', "application/json")
    assert status == 400
    assert message.startswith('r.json: kind: must be "FleetReport", got "Scenario"')
    assert call(server + "/fleet/nope")[0] == 404


def _pictures(page: bytes) -> list[bytes]:
    return re.findall(rb"<div class=pic>.*?</svg>", page, flags=re.S)


def test_fleet_dump_gets_the_cli_reports_drill_down_pictures(server: str) -> None:
    """A cluster dump sent to /api/fleet/analyze gives the page ``podnuma
    fleet analyze DIR -o html`` writes: the same drill-down pictures."""
    dump = EXAMPLES / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*")) if p.is_file()}
    body = json.dumps({"files": files, "whatIfs": ["pod-level"]}).encode()
    got = ok_json(server + "/api/fleet/analyze", body, "application/json")
    status, ctype, page = call(server + got["url"])
    assert status == 200 and ctype.startswith("text/html")
    run = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(dump), "--what-if",
                          "pod-level", "-o", "html"], capture_output=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    cli_pictures = _pictures(run.stdout)
    assert len(cli_pictures) == 4  # every node that can be replayed (examples/fleet)
    assert _pictures(page) == cli_pictures
    assert str(dump) not in page.decode() and "podnuma-fleet-" not in page.decode()


@pytest.mark.parametrize(("name", "text", "message"), [
    ("../nodes.json", "{}", "../nodes.json: not a plain relative name"),
    ("fleet.yaml", "apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups:\n"
     "  - {name: a, selector: x=y, nodeFile: /etc/passwd}\n",
     "fleet.yaml: nodeGroups[0].nodeFile: the server reads no files named in a request"),
    ("fleet.yaml", "apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups:\n"
     "  - {name: a, selector: x=y, node: {sysfs: /sys}}\n",
     "fleet.yaml: nodeGroups[0].node.sysfs: the server reads no files named in a request"),
])
def test_fleet_dump_names_no_server_file(server: str, name: str, text: str, message: str) -> None:
    body = json.dumps({"files": {name: text}}).encode()
    status, got = error_of(server + "/api/fleet/analyze", body, "application/json")
    assert status == 400 and got.startswith(message)


def test_restart_is_the_cli_document(server: str, tmp_path: Path) -> None:
    path = EXAMPLES / "pod-level/restart.yaml"
    got = ok_json(server + "/api/restart" + q(name="examples/pod-level/restart.yaml"), path.read_bytes())
    proc = cli("restart", "examples/pod-level/restart.yaml", "-o", "json", "--as-scenario",
               str(tmp_path / "r.json"), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    want = json.loads(proc.stdout)
    assert {k: v for k, v in got.items() if k not in ("scenario", "source")} == {
        k: v for k, v in want.items() if k != "source"}
    assert got["scenario"] == json.loads((tmp_path / "r.json").read_text())
    assert [p["outcome"] for p in got["pods"]] == ["kept", "kept", "moved"]
    # a file named by the request is refused at its field, as everywhere
    status, message = error_of(server + "/api/restart", b"node: {sysfs: /sys}\nsteps: []\n")
    assert status == 400 and "node.sysfs" in message
    # --set: the same overrides as the command line
    gate = "featureGates.PodLevelResourceManagers=false"
    got = ok_json(server + "/api/restart" + q(name="examples/pod-level/restart.yaml", set=gate), path.read_bytes())
    proc = cli("restart", "examples/pod-level/restart.yaml", "-o", "json", "--set", gate, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    want = json.loads(proc.stdout)
    assert got["set"] == want["set"] == [gate]
    assert [p["outcome"] for p in got["pods"]] == [p["outcome"] for p in want["pods"]] == ["kept", "kept", "kept"]
    assert got["scenario"]["kubeletConfig"]["featureGates"]["PodLevelResourceManagers"] is False
    status, message = error_of(server + "/api/restart" + q(set="bogus=1"), path.read_bytes())
    assert status == 400 and "--set" in message and "bogus" in message


def _sleep(seconds: float) -> int:
    import time

    time.sleep(seconds)
    return os.getpid()


def test_job_processes_are_warm_and_replaced_after_a_time_limit() -> None:
    from podnuma.web.worker import Limits, TimeLimitExceeded, WorkerPool

    pool = WorkerPool(Limits(time_limit=5, workers=1))
    pool.warm_up()
    first = pool.run(os.getpid)
    assert first != os.getpid()
    assert pool.run(os.getpid) == first  # the same job process runs the next job
    with pytest.raises(TimeLimitExceeded):
        pool.run(_sleep, 30.0)
    fresh = pool.run(os.getpid)  # killed at the limit, replaced by a fresh one
    assert fresh != first
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)
    pool.kill_all()


def test_a_job_too_large_to_read_fails_with_the_limit() -> None:
    """A job whose own message does not fit the job process's address
    space: the process cannot read it and ends; the request gets the
    limit's message (not a broken pipe), and the next job runs in a fresh
    process."""
    from podnuma.web.worker import JobError, Limits, WorkerPool

    pool = WorkerPool(Limits(time_limit=60, workers=1, memory=96 << 20))
    pool.warm_up()
    first = pool.run(os.getpid)
    with pytest.raises(JobError) as info:
        pool.run(len, b"x" * (128 << 20))
    assert "more memory than the server allows" in info.value.message
    assert pool.run(sum, [1, 2, 3]) == 6
    assert pool.run(os.getpid) != first
    pool.kill_all()
