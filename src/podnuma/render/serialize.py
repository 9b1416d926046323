"""The one serializer: every JSON and YAML document podnuma prints.

* :func:`dump_json`: two-space indented JSON, UTF-8 kept as is, a final
  newline (every ``-o json``);
* :func:`dump_yaml`: block YAML in the document's key order, lists
  indented under their key (kubectl's style; every ``-o yaml``);
* :func:`dump_scenario_yaml`: the same, except that short rows (each CPU of
  a ``cpus`` table, each distance row) are written one per line in flow
  style, so a 64-CPU machine stays a 64-line table rather than 320 lines
  (scenario fragments people paste into files);
* :func:`write_run_document` / :func:`write_run_stream`: the output
  document of a run written step by step, the very text :func:`dump_json`
  / :func:`dump_yaml` give for the whole document, without holding it
  whole (JSON steps through :mod:`podnuma.render.step_json`).

The YAML writers live in :mod:`podnuma.render.yaml_text`, imported when
YAML is written: ``-o json`` never loads PyYAML.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from podnuma.cm.results import NodeSummary, StepResult
from podnuma.render.json_indent import indented_json
from podnuma.render.step_json import json_at, step_json
from podnuma.scenario.document import build_checkpoints, node_document, step_document
from podnuma.scenario.run import RunResult

__all__ = ["dump_json", "dump_scenario_yaml", "dump_yaml", "write_run_document", "write_run_stream"]


def dump_json(doc: Any) -> str:
    """``doc`` as JSON: indented by two, UTF-8 as is, a final newline."""
    return indented_json(doc) + "\n"


def dump_scenario_json(doc: Any) -> str:
    """A scenario (or a fragment of one) as :func:`dump_json` writes a
    document, each JSON number read with its text written as that text
    (:func:`podnuma.golang.jsonnumbers.dumps`): read back, the scenario
    holds the same quantities."""
    from podnuma.golang import jsonnumbers

    return jsonnumbers.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def dump_yaml(doc: Any) -> str:
    """``doc`` as block YAML, keys in order, lists indented under their key."""
    from podnuma.render import yaml_text

    return yaml_text.dump_yaml(doc)


def dump_scenario_yaml(doc: Any) -> str:
    """``doc`` as block YAML with ``cpus`` rows and scalar lists in flow style."""
    from podnuma.render import yaml_text

    return yaml_text.dump_scenario_yaml(doc)


def write_run_document(
    result: RunResult, out: IO[str], fmt: str, *, detail: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write the document of :func:`build_document` as ``json`` or ``yaml``
    to ``out`` step by step: the same text as dumping the whole document,
    without holding more than one step's document (and its text) at once.
    ``extra``: more top-level keys, after ``checkpoints``."""
    tail = build_checkpoints(result)
    write_run_stream(
        result.node, result.steps, lambda: (tail, extra or {}), out, fmt, detail=detail
    )


def write_run_stream(
    node: NodeSummary,
    steps: Iterable[StepResult],
    tail: Callable[[], tuple[Any, Mapping[str, Any]]],
    out: IO[str],
    fmt: str,
    *,
    detail: bool = True,
) -> None:
    """The run document from its parts, written as the steps come:
    ``tail()`` (the ``checkpoints`` value and the extra top-level keys) is
    asked for once every step has been written."""
    head = node_document(node)
    if fmt == "json":
        _write_json(out, head, steps, tail, detail)
    else:
        from podnuma.render.yaml_text import write_yaml_run

        write_yaml_run(out, head, (step_document(s, detail=detail) for s in steps), tail)


#: steps played, then written, at a time
_BATCH = 128


def _write_json(
    out: IO[str], node: Any, steps: Iterable[StepResult],
    tail: Callable[[], tuple[Any, Mapping[str, Any]]], detail: bool,
) -> None:
    write = out.write
    write('{\n  "node": ' + json_at(node, "  ") + ',\n  "steps": [')
    sep = "\n    "
    # the steps taken (played) a batch at a time, then written, then joined
    # into one write: each part's code and data stay in the processor's
    # caches through a run of steps (see StreamedRun.results)
    results = iter(steps)
    taken: list[StepResult] = []
    batch: list[str] = []
    while True:
        for result in results:
            taken.append(result)
            if len(taken) >= _BATCH:
                break
        for step in taken:
            batch.append(sep)  # (not joined to the step's text: a copy of it saved)
            batch.append(step_json(step, "    ", detail=detail))
            sep = ",\n    "
        write("".join(batch))
        if len(taken) < _BATCH:
            break
        taken.clear()
        batch.clear()
    write("]" if sep == "\n    " else "\n  ]")
    checkpoints, extra = tail()
    write(',\n  "checkpoints": ' + json_at(checkpoints, "  "))
    for key, value in extra.items():
        write(",\n  " + json.dumps(key) + ": " + json_at(value, "  "))
    write("\n}\n")
