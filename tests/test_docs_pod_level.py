"""docs/pod-level.md states behaviour in tables; each statement is checked
here against the engine, so the page cannot drift from the code:

* the feature-gate table's v1.37 defaults are podnuma's gate defaults;
* the tutorial table's verdicts: a row naming one example file says
  ``admitted`` (every pod of the file admitted) or names the kubelet's
  reason (`...Error`) and message (`Pod was rejected: ...`), which a
  rejected step of the file gives;
* every test the disagreements table and the text cite exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podnuma.api.featuregates import KNOWN_FEATURES, Maturity
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.run import run_scenario

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "pod-level.md"
EXAMPLES = ROOT / "examples" / "pod-level"


def _table(header: str) -> list[list[str]]:
    """The rows (cells) of the table whose header row starts with ``header``."""
    lines = PAGE.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("| " + header + " |"):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split(" | ")])
            return rows
    raise AssertionError(f"no table starting with {header!r} in {PAGE.name}")


def test_gate_defaults() -> None:
    rows = _table("gate")
    assert rows
    for gate, default, *_ in rows:
        name = gate.strip("`")
        spec = KNOWN_FEATURES[name]
        maturity = {Maturity.ALPHA: "alpha", Maturity.BETA: "beta"}.get(spec.maturity, "GA")
        assert default == f"{maturity}, **{'on' if spec.default else 'off'}**", name


TUTORIAL = [r for r in _table("tutorial") if r[1].startswith("`") and r[1].endswith(".yaml`")]


@pytest.mark.parametrize("row", TUTORIAL, ids=[r[0] for r in TUTORIAL])
def test_tutorial_table_verdicts(row: list[str]) -> None:
    _, file, says = row
    steps = [s for s in run_scenario(load_scenario(EXAMPLES / file.strip("`"))).steps if s.op == "addPod"]
    reasons = re.findall(r"`(\w+Error)`", says)
    messages = re.findall(r"`(Pod was rejected: [^`]+)`", says)
    rejected = [s for s in steps if s.admitted is False]
    if reasons or messages or "rejected" in says:
        assert rejected, (file, says)
        for reason in reasons:
            assert reason in {s.reason for s in rejected}, (file, reason)
        for message in messages:
            assert message in {s.message for s in rejected}, (file, message)
    else:
        assert "admitted" in says, says
        assert steps and not rejected, (file, [(s.pod, s.reason) for s in rejected])


def test_cited_tests_exist() -> None:
    text = PAGE.read_text(encoding="utf-8")
    cited = set(re.findall(r"`(test_\w+?)(\*?)`", text))
    assert cited
    defined = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        defined.update(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    for name, star in cited:
        if star or name.endswith("_"):
            assert any(d.startswith(name) for d in defined), name
        else:
            assert name in defined, name


def test_the_readme_recommendation_names_the_restart_risk_its_output_shows() -> None:
    """The README's answer to "should I enable the pod-level resource
    managers?" recommends topology scope ``pod``, whose column the compare
    output above it shows rejected at the next kubelet restart
    (kubernetes#140989): the prose beside the recommendation says so, and
    the output block still shows that rejection (were it gone, the
    paragraph would be stale)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Should I enable the pod-level resource managers?")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    prose = re.sub(r"<!--.*?-->", "", re.sub(r"```.*?```", "", section, flags=re.S), flags=re.S)
    assert "topologyManagerScope: pod" in prose
    assert "kubelet restart" in prose and "140989" in prose
    assert "pod-level / scope pod: rejected: TopologyAffinityError" in section
