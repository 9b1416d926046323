"""A run's steps written without PyYAML's emitter
(:mod:`podnuma.render.yaml_steps`) give PyYAML's own text, byte for byte:
on hostile and random steps (the writer takes some, leaves the others to
the emitter, in any order), and on the steps of real runs, of which it
takes all but the rejections (their messages have spaces)."""

from __future__ import annotations

import copy
import io
import random
from pathlib import Path
from typing import Any

import yaml

from podnuma.errors import PodnumaError
from podnuma.inputs.text import TextInput
from podnuma.render.yaml_steps import step_text
from podnuma.render.yaml_text import write_yaml_run
from podnuma.service import scenario as service

from .test_yaml_emitter import SCALARS, _Reference, _reference

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_RESOLVER = _Reference(io.StringIO())


def _tag(text: str) -> str:
    resolve: Any = _RESOLVER.resolve  # untyped in PyYAML
    return str(resolve(yaml.ScalarNode, text, (True, False)))


def _written(node: Any, steps: list[Any], checkpoints: Any, extra: dict[str, Any]) -> str:
    out = io.StringIO()
    write_yaml_run(out, node, iter(copy.deepcopy(steps)), lambda: (checkpoints, extra))
    return out.getvalue()


def _expected(node: Any, steps: list[Any], checkpoints: Any, extra: dict[str, Any]) -> str:
    # the steps copied one by one: no object shared between two of them (as
    # in a run's document), while those shared inside one step stay shared
    return _reference({"node": node, "steps": [copy.deepcopy(s) for s in steps],
                       "checkpoints": checkpoints, **extra})


#: a step as ``simulate`` writes it (keys, shapes and kinds of value)
def _step(i: int) -> dict[str, Any]:
    return {
        "index": i, "op": "addPod", "pod": f"ns/pod-{i}", "podUID": f"uid-{i:07d}",
        "admitted": True, "reason": None, "message": None, "qosClass": "Guaranteed",
        "podAllocation": None,
        "containers": [{
            "name": "app", "type": "app", "cpus": str(i % 7 or 1), "mems": [0, 1],
            "isolation": "container", "memory": [{"type": "memory", "numaNodes": [0], "size": 1 << 30}],
            "devices": {"example.com/gpu": ["gpu-0", "gpu-1"]} if i % 3 else {},
            "topologyHint": {"numaNodes": [0], "preferred": i % 2 == 0}, "cpuQuotaDisabled": True,
        }],
        "defaultCpuSet": "0,2-255", "mergedHints": [], "rejectedAt": None,
    }


def test_steps_as_simulate_writes_them_are_written_here_and_read_as_pyyaml_writes_them() -> None:
    steps = [_step(i) for i in range(12)]
    for s in steps:
        assert step_text(s, 2, _tag) is not None
    node = {"name": "node", "cpus": "0-255", "numaNodes": [0, 1], "reservedCpus": "0,128"}
    assert _written(node, steps, {"cpuManager": None}, {}) == _expected(node, steps, {"cpuManager": None}, {})


def test_what_is_left_to_the_emitter() -> None:
    shared: list[int] = [1, 2]
    for odd in ({"k": 1.5}, {"k": [[1]]}, {"k": shared, "j": shared}, {"k" * 101: 1}, {1: "a"},
                {"k": "a b"}, {"k": "-a"}, {"k": "a:b"}, {"k": "é"}, {"k": ""}, {"k": (1,)},
                {"k": {"j": {"i": shared}}, "l": [shared]}, {}):
        assert step_text(odd, 2, _tag) is None, odd
    assert step_text([1], 2, _tag) is None


def test_random_steps_taken_here_or_left_to_the_emitter_read_as_pyyaml_writes_them() -> None:
    rng = random.Random(11)
    plain = ["a", "ns/pod-1", "0-3,8", "1", "0x1F", "1e3", "yes", "null", "true", "2024-01-01",
             "example.com/gpu", "x" * 130, "A_b.c", "7,8", "0o7", "1_000"]

    def value(depth: int) -> Any:
        r = rng.random()
        if depth > 3 or r < 0.55:
            return rng.choice([*plain, *rng.sample(SCALARS, 2), 0, 17, -3, 2.5, True, False, None])
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice([*plain, *SCALARS]) or "k": value(depth + 1) for _ in range(rng.randrange(5))}

    taken = left = 0
    for _ in range(300):
        steps = []
        for _ in range(rng.randrange(1, 6)):
            step = {rng.choice(plain): value(1) for _ in range(rng.randrange(1, 6))}
            if rng.random() < 0.2:  # the same object twice in one step: an anchor and an alias
                inner = [value(2), value(2)]
                step["x"] = inner
                step["y"] = {"z": inner}
            steps.append(step)
        for s in steps[1:]:
            if step_text(s, 2, _tag) is None:
                left += 1
            else:
                taken += 1
        node, checkpoints = value(1), value(1)
        extra = {"summary": value(1)} if rng.random() < 0.5 else {}
        assert _written(node, steps, checkpoints, extra) == _expected(node, steps, checkpoints, extra)
    assert taken > 100 and left > 100, (taken, left)


def test_runs_of_the_examples_are_written_here_and_read_as_pyyaml_writes_them() -> None:
    runs = 0
    counts = [0, 0]  # steps after the first: left to the emitter, written here
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        src = TextInput(path.read_text(), str(path), base_dir=path.parent)
        for detail in (False, True):
            try:
                doc = service.simulate(src, detail=detail)
            except PodnumaError:  # not a scenario (a fleet, an agent's configuration...)
                break
            steps = doc.pop("steps")
            for s in steps[1:]:
                # a rejection's message has spaces: that step is the emitter's
                taken = step_text(s, 2, _tag) is not None
                assert taken or s["message"] is not None, (path, s["index"])
                counts[taken] += 1
            extra = {k: v for k, v in doc.items() if k not in ("node", "checkpoints")}
            assert _written(doc["node"], steps, doc["checkpoints"], extra) == \
                _expected(doc["node"], steps, doc["checkpoints"], extra), path
            runs += 1
    assert runs >= 20 and counts[True] > 2 * counts[False], (runs, counts)
