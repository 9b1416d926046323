"""Every sample output in the README and docs/ is what the command prints.

A sample is either

* a ``text``/``console`` block whose first line is ``$ podnuma ...``: a
  session of one or more ``$ podnuma ...`` commands, each followed by its
  output (a command ending in ``>/dev/null`` shows none); or
* a ``sh`` block holding one ``podnuma ...`` line, followed by ``text``
  blocks (up to the next ``sh`` block or heading): excerpts of its output.

Each session runs in a fresh directory where ``examples/`` is the
repository's, with ``NO_COLOR=1`` and no ``COLUMNS``. The sample's lines
(a line ``…`` marks lines left out) must all appear in the output, in
order: each line's words as a run of the output's words (so a sample may
leave out table rows, and a message wrapped at another width still
matches). On the pages of :data:`STRICT` (the README, the command pages,
the fleet page) a sample may leave lines out only where a ``…`` line says
so. A block a machine of its own produced (a real ``/sys``, a running
agent) is preceded by ``<!-- recorded: WHY -->`` and is not run.

A command ending in ``2>&1 >/dev/null`` shows its standard error instead.
Prose that quotes figures of a sample is preceded by ``<!-- output shows:
RUN ; RUN ... -->``: each RUN (words) must be in the output (standard output
and error) of the last command of the sample above it, so the prose cannot drift from the output
either. A ``json`` block preceded by ``<!-- from: podnuma ... -->`` is an
excerpt of that command's JSON: each ``"key": value`` pair it shows (values
with ``…`` left out) must be in the output. Every other fenced block is
either a command to type (``sh``), an input (``yaml``), recorded, or marked
``<!-- not output: WHY -->`` (a synopsis, a diagram, an illustration):
:func:`test_every_block_is_checked` holds the list.

``PODNUMA_UPDATE_DOCS=1 python -m pytest tests/test_docs.py`` rewrites each
failing sample with the output of now: one that shows the head of its
output (all of it, or its first lines then ``…``) as that head; an excerpt
of a step table (some steps' rows and their ``[N]`` notes) as the same
steps' rows and notes; anything else is reported for editing by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])
ELLIPSIS = "…"
RECORDED = re.compile(r"<!--\s*recorded:.*-->")
UPDATE = os.environ.get("PODNUMA_UPDATE_DOCS") == "1"


@dataclass
class Step:
    args: list[str]
    quiet: bool
    stderr: bool = False  # the sample shows standard error (``2>&1 >/dev/null``)
    #: (first line, end line) in the file of each expected-output part
    parts: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Sample:
    file: Path
    line: int  # 1-based, of the block's opening fence
    steps: list[Step]


STDERR_ONLY = "2>&1 >/dev/null"


def _command(text: str) -> tuple[list[str], bool, bool]:
    """The arguments, whether the output is not shown, whether standard
    error is shown instead of standard output."""
    quiet = stderr = False
    text = text.strip()
    if text.endswith(STDERR_ONLY):
        stderr, text = True, text[: -len(STDERR_ONLY)].strip()
    elif text.endswith(">/dev/null"):
        quiet, text = True, text[: -len(">/dev/null")].strip()
    args = shlex.split(text, comments=True)
    assert args[0] == "podnuma", text
    return args[1:], quiet, stderr


def _blocks(lines: list[str]) -> list[tuple[int, int, str, bool]]:
    """(opening line index, closing line index, info string, recorded)."""
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            recorded = any(RECORDED.search(lines[k]) for k in range(max(0, i - 2), i))
            out.append((i, j, m.group(1), recorded))
            i = j + 1
        else:
            i += 1
    return out


def samples(path: Path) -> tuple[list[Sample], int]:
    """The samples of ``path`` and how many blocks are marked recorded."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out: list[Sample] = []
    recorded = 0
    current: Sample | None = None
    last_heading = -1
    for start, end, info, is_recorded in _blocks(lines):
        body = lines[start + 1 : end]
        headings = [k for k in range(last_heading + 1, start) if lines[k].startswith("#")]
        if headings:
            last_heading = headings[-1]
            current = None
        if is_recorded:
            recorded += 1
            current = None
            continue
        if info in ("text", "console") and body and body[0].startswith("$ podnuma "):
            steps: list[Step] = []
            for k, text in enumerate(body, start + 1):
                if text.startswith("$ "):
                    args, quiet, stderr = _command(text[2:])
                    steps.append(Step(args, quiet, stderr, [(k + 1, k + 1)]))
                else:
                    first, _ = steps[-1].parts[-1]
                    steps[-1].parts[-1] = (first, k + 1)
            out.append(Sample(path, start + 1, steps))
            current = None
        elif info == "sh" and len(body) == 1 and body[0].startswith("podnuma "):
            args, _, stderr = _command(body[0])
            current = Sample(path, start + 1, [Step(args, False, stderr)])
            out.append(current)
        elif info == "text" and current is not None:
            current.steps[0].parts.append((start + 1, end))
    return [s for s in out if any(p[1] > p[0] for st in s.steps for p in st.parts)], recorded


ALL = [(path, i, s) for path in DOCS if path.exists() for i, s in enumerate(samples(path)[0])]


def _run(args: list[str], cwd: Path, *, stderr: bool | None = False) -> str:
    """The command's standard output, or its standard error (``stderr``),
    or both (``stderr=None``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env["NO_COLOR"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )
    assert proc.returncode in (0, 2), proc.stderr
    if stderr is None:
        return proc.stdout + proc.stderr
    return proc.stderr if stderr else proc.stdout


def _words(text: str) -> list[str]:
    # a table rule is one word whatever its length (the table's width)
    return ["─" if set(w) == {"─"} else w for w in text.split()]


def _in_order(expected: list[str], actual: list[str]) -> str | None:
    """None when each expected line's words are a run of the words of
    ``actual``, the runs in order; else the first line that is not."""
    words = _words(" ".join(actual))
    pos = 0
    for line in expected:
        run = _words(line)
        if not run:
            continue
        while pos + len(run) <= len(words) and words[pos : pos + len(run)] != run:
            pos += 1
        if pos + len(run) > len(words):
            return line
        pos += len(run)
    return None


#: pages whose samples are the output itself, up to the ``…`` lines: the
#: lines between two ``…`` (or the block's ends) follow each other in the
#: output, so a line the command adds or drops there fails the sample
STRICT = ("README.md", "docs/commands/", "docs/fleet.md")


def _strict(path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in STRICT)


def _contiguous(expected: list[str], actual: list[str]) -> str | None:
    """None when each run of ``expected`` between ``…`` lines is one run of
    the words of ``actual`` (the runs in order), the first run at the start
    of the output unless ``…`` opens the sample and the last run at its end
    unless ``…`` closes it (a sample shown whole is the whole output); else
    the first line of the first run that is not, or a line saying what the
    sample leaves out without a ``…``."""
    marked = [line.strip() for line in expected if line.strip()]
    open_start = bool(marked) and marked[0] == ELLIPSIS
    open_end = bool(marked) and marked[-1] == ELLIPSIS
    chunks: list[list[str]] = [[]]
    for line in expected:
        if line.strip() == ELLIPSIS:
            chunks.append([])
        elif line.strip():
            chunks[-1].append(line)
    words = _words(" ".join(actual))
    pos = 0
    runs = [c for c in chunks if c]
    for n, chunk in enumerate(runs):
        run = _words(" ".join(chunk))
        start = pos
        while pos + len(run) <= len(words) and words[pos : pos + len(run)] != run:
            pos += 1
        if pos + len(run) > len(words):
            return chunk[0]
        if n == 0 and not open_start and pos != start:
            return f"(output before this sample's first line, and no {ELLIPSIS} above it) {chunk[0]}"
        pos += len(run)
    if runs and not open_end and pos != len(words):
        return f"(output after this sample's last line, and no {ELLIPSIS} below it) {' '.join(words[pos:pos + 8])}"
    return None


def _expected(lines: list[str], part: tuple[int, int]) -> list[str]:
    return [line.rstrip() for line in lines[part[0] : part[1]] if line.strip() != ELLIPSIS]


@pytest.mark.parametrize(
    ("path", "index"), [(p, i) for p, i, _ in ALL],
    ids=[f"{s.file.relative_to(ROOT)}:{s.line}" for _, _, s in ALL],
)
def test_sample_output(path: Path, index: int, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    sample = samples(path)[0][index]  # read again: an update may have moved it
    lines = sample.file.read_text(encoding="utf-8").split("\n")
    problems = []
    rewrites: list[tuple[tuple[int, int], list[str]]] = []
    for step in sample.steps:
        out = _run(step.args, tmp_path, stderr=step.stderr)
        if step.quiet:
            continue
        actual = [line.rstrip() for line in out.rstrip("\n").split("\n")]
        for part in step.parts:
            expected = _expected(lines, part)
            missing = _in_order(expected, actual)
            if missing is None and _strict(sample.file):
                missing = _contiguous(lines[part[0] : part[1]], actual)
            if missing is None:
                continue
            if UPDATE and expected and expected[0].split() == actual[0].split():
                rewrites.append((part, _head(lines[part[0] : part[1]], actual)))
                continue
            excerpt = _step_excerpt(lines[part[0] : part[1]], actual) if UPDATE else None
            if excerpt is not None:
                rewrites.append((part, excerpt))
                continue
            problems.append(
                f"{sample.file.relative_to(ROOT)}:{part[0] + 1}: podnuma {shlex.join(step.args)}: "
                f"this line is not in the output (in order):\n  {missing!r}\noutput:\n" + out
            )
    for part, new in sorted(rewrites, reverse=True):  # from the bottom: the lines above stay put
        lines[part[0] : part[1]] = new
    if rewrites:
        sample.file.write_text("\n".join(lines), encoding="utf-8")
    assert not problems, "\n".join(problems)


_STEP_ROW = re.compile(r"^\s*(\d+)  \S")
_NOTE = re.compile(r"^\[(\d+)\] ")


def _groups(lines: list[str], start: re.Pattern[str]) -> dict[str, list[str]]:
    """Runs of lines that open with ``start`` (keyed by its group), each up
    to the next blank line."""
    out: dict[str, list[str]] = {}
    key = None
    for line in lines:
        m = start.match(line)
        if m:
            key = m.group(1)
            out[key] = [line]
        elif key is not None and line.strip():
            out[key].append(line)
        else:
            key = None
    return out


def _step_excerpt(old: list[str], actual: list[str]) -> list[str] | None:
    """The rows and notes of the steps ``old`` shows, from ``actual``."""
    steps = [m.group(1) for line in old if (m := _STEP_ROW.match(line))]
    notes = [m.group(1) for line in old if (m := _NOTE.match(line))]
    rows, found = _groups(actual, _STEP_ROW), _groups(actual, _NOTE)
    if not steps or any(k not in rows for k in steps) or any(k not in found for k in notes):
        return None
    out: list[str] = []
    header = next((i for i, line in enumerate(actual) if line.lstrip().startswith("#  pod")), None)
    if header is not None and any(line.lstrip().startswith("#  pod") for line in old):
        out += actual[header : header + 2]
    for k in steps:
        out += [*rows[k], ""]
    for k in notes:
        out += [*found[k], ""]
    return out[:-1]


def _head(old: list[str], actual: list[str]) -> list[str]:
    """``actual``, or as many of its first lines as ``old`` showed before ``…``."""
    if ELLIPSIS in (line.strip() for line in old):
        keep = next(i for i, line in enumerate(old) if line.strip() == ELLIPSIS)
        return [*actual[:keep], ELLIPSIS]
    return actual


def test_the_checker_finds_the_samples() -> None:
    # guards the parser: a change of format must not make every sample vanish
    by_file = {s.file.name for _, _, s in ALL}
    assert {"README.md", "simulate.md", "pod-level.md", "topology-policies.md"} <= by_file
    assert sum(len(s.steps) for _, _, s in ALL) >= 20


def test_the_checker_catches_a_wrong_line() -> None:
    assert _in_order(["a", "c"], ["a", "b", "c"]) is None
    assert _in_order(["c", "a"], ["a", "b", "c"]) == "a"
    assert _in_order(["a", "x"], ["a", "b", "c"]) == "x"
    assert _in_order(["x  y", "z"], ["x", "y z"]) is None  # wrapped elsewhere
    assert _in_order(["x z"], ["x y z"]) == "x z"  # a run, not scattered words


def test_the_strict_checker_catches_a_left_out_line() -> None:
    assert _contiguous(["a", "b", ELLIPSIS], ["a", "b", "c"]) is None
    assert _contiguous(["a", "c"], ["a", "b", "c"]) == "a"  # b left out without …
    assert _contiguous(["a", ELLIPSIS, "c"], ["a", "b", "c"]) is None
    assert _contiguous(["x  y", "z"], ["x", "y z"]) is None  # wrapped elsewhere
    # a sample shown whole is the whole output: what it leaves out at either end is marked
    assert (_contiguous(["a", "b"], ["a", "b", "c"]) or "").startswith("(output after")
    assert (_contiguous(["b", "c"], ["a", "b", "c"]) or "").startswith("(output before")
    assert _contiguous([ELLIPSIS, "b", "c"], ["a", "b", "c"]) is None
    assert _contiguous([ELLIPSIS, "b", ELLIPSIS], ["a", "b", "c"]) is None


def test_recorded_blocks_are_few() -> None:
    # a recorded (unchecked) sample is the exception: output of a real
    # machine or of a running agent
    counts = {p.relative_to(ROOT).as_posix(): samples(p)[1] for p in DOCS if p.exists()}
    assert {k: v for k, v in counts.items() if v} == {"docs/real-node.md": 2, "docs/agent.md": 1}


# -- prose figures, JSON excerpts, and every block accounted for -------------------------

SHOWS = re.compile(r"<!--\s*output shows:(.*?)-->", re.S)
FROM = re.compile(r"<!--\s*from:\s*(podnuma .*?)\s*-->")
NOT_OUTPUT = re.compile(r"<!--\s*not output:.*-->")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _shows() -> list[tuple[Path, int, list[str]]]:
    out = []
    for path in DOCS:
        if path.exists():
            text = path.read_text(encoding="utf-8")
            for m in SHOWS.finditer(text):
                runs = [r.strip() for r in m.group(1).split(" ; ") if r.strip()]
                out.append((path, _line_of(text, m.start()), runs))
    return out


SHOWS_ALL = _shows()


@pytest.mark.parametrize(
    ("path", "line", "runs"), SHOWS_ALL, ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _ in SHOWS_ALL]
)
def test_prose_figures_are_in_the_output(path: Path, line: int, runs: list[str], tmp_path: Path) -> None:
    above = [s for s in samples(path)[0] if s.line < line]
    assert above, f"{path.relative_to(ROOT)}:{line}: no sample above the figures"
    step = [st for st in above[-1].steps if not st.quiet][-1]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    actual = _run(step.args, tmp_path, stderr=None).split("\n")
    for run in runs:
        assert _in_order([run], actual) is None, (
            f"{path.relative_to(ROOT)}:{line}: the prose quotes {run!r}, which "
            f"podnuma {shlex.join(step.args)} no longer prints"
        )


_PAIR = re.compile(r'"([\w.-]+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)')


def _json_excerpts() -> list[tuple[Path, int, str, str]]:
    out = []
    for path in DOCS:
        if not path.exists():
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        for start, end, info, _ in _blocks(lines):
            m = next((FROM.search(lines[k]) for k in range(max(0, start - 2), start) if FROM.search(lines[k])), None)
            if info == "json" and m is not None:
                out.append((path, start + 1, m.group(1), "\n".join(lines[start + 1 : end])))
    return out


JSON_ALL = _json_excerpts()


@pytest.mark.parametrize(
    ("path", "line", "command", "body"), JSON_ALL,
    ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _, _ in JSON_ALL],
)
def test_json_excerpts_are_in_the_output(
    path: Path, line: int, command: str, body: str, tmp_path: Path
) -> None:
    import json

    (tmp_path / "examples").symlink_to(ROOT / "examples")
    args, _, _ = _command(command)
    doc = json.loads(_run(args, tmp_path))
    flat = json.dumps(doc, ensure_ascii=False, separators=(", ", ": "))
    pairs = [(k, v) for k, v in _PAIR.findall(body) if ELLIPSIS not in v]
    assert pairs, f"{path.relative_to(ROOT)}:{line}: no \"key\": value pair to check"
    for key, value in pairs:
        assert f'"{key}": {value}' in flat, f"{path.relative_to(ROOT)}:{line}: {command}: no \"{key}\": {value}"


def _unchecked(path: Path) -> list[str]:
    """The fenced blocks of ``path`` that nothing checks or marks."""
    lines = path.read_text(encoding="utf-8").split("\n")
    covered: set[int] = set()
    for sample in samples(path)[0]:
        covered.add(sample.line - 1)
        for step in sample.steps:
            for first, end in step.parts:
                covered.update(range(first - 1, end + 1))
    out = []
    for start, _end, info, recorded in _blocks(lines):
        marks = lines[max(0, start - 2) : start]
        if recorded or info in ("sh", "yaml") or start in covered or start + 1 in covered:
            continue
        if any(NOT_OUTPUT.search(m) for m in marks):
            continue
        if info == "json" and any(FROM.search(m) for m in marks):
            continue
        out.append(f"{path.relative_to(ROOT)}:{start + 1}")
    return out


def test_every_block_is_checked() -> None:
    # a block of output that no test reruns drifts: each is a sample, an
    # excerpt checked against its command, recorded, or says what it is
    unchecked = [b for p in DOCS if p.exists() for b in _unchecked(p)]
    assert unchecked == []


def test_the_block_checker_sees_an_unmarked_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```text\nsome output\n```\n\n<!-- not output: a diagram -->\n```\nx\n```\n",
        encoding="utf-8",
    )
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        assert _unchecked(page) == ["page.md:3"]
    finally:
        ROOT = old
