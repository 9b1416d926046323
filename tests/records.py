"""A copy of a record with some fields changed, for tests.

``dataclasses.replace`` for a dataclass; the engine's results and
checkpoint records are plain classes (no code generated at import time)
whose ``__init__`` takes every field by its name, so for them the copy is
made by the constructor, from the record's fields and the changes."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

T = TypeVar("T")


def replace(obj: T, **changes: Any) -> T:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    params = inspect.signature(type(obj)).parameters
    unknown = sorted(set(changes) - set(params))
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no fields {unknown}")
    return type(obj)(**{name: changes[name] if name in changes else getattr(obj, name)
                        for name in params})
