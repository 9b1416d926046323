"""The ports of a pod's probes and lifecycle hooks against the API
server's validation (``kubelet-oracle validate``: ``ValidatePortNumOrName``
through ``validateHandler``, v1.37.2).

A port given by name follows ``IsValidPortName`` (at most 15 bytes, only
``a-z``, ``0-9`` and ``-``, a letter at least, no ``--``, no ``-`` first or
last: a name of digits only, ``"80"``, is refused); one given by number is
from 1 to 65535. A probe or hook has one handler type exactly (a second is
forbidden, none is required) and only the first one set is validated; a
regular init container's probes are refused for being there (checked in
test_pod_validation_probes_differential.py). Each pod must get the same verdict from
both, and podnuma's error must be one of the API server's, word for word.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.oracle.validation import compare_verdicts, validate_oracle, validate_podnuma

NAMES = ["80", "http", "HTTP", "a" * 15, "a" * 16, "1" * 16, "my--port", "-http", "http-", "", "a_b", "1-2",
         "x1", "ab-cd", "é", "8080a", "-", "--", "a-", "h ttp", "http\n"]
NUMBERS = [0, 1, 80, 65535, 65536, -1, 2147483647]
PORTS: list[Any] = [*NAMES, *NUMBERS, None]

#: where a port goes: (path to the handler's mapping from the container, handler type)
PLACES = [
    (("livenessProbe",), "httpGet"), (("readinessProbe",), "tcpSocket"), (("startupProbe",), "httpGet"),
    (("lifecycle", "postStart"), "httpGet"), (("lifecycle", "preStop"), "tcpSocket"),
]
GATES: dict[str, bool] = {}


def _pod(container: dict[str, Any], *, init: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container]}
    if init is not None:
        spec["initContainers"] = [init]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "namespace": "x"}, "spec": spec}


def _container(name: str, where: tuple[str, ...], handler: dict[str, Any]) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x"}
    at = c
    for k in where[:-1]:
        at = at.setdefault(k, {})
    at[where[-1]] = handler
    return c


def _action(kind: str, port: Any) -> dict[str, Any]:
    return {} if port is None else {"port": port}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for where, kind in PLACES:
        for port in PORTS:
            label = f"{'.'.join(where)}.{kind}={port!r}"
            out.append((label, _pod(_container("c", where, {kind: _action(kind, port)}))))
    for port in ("80", "http", 0, 70000):
        # a sidecar's probe is validated; a second handler type is refused,
        # not validated; grpc's port is a number
        sidecar = {**_container("s", ("livenessProbe",), {"tcpSocket": {"port": port}}), "restartPolicy": "Always"}
        out.append((f"sidecar={port!r}", _pod({"name": "c", "image": "x"}, init=sidecar)))
        two = _container("c", ("readinessProbe",), {"exec": {"command": ["true"]}, "httpGet": {"port": port}})
        out.append((f"second-handler={port!r}", _pod(two)))
        first = _container("c", ("readinessProbe",), {"httpGet": {"port": port}, "tcpSocket": {"port": "ok"}})
        out.append((f"first-of-two={port!r}", _pod(first)))
    for port in (0, 1, 65536):
        out.append((f"grpc={port!r}", _pod(_container("c", ("livenessProbe",), {"grpc": {"port": port}}))))
    for where in (("livenessProbe",), ("lifecycle", "postStart")):
        # no handler type at all
        out.append((f"{'.'.join(where)}-without-handler", _pod(_container("c", where, {}))))
    out.append(("probe-of-thresholds", _pod(_container("c", ("startupProbe",), {"periodSeconds": 5}))))
    # a port error in a later container, after a good one
    good = _container("a", ("livenessProbe",), {"httpGet": {"port": 8080}})
    bad = _container("b", ("lifecycle", "preStop"), {"httpGet": {"port": "99"}})
    out.append(("second-container", {**_pod(good), "spec": {"containers": [good, bad]}}))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def answers(oracle_binary: str) -> list[dict[str, Any]]:
    return validate_oracle(oracle_binary, [doc for _, doc in CASES], GATES)


def test_handler_ports_match_the_api_server(answers: list[dict[str, Any]]) -> None:
    wrong = []
    refused = 0
    for (label, doc), answer in zip(CASES, answers, strict=True):
        mine = validate_podnuma(copy.deepcopy(doc), GATES)
        refused += not answer["accepted"]
        diffs = compare_verdicts(mine, answer, GATES)
        if diffs:
            wrong.append(f"{label}: {diffs[0]}")
    assert wrong == []
    # (the cases reach both verdicts)
    assert 0 < refused < len(CASES)


def test_a_name_of_digits_is_refused_with_the_api_servers_words(answers: list[dict[str, Any]]) -> None:
    i = next(i for i, (label, _) in enumerate(CASES) if label == "livenessProbe.httpGet='80'")
    mine = validate_podnuma(copy.deepcopy(CASES[i][1]), GATES)
    want = 'spec.containers[0].livenessProbe.httpGet.port: Invalid value: "80": must contain at least one letter (a-z)'
    assert mine.error == want
    assert want in [e["error"] for e in answers[i]["errors"]]
