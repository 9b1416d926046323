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
    assert body["error"] == (f"sharedPoolCpus: 9223372036854775807 is more than {MAX_SHARED_POOL_CPUS} CPUs, "
                             "the most a pod's CPU budget may hold (the kubelet counts it in millicores, "
                             "in an int64)")
    status, body = _post(server, "/api/advise", {"pod": POD, "sharedPoolCpus": MAX_SHARED_POOL_CPUS})
    assert 400 <= status < 500, body
    assert str(body["error"]).startswith(f"sharedPoolCpus: {MAX_SHARED_POOL_CPUS}: the pod's CPU budget")


def test_a_long_set_value_is_shown_shortened(server: str) -> None:
    status, body = _post(server, "/api/compare", {"pod": WEB, "set": ["cpuManagerPolicy=" + "x" * 20000]})
    assert 400 <= status < 500, body
    error = str(body["error"])
    assert "(20000 characters)" in error and len(error) < 300, error[:500]
