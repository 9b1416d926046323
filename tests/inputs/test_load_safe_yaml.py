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


#: tags, merges and the rest of the safe schema, built from the bounded
#: composer's tree as safe_load builds them
TAGGED = """\
base: &base {a: 1, b: [x, y]}
merged:
  <<: *base
  b: 2
many:
  <<: [*base, {c: 3}]
i: !!int "12"
f: !!float "1"
s: ! 12
s2: ! "12"
s3: !  yes
q: "yes"
t: !!timestamp 2001-12-14t21:59:43.10-05:00
bin: !!binary aGVsbG8=
set: !!set {a, b}
omap: !!omap [a: 1, b: 2]
pairs: !!pairs [a: 1, a: 2]
n: !!null ""
seq: ! [1, 2]
"""


def test_the_values_are_safe_loads() -> None:
    assert load_safe_yaml(SAMPLE, name="s.yaml") == yaml.safe_load(SAMPLE)
    assert load_safe_yaml(TAGGED, name="t.yaml") == yaml.safe_load(TAGGED)
    assert load_safe_yaml("", name="e.yaml") is None
    assert load_safe_yaml("---\n", name="e.yaml") is None
    # an alias is the anchored value itself, as safe_load gives it
    got = load_safe_yaml("a: &x [1]\nb: *x\n", name="s.yaml")
    assert got["a"] is got["b"]


@pytest.mark.parametrize(("text", "words"), [
    ("a: 1\n---\nb: 2\n", "expected a single document"),
    ("a: !!python/object:os.system x\n", "python/object"),
    ("a: !!int x\n", "invalid literal"),
])
def test_what_safe_load_refuses_is_an_input_error(text: str, words: str) -> None:
    with pytest.raises((yaml.YAMLError, ValueError)):
        yaml.safe_load(text)
    with pytest.raises(InputError, match=words) as e:
        load_safe_yaml(text, name="bad.yaml")
    assert "bad.yaml" in str(e.value)


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


def test_dasks_settings_reader_reads_no_more_than_the_limit(tmp_path: Path) -> None:
    """``read_settings`` (what Dask's ``yaml.safe_load`` is while Dask is
    imported): a file is read up to the limit only, and refused past it."""
    import io

    from podnuma.fleet.daskimport import read_settings

    assert read_settings("a: [1, 2]\n") == {"a": [1, 2]}
    path = tmp_path / "dask.yaml"
    path.write_text("b: yes\n", encoding="utf-8")
    with path.open(encoding="utf-8") as f:
        assert read_settings(f) == {"b": True}
    with path.open("rb") as f:
        assert read_settings(f) == {"b": True}

    class Big(io.StringIO):
        asked: list[int] = []

        def read(self, size: int | None = -1) -> str:
            self.asked.append(-1 if size is None else size)
            return super().read(size)

    big = Big("x" * (DEFAULT_LIMITS.max_bytes + 100))
    with pytest.raises(InputError, match="larger than the limit"):
        read_settings(big)
    assert big.asked == [DEFAULT_LIMITS.max_bytes + 1]
    with pytest.raises(InputError, match="larger than the limit"):
        read_settings(io.BytesIO(b"\xc3\xa9" * (DEFAULT_LIMITS.max_bytes // 2 + 1)))
