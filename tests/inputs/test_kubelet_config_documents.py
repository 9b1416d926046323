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
    with pytest.raises(InputError, match="invalid JSON"):
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
