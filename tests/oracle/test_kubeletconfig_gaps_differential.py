"""Two corners of ``--kubelet-config`` a review left open, podnuma against
the kubelet's own loader (``kubelet-oracle kubeletconfig --file``) where Go
decides:

* a YAML file holding a null mapping key whose value is (or holds) a map
  with keys of mixed types: sigs.k8s.io/yaml refuses the null key with
  the value's ``%+#v``, where Go's ``fmt`` puts a nil key first, then the
  keys by the address of their type's descriptor (in the oracle's binary:
  strings, uint64s, ints, float64s, bools), then by value; go-yaml v2's
  merges and repeated keys (the value and the key set last: ``-0`` after
  ``0`` is printed ``-0``) shape the map printed; the other keys the codec
  refuses in the same two steps (go-yaml's ``invalid map key`` of a list or
  a mapping, met first as it decodes the whole document, a scalar it
  cannot decode likewise; then sigs.k8s.io/yaml's of a key past int64,
  which go-yaml makes a ``uint64``, printed ``0x...``);
* a quantity (``logging.options.*.infoBufferSize``) with more decimal
  places than podnuma's bound (100,000) in a configuration that is no
  file's (a value ``--set`` gave, a scenario's ``kubeletConfig``, a
  node's configz): the kubelet never finishes parsing it, so no oracle
  decides; podnuma refuses it in the words it gives a file's, and takes
  what is within the bound as the kubelet takes the same value in a file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config, strict_decoding_error
from podnuma.errors import InputError
from podnuma.inputs.overrides import apply_overrides, parse_overrides
from podnuma.inputs.scenario import load_scenario_text
from tests.oracle.kubeletconfig_files import kubelet_reason, outcomes, podnuma_file_error

_Y = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

#: every key type go-yaml v2 decodes a scalar to, twice each but nil
_EVERY_TYPE = ("{x: a, 2: b, 9223372036854775808: c, 1.5: d, true: e, ~: f, b: g, -1: h, "
               "18446744073709551615: i, -2.5: j, false: k, .nan: l, .inf: m, -.inf: z, 1e3: o}")

#: YAML files with one null key (so that Go's random walk of the maps meets
#: no other refusal first), the value's map keys of mixed types
_NULL_KEYS: tuple[tuple[str, str], ...] = (
    ("an int and a bool", "~: {1: a, true: b}\n"),
    ("an int and a string", "~: {1: a, x: b}\n"),
    ("four types", "~: {1: a, 1.5: b, true: c, x: d}\n"),
    ("every type", f"~: {_EVERY_TYPE}\n"),
    ("nested under a field", "kubeReserved:\n  ~: {2: a, false: b, 0.5: c}\n"),
    ("a null key inside", "~: {~: a, 1: b}\n"),
    ("in a list", "~: [{1: a, true: b}, [x, 1, ~]]\n"),
    ("ints, by value", "~: {1: a, 2: b, -3: c, 0x10: d, 0o7: e, 0b11: f, -9223372036854775808: g}\n"),
    ("a map in a map", "~: {a: {1: a, true: b}, 2: {x: 1, 3: 2}}\n"),
    ("uint64 keys", "~: {1: a, 9223372036854775808: b, 18446744073709551615: c}\n"),
    ("floats, by value", "~: {1e6: a, 1e21: b, 1e-5: c, 100000000000000000000: d, -.inf: e, 1: f}\n"),
    ("zero, then negative zero", "~: {0.0: a, -0.0: b, x: c}\n"),
    ("negative zero, then zero", "~: {-0.0: a, 0.0: b, x: c}\n"),
    ("strings of every kind", '~: {2006-01-02: a, !!binary YQ==: b, "1": c, 1: d, "": e, é: f}\n'),
    ("a key given twice", "~: {1: a, true: b, 1: c}\n"),
    ("a merge", "~: {1: a, <<: {1: b, 2: c, x: y}, 2: d}\n"),
    ("a merge of a list", "~: {<<: [{1: a, x: b}, {1: c, true: d}], 1: e}\n"),
    ("a merge of an alias", "a: &a {1: x, x: y}\n~: {<<: *a, 2: z}\n"),
    ("an alias", "a: &a {1: x, true: y}\n~: *a\n"),
    ("among keys of mixed types at the top", "1: a\ntrue: b\n~: {1.5: c, x: d}\n1.5: e\n"),
    ("among keys of mixed types nested", "kubeReserved:\n  1: a\n  true: b\n  ~: {false: c, 7: d}\n  x: e\n"),
    ("an explicit key", "? ~\n: {1: a, y: b}\n"),
)


def test_a_null_key_over_keys_of_mixed_types_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    items = [(name, _Y + body) for name, body in _NULL_KEYS]
    items.append(("a flow mapping", "# YAML\n{apiVersion: kubelet.config.k8s.io/v1beta1, kind: KubeletConfiguration, "
                                    "~: {1: a, x: b}, 2: c}\n"))
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "yaml")
    assert not mismatches, mismatches
    assert loaded == 0 and len(refused) == len(items)
    for name, mine, theirs in refused:
        reason = kubelet_reason(theirs)
        assert reason.startswith("failed to decode: unsupported map key of type: %!s(<nil>), key: <nil>, value: "), \
            (name, reason)
        assert mine.endswith(f": {reason}"), (name, mine, reason)  # (the file's name, then Go's words)


def test_mixed_keys_are_printed_in_go_order(tmp_path: Path) -> None:
    """What the oracle printed, kept here: a nil key first, then strings,
    uint64s (in hexadecimal), ints, float64s (NaN first), bools."""
    path = tmp_path / "every.yaml"
    path.write_text(_Y + f"~: {_EVERY_TYPE}\n")
    mine = podnuma_file_error(path)
    assert mine is not None and mine.endswith(
        'value: map[interface {}]interface {}{interface {}(nil):"f", "b":"g", "x":"a", 0x8000000000000000:"c", '
        '0xffffffffffffffff:"i", -1:"h", 2:"b", NaN:"l", -Inf:"z", -2.5:"j", 1.5:"d", 1000:"o", +Inf:"m", '
        'false:"k", true:"e"}'), mine


#: YAML files with other keys the codec refuses, or a null key beside a
#: value encoding/json would refuse later: go-yaml decodes the whole
#: document first (a key that is a list or a mapping: ``invalid map key``,
#: the first in its order), then sigs.k8s.io/yaml converts the keys (a null
#: key, a key past int64, which go-yaml makes a uint64), then encoding/json
#: writes the floats (``.inf``)
_OTHER_KEYS: tuple[tuple[str, str], ...] = (
    ("an infinite float, then a null key", "a: .inf\n~: 1\n"),
    ("a uint64 key", "9223372036854775808: a\n"),
    ("a uint64 key, nested", "kubeReserved: {18446744073709551615: a, x: 1}\n"),
    ("a uint64 key, no value", "9223372036854775808:\n"),
    ("a list key, then a null key", "[1]: a\n~: b\n"),
    ("a null key, then a list key", "~: b\n[1, x]: a\n"),
    ("a list key, nested", "a: {[1]: a}\n"),
    ("a list key under a null key", "~: {[1]: a}\n"),
    ("a mapping key", "{x: 1, 2: y}: a\n"),
    ("an empty mapping key", "? {}\n: a\n"),
    ("a list key within a list key", "[[{[2]: 1}]]: a\n"),
    ("a list key in a merge", "~: 1\n<<: [{a: 1}, {[3]: b}]\n"),
    ("a wrong field, then a null key", "maxPods: x\n~: 1\n"),
    ("a key given twice, then a null key", "a: 1\na: 2\n~: 1\n"),
)


def test_other_refused_keys_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    items = [(name, _Y + body) for name, body in _OTHER_KEYS]
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "yaml")
    assert not mismatches, mismatches
    assert loaded == 0 and len(refused) == len(items)
    for name, mine, theirs in refused:
        reason = kubelet_reason(theirs)
        assert mine.endswith(f": {reason}"), (name, mine, reason)


#: a null key (or a key past int64, or an infinite float) before a scalar
#: go-yaml cannot decode: go-yaml's refusal comes first (podnuma's words for it)
_DECODED_FIRST: tuple[tuple[str, str], ...] = (
    ("a null key, then a wrong tag", "~: x\nmaxPods: !!int y\n"),
    ("an infinite float, then a wrong tag", "a: .inf\nmaxPods: !!int y\n"),
    ("a uint64 key, then bad base64", '9223372036854775808: x\nb: !!binary "AB*"\n'),
    ("a null key, then a wrong tag in a list", "~: x\nb: [1, !!float z]\n"),
)


def test_what_go_yaml_refuses_comes_first(oracle_binary: str, tmp_path: Path) -> None:
    items = [(name, _Y + body) for name, body in _DECODED_FIRST]
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "yaml")
    assert not mismatches and len(refused) == len(items), mismatches
    for name, mine, theirs in refused:
        why = kubelet_reason(theirs).removeprefix("failed to decode: yaml: ")
        assert f"invalid YAML: {why} (line 4, column " in mine and "map key" not in mine, (name, mine, theirs)


#: quantities past podnuma's bound on decimal places (never given to the oracle)
_TOO_MANY = ("1e-999999999", "0e-999999999", "-1e-100001", "1.5e-100000", "0." + "0" * 100_000 + "1")
#: quantities at the bound, which the kubelet loads at once
_AT_BOUND = ("1e-100000", "0e-100000", "0." + "0" * 99_999 + "1")


def _file_words(tmp_path: Path, field: str, value: str) -> str:
    """podnuma's words for ``value`` in that field of a YAML file, the file's
    name and the field path taken off."""
    path = tmp_path / "k.yaml"
    path.write_text(_Y + f"logging:\n  options:\n    {field}:\n      infoBufferSize: {value!r}\n")
    mine = podnuma_file_error(path)
    assert mine is not None
    head = f"{path}: logging.options.{field}.infoBufferSize: "
    assert mine.startswith(head), mine
    return re.sub(r" \(line \d+, column \d+\)$", "", mine[len(head):])  # (where in the file)


@pytest.mark.parametrize("value", _TOO_MANY)
def test_too_many_decimal_places_refused_on_every_path_in_the_file_words(tmp_path: Path, value: str) -> None:
    for field in ("json", "text"):
        words = _file_words(tmp_path, field, value)
        assert "decimal places: the kubelet would compute 10^" in words, words
        where = f"logging.options.{field}.infoBufferSize"
        # a value --set gave (checked as it is parsed)
        with pytest.raises(InputError) as caught:
            parse_overrides([f'{where}="{value}"'])
        assert caught.value.message == words and caught.value.path == where, caught.value
        # --set as a whole map
        with pytest.raises(InputError) as caught:
            parse_overrides([f'logging={{options: {{{field}: {{infoBufferSize: "{value}"}}}}}}'])
        assert caught.value.message == words and caught.value.path == where, caught.value
        # a configuration no file gave (a node's configz, a scenario's)
        doc = {"logging": {"options": {field: {"infoBufferSize": value}}}}
        with pytest.raises(InputError) as caught:
            load_kubelet_config(doc)
        assert caught.value.message == words and caught.value.path == where, caught.value
        # a scenario's embedded kubeletConfig
        scenario = ("apiVersion: podnuma.io/v1\nkind: Scenario\nnode:\n  name: worker\n  synthetic: {sockets: 1, "
                    "numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, memoryPerNumaNode: 4Gi}\n"
                    f"kubeletConfig:\n  logging: {{options: {{{field}: {{infoBufferSize: \"{value}\"}}}}}}\n"
                    "steps: []\n")
        with pytest.raises(InputError) as caught:
            load_scenario_text(scenario, name="s.yaml", base_dir=".")
        assert words in str(caught.value) and f"kubeletConfig.{where}: " in str(caught.value), caught.value


def test_a_zero_with_too_many_places_comes_after_other_errors() -> None:
    """A zero decodes (the kubelet stalls later, comparing it): another
    wrong value of a document that is no file's is refused first, before
    or after it, as a file's is; any other such quantity at once."""
    for zero_first in (True, False):
        doc: dict[str, object] = {"maxPods": "x"}
        logging = {"options": {"json": {"infoBufferSize": "0e-999999999"}}}
        doc = {"logging": logging, **doc} if zero_first else {**doc, "logging": logging}
        with pytest.raises(InputError) as caught:
            strict_decoding_error(doc)
        assert caught.value.path == "maxPods", caught.value
    doc = {"logging": {"options": {"json": {"infoBufferSize": "1e-999999999"}}}, "maxPods": "x"}
    with pytest.raises(InputError) as caught:
        strict_decoding_error(doc)
    assert caught.value.path == "logging.options.json.infoBufferSize", caught.value
    assert "999999999 decimal places" in caught.value.message


def test_places_within_the_bound_load_on_every_path_as_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    items = [(f"{field} {value[:12]}", _Y + f"logging:\n  options:\n    {field}:\n      infoBufferSize: {value!r}\n")
             for value in _AT_BOUND for field in ("json", "text")]
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, "yaml")
    assert not mismatches and loaded == len(items) and not refused, (mismatches, refused)
    for value in _AT_BOUND:
        where = "logging.options.json.infoBufferSize"
        doc = apply_overrides({}, parse_overrides([f'{where}="{value}"']))
        load_kubelet_config(doc)
        load_kubelet_config({"logging": {"options": {"text": {"infoBufferSize": value}}}})
