"""How podnuma reads the documents of a kubelet ``--config`` file (the
oracle-backed cases are tests/oracle/test_kubeletconfig_documents_differential.py
and test_kubeletconfig_strict_words_differential.py; these run without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import parse_first_document
from podnuma.inputs.pods import load_config_file

HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 7\n"


@pytest.mark.parametrize("later", [
    "foo: [1, 2\n", "\tfoo: 1\n", 'foo: "abc\n', "{{{{ not yaml ]]]\n", "foo: *nope\n", "@x\n",
])
def test_a_later_document_is_never_parsed(tmp_path: Path, later: str) -> None:
    (tmp_path / "k.yaml").write_text(HEAD + "---\n" + later)
    assert load_config_file(tmp_path / "k.yaml").max_pods == 7


def test_a_control_character_counts_where_the_reader_took_it() -> None:
    with pytest.raises(InputError, match="control characters are not allowed"):
        parse_first_document(HEAD + "---\n\x01\n", name="k")
    # past the 512-byte chunk holding the end of the first document
    far = HEAD + "---\n" + "x" * 600 + "\x01\n"
    assert parse_first_document(far, name="k").data["maxPods"] == 7
    with pytest.raises(InputError, match="control characters are not allowed"):
        parse_first_document(HEAD + "x: \x7f\n", name="k")


def test_json_is_the_whole_text_whatever_the_name(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text('{"apiVersion": "kubelet.config.k8s.io/v1beta1", '
                                     '"kind": "KubeletConfiguration"}\n---\nx: 1\n')
    with pytest.raises(InputError, match="json parse error: invalid character '-' after top-level value"):
        load_config_file(tmp_path / "k.yaml")
    (tmp_path / "k.json").write_text(HEAD + "---\nfoo: [\n")
    assert load_config_file(tmp_path / "k.json").max_pods == 7


def test_a_key_given_twice_decodes_leniently_with_the_kubelets_warning(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text(HEAD + "maxPods: 9\n")
    cfg = load_config_file(tmp_path / "k.yaml")
    assert cfg.max_pods == 9
    assert cfg.decode_warning == 'strict decoding error: yaml: unmarshal errors:\n  line 4: key "maxPods" already set in map'
    (tmp_path / "k.json").write_text('{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": '
                                     '"KubeletConfiguration", "maxPods": 5, "maxPods": 6}')
    cfg = load_config_file(tmp_path / "k.json")
    assert (cfg.max_pods, cfg.decode_warning) == (6, 'strict decoding error: duplicate field "maxPods"')


def test_a_credential_provider_config_of_the_wrong_type_in_the_kubelets_words(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"
                                     "providers:\n- name: a\n  env: [{name: x, value: 1}]\n")
    with pytest.raises(InputError, match="failed to decode: json: cannot unmarshal number into Go struct field "
                                         "ExecEnvVar.providers.env.value of type string"):
        load_config_file(tmp_path / "c.yaml")


def test_bytes_past_the_reads_are_never_decoded(tmp_path: Path) -> None:
    """A byte that is not UTF-8 (or an encoded surrogate) after the first
    document, past go-yaml's last read, is never looked at; within a read
    the first document needs, go-yaml's words."""
    pad = b"#" + b"p" * 600 + b"\n"
    for bad in (b"\xff", b"\xed\xa0\x80", b"\xc3("):
        (tmp_path / "k.yaml").write_bytes(HEAD.encode() + b"---\n" + pad + bad + b"\n")
        assert load_config_file(tmp_path / "k.yaml").max_pods == 7
    (tmp_path / "k.yaml").write_bytes(HEAD.encode() + b"---\n\xff\n")
    with pytest.raises(InputError, match="invalid YAML: invalid leading UTF-8 octet"):
        load_config_file(tmp_path / "k.yaml")
    (tmp_path / "k.yaml").write_bytes(HEAD.encode() + b"x: \xed\xa0\x80\n")
    with pytest.raises(InputError, match="invalid YAML: invalid Unicode character"):
        load_config_file(tmp_path / "k.yaml")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_with_a_byte_order_mark_is_read(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "k.yaml").write_bytes(("\ufeff" + HEAD).encode(encoding))
    assert load_config_file(tmp_path / "k.yaml").max_pods == 7


def _cut(size: int) -> bytes:
    """A file of ``size`` bytes ending with ``---\\n`` whose first 512-byte
    read ends after the first byte of a euro sign (three bytes)."""
    first = HEAD + "# " + "p" * (512 - len(HEAD.encode()) - 3) + "\u20ac\n"
    body = (first + "#" + "q" * (size - len(first.encode()) - 6) + "\n---\n").encode()
    assert body[511:514] == "\u20ac".encode() and len(body) == size
    return body


def test_a_read_after_a_cut_character_ends_earlier() -> None:
    """The reader carries the byte of the euro sign the first read took
    over, so its second read takes 511 bytes and ends at byte 1023,
    which is as far as the parser needs when the document's end (``---``)
    starts four bytes before it: a control character at byte 1023 is not
    read. One byte earlier, it is (checked against the kubelet:
    tests/oracle/test_kubeletconfig_documents_differential.py)."""
    assert parse_first_document(_cut(1023) + b"\x01\n", name="k").data["maxPods"] == 7
    with pytest.raises(InputError, match="control characters are not allowed"):
        parse_first_document(_cut(1022) + b"\x01\n", name="k")


def test_numbers_as_the_codec_reads_them(tmp_path: Path) -> None:
    """JSON: an int field takes an integer literal only, in the decoder's
    words; a number of any length in an unknown field is skipped. YAML:
    made JSON first, ``1e2`` is 100."""
    head = '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", '
    (tmp_path / "k.json").write_text(head + '"maxPods": 1e2}')
    with pytest.raises(InputError, match="failed to decode: json: cannot unmarshal number 1e2 into Go struct "
                                         "field KubeletConfiguration.maxPods of type int32"):
        load_config_file(tmp_path / "k.json")
    (tmp_path / "k.json").write_text(head + '"zzz": ' + "1" * 5000 + "}")
    assert "unknown field" in load_config_file(tmp_path / "k.json").decode_warning
    (tmp_path / "k.yaml").write_text(HEAD.replace("maxPods: 7", "maxPods: 1e2"))
    assert load_config_file(tmp_path / "k.yaml").max_pods == 100
