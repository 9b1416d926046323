"""Pod validation through podnuma and through the oracle's ``validate``
(the API server's create path of v1.37.2: v1 decoding and defaults,
PrepareForCreate, ValidatePodCreate), and the comparison of the two."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PodnumaVerdict", "validate_podnuma", "validate_oracle", "compare_verdicts"]


@dataclass
class PodnumaVerdict:
    """podnuma's answer for one pod: the parsed pod, or the error
    (``FIELD: MESSAGE``)."""

    pod: Any = None
    error: str = ""


def validate_podnuma(doc: Mapping[str, Any], gates: Mapping[str, bool]) -> PodnumaVerdict:
    from podnuma.api.featuregates import FeatureGates
    from podnuma.api.pod_manifest import parse_pod
    from podnuma.errors import InputError

    try:
        return PodnumaVerdict(pod=parse_pod(doc, gates=FeatureGates.from_mapping(gates)))
    except InputError as e:
        return PodnumaVerdict(error=str(e))


def validate_oracle(
    binary: str, docs: Sequence[Mapping[str, Any]], gates: Mapping[str, bool], timeout: float = 600.0
) -> list[dict[str, Any]]:
    """Every pod through ``kubelet-oracle validate`` in one call."""
    flag = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))
    with tempfile.TemporaryDirectory(prefix="oracle-validate-") as d:
        path = Path(d) / "pods.json"
        path.write_text(json.dumps(list(docs)), encoding="utf-8")
        args = [binary, "validate", str(path)]
        if flag:
            args += ["--feature-gates", flag]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"kubelet-oracle validate failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(out) != len(docs):
        raise RuntimeError(f"kubelet-oracle validate answered {len(out)} of {len(docs)} pods")
    return out


def _quantities(raw: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in sorted((raw or {}).items())}


def _defaults_of_podnuma(pod: Any, gates: Mapping[str, bool]) -> dict[str, Any]:
    from podnuma.api.featuregates import FeatureGates
    from podnuma.api.qos import compute_pod_qos

    out: dict[str, Any] = {
        "containers": [
            {"name": c.name, "requests": _quantities(c.requests), "limits": _quantities(c.limits)}
            for c in pod.all_containers()
        ],
        "resources": None
        if pod.resources is None or pod.resources.is_empty()
        else {"requests": _quantities(pod.resources.requests), "limits": _quantities(pod.resources.limits)},
        "overhead": _quantities(pod.overhead),
        "qosClass": compute_pod_qos(
            pod, pod_level_resources=FeatureGates.from_mapping(gates).enabled("PodLevelResources")
        ),
        "namespace": pod.namespace,
    }
    return out


def _defaults_of_oracle(created: Mapping[str, Any]) -> dict[str, Any]:
    spec = created.get("spec") or {}

    def res(c: Mapping[str, Any]) -> dict[str, Any]:
        r = c.get("resources") or {}
        return {"name": c.get("name"), "requests": _quantities(r.get("requests")), "limits": _quantities(r.get("limits"))}

    pod_res = spec.get("resources")
    if pod_res is not None and not (pod_res.get("requests") or pod_res.get("limits")):
        pod_res = None
    return {
        "containers": [res(c) for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])],
        "resources": None
        if pod_res is None
        else {"requests": _quantities(pod_res.get("requests")), "limits": _quantities(pod_res.get("limits"))},
        "overhead": _quantities(spec.get("overhead")),
        "qosClass": (created.get("status") or {}).get("qosClass"),
        "namespace": (created.get("metadata") or {}).get("namespace"),
    }


def compare_verdicts(
    mine: PodnumaVerdict, theirs: Mapping[str, Any], gates: Mapping[str, bool]
) -> list[str]:
    """The differences between podnuma's and the API server's verdict on one
    pod (empty when they agree).

    Both accept it: the defaulted container and pod-level requests and
    limits, the overhead and the QoS class must be equal. Both refuse it: podnuma's error
    (it stops at the first it meets) must be one of the API server's field
    errors, word for word (``FIELD: TYPE: VALUE: DETAIL`` as its message
    shows it). Not necessarily the first: the API server ranges over Go
    maps (a resource list's names) as it validates, so the order of its
    errors changes from one request to the next. For a request
    the API server cannot decode (an unparsable quantity, status 400, no
    field path) podnuma's message must be the decoder's.
    """
    if theirs.get("accepted"):
        if mine.error:
            return [f"podnuma refuses ({mine.error}); the API server accepts"]
        a, b = _defaults_of_podnuma(mine.pod, gates), _defaults_of_oracle(theirs["pod"])
        return [] if a == b else [f"defaults: podnuma {json.dumps(a)} != API server {json.dumps(b)}"]
    message = str(theirs.get("message") or "")
    if not mine.error:
        return [f"podnuma accepts; the API server refuses: {message}"]
    if theirs.get("decode"):
        detail = message.split(" cannot be handled as a Pod: ", 1)[-1]
        if mine.error.endswith(": " + detail):
            return []
        return [f"decoding: podnuma {mine.error!r} != API server {message!r}"]
    errors = [e.get("error", "") for e in theirs.get("errors") or []]
    if mine.error in errors:
        return []
    return [f"podnuma {mine.error!r} is none of the API server's errors ({message})"]
