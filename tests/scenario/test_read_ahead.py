"""A streamed run reads its steps a batch ahead of playing them
(``READ_AHEAD``), and the JSON writer plays a batch before writing it; the
answer must be the one a step-at-a-time run gives: the first error in step
order (a step the engine refuses before a step the reader refuses, and the
other way round), the same results before it, and for a YAML file the
whole read's rule (a step refused anywhere is the answer)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.errors import PodnumaError
from podnuma.inputs.scenario_stream import ScenarioFile
from podnuma.render.serialize import write_run_stream
from podnuma.scenario.document import ordered_checkpoints
from podnuma.scenario.run import READ_AHEAD, play_step, start_node
from podnuma.service import scenario as service
from podnuma.service.messages import error_message

NODE = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                      "threadsPerCore": 2, "memoryPerNumaNode": "16Gi"}}


def _pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p-{i}", "namespace": "ns", "uid": f"u-{i}"},
            "spec": {"containers": [
                {"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


BAD_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "uid": "b"},
           "spec": {"containers": "x"}}


def _steps(n: int, *, missing: int | None = None, bad: int | None = None) -> list[Any]:
    """``n`` steps adding and removing pods; at ``missing`` a removal of a
    pod that is not running (the engine's error), at ``bad`` a pod the
    reader refuses."""
    steps: list[Any] = []
    for i in range(n):
        if i == missing:
            steps.append({"removePod": "ns/nope"})
        elif i == bad:
            steps.append({"addPod": BAD_POD})
        elif i % 2:
            steps.append({"removePod": f"u-{i - 1}"})
        else:
            steps.append({"addPod": _pod(i)})
    return steps


def _write(tmp_path: Path, steps: list[Any], suffix: str) -> Path:
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE,
           "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
           "steps": steps}
    path = tmp_path / f"s{suffix}"
    path.write_text(json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc, sort_keys=False))
    return path


def _simulate(path: Path) -> str:
    """``simulate FILE -o json``'s text, or its error line."""
    src = ScenarioFile(path)
    out = io.StringIO()
    try:
        run = service.stream(src, pod_resources=False)
        write_run_stream(
            run.node, run.results(),
            lambda: (ordered_checkpoints(run.checkpoints()), service.config_record(run.scenario)),
            out, "json", detail=False,
        )
    except PodnumaError as e:
        return f"error: {error_message(e)}"
    finally:
        src.close()
    return out.getvalue()


# the two errors within one batch, in the second batch, and a batch apart
PLACES = [(3, 5), (READ_AHEAD + 10, READ_AHEAD + 12), (READ_AHEAD - 1, READ_AHEAD + 1)]


@pytest.mark.parametrize(("first", "second"), PLACES)
def test_json_engine_error_before_a_refused_step(tmp_path: Path, first: int, second: int) -> None:
    path = _write(tmp_path, _steps(second + 20, missing=first, bad=second), ".json")
    got = _simulate(path)
    assert got.startswith(f"error: {path}: steps[{first}].removePod: pod 'ns/nope' is not running")


@pytest.mark.parametrize(("first", "second"), PLACES)
def test_json_refused_step_before_an_engine_error(tmp_path: Path, first: int, second: int) -> None:
    path = _write(tmp_path, _steps(second + 20, missing=second, bad=first), ".json")
    got = _simulate(path)
    assert got.startswith(f"error: {path}: steps[{first}].addPod.spec.containers: must be a list")


@pytest.mark.parametrize(("first", "second"), PLACES)
def test_yaml_refused_step_is_the_answer(tmp_path: Path, first: int, second: int) -> None:
    """A YAML file read whole validates every step before playing any: a
    refused step is the answer even after a step the engine refuses."""
    path = _write(tmp_path, _steps(second + 20, missing=first, bad=second), ".yaml")
    got = _simulate(path)
    assert got.startswith(f"error: {path}: steps[{second}].addPod.spec.containers: must be a list")


def test_results_before_a_refused_step_are_the_step_at_a_time_ones(tmp_path: Path) -> None:
    bad = 2 * READ_AHEAD + 7
    path = _write(tmp_path, _steps(bad + 5, bad=bad), ".json")
    src = ScenarioFile(path)
    try:
        run = service.stream(src, pod_resources=False)
        got = []
        with pytest.raises(PodnumaError, match="must be a list"):
            for result in run.results():
                got.append(result)
    finally:
        src.close()
    assert len(got) == bad
    good = _write(tmp_path, _steps(bad), ".json")
    whole = ScenarioFile(good)
    try:
        played = service.stream(whole, pod_resources=False)
        node = start_node(played.scenario, step_pod_resources=False)
        want = [play_step(node, step) for step in played._steps]
    finally:
        whole.close()
    assert got == want


def test_a_run_longer_than_a_batch_writes_every_step(tmp_path: Path) -> None:
    n = 3 * READ_AHEAD + 1
    text = _simulate(_write(tmp_path, _steps(n), ".json"))
    steps = json.loads(text)["steps"]
    assert [s["index"] for s in steps] == list(range(n))
    assert [s["admitted"] for s in steps[::2]] == [True] * len(steps[::2])
