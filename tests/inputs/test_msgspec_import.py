"""msgspec imported without typing_extensions (``podnuma.inputs.msgspec_import``):
``sys.modules`` as it was but for msgspec's modules, and the same values
and structs decoded as by msgspec imported as it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: imports msgspec (``light``: through podnuma's module; ``plain``: as it is,
#: typing_extensions first), decodes the same texts untyped, into structs of
#: many field types and with the fleet reader's own decoders, and prints
#: what it got and which modules the import added
PROBE = r"""
import json, sys
mode = sys.argv[1]
before = set(sys.modules)
if mode == "light":
    from podnuma.inputs.msgspec_import import msgspec
    added = sorted(set(sys.modules) - before)
    assert "typing_extensions" not in sys.modules
    assert msgspec._utils._get_type_hints.__module__ == "typing"
else:
    import typing_extensions
    import msgspec
    added = []
    assert msgspec._utils._get_type_hints.__module__ == "typing_extensions"
import typing
from typing import Any, Optional, Union

class Inner(msgspec.Struct):
    a: int
    b: list[str] = []

class Outer(msgspec.Struct, gc=False, omit_defaults=True):
    name: str
    n: int = 0
    f: float | None = None
    tags: dict[str, str] = {}
    inner: Optional[Inner] = None
    many: list[Inner] = []
    any_: Any = None
    u: Union[int, str] = 0
    t: tuple[int, ...] = ()
    kw: typing.Annotated[int, msgspec.Meta(ge=0)] = 0

class TD(typing.TypedDict, total=False):
    x: int
    y: typing.Required[str]

texts = [
    '{"name": "x"}',
    '{"name": "y", "n": 3, "f": 1.5, "tags": {"a": "b"}, "inner": {"a": 1, "b": ["z"]},'
    ' "many": [{"a": 2}], "any_": [1, {"k": null}], "u": "s", "t": [1, 2], "kw": 4}',
    '{"name": "z", "kw": -1}', '{"name": 1}', '{"n": 1}', '[1, 2.5, "x", null, true]',
    '{"name": "é\\u2603", "u": 7, "extra": 1}',
]
out = []
for text in texts:
    for typ in (Any, Outer, TD):
        try:
            got = msgspec.json.decode(text, type=typ)
            out.append(["ok", repr(got), msgspec.json.encode(got).decode()])
        except (msgspec.ValidationError, msgspec.DecodeError) as e:
            out.append(["error", type(e).__name__, str(e)])
from podnuma.fleet import podscan
pods = json.dumps({"items": [
    {"metadata": {"name": "p", "namespace": "n", "uid": "u"}, "spec": {"nodeName": "a",
     "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
     "status": {"phase": "Running"}}]})
for dec in (podscan._TOP_PODS, podscan._TOP, podscan._TOP_PEEK, podscan._ANY):
    got = dec.decode(pods.encode())
    out.append([type(got).__name__, msgspec.json.encode(got).decode()])
print(json.dumps({"out": out, "added": added}))
"""


def _probe(mode: str) -> dict[str, list[object]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    got: dict[str, list[object]] = json.loads(proc.stdout)
    return got


def test_msgspec_decodes_the_same_without_typing_extensions() -> None:
    pytest.importorskip("typing_extensions")
    light, plain = _probe("light"), _probe("plain")
    assert light["out"] == plain["out"]
    assert len(light["out"]) == 7 * 3 + 4
    # the import added msgspec's modules (and what they import), but not
    # typing_extensions nor what it imports: sys.modules restored
    added = [str(m) for m in light["added"]]
    assert "msgspec" in added and "msgspec._core" in added
    assert [m for m in added if m in ("typing_extensions", "inspect", "ast", "dis", "tokenize",
                                      "linecache")] == []


def test_typing_extensions_imports_afterwards() -> None:
    code = ("from podnuma.inputs.msgspec_import import msgspec; import sys; "
            "assert 'typing_extensions' not in sys.modules; import typing_extensions; "
            "assert sys.modules['typing_extensions'] is typing_extensions; print('ok')")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    pytest.importorskip("typing_extensions")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
