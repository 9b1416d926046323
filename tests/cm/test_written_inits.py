"""The engine's records write their methods out.

Compiled by mypyc, a ``dataclass``-generated ``__init__`` stays an
interpreted function (it is made at import time) and costs about 30 times
a native one; and making a dataclass's methods (``exec`` of generated
source) costs every command's start-up about half a millisecond a class.
The engine's records (results, hints, blocks, pods, containers, the
machine) therefore write their ``__init__``, comparison and repr out, and
no engine module uses ``dataclass`` at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = [Path(__file__).resolve().parents[2] / "src" / "podnuma" / p for p in ("api", "cm", "machine")]


def _dataclasses_in(text: str) -> list[str]:
    """The classes of a module decorated with ``dataclass`` (any spelling)."""
    return [
        node.name
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef)
        and any("dataclass" in ast.unparse(d) for d in node.decorator_list)
    ]


def test_the_checker_finds_a_dataclass() -> None:
    text = "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass A:\n    x: int\n"
    assert _dataclasses_in(text) == ["A"]


def test_no_engine_record_is_a_dataclass() -> None:
    found = [
        f"{path.relative_to(root.parent)}:{name}"
        for root in ENGINE
        for path in sorted(root.rglob("*.py"))
        for name in _dataclasses_in(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_a_step_result_holds_every_field_as_given() -> None:
    """``StepResult``'s pure-Python ``__init__`` stores into the instance
    dict: every field the class declares, each as passed (defaults
    included), and the record compares as before."""
    from podnuma.cm.results import StepResult
    from podnuma.machine.cpuset import CPUSet

    tree = ast.parse((ENGINE[1] / "results.py").read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "StepResult"]
    names = [ast.unparse(s.target) for s in cls.body if isinstance(s, ast.AnnAssign)]
    given: dict[str, object] = {
        "index": 7, "op": "removeContainer", "pod": "ns/p", "pod_uid": "u", "admitted": False,
        "reason": "r", "message": "m", "qos_class": "Guaranteed", "pod_allocation": None,
        "containers": (), "default_cpuset": CPUSet.of(1, 2), "container": "c",
        "hints": (), "pod_resources": (), "merged": (), "failed_stage": "topology",
        "failed_container": "c",
    }
    assert sorted(given) == sorted(names)
    result = StepResult(**given)  # type: ignore[arg-type]
    assert {name: getattr(result, name) for name in names} == given
    short = StepResult(1, "reconcile", "", "", None, None, None, None, None, (), CPUSet())
    assert (short.container, short.hints, short.pod_resources, short.merged) == (None, (), (), ())
    assert (short.failed_stage, short.failed_container) == (None, None)
    assert short == StepResult(1, "reconcile", "", "", None, None, None, None, None, (), CPUSet())
    assert short != result
