"""``fleet analyze --what-if ...,restart -o html``: the HTML report shows
the kubelet restart as ``-o table`` does (the figures of each run, the pods
moved or rejected with the kubelet's reason) and each node's restart
outcome in its drill-down, read from the report's ``restart`` part."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .conftest import EXAMPLE, need

WHAT_IF = "pod-level,scope=pod,restart"
BASELINE = "as running"
HOSTILE = "<img src=x onerror=alert(1)>&amp;\"'"


class _Page(HTMLParser):
    """The page's tables by id (rows of (attributes, text) cells), the text
    of each element with an id, and the whole text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[tuple[dict[str, str], str]]]] = {}
        self.by_id: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._open: list[tuple[str, str | None]] = []  # (tag, id)
        self._table: list[str | None] = []
        self._cell: tuple[dict[str, str], list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("br", "meta", "img", "input", "hr", "link"):
            return
        self._open.append((tag, a.get("id")))
        if tag == "table":
            self._table.append(a.get("id"))
            if a.get("id"):
                self.tables[a["id"]] = []
        elif tag == "tr" and self._table and self._table[-1]:
            self.tables[str(self._table[-1])].append([])
        elif tag in ("td", "th"):
            self._cell = (a, [])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if self._table and self._table[-1]:
                self.tables[str(self._table[-1])][-1].append((self._cell[0], "".join(self._cell[1])))
            self._cell = None
        if tag == "table" and self._table:
            self._table.pop()
        while self._open:
            t, _ = self._open.pop()
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1][0] in ("script", "style"):
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell[1].append(data)
        for _, ident in self._open:
            if ident:
                self.by_id.setdefault(ident, []).append(data)

    def of(self, ident: str) -> str:
        return "".join(self.by_id.get(ident, []))


def _parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    return p


def _anchor(name: str) -> str:
    return "node-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.stderr
    return r.stdout


def _reports(tmp_path: Path, *what_ifs: str, dump: Path = EXAMPLE) -> tuple[dict[str, Any], str]:
    need("plotly")
    flags = [x for w in what_ifs for x in ("--what-if", w)]
    doc = json.loads(_run("fleet", "analyze", str(dump), *flags, "-o", "json"))
    out = tmp_path / "report.html"
    _run("fleet", "analyze", str(dump), *flags, "-o", "html", "--output-file", str(out))
    return doc, out.read_text()


def _label(doc: Mapping[str, Any], lab: str) -> str:
    whatifs = list(doc["whatIfs"])
    return f"({whatifs.index(lab) + 1}) {lab}" if lab in whatifs else lab


def _check_restart(doc: Mapping[str, Any], page: _Page) -> None:
    """Every figure of the report's ``restart`` part, every pod moved or
    rejected with its reason and message, and every node's restart outcome
    are on the page."""
    sections = doc["restart"]
    assert sections
    table = page.tables["restart"]
    head = [text for _, text in table[0]]
    for lab, sec in sections.items():
        col = head.index(_label(doc, lab))
        for key, value in sec.items():
            if key == "pods":
                continue
            cells = [row[col] for row in table[1:] if row[col][0].get("data-key") == key]
            assert len(cells) == 1, (lab, key)
            text = cells[0][1]
            if key == "nodesThatWouldNotStartAgain":
                assert text == "yes" if not value else all(n in text for n in value), (lab, text)
            elif key == "assumed":  # (the nodes of an assumed configuration, apart)
                assert text.startswith(f"{value['nodes']} node(s): {value['kept']} kept, "
                                       f"{value['moved']} moved, {value['rejected']} rejected"), text
            else:
                assert text == str(value), (lab, key, text)
        rows = [[text for _, text in row] for row in page.tables.get("restart-pods", [])[1:]]
        for p in sec["pods"]:
            want = [_label(doc, lab), p["node"], p["pod"], p["outcome"]]
            found = [r for r in rows if r[:4] == want]
            assert len(found) == 1, want
            assert found[0][4].startswith(f"{p['before']} -> {p['after'] or '-'}")
            assert found[0][5:] == [p["reason"] or "", p["message"] or ""], found[0]
    for n in doc["nodes"]:
        runs = [(BASELINE, n.get("baseline") or {}), *((w, r) for w, r in n.get("whatIfs", {}).items())]
        for lab, run in runs:
            r = run.get("restart")
            if r is None:
                continue
            text = page.of(_anchor(str(n["name"])))
            assert f"{lab}: kubelet restart:" in text, (n["name"], lab)
            if "error" in r:
                assert r["error"] in text
                continue
            for key in ("kept", "moved", "rejected", "unknown"):
                assert f"{r[key]} {key}" in text, (n["name"], key)
            assert f"{r['cpusTakenByNobody']} CPUs taken by nobody" in text
            assert ("the kubelet starts again" in text) == (not r["nextStartFails"])
            for p in r["pods"]:
                assert f"{p['pod']}: {p['outcome']}" in text
                assert f"{p['reason']}: {p['message']}" in text


def test_html_shows_every_restart_figure(tmp_path: Path) -> None:
    doc, page = _reports(tmp_path, WHAT_IF)
    parsed = _parse(page)
    _check_restart(doc, parsed)
    sec = doc["restart"][WHAT_IF]
    assert sec["rejected"] > 0 and any(p["reason"] == "TopologyAffinityError" for p in sec["pods"])
    assert "TopologyAffinityError" in "".join(parsed.text)


def test_html_restart_of_each_run_in_order(tmp_path: Path) -> None:
    """``restart`` alone (the node's own configuration) and under the
    pod-level what-if: a column each, in command-line order."""
    doc, page = _reports(tmp_path, "restart", WHAT_IF)
    parsed = _parse(page)
    assert [t for _, t in parsed.tables["restart"][0]][1:] == ["(1) restart", f"(2) {WHAT_IF}"]
    _check_restart(doc, parsed)


def _hostile(doc: dict[str, Any]) -> dict[str, Any]:
    """The report with a restart outcome of the cluster's own naming on the
    baseline too: hostile pod, reason, message and node names."""
    doc = copy.deepcopy(doc)
    sec = doc["restart"][WHAT_IF]
    pod = sec["pods"][0]
    node = next(n for n in doc["nodes"] if n["name"] == pod["node"])
    run = node["whatIfs"][WHAT_IF]["restart"]
    first = next(p for p in run["pods"] if p["pod"] == pod["pod"])
    for p in (pod, first):
        p.update(pod=f"ns/{HOSTILE}", reason=f"R{HOSTILE}", message=f"M{HOSTILE}", before=f"B{HOSTILE}")
    sec["pods"].append({**pod, "node": f"n{HOSTILE}"})
    sec["nodesThatWouldNotStartAgain"] = [f"n{HOSTILE}"]
    sec["futureTotal"] = f"F{HOSTILE}"  # a figure this renderer does not know yet
    run["nextStartFails"] = f"S{HOSTILE}"
    # the restart on the node as running
    doc["restart"] = {BASELINE: copy.deepcopy(sec), **doc["restart"]}
    node["baseline"]["restart"] = copy.deepcopy(run)
    return doc


def test_html_restart_escapes_names_from_the_cluster(tmp_path: Path) -> None:
    from podnuma.render.fleet_html import render_html

    doc, _ = _reports(tmp_path, WHAT_IF)
    bad = _hostile(doc)
    page = render_html(bad, {})
    assert "<img" not in page and "onerror=alert(1)>" not in page
    parsed = _parse(page)
    text = "".join(parsed.text)
    for want in (f"ns/{HOSTILE}", f"R{HOSTILE}", f"M{HOSTILE}", f"n{HOSTILE}", f"F{HOSTILE}", f"S{HOSTILE}"):
        assert want in text, want
    # as running first, and every figure of both runs shown
    assert [t for _, t in parsed.tables["restart"][0]][1:] == [BASELINE, f"(1) {WHAT_IF}"]
    _check_restart(bad, parsed)


@pytest.mark.parametrize("broken", [{"restart": {}}, {}])
def test_html_without_restart_has_no_section(tmp_path: Path, broken: dict[str, Any]) -> None:
    from podnuma.render.fleet_html import render_html

    doc, _ = _reports(tmp_path, "pod-level")
    doc.pop("restart", None)
    page = render_html({**doc, **broken}, {})
    assert "restart" not in _parse(page).tables and "Kubelet restart" not in page


def test_html_restart_of_nodes_with_an_assumed_configuration(tmp_path: Path) -> None:
    """A node without its configz: its restart figures are apart from the
    totals, as in the table and the json, on a row of their own."""
    import shutil

    dump = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, dump)
    (dump / "configz" / "ip-10-20-2-41.eu-west-1.compute.internal.json").unlink()
    doc, page = _reports(tmp_path, WHAT_IF, dump=dump)
    assert doc["restart"][WHAT_IF]["assumed"]["nodes"] == 1
    _check_restart(doc, _parse(page))
