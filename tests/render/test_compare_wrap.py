"""``podnuma compare``'s table wraps names and the kubelet's reasons at word
boundaries only (docs/cli.md): a reason wider than its column breaks
between the words of its CamelCase name, never inside a word."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from podnuma.analysis.compare import compare_pod
from podnuma.inputs.pods import default_config, default_machine
from podnuma.render.compare import comparison_renderable
from podnuma.render.table import to_text
from podnuma.render.wrap import name, plain_lines


def _hugepages_pod() -> dict[str, Any]:
    """The review's pod: huge pages the built-in node does not have, so
    every form is rejected with UnexpectedAdmissionError."""
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hp", "namespace": "default"},
        "spec": {
            "initContainers": [{"name": "side", "restartPolicy": "Always",
                                "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
            "containers": [{"name": "app", "resources": {
                "limits": {"cpu": "4", "memory": "4Gi", "hugepages-2Mi": "1Gi"}}}],
        },
    }


def _table(width: int) -> list[str]:
    c = compare_pod(_hugepages_pod(), default_machine(), default_config())
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    text = to_text(comparison_renderable(c, node="built-in", config="built-in"), console)
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip().startswith("admitted"))
    end = next(i for i, x in enumerate(lines) if x.strip().startswith("exclusive CPUs"))
    return lines[start:end]


@pytest.mark.parametrize("width", [120, 100, 90])
def test_a_reason_is_not_split_mid_word(width: int) -> None:
    rows = _table(width)
    cells = " ".join(rows)
    assert "UnexpectedAdmissionEr " not in cells and "UnexpectedAdmissionEr\n" not in "\n".join(rows)
    for row in rows:
        for word in row.split():
            assert word in {"admitted", "no:", "UnexpectedAdmissionError", "UnexpectedAdmission",
                            "Unexpected", "AdmissionError", "Admission", "Error"}, rows


def test_at_120_columns_the_reason_breaks_between_its_words() -> None:
    rows = _table(120)
    assert rows[0].split() == ["admitted", "no:", "no:", "no:", "no:"]
    assert rows[1].split() == ["UnexpectedAdmission"] * 4
    assert rows[2].split() == ["Error"] * 4


def test_a_reason_that_fits_is_whole() -> None:
    rows = _table(160)
    assert "UnexpectedAdmissionError" in " ".join(rows)
    assert not any(w in ("Unexpected", "UnexpectedAdmission", "Error") for r in rows for w in r.split())


def test_words_breaks_camel_case_only_when_a_word_is_wider_than_the_column() -> None:
    from podnuma.render.wrap import words

    cell = words("no: UnexpectedAdmissionError")
    assert cell.plain_lines(28) == ["no: UnexpectedAdmissionError"]
    assert cell.plain_lines(24) == ["no:", "UnexpectedAdmissionError"]
    assert cell.plain_lines(21) == ["no:", "UnexpectedAdmission", "Error"]
    assert cell.plain_lines(12) == ["no:", "Unexpected", "Admission", "Error"]
    assert words("SMTAlignmentError").plain_lines(10) == ["SMT", "Alignment", "Error"]
    assert words("log-shipper, metrics, proxy").plain_lines(21) == ["log-shipper, metrics,", "proxy"]
    # only a piece wider than the column after the word breaks is cut
    assert words("aaaaaaaaaaaaaaa").plain_lines(6) == ["aaaaaa", "aaaaaa", "aaa"]
    # names keep their own rules (the steps table's streamed lines read them)
    assert name("UnexpectedAdmissionError").plain_lines(21) == ["UnexpectedAdmissionEr", "ror"]


def test_words_draws_the_lines_plain_lines_says() -> None:
    from podnuma.render.wrap import words

    for width in (12, 16, 21, 24, 30):
        cell = words("no: UnexpectedAdmissionError")
        table = Table(show_header=False, box=None, padding=0)
        table.add_column(width=width)
        table.add_row(cell)
        console = Console(file=io.StringIO(), width=width, color_system=None)
        drawn = [x.rstrip() for x in to_text(table, console).splitlines()]
        assert drawn == cell.plain_lines(width)
        assert plain_lines(["no: UnexpectedAdmissionError"], cell.pattern, width, inner=cell.inner) == drawn
