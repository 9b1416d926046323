"""The YAML writer's shortcuts (memoised scalar analysis and tags, plain
scalars written in one piece) give PyYAML's own text, byte for byte, with
the two rules podnuma adds: a string that podnuma's (go-yaml's) reader would
read as something else is quoted (tests/render/test_yaml_writer_quoting.py),
and a string holding a line break YAML folds (U+0085, U+2028, U+2029) is
double-quoted, where it is escaped (PyYAML writes it raw in single quotes,
and it reads back as a space)."""

from __future__ import annotations

import random
from typing import Any

import yaml

from podnuma.inputs.goyaml import resolve_plain
from podnuma.render.serialize import dump_scenario_yaml, dump_yaml

_STR = "tag:yaml.org,2002:str"


class _Reference(yaml.SafeDumper):
    """The emitter as PyYAML has it, lists indented under their key, and a
    plain string go-yaml reads as another type reported as that type (so
    quoted), with none of the writer's memoising."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def choose_scalar_style(self) -> Any:
        value = getattr(self.event, "value", None)
        if isinstance(value, str) and any(c in value for c in ("\x85", "\u2028", "\u2029")):
            return '"'
        return super().choose_scalar_style()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        resolve: Any = super().resolve  # untyped in PyYAML
        tag = resolve(kind, value, implicit)
        if kind is yaml.ScalarNode and isinstance(value, str) and implicit[0] and tag == _STR:
            go_tag, _ = resolve_plain(value)
            return go_tag
        return tag


def _reference(doc: Any) -> str:
    out: str = yaml.dump(
        doc, Dumper=_Reference, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return out


SCALARS = [
    "", " ", "a", "a b", "yes", "no", "on", "1", "0x1F", "1.5", "1e3", "null", "~", "true",
    "0-3,8", "0,128", "ns/pod-1", "key: value", "- item", "#comment", "a #b", "a\nb", "a\n\nb",
    "trailing ", " leading", "é\u2603\U0001f600", "tab\there", "\x85", "a\u2028b", "'quoted'",
    '"double"', "[flow]", "{map}", "*alias", "&anchor", "!tag", "%dir", "@at", "`tick`", "|", ">",
    "word " * 30, "x" * 120, "long words that go on and on past the eighty column limit of the "
    "emitter so that it folds them somewhere in the middle", "2024-01-01", "=", "<<", "-", "---",
]


def test_scalars_are_pyyamls() -> None:
    for text in SCALARS:
        for doc in (text, {"k": text}, [text, {"k": [text, text]}], {"deep": {"list": [{"k": text}]}}):
            assert dump_yaml(doc) == _reference(doc), repr(text)


def test_random_documents_are_pyyamls() -> None:
    rng = random.Random(7)

    def value(depth: int) -> Any:
        r = rng.random()
        if depth > 3 or r < 0.5:
            return rng.choice([*SCALARS, 0, 17, -3, 2.5, True, False, None])
        if r < 0.75:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(SCALARS) or "k": value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(300):
        doc = value(0)
        assert dump_yaml(doc) == _reference(doc)
        # the memo is shared with the scenario writer, whose text differs
        dump_scenario_yaml({"node": {"cpus": [{"id": 0, "core": 0}]}, "v": doc})
        assert dump_yaml(doc) == _reference(doc)
