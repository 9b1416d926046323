"""``/api/advise`` refuses what ``podnuma advise`` refuses, naming the
request's field: a ``sidecars`` entry naming no container of the pod (with
a "did you mean"), a ``sharedPoolCpus`` past the bound a pod's CPU budget
holds; and a ``set`` value of thousands of characters is shown shortened."""

from __future__ import annotations

import json

from tests.cli.test_advise_option_checks import WEB
from tests.web.test_api import EXAMPLES, call

POD = (EXAMPLES / "whatif" / "trainer-pod.yaml").read_text()


def _post(url: str, path: str, body: object) -> tuple[int, dict[str, object]]:
    status, _, data = call(url + path, json.dumps(body).encode(), "application/json")
    return status, json.loads(data)


def test_a_sidecar_naming_no_container_is_a_bad_request(server: str) -> None:
    status, body = _post(server, "/api/advise", {"pod": WEB, "sidecars": ["log-agnet"]})
    assert 400 <= status < 500, body
    assert body["error"] == ("sidecars[0]: no container named 'log-agnet' in any pod read "
                             '(did you mean "log-agent"?)')
    status, body = _post(server, "/api/advise", {"pod": WEB, "sidecars": ["log-agent"]})
    assert status == 200, body
    assert body["pods"][0]["status"] == "rewritten"  # type: ignore[index]


def test_a_shared_pool_past_the_bound_is_refused_before_any_work(server: str) -> None:
    from podnuma.service.whatif import MAX_SHARED_POOL_CPUS

    status, body = _post(server, "/api/advise", {"pod": POD, "sharedPoolCpus": 9223372036854775807})
    assert 400 <= status < 500, body
    assert body["error"] == (f"sharedPoolCpus: 9223372036854775807: at most {MAX_SHARED_POOL_CPUS} CPUs (Linux "
                             f"runs at most {MAX_SHARED_POOL_CPUS} CPUs on a node: a larger shared pool fits "
                             "on none)")
    status, body = _post(server, "/api/advise", {"pod": POD, "sharedPoolCpus": MAX_SHARED_POOL_CPUS + 1})
    assert 400 <= status < 500, body
    assert str(body["error"]).startswith(f"sharedPoolCpus: {MAX_SHARED_POOL_CPUS + 1}: at most ")


def test_a_long_set_value_is_shown_shortened(server: str) -> None:
    status, body = _post(server, "/api/compare", {"pod": WEB, "set": ["cpuManagerPolicy=" + "x" * 20000]})
    assert 400 <= status < 500, body
    error = str(body["error"])
    assert "(20000 characters)" in error and len(error) < 300, error[:500]


INIT_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - name: setup
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "4", memory: 4Gi}}
    - name: log-agent
      resources: {limits: {cpu: "1", memory: 256Mi}}
"""


def test_a_sidecar_naming_a_regular_init_container_is_a_bad_request(server: str) -> None:
    status, body = _post(server, "/api/advise", {"pod": INIT_POD, "sidecars": ["log-agent", "setup"]})
    assert status == 400, body
    assert body["error"] == ("sidecars[1]: container 'setup' is an init container that is not a sidecar "
                             "(no restartPolicy: Always): naming it would have no effect")
    status, body = _post(server, "/api/advise", {"pod": INIT_POD, "sidecars": ["log-agent"]})
    assert status == 200, body


def _post_text(url: str, path: str, body: bytes) -> tuple[int, dict[str, object]]:
    status, _, data = call(url + path, body, "application/json")
    return status, json.loads(data)


def test_a_refused_shared_pool_number_is_echoed_as_sent(server: str) -> None:
    pod = json.dumps(POD).encode()
    for sent in (b"2.5e0", b"3.0", b"2.50", b"1E2", b"1e400", b"-0.0", b"12345678901234567890.5"):
        status, body = _post_text(server, "/api/advise", b'{"pod": ' + pod + b', "sharedPoolCpus": ' + sent + b"}")
        assert 400 <= status < 500, body
        assert body["error"] == ("sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found "
                                 + sent.decode()), sent
    # a string is still shown as a string, quoted
    status, body = _post_text(server, "/api/advise", b'{"pod": ' + pod + b', "sharedPoolCpus": "2.5e0"}')
    assert body["error"] == 'sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found "2.5e0"'
