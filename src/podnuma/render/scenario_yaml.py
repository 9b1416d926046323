"""Scenario fragments as YAML people paste into files.

Like ``scenario.document.dump_yaml`` (block style, lists indented under their
key), except that short rows (each CPU of a ``cpus`` table, each distance
row) are written one per line in flow style, so a 64-CPU machine stays a
64-line table rather than 320 lines.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["dump_scenario_yaml"]


class _FlowRow(dict[Any, Any]):
    """A mapping written in flow style (``{id: 0, core: 0}``)."""


class _FlowList(list[Any]):
    """A list written in flow style (``[10, 20]``)."""


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _flow_mapping(dumper: yaml.SafeDumper, data: _FlowRow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _flow_list(dumper: yaml.SafeDumper, data: _FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(_FlowRow, _flow_mapping)
_Dumper.add_representer(_FlowList, _flow_list)


def _mark(value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _mark(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        if key == "cpus" and all(isinstance(v, dict) for v in value):
            return [_FlowRow(v) for v in value]
        if all(isinstance(v, int | str) for v in value):
            return _FlowList(value)
        return [_mark(v) for v in value]
    return value


def dump_scenario_yaml(doc: Any) -> str:
    """``doc`` as block YAML with ``cpus`` rows and scalar lists in flow style."""
    out: str = yaml.dump(
        _mark(doc), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return out
