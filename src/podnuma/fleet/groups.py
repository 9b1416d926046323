"""Node groups of a ``podnuma.io/v1`` ``FleetConfig``: a label selector,
and a ``KubeletConfiguration`` and/or a node form for the nodes it selects."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import check_known_fields, wrong_type
from podnuma.fleet.files import _is_map, parse_document
from podnuma.fleet.model import Issue
from podnuma.fleet.selectors import Requirement, parse_selector
from podnuma.inputs.documents import read_text
from podnuma.inputs.limits import DEFAULT_LIMITS
from podnuma.inputs.pathtext import referenced_text

__all__ = ["FLEET_API_VERSION", "FLEET_KIND", "NodeGroup"]

FLEET_API_VERSION = "podnuma.io/v1"
FLEET_KIND = "FleetConfig"


class NodeGroup:
    """One node group: its selector, and its configuration and node form."""

    __slots__ = ("name", "selector", "selector_text", "config", "config_source", "node", "file")

    name: str
    selector: tuple[Requirement, ...]
    selector_text: str
    config: Mapping[str, Any] | None
    config_source: str
    node: Mapping[str, Any] | None
    file: str

    def __init__(
        self, name: str, selector: tuple[Requirement, ...], selector_text: str,
        config: Mapping[str, Any] | None, config_source: str, node: Mapping[str, Any] | None,
        file: str,
    ) -> None:
    # written out, with the comparison, the hash and the repr (a frozen
    # ``dataclass`` would make them when the module is imported, on every
    # ``fleet`` command's start); not frozen at run time
        self.name = name
        self.selector = selector
        self.selector_text = selector_text
        self.config = config
        self.config_source = config_source
        self.node = node
        self.file = file

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.selector, self.selector_text, self.config, self.config_source,
                self.node, self.file)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(name={self.name!r}, selector={self.selector!r}, "
                f"selector_text={self.selector_text!r}, config={self.config!r}, "
                f"config_source={self.config_source!r}, node={self.node!r}, file={self.file!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, NodeGroup)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


_GROUP_KEYS = ("name", "selector", "kubeletConfig", "kubeletConfigFile", "node", "nodeFile")


def _abs_paths(form: Mapping[str, Any], base: Path) -> dict[str, Any]:
    out = dict(form)
    for key in ("machineInfoFile", "sysfs"):
        v = out.get(key)
        if isinstance(v, str) and v and "\0" not in v:  # (as every document's file field; a NUL: the node reader's)
            out[key] = referenced_text(base, v)
    return out


def _named_group_file(g: Mapping[str, Any], key: str, base: Path, at: str,
                      name: str) -> tuple[Path, Any, Issue | None]:
    """The file a group's ``key`` names (resolved as every document's file
    fields are: :func:`referenced_text`), read: its path, document and
    issue (:func:`_read_group_file`); a name the system cannot take (a NUL
    byte) refused at ``at.key`` of ``name``."""
    try:
        text = referenced_text(base, str(g[key]))
    except InputError as e:
        raise e.at(f"{at}.{key}").in_file(name) from None
    p = Path(text)
    doc, issue = _read_group_file(p, text)
    return p, doc, issue


def _read_group_file(path: Path, text_path: str) -> tuple[Any, Issue | None]:
    """A node group's ``kubeletConfigFile`` or ``nodeFile`` parsed: a
    configuration or a node form, not a dump, so read within the ordinary
    input limit (:data:`~podnuma.inputs.limits.DEFAULT_LIMITS`, 64 MiB, as
    ``podnuma simulate`` reads a file), not the fleet's gigabytes: ``/dev/zero``
    is refused after 64 MiB. ``(None, issue)`` when it cannot be read.
    ``text_path``: the path as given (``kc.yaml/`` is no file: refused as
    the system refuses it, where ``path`` lost the ``/``), read and named."""
    try:
        text = read_text(text_path, what="input", name=text_path, limits=DEFAULT_LIMITS)
    except InputError as e:
        return None, Issue("error", e.message, file=text_path)
    return parse_document(path, text)


def _load_groups(doc: Mapping[str, Any], file: Path, base: Path | None = None) -> list[NodeGroup]:
    """The node groups of a FleetConfig read from ``file``; its relative
    paths resolve against ``base`` (default: the file's directory)."""
    name = str(file)
    if doc.get("apiVersion") != FLEET_API_VERSION:
        raise InputError(f"must be {FLEET_API_VERSION!r}", path="apiVersion", file=name)
    for k in doc:
        if k not in ("apiVersion", "kind", "nodeGroups"):
            raise InputError(f"unknown field {k!r} (expected nodeGroups)", path=k, file=name)
    raw = doc.get("nodeGroups") or []
    if not isinstance(raw, list):
        raise wrong_type("nodeGroups", "a list", raw).in_file(name)
    out: list[NodeGroup] = []
    base = file.parent if base is None else base
    for i, g in enumerate(raw):
        at = f"nodeGroups[{i}]"
        if not _is_map(g):
            raise wrong_type(at, "a mapping", g).in_file(name)
        try:
            check_known_fields(g, _GROUP_KEYS, at)
        except InputError as e:
            raise e.in_file(name) from None
        sel_raw = g.get("selector", "")
        selector = parse_selector(sel_raw, path=f"{at}.selector", file=name)
        config: Mapping[str, Any] | None = None
        source = ""
        if "kubeletConfig" in g and "kubeletConfigFile" in g:
            raise InputError("give kubeletConfig or kubeletConfigFile, not both",
                             path=f"{at}.kubeletConfigFile", file=name)
        if "kubeletConfigFile" in g:
            p, cdoc, issue = _named_group_file(g, "kubeletConfigFile", base, at, name)
            if issue is not None and cdoc is None:
                raise InputError(issue.message, path=f"{at}.kubeletConfigFile", file=issue.file)
            if not _is_map(cdoc):
                raise wrong_type(f"{at}.kubeletConfigFile", "a mapping (a KubeletConfiguration)",
                                 cdoc).in_file(str(p))
            config, source = cdoc, str(p)
        elif "kubeletConfig" in g:
            if not _is_map(g["kubeletConfig"]):
                raise wrong_type(f"{at}.kubeletConfig", "a mapping", g["kubeletConfig"]).in_file(name)
            config, source = g["kubeletConfig"], f"{name}#{at}.kubeletConfig"
        node: Mapping[str, Any] | None = None
        if "node" in g and "nodeFile" in g:
            raise InputError("give node or nodeFile, not both", path=f"{at}.nodeFile", file=name)
        if "nodeFile" in g:
            p, ndoc, issue = _named_group_file(g, "nodeFile", base, at, name)
            if not _is_map(ndoc):
                if issue:
                    raise InputError(issue.message, path=f"{at}.nodeFile", file=issue.file)
                raise wrong_type(f"{at}.nodeFile", "a mapping (a node form)", ndoc).in_file(str(p))
            node = _abs_paths(ndoc, p.parent)
        elif "node" in g:
            if not _is_map(g["node"]):
                raise wrong_type(f"{at}.node", "a mapping (a node form)", g["node"]).in_file(name)
            node = _abs_paths(g["node"], base)
        sel_text = sel_raw if isinstance(sel_raw, str) else json.dumps(sel_raw, sort_keys=True)
        out.append(NodeGroup(
            name=str(g.get("name") or sel_text or at), selector=selector, selector_text=sel_text,
            config=config, config_source=source, node=node, file=name,
        ))
    return out
