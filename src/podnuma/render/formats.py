"""Each command's ``-o`` formats, in a module of their own: the command
line reads them to declare its options, before it knows whether any
output will be rendered (:mod:`podnuma.render.output` renders them)."""

from __future__ import annotations

__all__ = ["DOCUMENT_FORMATS", "FORMATS"]

#: the formats that print the result document
DOCUMENT_FORMATS = ("json", "yaml")

#: each command's ``-o`` formats, the default first
FORMATS: dict[str, tuple[str, ...]] = {
    "simulate": ("table", "wide", "json", "yaml"),
    "demo": ("table", "wide", "json", "yaml"),
    "explain": ("table", "json", "yaml", "text"),
    "topology": ("table", "text", "svg", "png", "json", "yaml"),
    "compare": ("table", "json", "yaml"),
    "advise": ("pods", "json", "yaml"),
    "restart": ("table", "wide", "json", "yaml"),
    "node discover": ("yaml", "json"),
    "state inspect": ("table", "json", "yaml"),
    "cgroups plan": ("table", "json", "yaml"),
    "cgroups apply": ("table", "json", "yaml"),
    "podresources": ("table", "json", "yaml"),
    "fleet analyze": ("table", "json", "yaml", "html"),
    "fleet generate": ("table", "json", "yaml"),
}
