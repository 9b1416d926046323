"""The page's override lines (``--set``) and the dump form's gates
what-if, in a real browser (Debian chromium through Selenium; skipped with
one line when either is missing, as tests/web/test_browser.py)."""

from __future__ import annotations

import urllib.request
from typing import Any

from tests.web.conftest import _importable, need
from tests.web.test_browser import ROOT, _css, _run_example, _wait, browser

__all__ = ["browser"]  # the fixture, shared with tests/web/test_browser.py


def test_override_lines_apply_to_the_run(browser: Any, server: str) -> None:  # noqa: F811
    _run_example(browser, server, "static-dual-socket")
    row = browser.execute_script("return document.querySelectorAll('#steps tbody tr')[1].innerText")
    assert "SMTAlignmentError" in row
    _css(browser, "#overrides-box summary").click()
    _css(browser, "#set-lines").send_keys("cpuManagerPolicyOptions.full-pcpus-only=false")
    ran = browser.execute_script("return Number(document.body.dataset.ran || 0)")
    _css(browser, "#run-example").click()
    _wait(browser, lambda d: d.execute_script("return Number(document.body.dataset.ran || 0)") > ran)
    row = browser.execute_script("return document.querySelectorAll('#steps tbody tr')[1].innerText")
    assert "admitted" in row and "SMTAlignmentError" not in row
    # a bad line: the CLI's message, and nothing of the other run left shown
    _css(browser, "#set-lines").send_keys("\nmaxPods=abc")
    _css(browser, "#run-example").click()
    _wait(browser, lambda d: _css(d, "#error").is_displayed())
    assert _css(browser, "#error").text == "error: --set: maxPods: must be an integer, got a string"
    assert browser.execute_script("return document.getElementById('result').hidden") is True


def test_dump_form_gates_what_if_and_overrides(browser: Any, server: str) -> None:  # noqa: F811
    need("plotly", _importable("plotly"))
    dump = ROOT / "examples" / "fleet"
    picked = [p for p in sorted(dump.glob("*")) if p.is_file()]
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#dump-files").send_keys("\n".join(str(p) for p in picked))
    _css(browser, "#dump-whatifs").clear()
    _css(browser, "#dump-whatif-gates").click()
    _css(browser, "#dump-set").send_keys("topologyManagerScope=pod")
    _css(browser, "#run-dump").click()
    frame = _wait(browser, lambda d: d.find_elements("css selector", "#fleet-body iframe"))[0]
    with urllib.request.urlopen(frame.get_attribute("src")) as resp:
        page = resp.read().decode()
    assert "what-ifs: gates." in page
    assert "with --set topologyManagerScope=pod" in page
