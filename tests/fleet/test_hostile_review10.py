"""Hostile inputs of a fleet's dumps tree: links out of it or that cannot be
followed, a FleetConfig that cannot be read, a NodeResourceTopology zone of
the wrong shape, a bare KubeletConfiguration as a configz, Node names no
Node can have. Each is said (one issue, or the command's one line and exit
code 2 for the user's FleetConfig), and the reports are the same read in
one process and with ``--workers 2``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLE

OUTSIDE = ("a link to a directory outside the input directory: skipped (not followed; give that "
           "directory as an input to read it)")
LOOP = "a link that leads round (to itself, through other links): skipped"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", *args], env=_env(),
                          capture_output=True, text=True, timeout=300, check=False)


def _both(d: Path, *args: str) -> dict[str, Any]:
    """The JSON report, checked to be byte for byte the same with
    ``--workers 2``."""
    one = _run(str(d), "-o", "json", *args)
    two = _run(str(d), "-o", "json", "--workers", "2", *args)
    assert one.returncode == 0 == two.returncode, one.stderr + two.stderr
    assert one.stdout == two.stdout
    report: dict[str, Any] = json.loads(one.stdout)
    return report


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    d = tmp_path / "dump"
    shutil.copytree(EXAMPLE, d)
    return d


def _warned(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(i.get("file") or "", i["message"]) for i in report["issues"] if i["severity"] == "warning"}


def test_links_out_of_the_tree_and_links_that_lead_round_are_skipped_with_a_warning(dump: Path) -> None:
    plain = _both(dump)
    os.symlink("/", dump / "root")
    os.symlink("/proc/self", dump / "proc")
    os.symlink("..", dump / "up")
    os.symlink("loop2", dump / "loop1")
    os.symlink("loop1", dump / "loop2")
    os.symlink("self", dump / "self")
    os.symlink("self.json", dump / "self.json")
    (dump / "more").mkdir()
    os.symlink("../configz", dump / "more" / "configz")  # (inside the tree: followed, read once)
    report = _both(dump)
    assert report["fleet"] == plain["fleet"]
    warned = _warned(report)
    for name in ("root", "proc", "up"):
        assert (str(dump / name), OUTSIDE) in warned
    for name in ("loop1", "loop2", "self", "self.json"):
        assert (str(dump / name), LOOP) in warned
    assert (str(dump / "more" / "configz"), "a directory already read (through another link): skipped") in warned


@pytest.mark.skipif(os.path.exists("/proc/1/cwd") and os.access("/proc/1/cwd", os.R_OK),
                    reason="/proc/1/cwd can be followed here")
def test_a_link_that_cannot_be_followed_is_a_warning_not_an_internal_error(dump: Path) -> None:
    os.symlink("/proc/1/cwd", dump / "cwd")
    report = _both(dump)
    assert (str(dump / "cwd"), "cannot reach it: Permission denied (a symbolic link that cannot be "
            "followed): skipped") in _warned(report)


def test_a_link_that_cannot_be_searched_is_a_warning(dump: Path, tmp_path: Path) -> None:
    """(As root, a directory without permissions is still searched: the
    link's target is then a file in a directory that is not one.)"""
    (tmp_path / "f").write_text("x")
    os.symlink(str(tmp_path / "f" / "x"), dump / "through.json")  # ENOTDIR on the way
    report = _both(dump)
    assert any(f == str(dump / "through.json") and m.startswith("cannot reach it: ") and m.endswith(": skipped")
               for f, m in _warned(report))


FLEET_DAMAGE = {
    "a second document": ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", None,
                          "a FleetConfig file holds one YAML document, not 2"),
    "the kind misspelt": (None, ("kind: FleetConfig", "kind: FleetConfig2"),
                          "kind: Unsupported value: 'FleetConfig2': must be 'FleetConfig'"),
    "a duplicate key": ("kind: FleetConfig\n", None, "kind: duplicate key 'kind'"),
    "invalid UTF-8": ("# \xff\n", None, "input file is not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(FLEET_DAMAGE))
def test_a_fleetconfig_that_cannot_be_read_is_the_commands_one_line(dump: Path, case: str) -> None:
    tail, swap, words = FLEET_DAMAGE[case]
    f = dump / "fleet.yaml"
    text = f.read_text()
    assert text.count("kind: FleetConfig\n") == 1
    if swap is not None:
        text = text.replace(*swap)
    data = text.encode() + (tail.encode("latin-1") if tail is not None else b"")
    f.write_bytes(data)
    for extra in ((), ("--workers", "2")):
        p = _run(str(dump), *extra)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {f}: ") and words in lines[0], p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""


def test_a_file_that_says_it_is_a_fleetconfig_is_read_as_one_whatever_its_name(dump: Path) -> None:
    text = (dump / "fleet.yaml").read_text()
    (dump / "fleet.yaml").unlink()
    (dump / "groups.yaml").write_text(text + "kind: FleetConfig\n")
    p = _run(str(dump))
    assert p.returncode == 2
    assert p.stderr.startswith(f"error: {dump / 'groups.yaml'}: kind: duplicate key 'kind'"), p.stderr
    (dump / "groups.yaml").write_text(text.replace("kind: FleetConfig", "kind: fleetconfig"))
    p = _run(str(dump))
    assert p.returncode == 2
    assert p.stderr == (f"error: {dump / 'groups.yaml'}: kind: Unsupported value: 'fleetconfig': "
                        "must be 'FleetConfig'\n")
    (dump / "groups.yaml").write_text(text)  # (a FleetConfig by any name: read)
    assert _both(dump)["fleet"]["nodes"] > 0


def _nrt_zone(dump: Path, zone: Any) -> str:
    f = dump / "noderesourcetopologies.json"
    doc = json.loads(f.read_text())
    doc["items"][0]["zones"][0] = zone
    f.write_text(json.dumps(doc))
    name: str = doc["items"][0]["metadata"]["name"]
    return name


@pytest.mark.parametrize(("zone", "at", "words"), [
    (3, "zones[0]", "must be a mapping, got an integer"),
    ({"name": "node-0", "type": 1}, "zones[0].type", "must be a string, got an integer"),
    ({"name": "node-0"}, "zones[0].type", "Required value"),
])
def test_a_zone_of_the_wrong_shape_leaves_the_node_without_topology(dump: Path, zone: Any, at: str,
                                                                    words: str) -> None:
    node = _nrt_zone(dump, zone)
    report = _both(dump)
    said = [i for i in report["issues"] if i.get("node") == node and i["severity"] == "error"]
    assert [(i["path"], i["message"]) for i in said] == [
        (f"items[0].{at}", f"NodeResourceTopology not usable: {words}")]
    row = next(n for n in report["nodes"] if n["name"] == node)
    # (its topology the next source's: here its node group's form)
    assert not row.get("topologySource", "").startswith("NodeResourceTopology")


def test_a_bare_kubelet_configuration_in_configz_is_the_nodes_configuration(dump: Path) -> None:
    f = next(iter(sorted((dump / "configz").iterdir())))
    plain = _both(dump)
    cfg = json.loads(f.read_text())["kubeletconfig"]
    f.write_text(json.dumps({"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                             **cfg}))
    bare = _both(dump)
    assert bare["nodes"] == plain["nodes"]
    row = next(n for n in bare["nodes"] if n["name"] == f.stem)
    assert row["configSource"] == f"configz {f}"


def _nodes(dump: Path) -> tuple[Path, dict[str, Any]]:
    f = dump / "nodes.json"
    return f, json.loads(f.read_text())


@pytest.mark.parametrize("name", ["../../etc/x", "<img src=x>", "UPPER"])
def test_a_node_name_no_node_can_have_is_left_out_and_the_rest_replayed(dump: Path, tmp_path: Path,
                                                                         name: str) -> None:
    f, doc = _nodes(dump)
    old = doc["items"][0]["metadata"]["name"]
    doc["items"][0]["metadata"]["name"] = name
    f.write_text(json.dumps(doc))
    report = _both(dump)
    assert name not in {n["name"] for n in report["nodes"]}
    assert len(report["nodes"]) == len(doc["items"]) - 1
    said = [i for i in report["issues"] if i.get("path") == "items[0].metadata.name"]
    assert len(said) == 1 and said[0]["severity"] == "error"
    assert said[0]["message"].startswith(f'Invalid value: "{name}": a lowercase RFC 1123 subdomain')
    assert said[0]["message"].endswith("the apiserver serves no such Node (a damaged dump); the node is not read")
    p = _run(str(dump), "--as-scenario", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    written = sorted(x.name for x in (tmp_path / "out").iterdir())
    assert written and all(name not in w for w in written) and f"{old}.yaml" not in written


def test_numbers_past_the_float_range_in_a_node_are_numbers(dump: Path) -> None:
    f, doc = _nodes(dump)
    text = json.dumps(doc)
    cpu = doc["items"][0]["status"]["capacity"]["cpu"]
    node = doc["items"][0]["metadata"]["name"]
    f.write_text(text.replace(f'"cpu": "{cpu}"', '"cpu": 1e400', 1))
    report = _both(dump)
    said = [i for i in report["issues"] if i.get("node") == node and i["severity"] == "error"]
    assert [(i["path"], i["message"]) for i in said] == [(
        "items[0].status.capacity.cpu", "must be a string (a quantity), got a number: the apiserver serves "
        "no such Node (a damaged dump); the node is not replayed")]


def test_a_list_inside_a_list_is_said(dump: Path) -> None:
    f = dump / "pods.json"
    doc = json.loads(f.read_text())
    doc["items"] = [{"apiVersion": "v1", "kind": "List", "items": doc["items"][:3]}, *doc["items"][3:]]
    f.write_text(json.dumps(doc))
    report = _both(dump)
    assert (str(f), "a List inside a list (kubectl writes none): its 3 item(s) not read") in _warned(report)
    said = [i for i in report["issues"] if i["message"].startswith("a List inside")]
    assert [i["path"] for i in said] == ["items[0]"]


@pytest.mark.parametrize("change", ["gates", "pod-level", "restart"])
def test_a_change_that_takes_no_value_says_so(change: str) -> None:
    from podnuma.errors import InputError
    from podnuma.fleet.whatif import parse_what_if

    with pytest.raises(InputError) as e:
        parse_what_if(f"pod-level,{change}=Foo" if change != "pod-level" else "pod-level=1")
    value = "1" if change == "pod-level" else "Foo"
    assert str(e.value) == f"--what-if: {change}={value}: {change} takes no value (write {change}, without =VALUE)"
    assert parse_what_if("gates").gates


def test_scenarios_written_into_the_tree_are_not_taken_for_a_fleetconfig(dump: Path) -> None:
    plain = _both(dump)
    p = _run(str(dump), "--as-scenario", str(dump / "scenarios"))
    assert p.returncode == 0, p.stderr
    again = _both(dump)
    assert again["nodes"] == plain["nodes"]


@pytest.mark.parametrize(("name", "text"), [
    # a Helm chart's values with a nodeGroups key, no kind
    ("helm/values.yaml", "nodeGroups:\n  - name: workers\n"),
    # another tool's fleet.yaml (a Rancher Fleet bundle)
    ("other/fleet.yaml", "defaultNamespace: x\nhelm: {chart: y}\n"),
    # JSON with nodeGroups and no kind
    ("groups.json", '{"nodeGroups": [{"name": "a"}]}'),
])
def test_a_file_that_does_not_say_fleetconfig_is_read_by_content(dump: Path, name: str, text: str) -> None:
    """Neither a file's name nor a ``nodeGroups`` key makes it the
    FleetConfig: such a file is what it is by content (no dump: an issue
    naming it), and the run goes on, the same in every mode."""
    plain = _both(dump)
    f = dump / name
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    again = _both(dump)
    assert again["nodes"] == plain["nodes"]
    assert any(i.get("file") == str(f) for i in again["issues"]), again["issues"]
