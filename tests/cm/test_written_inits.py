"""The engine's records with a written-out ``__init__``.

Compiled by mypyc, a ``dataclass``-generated ``__init__`` stays an
interpreted function (it is made at import time) and costs about 30 times
a native one; the engine's hot records (results, hints, blocks, pods)
therefore write theirs out. Such a class says so with ``init=False`` and
declares its fields without defaults: the written ``__init__`` is the one
place defaults live, so no ``field(default_factory=...)`` lies dead beside
it (a field that is no argument at all, like a memo, keeps ``init=False``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = [Path(__file__).resolve().parents[2] / "src" / "podnuma" / p for p in ("api", "cm", "machine")]


def _written_init_dataclasses() -> list[tuple[str, ast.ClassDef, ast.expr]]:
    out = []
    for root in ENGINE:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                decorators = [d for d in node.decorator_list if "dataclass" in ast.unparse(d)]
                written = any(isinstance(b, ast.FunctionDef) and b.name == "__init__" for b in node.body)
                if decorators and written:
                    out.append((f"{path.name}:{node.name}", node, decorators[0]))
    return out


def test_the_checker_finds_the_records() -> None:
    names = {name for name, _, _ in _written_init_dataclasses()}
    # (the results, hints, memory blocks and containers are plain classes
    # now: no dataclass at all)
    assert {"pod.py:Pod"} <= names


def test_a_written_init_comes_with_init_false_and_no_field_defaults() -> None:
    bad = []
    for name, cls, decorator in _written_init_dataclasses():
        if "init=False" not in ast.unparse(decorator):
            bad.append(f"{name}: @dataclass without init=False")
        for stmt in cls.body:
            default = stmt.value if isinstance(stmt, ast.AnnAssign) else None
            if default is not None and "init=False" not in ast.unparse(default):
                assert isinstance(stmt, ast.AnnAssign)
                bad.append(f"{name}.{ast.unparse(stmt.target)}: a default the __init__ never uses")
    assert bad == []


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
