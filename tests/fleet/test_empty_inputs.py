"""An input with nothing in it is the same error whatever its suffix.

A zero-byte file (or one of white space only; in YAML, comments and
document markers only) holds no Kubernetes object at all: an error naming
it, ``empty file: no Kubernetes objects``, as podnuma's other commands
refuse an empty scenario, kubelet configuration or pods file. Given alone
(no node anywhere) it is the command's one line and exit 2, as a file that
cannot be parsed is; beside other dumps it is one of the report's issues.
An empty *list* (``kubectl get nodes -o json`` of a cluster without
nodes) is not empty: it holds no object of its kind, and the report says
0 nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .conftest import EXAMPLE

SUFFIXES = (".json", ".yaml", ".yml")
EMPTY = "empty file: no Kubernetes objects"
NO_DOCUMENT = "no YAML document (only comments and markers): no Kubernetes objects"


def _run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["fleet", "analyze", *args], input=input)
    return r.exit_code, r.stdout, r.stderr


def _refused(*args: str, input: str | None = None) -> str:
    code, out, err = _run(*args, input=input)
    assert (code, out) == (2, ""), (code, out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("executor", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_a_zero_byte_file_is_one_line_whatever_its_suffix(tmp_path: Path, suffix: str,
                                                         executor: list[str]) -> None:
    f = tmp_path / f"nodes{suffix}"
    f.write_bytes(b"")
    assert _refused(str(f), *executor) == f"error: {f}: {EMPTY}"


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_directory_of_a_zero_byte_file_is_one_line_naming_it(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "dump").mkdir()
    f = tmp_path / "dump" / f"nodes{suffix}"
    f.write_bytes(b"")
    assert _refused(str(tmp_path / "dump")) == f"error: {f}: {EMPTY}"


@pytest.mark.parametrize("executor", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_a_directory_of_zero_byte_files_of_every_suffix_names_the_first(tmp_path: Path,
                                                                       executor: list[str]) -> None:
    for name in ("a.yaml", "b.json", "c.yml"):
        (tmp_path / name).write_bytes(b"")
    assert _refused(str(tmp_path), *executor) == f"error: {tmp_path / 'a.yaml'}: {EMPTY}"
    (tmp_path / "a.yaml").unlink()
    assert _refused(str(tmp_path), *executor) == f"error: {tmp_path / 'b.json'}: {EMPTY}"


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n", "\ufeff"], ids=["zero-bytes", "newline", "blanks", "bom"])
def test_empty_standard_input_is_one_line_naming_it(text: str) -> None:
    assert _refused("-", input=text) == f"error: <stdin>: {EMPTY}"


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_white_space_only_is_empty_too(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"nodes{suffix}"
    f.write_text("\n  \n")
    assert _refused(str(f)) == f"error: {f}: {EMPTY}"


@pytest.mark.parametrize("text", ["# kubectl said nothing\n", "---\n", "--- # one\n...\n---\n"])
def test_yaml_of_comments_only_holds_no_document(tmp_path: Path, text: str) -> None:
    f = tmp_path / "nodes.yaml"
    f.write_text(text)
    assert _refused(str(f)) == f"error: {f}: {NO_DOCUMENT}"
    assert _refused("-", input=text) == f"error: <stdin>: {NO_DOCUMENT}"


def test_zero_byte_files_beside_a_dump_are_issues_of_the_report(tmp_path: Path) -> None:
    """``kubectl get --raw .../configz > configz/NODE.json`` that failed
    leaves a zero-byte file: the run goes on, each such file one error of
    the report (the same words whatever its suffix), the rest as without them."""
    empties = [tmp_path / f"empty{s}" for s in SUFFIXES]
    for f in empties:
        f.write_bytes(b"")
    code, out, err = _run(str(EXAMPLE), *map(str, empties), "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    found = [i for i in report["issues"] if i["message"] == EMPTY]
    assert [(i["severity"], i["file"]) for i in found] == [("error", str(f)) for f in empties]
    for f in empties:
        assert f"error: {f}: {EMPTY}" in err.splitlines()
    code, plain, _ = _run(str(EXAMPLE), "-o", "json")
    assert code == 0
    without = json.loads(plain)
    report["issues"] = [i for i in report["issues"] if i["message"] != EMPTY]
    assert report == without


@pytest.mark.parametrize(("name", "text"), [
    ("nodes.json", '{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}'),
    ("nodes.yaml", "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"),
    ("nodes.yml", "apiVersion: v1\nkind: NodeList\nitems: null\n"),
], ids=["json", "yaml", "yml-null-items"])
def test_an_empty_list_is_not_an_empty_file_it_holds_no_node(tmp_path: Path, name: str, text: str) -> None:
    """``kubectl get nodes -o json|yaml`` of a cluster with no node: valid,
    0 nodes, no issue."""
    f = tmp_path / name
    f.write_text(text)
    code, out, err = _run(str(f), "-o", "json")
    assert code == 0 and err == "", err
    report = json.loads(out)
    assert report["fleet"]["nodes"] == 0 and report["issues"] == []
    code, out, err = _run("-", "-o", "json", input=text)
    assert code == 0 and err == "" and json.loads(out)["fleet"]["nodes"] == 0, err
