"""A kubelet configuration file refused in the words of the kubelet's
decoder (the words checked against the kubelet itself in
tests/oracle/test_kubeletconfig_{json_syntax,types}_differential.py):
malformed JSON as Go's scanner words it; a value of the wrong type as
encoding/json does, the first one met unless a type that decodes itself
(a duration, a quantity, a time) fails, which ends the decoding; a YAML
``.inf``/``.nan`` as encoding/json's Marshal refuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podnuma.api.kubeletconfig import json_object_pairs, strict_decoding_error
from podnuma.errors import InputError
from podnuma.inputs.pods import load_config_file

HEAD = '"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"'
YAML_HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def _refusal(tmp_path: Path, text: str | bytes, name: str = "kc.conf") -> InputError:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with pytest.raises(InputError) as info:
        load_config_file(p)
    return info.value


@pytest.mark.parametrize(("text", "words"), [
    ("{" + HEAD + ",", "unexpected end of JSON input"),
    ("{" + HEAD + ",}", "invalid character '}' looking for beginning of object key string"),
    ("{" + HEAD + ', "maxPods": tru}', "invalid character '}' in literal true (expecting 'e')"),
    ("{" + HEAD + "}\n---\nx: 1\n", "invalid character '-' after top-level value"),
    ("{" + HEAD + ', "maxPods": NaN}', "invalid character 'N' looking for beginning of value"),
    ("\u2028{" + HEAD + "}", "invalid character '\u00e2' looking for beginning of value"),
])
def test_malformed_json_in_gos_words(tmp_path: Path, text: str, words: str) -> None:
    err = _refusal(tmp_path, text)
    assert err.message == f"failed to decode: couldn't get version/kind; json parse error: {words}"


def test_a_byte_that_is_not_utf8_is_quoted_as_the_file_has_it(tmp_path: Path) -> None:
    err = _refusal(tmp_path, ("{" + HEAD + ', "maxPods": 1').encode() + b"\xff}")
    assert err.message.endswith("invalid character '\u00ff' after object key:value pair")


def test_json_past_gos_depth(tmp_path: Path) -> None:
    err = _refusal(tmp_path, "{" + HEAD + ', "x": ' + "[" * 10001 + "]" * 10001 + "}")
    assert err.message.endswith("json parse error: invalid character '[' exceeded max depth")


def _decode(text: str) -> InputError:
    doc = json.loads(text, object_pairs_hook=json_object_pairs)
    with pytest.raises(InputError) as info:
        strict_decoding_error(doc)
    return info.value


def _wrong(kind: str, struct_path: str, gotype: str) -> str:
    return f"failed to decode: json: cannot unmarshal {kind} into Go struct field {struct_path} of type {gotype}"


@pytest.mark.parametrize(("fields", "path", "words"), [
    ('"failSwapOn": "x"', "failSwapOn", _wrong("string", "KubeletConfiguration.failSwapOn", "bool")),
    ('"maxPods": "x"', "maxPods", _wrong("string", "KubeletConfiguration.maxPods", "int32")),
    ('"clusterDNS": "x"', "clusterDNS", _wrong("string", "KubeletConfiguration.clusterDNS", "[]string")),
    ('"clusterDNS": [1]', "clusterDNS[0]", _wrong("number", "KubeletConfiguration.clusterDNS", "string")),
    ('"evictionHard": []', "evictionHard", _wrong("array", "KubeletConfiguration.evictionHard",
                                                  "map[string]string")),
    ('"cpuManagerPolicy": {"a": 1}', "cpuManagerPolicy",
     _wrong("object", "KubeletConfiguration.cpuManagerPolicy", "string")),
    ('"featureGates": {"A": "x"}', "featureGates.A", _wrong("string", "KubeletConfiguration.featureGates", "bool")),
    ('"registerWithTaints": ["x"]', "registerWithTaints[0]",
     _wrong("string", "KubeletConfiguration.registerWithTaints", "v1.Taint")),
    ('"logging": {"options": {"json": {"splitStream": "x"}}}', "logging.options.json.splitStream",
     _wrong("string", "JSONOptions.logging.options.json.OutputRoutingOptions.splitStream", "bool")),
    ('"staticPodURLHeader": {"a": "b"}', "staticPodURLHeader.a",
     _wrong("string", "KubeletConfiguration.staticPodURLHeader", "[]string")),
    ('"syncFrequency": true', "syncFrequency", _wrong("bool", "KubeletConfiguration.syncFrequency", "string")),
    ('"logging": {"flushFrequency": [1]}', "logging.flushFrequency",
     'failed to decode: invalid duration "[1]": json: cannot unmarshal array into Go value of type time.Duration'),
    ('"registerWithTaints": [{"timeAdded": "x"}]', "registerWithTaints[0].timeAdded",
     'failed to decode: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
    ('"logging": {"options": {"text": {"infoBufferSize": true}}}', "logging.options.text.infoBufferSize",
     "failed to decode: quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
])
def test_a_wrong_type_in_the_decoders_words(fields: str, path: str, words: str) -> None:
    err = _decode("{" + HEAD + ", " + fields + "}")
    assert (err.message, err.path) == (words, path)


def test_the_first_wrong_type_is_the_error() -> None:
    err = _decode("{" + HEAD + ', "zzz": 1, "maxPods": "x", "failSwapOn": "y"}')
    assert err.path == "maxPods"


def test_a_duration_ends_the_decoding_whatever_was_noted_before() -> None:
    err = _decode("{" + HEAD + ', "failSwapOn": "y", "maxPods": 1e2, "syncFrequency": "abc"}')
    assert (err.message, err.path) == ('failed to decode: time: invalid duration "abc"', "syncFrequency")
    err = _decode("{" + HEAD + ', "failSwapOn": "y", "syncFrequency": []}')
    assert err.path == "syncFrequency"


def test_a_null_leaves_a_field_as_it_is() -> None:
    doc = json.loads("{" + HEAD + ', "maxPods": null, "clusterDNS": [null], "evictionHard": {"a": null}, '
                     '"registerWithTaints": [null], "tracing": null}', object_pairs_hook=json_object_pairs)
    assert strict_decoding_error(doc) == ""


def test_a_plain_mapping_keeps_podnumas_words() -> None:
    """A configuration not read from a file (a scenario's inline one, --set)
    keeps the field kit's words."""
    with pytest.raises(InputError, match="must be a boolean, got a string"):
        strict_decoding_error({"failSwapOn": "x"})


@pytest.mark.parametrize(("body", "path", "word"), [
    ("maxPods: .inf\n", "maxPods", "+Inf"),
    ("zzz: .nan\naaa: -.inf\n", "aaa", "-Inf"),  # (the keys sorted, as Go's Marshal writes them)
    ("failSwapOn: x\nevictionHard: {a: .NaN}\n", "evictionHard.a", "NaN"),
    ("maxPods: 1\nmaxPods: 2\nclusterDNS: [+.inf]\n", "clusterDNS[0]", "+Inf"),
])
def test_non_finite_yaml_floats_as_the_codec_refuses_them(tmp_path: Path, body: str, path: str, word: str) -> None:
    err = _refusal(tmp_path, YAML_HEAD + body, "kc.yaml")
    assert err.path == path
    assert err.message.startswith(f"failed to decode: json: unsupported value: {word} (line ")


def test_non_finite_before_the_kind_is_looked_at(tmp_path: Path) -> None:
    err = _refusal(tmp_path, "kind: KubeletConfiguration\nmaxPods: .nan\n", "kc.yaml")
    assert err.message.startswith("failed to decode: json: unsupported value: NaN")


def test_utf16_decodes_as_utf8(tmp_path: Path) -> None:
    text = YAML_HEAD + "maxPods: 7\n# " + "é😀" * 400 + "\n"
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        p = tmp_path / f"{codec}.yaml"
        p.write_bytes(bom + text.encode(codec))
        assert load_config_file(p).max_pods == 7
    err = _refusal(tmp_path, b"\xff\xfe" + (YAML_HEAD + "maxPods: 7\x01\n").encode("utf-16-le"), "c.yaml")
    assert "invalid YAML: control characters are not allowed: #x0001 (line 3, column 11)" in err.message


def test_the_flush_frequency_quotes_the_files_own_text(tmp_path: Path) -> None:
    """``TimeOrMetaDuration`` quotes the value's JSON text: a JSON file's as
    written (its spacing, the occurrence the decoder stopped at), a YAML
    file's as the codec writes it (compact, keys sorted, HTML escaped)."""
    err = _refusal(tmp_path, "{" + HEAD + ', "logging": {"flushFrequency": "5s", "flushFrequency": [1,  {"b": 2}]}}')
    assert err.message.startswith('failed to decode: invalid duration "[1,  {\\"b\\": 2}]": json: cannot '
                                  "unmarshal array into Go value of type time.Duration (line ")
    err = _refusal(tmp_path, YAML_HEAD + "logging:\n  flushFrequency: {b: 1, a: '<'}\n", "kc.yaml")
    assert err.message.startswith('failed to decode: invalid duration "{\\"a\\":\\"\\\\u003c\\",\\"b\\":1}"')
