"""The page in a real browser: Debian's chromium driven by Selenium (the
system chromedriver; nothing downloaded). Screenshots (web-*.png) go to the
directory ``PODNUMA_SCREENSHOTS`` names (``docs`` refreshes the docs'
pictures), otherwise to a temporary directory: a test run leaves the
checkout as it was.

Skips with one line when chromium, chromedriver or selenium are missing;
fails instead under CI=true.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import _importable, need

ROOT = Path(__file__).resolve().parents[2]
#: where the screenshots go (set for each module run by :func:`_shots_dir`)
SHOTS: list[Path] = []
WAIT = 60  # seconds: an upper bound for slow machines, not a timing assertion


def _browser_paths() -> tuple[str | None, str | None]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return chromium, driver


@pytest.fixture(scope="module", autouse=True)
def _shots_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``PODNUMA_SCREENSHOTS``, else a directory pytest makes (and prunes)."""
    named = os.environ.get("PODNUMA_SCREENSHOTS")
    SHOTS[:] = [Path(named) if named else tmp_path_factory.mktemp("web-shots")]


@pytest.fixture(scope="module")
def browser(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        need("selenium", False)
    chromium, driver = _browser_paths()
    need("chromium (apt-get install chromium)", chromium is not None)
    need("chromedriver (apt-get install chromium-driver)", driver is not None)
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1360,1000", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    # chromium's own temporary files (its shared memory, with
    # --disable-dev-shm-usage) in a directory pytest prunes, not the shared one
    env = {**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("chromium-tmp"))}
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=driver, env=env))
    drv.set_window_size(1360, 1000)
    try:
        yield drv
    finally:
        drv.quit()


def _wait(drv: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(drv, WAIT).until(condition)


def _css(drv: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return drv.find_element(By.CSS_SELECTOR, selector)


def _shot(drv: Any, name: str, element_id: str | None = None) -> None:
    """A small screenshot: the viewport (scrolled to ``element_id``),
    reduced to a palette PNG."""
    from PIL import Image

    if element_id is not None:
        drv.execute_script(
            "document.getElementById(arguments[0]).scrollIntoView({block: 'start'});", element_id
        )
    png = drv.get_screenshot_as_png()
    img = Image.open(io.BytesIO(png)).convert("RGB")
    img = img.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    SHOTS[0].mkdir(parents=True, exist_ok=True)
    img.save(SHOTS[0] / name, optimize=True)


def _post(url: str, body: bytes) -> Any:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/yaml"})
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read())


def _run_example(drv: Any, server: str, example: str) -> None:
    from selenium.webdriver.support.ui import Select

    drv.get(server + "/")
    _wait(drv, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    Select(_css(drv, "#example-select")).select_by_value(example)
    _wait(drv, lambda d: _css(d, "#example-title").text != "")
    ran = drv.execute_script("return Number(document.body.dataset.ran || 0)")
    _css(drv, "#run-example").click()
    _wait(drv, lambda d: d.execute_script("return Number(document.body.dataset.ran || 0)") > ran)


def _picture_step(drv: Any) -> int:
    return int(drv.execute_script("return document.getElementById('picture').dataset.step"))


def test_run_example_and_click_a_cpu(browser: Any, server: str) -> None:
    _run_example(browser, server, "pod-scope-2-mixed")
    text = (ROOT / "examples/pod-level/pod-scope-2-mixed.yaml").read_bytes()
    doc = _post(server + "/api/simulate", text)
    rows = browser.execute_script("return document.querySelectorAll('#steps tbody tr').length")
    assert rows == len(doc["steps"])
    assert "admitted" in _css(browser, "#steps tbody tr").text
    _wait(browser, lambda d: d.execute_script("return document.querySelectorAll('#picture rect.pu').length") > 0)
    # The KEP's example 2: container-1 gets an exclusive slice; click one of its CPUs.
    container = doc["steps"][0]["containers"][0]
    assert container["name"] == "container-1"
    cpu = int(container["cpus"].split("-")[0].split(",")[0])
    _css(browser, f'#picture rect.pu[data-cpu="{cpu}"]').click()
    _wait(browser, lambda d: _css(d, "#cpu-info").get_attribute("data-cpu") == str(cpu))
    assert _css(browser, "#cpu-owner").text == "exclusive: kep/pod-scope-mixed/container-1"
    assert _css(browser, "#cpu-pool").text == "exclusive slice"
    assert "NUMA" in _css(browser, "#cpu-hint").text or "{0}" in _css(browser, "#cpu-hint").text
    assert _css(browser, "#cpu-why").text  # the explain trail's reasons
    _shot(browser, "web-machine.png", "machine")
    # A pod shared pool CPU: container-2 runs there.
    pool_cpu = int(doc["steps"][0]["containers"][1]["cpus"].split("-")[0])
    _css(browser, f'#picture rect.pu[data-cpu="{pool_cpu}"]').click()
    _wait(browser, lambda d: _css(d, "#cpu-info").get_attribute("data-cpu") == str(pool_cpu))
    assert _css(browser, "#cpu-owner").text == "pod shared pool of kep/pod-scope-mixed"
    assert "container-2" in _css(browser, "#cpu-info").text
    # a container of the step table: its CPUs outlined, its pool and why
    browser.find_elements("css selector", "#steps tbody tr .ctr")[1].click()
    _wait(browser, lambda d: _css(d, "#cpu-info").get_attribute("data-container")
          == "kep/pod-scope-mixed/container-2")
    assert _css(browser, "#cpu-pool").text == "pod shared pool"
    outlined = browser.execute_script(
        "return [...document.querySelectorAll('#picture rect.pu.same-owner')].map(r => r.dataset.cpu)")
    assert outlined == [str(c) for c in range(pool_cpu, pool_cpu + 2)]
    # explain panel and the pod-level what-if
    assert "container-1" in _css(browser, "#explain-body").text
    _css(browser, "#run-compare").click()
    _wait(browser, lambda d: d.execute_script("return !!document.getElementById('compare-table')"))
    assert "exclusive CPUs" in _css(browser, "#compare-table").text
    _shot(browser, "web-compare.png", "whatif")
    _shot(browser, "web-explain.png", "result")


def test_step_slider_changes_the_owner(browser: Any, server: str) -> None:
    from selenium.webdriver.common.keys import Keys

    _run_example(browser, server, "static-dual-socket")
    text = (ROOT / "examples/static-dual-socket.yaml").read_bytes()
    doc = _post(server + "/api/simulate", text)
    last = len(doc["steps"]) - 1
    _wait(browser, lambda d: d.execute_script("return document.getElementById('picture').dataset.step") == str(last))
    postgres = doc["steps"][0]["containers"][0]
    cpu = int(postgres["cpus"].split("-")[0])
    _css(browser, f'#picture rect.pu[data-cpu="{cpu}"]').click()
    _wait(browser, lambda d: _css(d, "#cpu-info").get_attribute("data-cpu") == str(cpu))
    assert _css(browser, "#cpu-owner").text == "node shared pool"  # shop/db is gone
    slider = _css(browser, "#step-slider")
    slider.send_keys(Keys.HOME)
    _wait(browser, lambda d: _picture_step(d) == 0)
    assert _css(browser, "#step-label").text.startswith("after step 0: shop/db admitted")
    # the chosen CPU stays chosen: now it belongs to postgres
    _wait(browser, lambda d: _css(d, "#cpu-owner").text == "exclusive: shop/db/postgres")
    slider.send_keys(Keys.ARROW_RIGHT)
    _wait(browser, lambda d: _picture_step(d) == 1)
    assert "rejected" in _css(browser, "#step-label").text
    assert "SMTAlignmentError" in _css(browser, "#explain-body").text
    _css(browser, "#find-alternatives").click()
    _wait(browser, lambda d: d.execute_script(
        "return document.querySelectorAll('#alternatives li').length") > 0)
    # every change tried, smallest first: the 3-CPU container at fault rounded to whole cores
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#candidates tbody tr')].map((r) => r.innerText)")
    assert rows[0].startswith("1\tcontainer\t✓ admitted"), rows
    assert "container app cpu 4 instead of 3 (rounded up to whole cores)" in rows[0]
    assert _css(browser, "#nearest-change").text.startswith("nearest admissible: #1 container app cpu 4")


def test_bad_upload_shows_the_cli_message(browser: Any, server: str, tmp_path: Path) -> None:
    bad = tmp_path / "broken-scenario.yaml"
    bad.write_text(
        (ROOT / "examples/pod-level/pod-scope-2-mixed.yaml").read_text().replace(
            "limits: {cpu: \"4\"", "limits: {cpu: \"four\""
        )
    )
    cli = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "simulate", bad.name], cwd=tmp_path,
        capture_output=True, text=True,
    )
    assert cli.returncode == 2
    expected = cli.stderr.strip()
    assert expected.startswith("error: broken-scenario.yaml: steps[0].addPod.spec.resources.limits[cpu]")
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#tab-btn-upload").click()
    _css(browser, "#file-input").send_keys(str(bad))
    _wait(browser, lambda d: _css(d, "#error").is_displayed())
    assert _css(browser, "#error").text == expected
    _shot(browser, "web-error.png")


def test_fleet_report_json_upload(browser: Any, server: str, tmp_path: Path) -> None:
    """A FleetReport document (podnuma fleet analyze -o json): the summary
    per what-if with its change, workloads, rejections."""
    def totals(exclusive: int, rejected: int) -> dict[str, Any]:
        return {"exclusiveCpus": exclusive, "sidecarOnlyCpus": 0, "strandedCpus": 0, "freeCpus": 10,
                "cpus": 64, "reservedCpus": 2, "pods": 5, "admitted": 5 - rejected,
                "rejected": rejected, "spanningPods": 0, "rewrittenPods": 0, "nodes": 2}
    after = {**totals(4, 1), "change": {"exclusiveCpus": -3, "rejected": 1},
             "excludedNodes": ["n3"],
             "freedForOtherPods": {"cpus": 0, "nodes": 1, "nodesRejectingRunningPods": [
                 {"node": "n1", "rejectedPods": 1, "freeCpusChange": 3}]}}
    report = tmp_path / "fleet.json"
    report.write_text(json.dumps({
        "apiVersion": "podnuma.io/v1", "kind": "FleetReport", "whatIfs": ["pod-level"],
        "fleet": {"nodes": 2, "nodeStatus": {"ok": 2}, "podsInDumps": 5, "podsReplayed": 5,
                  "nodesAssumed": 1, "podsInTotals": 4, "podsOnAssumedNodes": 1, "podsDumpedTwice": 1},
        "assumed": {"nodes": [{"name": "n2", "contradictions": ["status.allocatable cpu is 14"]}]},
        "summary": {"as running": totals(7, 0), "pod-level": after},
        "workloads": {"ml/trainer": {"kind": "Deployment", "nodes": 2,
                                     "as running": {"copies": 4, "min": 2, "max": 2},
                                     "pod-level": {"copies": 6, "min": 3, "max": 3}}},
        "rejected": {"as running": [], "pod-level": [{"node": "n1", "pod": "ml/x", "reason": "OutOfcpu"}]},
        "issues": [], "nodes": [{"name": "n1", "status": "ok"}, {"name": "n2", "status": "ok"}],
    }))
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#fleet-input").send_keys(str(report))
    _wait(browser, lambda d: "ml/trainer" in _css(d, "#fleet-body").text)
    assert _css(browser, "#fleet-headline").text.startswith("Fleet: 2 nodes (2 ok)")
    summary = _css(browser, "#fleet-summary").text
    assert "exclusive CPUs 7 4 (-3)" in summary
    assert "(1) pod-level" in summary
    assert "CPUs freed for other pods - 0 (not counted: 1 node(s) rejecting running pods)" in summary
    body = _css(browser, "#fleet-body").text
    assert "4 in the totals, 1 on 1 node(s) whose configuration is assumed" in body
    assert "(1 pod(s) found in two dumps, counted once)" in body
    assert "left out of this column and its changes (the what-if fails there): n3" in body
    assert "status.allocatable cpu is 14" in body
    assert "OutOfcpu" in _css(browser, "#fleet-body").text


def test_build_a_scenario_from_the_form(browser: Any, server: str) -> None:
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#tab-btn-build").click()
    name = _css(browser, "#b-name")
    name.clear()
    name.send_keys("lab-node")
    ran = browser.execute_script("return Number(document.body.dataset.ran || 0)")
    _css(browser, "#run-build").click()
    _wait(browser, lambda d: d.execute_script("return Number(document.body.dataset.ran || 0)") > ran)
    built = browser.execute_script("return document.getElementById('scenario-text').value")
    doc = _post(server + "/api/simulate", built.encode())
    assert doc["node"]["name"] == "lab-node"
    assert doc["node"]["cpus"] == "0-31"  # 2 sockets x 8 cores x 2 threads
    rows = browser.find_elements("css selector", "#steps tbody tr")
    assert [r.get_attribute("data-step") for r in rows] == ["0", "1"]
    assert "ml/trainer" in rows[0].text and "shop/web" in rows[1].text
    # every CPU box says who owns it on hover
    titles = browser.execute_script(
        "return [...document.querySelectorAll('#picture rect.pu title')].map(t => t.textContent)")
    assert len(titles) == 32 and all(t.startswith("CPU ") for t in titles)
    # a typo in the form: the message points into the built scenario
    browser.execute_script(
        "const t = document.getElementById('b-pods'); t.value = t.value.replace('containers:', 'containerz:');")
    _css(browser, "#run-build").click()
    _wait(browser, lambda d: _css(d, "#error").is_displayed())
    assert _css(browser, "#error").text.startswith("error: built.yaml: steps[0].addPod.spec")


def test_build_form_starts_from_the_built_in_node_and_config(browser: Any, server: str) -> None:
    """The scenario builder starts from the node and kubelet configuration
    the commands use without --node / --kubelet-config (one copy, served
    by /api/defaults), not from a copy of its own."""
    from podnuma.inputs.pods import DEFAULT_KUBELET_CONFIG_YAML

    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    got = browser.execute_script(
        "return ['b-name','b-sockets','b-numa','b-cores','b-threads','b-memory','b-config']"
        ".map(id => document.getElementById(id).value)")
    assert got == ["podnuma-2socket", "2", "1", "8", "2", "64Gi", DEFAULT_KUBELET_CONFIG_YAML]


def test_cluster_dump_upload_draws_the_fleet_report(browser: Any, server: str, tmp_path: Path) -> None:
    """Files of a cluster dump picked in the page: the report ``podnuma
    fleet analyze DIR -o html`` writes, in a sandboxed frame."""
    need("plotly", _importable("plotly"))
    dump = ROOT / "examples" / "fleet"
    picked = [p for p in sorted(dump.glob("*")) if p.is_file()]
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#dump-files").send_keys("\n".join(str(p) for p in picked))
    _css(browser, "#run-dump").click()
    frame = _wait(browser, lambda d: d.find_elements("css selector", "#fleet-body iframe"))[0]
    assert frame.get_attribute("sandbox") == "allow-scripts"
    assert _css(browser, "#dump-read").text == "analysed: " + ", ".join(p.name for p in picked)
    src = frame.get_attribute("src")
    with urllib.request.urlopen(src) as resp:
        page = resp.read().decode()
    assert "<h1>podnuma fleet report</h1>" in page and "what-ifs: (1) pod-level." in page
    # a file the fleet reader cannot read, alone: its error, in the page
    bad = tmp_path / "nodes.json"
    bad.write_text('{"kind": "NodeList", "items": [')
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#dump-files").send_keys(str(bad))
    _css(browser, "#run-dump").click()
    _wait(browser, lambda d: _css(d, "#fleet-error").is_displayed())
    assert _css(browser, "#fleet-error").text.startswith("error: nodes.json: invalid JSON")


def test_fleet_report_html_upload_is_sandboxed(browser: Any, server: str, tmp_path: Path) -> None:
    report = tmp_path / "fleet.html"
    report.write_text("<!doctype html><html><body><h1>Fleet report</h1>"
                      "<script>parent.document.body.dataset.pwned = '1'</script></body></html>")
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#fleet-input").send_keys(str(report))
    frame = _wait(browser, lambda d: d.find_elements("css selector", "#fleet-body iframe"))[0]
    assert frame.get_attribute("sandbox") == ""
    browser.switch_to.frame(frame)
    assert _css(browser, "h1").text == "Fleet report"
    browser.switch_to.default_content()
    assert browser.execute_script("return document.body.dataset.pwned") is None


def test_fleet_report_drawn_by_the_fleet_renderer(browser: Any, server: str, tmp_path: Path) -> None:
    """A report written by podnuma fleet analyze -o json, drawn by the
    fleet's HTML renderer: its charts' scripts run, sandboxed."""
    run = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", "examples/fleet",
         "--what-if", "pod-level", "-o", "json"], cwd=ROOT, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    report = tmp_path / "fleet-report.json"
    report.write_text(run.stdout)
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _css(browser, "#fleet-input").send_keys(str(report))
    _wait(browser, lambda d: d.find_elements("css selector", "#fleet-draw"))
    browser.execute_script("document.getElementById('fleet').scrollIntoView({block: 'start'});")
    _css(browser, "#fleet-draw").click()
    frame = _wait(browser, lambda d: d.find_elements("css selector", "#fleet-drawn iframe"))[0]
    browser.switch_to.frame(frame)
    _wait(browser, lambda d: d.find_elements("css selector", "h1"))
    assert _css(browser, "h1").text == "podnuma fleet report"
    # plotly drew the charts: its script ran inside the sandbox
    _wait(browser, lambda d: d.find_elements("css selector", ".js-plotly-plot"))
    browser.switch_to.default_content()
    _shot(browser, "web-fleet.png")


def test_kubelet_restart_on_the_page(browser: Any, server: str) -> None:
    _run_example(browser, server, "restart")
    text = (ROOT / "examples/pod-level/restart.yaml").read_bytes()
    doc = _post(server + "/api/restart?name=examples/pod-level/restart.yaml", text)
    _css(browser, "#run-restart").click()
    _wait(browser, lambda d: d.execute_script("return !!document.getElementById('restart-table')"))
    rows = browser.find_elements("css selector", "#restart-table tbody tr")
    assert [r.get_attribute("class") for r in rows] == [f"restart-{p['outcome']}" for p in doc["pods"]]
    moved = rows[[p["outcome"] for p in doc["pods"]].index("moved")].text
    assert "ml/trainer (pod-level)" in moved and "3-6" in moved and "7,10-12" in moved
    totals = _css(browser, "#restart-totals").text
    assert "4 taken by nobody (3-6)" in totals and "the next kubelet start fails" in totals
    # the pod-level what-if says the restart risk of each form
    _css(browser, "#run-compare").click()
    _wait(browser, lambda d: d.execute_script("return !!document.getElementById('restart-risks')"))
    risks = _css(browser, "#restart-risks").text
    assert "pod-level, scope pod" in risks and "per-container, scope pod): kept" in risks


def test_restart_risks_name_pods_of_one_name_by_their_place(browser: Any, server: str) -> None:
    """Two pods of one name in an answer: each restart entry is named by
    its podIndex, with the pod's place in the input, as the CLI names it."""
    browser.get(server + "/")
    _wait(browser, lambda d: d.execute_script("return typeof restartRiskView === 'function'"))
    doc = {"pods": [{"pod": "x/a", "source": "pods.yaml#0"}, {"pod": "x/b", "source": "pods.yaml#1"},
                    {"pod": "x/a", "source": "pods.yaml#2"}],
           "restart": [{"pod": "x/a", "podIndex": 2, "form": "podLevel", "scope": "pod", "outcome": "kept",
                        "summary": "kept (1-4)"},
                       {"pod": "x/b", "podIndex": 1, "form": "perContainer", "scope": "pod", "outcome": "kept",
                        "summary": "kept (5)"}]}
    lines = browser.execute_script(
        "return Array.from(restartRiskView(arguments[0])[1].children, (li) => li.textContent)", doc)
    assert lines == ["x/a (pods.yaml#2) (pod-level, scope pod): kept (1-4)",
                     "x/b (per-container, scope pod): kept (5)"]


def test_fleet_report_page_shows_the_gates_changed_pods(browser: Any, tmp_path: Path) -> None:
    """``fleet analyze --what-if gates -o html``: the pods that change when
    the gates are on, read from the page Chromium rendered, are the
    report's ``changedPods`` (JSON) row for row."""
    need("plotly", _importable("plotly"))
    dump = str(ROOT / "examples" / "fleet")
    page = tmp_path / "fleet.html"
    env = {**os.environ, "NO_COLOR": "1"}
    for args in (["-o", "html", "--output-file", str(page)], ["-o", "json", "--output-file", str(tmp_path / "f.json")]):
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", dump, "--what-if", "gates",
                               "--what-if", "pod-level", *args], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
    changed = json.loads((tmp_path / "f.json").read_text())["changedPods"]
    browser.get(page.as_uri())
    _wait(browser, lambda d: d.execute_script("return document.readyState") == "complete")
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#changed-pods tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))")
    want = [[lab, r["node"], r["pod"], "; ".join(r["changes"])] for lab, items in changed.items() for r in items]
    assert rows == want and len(rows) == 2
    assert "exclusive CPUs (4 CPUs)" in rows[0][3]
    heading = browser.execute_script(
        "return [...document.querySelectorAll('h2')].map(h => h.textContent)"
        ".find(t => t.startsWith('Pods that change'))")
    assert heading == "Pods that change when the gates are on (gates): 2"
