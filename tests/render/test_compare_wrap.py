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


# --------------------------------------------------------------------------
# every width from 40 to 200: CPU lists wrap after a comma (or after the
# count before them), names and words at word boundaries, no line wider
# than the console (docs/cli.md)

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
_TRAINER = _ROOT / "examples" / "whatif" / "trainer-pod.yaml"
_ATOM = __import__("re").compile(r"\d+(?:-\d+)?")


def _trainer() -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(_TRAINER.read_text())
    assert isinstance(data, dict)
    return data


def _render(pod: dict[str, Any], width: int, restart: tuple[str, ...] = ()) -> str:
    c = compare_pod(pod, default_machine(), default_config())
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    if not restart:
        return to_text(comparison_renderable(c, node="built-in", config="built-in"), console)
    return to_text(comparison_renderable(c, node="built-in", config="built-in", restart=restart), console)


def _whole_pieces(text: str) -> set[str]:
    """The tokens of ``text`` and every run of the pieces (words of a
    CamelCase name, parts of a name between separators) of each."""
    from podnuma.render.wrap import pieces
    from podnuma.render.wrap import words as _w

    camel = _w("x").inner
    assert camel is not None
    out: set[str] = set()
    for token in text.split():
        ps = pieces(token, camel)
        out.update("".join(ps[i:j]) for i in range(len(ps)) for j in range(i + 1, len(ps) + 1))
        out.add(token)
    return out


_RESTART = (
    "kubelet restart (v1.37.2, kubernetes#140989): the pod alone on the node, then re-admitted",
    "  per-container / scope pod: kept (1-6,17,19-22)",
    "  pod-level / scope pod: rejected: TopologyAffinityError: Pod was rejected: Pod Scope pod with "
    "pod-level resources failed admission under pod-scope topology manager",
)


@pytest.mark.parametrize("pod", [_trainer, _hugepages_pod])
@pytest.mark.parametrize("width", range(40, 201))
def test_every_width_wraps_at_break_points_only(width: int, pod: Any) -> None:
    _check(pod, width, ())


@pytest.mark.parametrize("width", range(40, 201, 7))
def test_every_width_with_the_restart_lines(width: int) -> None:
    _check(_trainer, width, _RESTART)


def _check(pod: Any, width: int, restart: tuple[str, ...]) -> None:
    wide = _render(pod(), 1000, restart)
    text = _render(pod(), width, restart)
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= width, [x for x in lines if len(x) > width]
    # no CPU list cut inside a number or a range: its atoms are the whole ones
    assert set(_ATOM.findall(text)) <= set(_ATOM.findall(wide)), width
    # no word cut: each token is a token of the wide output, or a run of its pieces
    allowed = _whole_pieces(wide)
    cut = [t for t in text.split()
           if t not in allowed and set(t) != {"─"} and not set(t) <= set("0123456789-,()")]  # (CPU lists: above)
    assert not cut, (width, cut)


def test_at_80_columns_the_trainer_pod_is_drawn_whole() -> None:
    text = _render(_trainer(), 80)
    assert "(1-6,17,19-" not in text and "per-contain\n" not in text
    assert "\n22)" not in text.replace(" ", "") and "er *" not in text.replace("container *", "")
    rows = [x for x in text.splitlines() if x.strip().startswith("exclusive CPUs")]
    assert rows and rows[0].split()[2:4] == ["11", "(1-6,17,"]
    # the four runs side by side, the row titles on one line
    assert any(x.split()[-2:] == ["pod-level", "pod-level"] or "pod-level" in x for x in text.splitlines())
    assert sum(1 for x in text.splitlines() if x.strip().startswith("QoS class")) == 1


def test_at_40_columns_a_form_a_table() -> None:
    text = _render(_trainer(), 40)
    assert sum(1 for x in text.splitlines() if x.strip().startswith("QoS class")) == 2
    assert "Guaranteed" in text and "Guarantee\n" not in text


def test_the_restart_lines_wrap_under_their_line() -> None:
    text = _render(_trainer(), 60, _RESTART)
    lines = text.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("  pod-level / scope pod: rejected"))
    assert lines[i + 1].startswith("    ") and not lines[i + 1].startswith("     ")
