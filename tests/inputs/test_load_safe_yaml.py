"""``load_safe_yaml``: ``yaml.safe_load``'s values (the settings files of
another library, such as Dask's) through the bounded reader."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from podnuma.errors import InputError
from podnuma.inputs.documents import load_safe_yaml
from podnuma.inputs.limits import DEFAULT_LIMITS

SAMPLE = """\
a: yes
b: off
c: 0777
d: 1:20
e: 2024-01-02
f: ~
g: 1e3
h: "30s"
i: [1, 2.5, .inf, -.inf]
j: &x {k: v}
l: *x
m: !!str 12
n: 0x1f
"""


def test_the_values_are_safe_loads() -> None:
    assert load_safe_yaml(SAMPLE, name="s.yaml") == yaml.safe_load(SAMPLE)
    assert load_safe_yaml("", name="e.yaml") is None


@pytest.mark.parametrize("package", ["dask", "distributed"])
def test_dasks_own_settings_files_read_the_same(package: str) -> None:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        pytest.skip(f"{package} is not installed")
    files = sorted(Path(spec.origin).parent.glob("*.yaml"))
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert load_safe_yaml(text, name=str(f)) == yaml.safe_load(text), f


def test_an_alias_bomb_is_refused_naming_the_file() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    with pytest.raises(InputError) as e:
        load_safe_yaml(bomb, name="bomb.yaml")
    assert "bomb.yaml" in str(e.value)


def test_deep_nesting_and_size_are_refused() -> None:
    deep = "[" * (DEFAULT_LIMITS.max_depth + 5) + "]" * (DEFAULT_LIMITS.max_depth + 5)
    with pytest.raises(InputError, match="deep"):
        load_safe_yaml(deep, name="deep.yaml")
    with pytest.raises(InputError, match="larger than the limit"):
        load_safe_yaml("x" * (DEFAULT_LIMITS.max_bytes + 1), name="big.yaml")


def test_malformed_text_is_an_input_error() -> None:
    with pytest.raises(InputError) as e:
        load_safe_yaml("a: [1, 2\n", name="bad.yaml")
    assert "bad.yaml" in str(e.value)
