"""Kubelet configuration files at the corners a review found, podnuma
against the kubelet's own loader (``kubelet-oracle kubeletconfig --file``):

* a quantity (``reservedMemory[].limits``, ``logging.options.*.infoBufferSize``)
  written with a JSON escape of an ordinary character (``"\\u0031Gi"``):
  ``Quantity.UnmarshalJSON`` parses the text between the quotes as it is,
  escapes not read, so the backslash makes it no quantity;
* a document that is empty, not an object, or holds a null mapping key:
  the codec's words (the document quoted when the kind is missing; the
  struct ``couldn't get version/kind`` decodes into; sigs.k8s.io/yaml's
  ``unsupported map key of type: %!s(<nil>)`` with the value's ``%+#v``);
* a quantity with a huge decimal exponent (``1e999999999``), which
  ``ParseQuantity`` reads without computing it: the loader accepts it;
* a quantity with a huge negative decimal exponent (``1e-999999999``),
  which ``ParseQuantity`` rounds to nano units computing 10 to the power
  of its decimal places (a zero: the first comparison does), and never
  finishes: podnuma refuses it in its own words (never asked of the
  kubelet), and loads what has up to 100,000 places as the kubelet does;
* a file with many ``reservedMemory`` limits: each quantity's text is found
  in one walk over the file for all of them, so the work is linear (the
  characters the walks cover are counted, no time is measured);
* a logging flush frequency that is no string, holding bytes that are not
  UTF-8: ``TimeOrMetaDuration`` quotes the JSON text with ``%q`` (``\\xff``);
* ``--set`` on a file that does not decode on its own: the kubelet decodes
  its file before a flag sets anything, so the file's own error stands;
* where an error is in a large JSON file, found in one pass over the text
  (and where the YAML node tree of the text puts it).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import podnuma.api.kubeletconfig as kubeletconfig_module
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.errors import InputError, KubeletStartupError
from podnuma.golang.jsonsyntax import json_locate, json_value_texts, json_value_texts_every
from podnuma.inputs.documents import Document
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.pods import load_config_text
from podnuma.inputs.text import TextInput
from tests.oracle.kubeletconfig_files import (
    kubelet_reason,
    oracle_file_answers,
    podnuma_file_error,
    words_agree,
    write_files,
)

_J = '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",'
_Y = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def _limits(*pairs: str) -> str:
    return _J + '"reservedMemory":[{"numaNode":0,"limits":{' + ",".join(pairs) + "}}]}"


def _agree(oracle_binary: str, tmp_path: Path, items: list[tuple[str, bytes | str]], suffix: str,
           *, loaded: int, refused: int) -> None:
    tmp_path.mkdir(exist_ok=True)
    mismatches, got_loaded, got_refused = words_agree(oracle_binary, tmp_path, items, suffix)
    assert not mismatches, "\n".join(mismatches)
    assert (got_loaded, got_refused) == (loaded, refused)


def test_quantity_escapes_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    items: list[tuple[str, bytes | str]] = [
        ("escaped digit", _limits(r'"memory":"\u0031Gi"')),
        ("escaped suffix", _limits(r'"memory":"1\u0047i"')),
        ("escaped slash", _limits(r'"memory":"\/1Gi"')),
        ("escaped second of two", _limits('"memory":"1Gi"', r'"memory":"1\u0047i"')),
        ("escaped first of two", _limits(r'"memory":"\u0031Gi"', '"memory":"1Gi"')),
        ("escaped in a second list", _limits('"memory":"1Gi"')[:-1]
         + r',"reservedMemory":[{"limits":{"memory":"\u0031Gi"}}]}'),
        ("escaped under a dotted key", _limits(r'"a.b":"\u0031"')),
        ("escaped key, plain value", _limits(r'"m\u0065mory":"1Gi"')),
        ("escaped buffer size", _J + r'"logging":{"options":{"json":{"infoBufferSize":"\u0031Mi"}}}}'),
        ("spaces inside the quotes", _limits('"memory":" 1Gi "')),
        ("plain", _limits('"memory":"1Gi"')),
    ]
    _agree(oracle_binary, tmp_path, items, "json", loaded=3, refused=8)


def test_documents_that_are_no_configuration_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    yaml_items: list[tuple[str, bytes | str]] = [
        ("no bytes", ""), ("a blank line", "\n"), ("a document marker", "---\n"), ("null", "null\n"),
        ("a comment", "# c\n"), ("a tilde", "~"), ("a byte order mark", "\ufeff\n"),
        ("no kind", "apiVersion: kubelet.config.k8s.io/v1beta1\n# x\n"),
        ("no apiVersion", "kind: KubeletConfiguration\r\n"),
        ("a number", "5"), ("a boolean", "true\n"), ("a string", "x\n"), ("a list", "- a\n"),
        ("a list after a marker", "---\n- a\n"),
        ("a null key", _Y + "~: 1\n"),
        ("a nested null key", _Y + 'kubeReserved:\n  ~: [1, "a", {b: 2}, 1.5, true, null]\n'),
        ("an explicit null key", _Y + "? null\n: {a: 1}\n"),
        ("a null key and a float", _Y + "? ~\n: 1.0\n"),
    ]
    _agree(oracle_binary, tmp_path / "y", yaml_items, "yaml", loaded=0, refused=len(yaml_items))
    json_items: list[tuple[str, bytes | str]] = [
        ("an empty object", "{}"), ("a string", '"x"'), ("an empty list", "[]"), ("a list", '[{"a":1}]'),
        ("no kind, a byte not UTF-8", b'{"a": "\xff\\u00e9"}'),
        ("no apiVersion", ' {"kind":"KubeletConfiguration"}\n'),
    ]
    _agree(oracle_binary, tmp_path / "j", json_items, "json", loaded=0, refused=len(json_items))
    for path in sorted((tmp_path / "y").iterdir()) + sorted((tmp_path / "j").iterdir()):
        mine = podnuma_file_error(path)
        assert mine is not None and "\n" not in mine, mine  # (one line, the document's breaks escaped)


def test_an_empty_file_named_relatively(oracle_binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kubelet names an empty file by its absolute path."""
    (tmp_path / "empty.yaml").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    theirs = oracle_file_answers(oracle_binary, [Path("empty.yaml")])[0]["error"]
    mine = podnuma_file_error(Path("empty.yaml"))
    assert mine is not None and str(tmp_path / "empty.yaml") in kubelet_reason(theirs)
    assert kubelet_reason(theirs) in mine, (theirs, mine)


def test_huge_quantity_exponents_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    yaml_items: list[tuple[str, bytes | str]] = [
        ("plain", _Y + "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1e999999999\n"),
        ("negative, and a zero", _Y + "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: -1e999999999\n"
         '    hugepages-2Mi: "0e999999999"\n'),
        ("buffer size", _Y + "logging:\n  options:\n    text:\n      infoBufferSize: 1e999999999\n"),
        ("a float", _Y + "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1e308\n"),
        ("with a suffix", _Y + "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1e999999999Gi\n"),
    ]
    _agree(oracle_binary, tmp_path / "y", yaml_items, "yaml", loaded=4, refused=1)
    json_items: list[tuple[str, bytes | str]] = [
        ("a number", _limits('"memory":1e999999999')),
        ("a string", _limits('"memory":"12e999999999"')),
    ]
    _agree(oracle_binary, tmp_path / "j", json_items, "json", loaded=2, refused=0)


def test_a_huge_exponent_the_memory_manager_would_compare(tmp_path: Path) -> None:
    """Under the Static policy the kubelet compares the limit with the
    node's reservation, computing 10^999999999, which does not finish:
    podnuma refuses it (its own words)."""
    path = tmp_path / "kubelet.yaml"
    path.write_text(_Y + "memoryManagerPolicy: Static\nreservedMemory:\n- numaNode: 0\n  limits:\n"
                    "    memory: 1e999999999\n")
    mine = podnuma_file_error(path)
    assert mine is not None and "reservedMemory[0].limits.memory: quantity exponent 999999999 too large" in mine


#: quantities with more decimal places than podnuma's bound (100,000):
#: the kubelet does not finish decoding them; never given to the oracle
_TOO_MANY_PLACES = ('"1e-999999999"', '"100e-999999999"', '"0e-999999999"', '"-1e-999999999"',
                    "1e-999999999", '" 1e-100001"', '"1.5e-100000"', '"0.' + "0" * 99_992 + '1n"',
                    '"0.' + "0" * 100_000 + '1"')


def test_quantities_with_too_many_decimal_places_are_refused(tmp_path: Path) -> None:
    for i, value in enumerate(_TOO_MANY_PLACES):
        files = {
            "reservedMemory[0].limits.memory": (_limits(f'"memory":{value}'), "json"),
            "logging.options.json.infoBufferSize":
                (_J + '"logging":{"options":{"json":{"infoBufferSize":' + value + "}}}}", "json"),
            "logging.options.text.infoBufferSize":
                (_Y + "logging:\n  options:\n    text:\n      infoBufferSize: " + value + "\n", "yaml"),
        }
        if not value.startswith('"'):
            del files["logging.options.text.infoBufferSize"]  # (a YAML number: the float 0, loaded)
        for field, (text, suffix) in files.items():
            path = tmp_path / f"{i}-{field}.{suffix}"
            path.write_text(text)
            mine = podnuma_file_error(path)
            assert mine is not None, (field, value)
            assert mine.startswith(f"{path}: {field}: quantity "), mine
            assert "decimal places: the kubelet would compute 10^" in mine and "and not finish" in mine, mine
            assert "\n" not in mine
    # a document of no file (a scenario's): the limit refused as it is loaded
    with pytest.raises(InputError) as caught:
        load_kubelet_config({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1e-999999999"}}]})
    assert caught.value.path == "reservedMemory[0].limits.memory"
    assert "999999999 decimal places" in caught.value.message


def test_quantities_at_the_decimal_places_bound_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    """Up to 100,000 decimal places the kubelet decodes the quantity at
    once (10^99991 is quickly computed): podnuma loads it as well."""
    values = ['"1e-100000"', '"0e-100000"', '"-5e-100000"', "1e-100000", '"0.' + "0" * 99_999 + '1"',
              '"0.' + "0" * 99_990 + '1n"', '"12345678901234567890e-10"']
    items: list[tuple[str, bytes | str]] = []
    for value in values:
        items.append((f"limit {value[:12]}", _limits(f'"memory":{value}')))
        items.append((f"buffer {value[:12]}",
                      _J + '"logging":{"options":{"json":{"infoBufferSize":' + value + "}}}}"))
    _agree(oracle_binary, tmp_path / "j", items, "json", loaded=len(items), refused=0)
    # a YAML number that far below 1 is the float 0 (the JSON the codec writes: 0)
    yaml_items: list[tuple[str, bytes | str]] = [
        ("a float", _Y + "logging:\n  options:\n    text:\n      infoBufferSize: 1e-999999999\n"
         "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: -1e-999999999\n")]
    _agree(oracle_binary, tmp_path / "y", yaml_items, "yaml", loaded=1, refused=0)


def test_many_reserved_memory_limits_load_in_linear_work(
    oracle_binary: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3,000 ``reservedMemory`` items, several limits each: podnuma loads
    the file as the kubelet does, and refuses one whose last item's limit
    is escaped in the kubelet's words; the decoder's lookups of the
    quantities' texts cover the file a bounded number of times (before,
    each quantity's lookup walked the file from its start: quadratic)."""
    items = 3000
    limits = {"memory": "1Gi", "hugepages-2Mi": "2Mi", "hugepages-1Gi": 0, "example.com/x": "1.5"}
    doc = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "reservedMemory": [{"numaNode": i % 4, "limits": limits} for i in range(items)]}
    good = json.dumps(doc, indent=1)
    bad = good[:good.rindex('"1Gi"')] + '"\\u0031Gi"' + good[good.rindex('"1Gi"') + 5:]
    paths = write_files([("good", good), ("bad", bad)], tmp_path, "json")
    theirs = oracle_file_answers(oracle_binary, paths)
    assert theirs[0].get("error") is None
    scanned: list[int] = []
    for name in ("json_value_texts", "json_value_texts_every"):
        real = getattr(kubeletconfig_module, name)

        def counted(text: str, keys: Any, real: Any = real) -> Any:
            scanned.append(len(text))
            return real(text, keys)

        monkeypatch.setattr(kubeletconfig_module, name, counted)
    assert podnuma_file_error(paths[0]) is None
    assert 0 < sum(scanned) <= 2 * len(good), f"{len(scanned)} lookups covered {sum(scanned)} characters"
    scanned.clear()
    mine = podnuma_file_error(paths[1])
    assert mine is not None and kubelet_reason(theirs[1]["error"]) in mine, (theirs[1], mine)
    assert f"reservedMemory[{items - 1}].limits.memory" in mine
    assert 0 < sum(scanned) <= 2 * len(bad)


def test_every_value_texts_as_each_lookup_finds_them() -> None:
    """One walk for a pattern finds, for every key path it stands for, the
    texts a lookup of that path finds (random documents, keys given twice)."""
    rng = random.Random("json-value-texts-every")
    checked = 0
    for _ in range(300):
        doc = {rng.choice(_KEYS): _random_value(rng, 0) for _ in range(rng.randint(1, 5))}
        text = json.dumps(doc, indent=rng.choice([None, 1]))
        if rng.random() < 0.3:
            text = text.replace("{", '{"a": [{"b": "1"}], ', 1)  # a key given twice
        for pattern in [("a",), ("a", None), ("a", None, "b"), (None, None), ("a", None, None), ("limits", None)]:
            found = json_value_texts_every(text, pattern)
            paths: set[tuple[str | int, ...]] = set(found)
            for path in _paths(json.loads(text)):
                keys: list[str | int] = []
                for part in path.replace("[", ".[").split("."):
                    if part.startswith("[") and part[1:-1].isdigit():
                        keys.append(int(part[1:-1]))
                    elif part:
                        keys.append(part)
                if len(keys) == len(pattern) and all(p is None or p == k for p, k in zip(pattern, keys, strict=True)):
                    paths.add(tuple(keys))
            for keys_found in paths:
                assert found.get(keys_found, []) == json_value_texts(text, keys_found), (text, keys_found)
                checked += 1
    assert checked > 500
    assert json_value_texts_every("not json", ("a",)) == {}


def test_flush_frequency_bytes_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    def flush(text: bytes) -> bytes:
        return _J.encode() + b'"logging":{"flushFrequency":' + text + b"}}"

    items: list[tuple[str, bytes | str]] = [
        ("a byte in a list", flush(b'["\xff"]')),
        ("a byte in an object", flush(b'{"a":"x\xffy"}')),
        ("a cut sequence in a list", flush(b'["\xe2\x82"]')),
        ("an encoded surrogate and U+FFFD", flush(b'["\xed\xa0\x80\xef\xbf\xbd"]')),
        ("a cut sequence in a string", flush(b'"1\xe2\x82s"')),
        ("a byte in a string", flush(b'"\\u00ff\xff"')),
        ("the second logging", _J.encode() + b'"logging":{"flushFrequency":"1s"},'
         b'"logging":{"flushFrequency":{"\\u00ff":"\xff"}}}'),
    ]
    _agree(oracle_binary, tmp_path, items, "json", loaded=0, refused=len(items))


#: a file that does not decode on its own, and a --set that would make it
_SET_CASES: list[tuple[str, str, str, list[str]]] = [
    ("a policy of the wrong type", "yaml", _Y + "cpuManagerPolicy: 5\n", ["cpuManagerPolicy=static"]),
    ("maxPods a string", "json", _J + '"maxPods":"x"}', ["maxPods=10"]),
    ("a bad duration", "yaml", _Y + "syncFrequency: 5x\n", ["syncFrequency=1m"]),
    ("a bad quantity", "json", _limits('"memory":"x"'), ["reservedMemory[0].limits.memory=1Gi"]),
    ("an escaped quantity", "json", _limits(r'"memory":"\u0031Gi"'), ["reservedMemory=[]"]),
    ("a flush frequency", "json", _J + '"logging":{"flushFrequency":true}}', ["logging.flushFrequency=5s"]),
]


def test_set_does_not_hide_a_file_that_does_not_decode(oracle_binary: str, tmp_path: Path) -> None:
    paths = write_files([(name, text) for name, _, text, _ in _SET_CASES], tmp_path, "txt")
    paths = [p.rename(p.with_suffix("." + case[1])) for p, case in zip(paths, _SET_CASES, strict=True)]
    answers = oracle_file_answers(oracle_binary, paths)
    for (name, _, _, sets), path, answer in zip(_SET_CASES, paths, answers, strict=True):
        theirs = answer.get("error")
        assert theirs is not None, name
        overrides = parse_overrides(sets)
        try:
            load_config_text(TextInput.read(path, what="kubelet configuration"), overrides)
        except (InputError, KubeletStartupError) as e:
            mine = str(e)
        else:
            raise AssertionError(f"{name}: the kubelet refuses the file ({theirs}); podnuma with --set loads it")
        assert kubelet_reason(theirs) in mine and mine.startswith(str(path)), (name, theirs, mine)
        assert "--set" not in mine, (name, mine)


_NODE = "node: {synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 4, threadsPerCore: 1, " \
    "memoryPerNumaNode: 8Gi}}\n"


@pytest.mark.parametrize("inline", [True, False])
def test_set_does_not_hide_a_scenarios_configuration_that_does_not_decode(tmp_path: Path, inline: bool) -> None:
    """A scenario's configuration (inline, or its ``kubeletConfigFile``) is
    decoded on its own before ``--set`` applies: the error is the one it
    has without ``--set``."""
    from podnuma.inputs.scenario import load_scenario_text

    if inline:
        config = "kubeletConfig:\n  cpuManagerPolicy: 5\n"
    else:
        (tmp_path / "kubelet.yaml").write_text(_Y + "cpuManagerPolicy: 5\n")
        config = "kubeletConfigFile: kubelet.yaml\n"
    text = "apiVersion: podnuma.io/v1\nkind: Scenario\n" + _NODE + config + "steps: []\n"
    errors = []
    for sets in ([], ["cpuManagerPolicy=static"]):
        try:
            load_scenario_text(text, name="s.yaml", base_dir=tmp_path, overrides=parse_overrides(sets))
        except InputError as e:
            errors.append(str(e))
        else:
            errors.append("")
    assert errors[0] and "cpuManagerPolicy" in errors[0] and errors[1] == errors[0], errors


# --------------------------------------------------------------------------
# where an error is in a JSON text


def _tree(text: str) -> Any:
    """The YAML node tree of the JSON text (how positions were found
    before: libyaml's, else PyYAML's; ``None`` when neither reads it)."""
    import yaml

    from podnuma.inputs.goyaml import compose_documents, events
    from podnuma.inputs.limits import ReadLimits
    from podnuma.inputs.strict_loader import StrictLoader

    unbounded = ReadLimits(max_bytes=1 << 62, max_depth=1 << 30, max_nodes=1 << 62, max_alias_nodes=1 << 62)
    try:
        return compose_documents(events(text, c_parser=True), unbounded)[0]
    except yaml.YAMLError:
        pass
    try:
        return yaml.compose(text, Loader=StrictLoader)
    except yaml.YAMLError:
        return None


_KEYS = ("a", "b", "a.b", "c", "x y", "\u00e9", "a[0]", "k\u2028", "limits")


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice([1, -2.5e3, "s", 'a"b\\c', "\u00e9\u2028x", True, None, "[{", ""])
    if roll < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(_KEYS): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _paths(value: Any, prefix: str = "") -> list[str]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, f"{prefix}.{k}" if prefix else k)
            out.append(f"{prefix}[{k}]")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, f"{prefix}[{i}]")
    return out


def test_json_positions_as_the_yaml_tree_puts_them() -> None:
    rng = random.Random("json-locate")
    checked = 0
    for _ in range(400):
        doc = {rng.choice(_KEYS): _random_value(rng, 0) for _ in range(rng.randint(1, 5))}
        text = json.dumps(doc, indent=rng.choice([None, 1, "\t"]), ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.3:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.2:
            text = text.replace("{", '{"a": {"b": 1}, ', 1)  # a key given twice
        root = _tree(text)
        if root is None:
            continue  # (YAML does not read it: no position was found before)
        tree = Document("x", None, root)
        for path in [*_paths(doc), "zz", "a.zz", "a[9]", "[0]"]:
            for key in (False, True):
                assert json_locate(text, path, key) == tree.locate(path, key=key), (text, path, key)
                checked += 1
    assert checked > 10000


def test_every_value_of_a_key_given_twice() -> None:
    text = '{"a": [{"b": "1"}, {"b": 2}], "a": [{"b": {"c": [1, "]"]}}], "b": 3}'
    assert json_value_texts(text, ("a", 0, "b")) == ['"1"', '{"c": [1, "]"]}']
    assert json_value_texts(text, ("a", 1, "b")) == ["2"]
    assert json_value_texts(text, ("b",)) == ["3"]
    assert json_value_texts(text, ("a", 2)) == []
    assert json_value_texts("not json", ("a",)) == []


def test_an_error_in_a_large_json_file_is_located(oracle_binary: str, tmp_path: Path) -> None:
    """A 4 MiB file with a list of two million items: the kubelet's words,
    at the right line and column (the time it takes is measured in
    docs/limits.md, never asserted here)."""
    items = 2_000_000
    head = _J + '"unknownList":[' + ",".join(["0"] * items) + "],"
    cases = [("after the list", "json", head + '"maxPods":"x"}', "maxPods", len(head) + len('"maxPods":') + 1),
             ("an item of a list", "json", _J + '"allowedUnsafeSysctls":[' + '"a",' * items + "5]}",
              f"allowedUnsafeSysctls[{items}]", len(_J) + len('"allowedUnsafeSysctls":[') + 4 * items + 1)]
    for name, suffix, text, path, column in cases:
        assert json_locate(text, path) == (1, column), name
        file = tmp_path / f"{name.replace(' ', '-')}.{suffix}"
        file.write_text(text)
        theirs = oracle_file_answers(oracle_binary, [file])[0]["error"]
        mine = podnuma_file_error(file)
        assert mine is not None and kubelet_reason(theirs) in mine, (name, theirs, mine)
        assert mine.endswith(f"(line 1, column {column})"), (name, mine)
