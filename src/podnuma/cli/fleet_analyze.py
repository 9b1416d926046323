"""``podnuma fleet analyze``: the run, without click.

Both ways into the command run this: the click command
(:mod:`podnuma.cli.fleet`) and the fast path that starts it without loading
click (:mod:`podnuma.cli.fast`). It reads the inputs, replays every node
(in this process, on local processes, or on Dask), prints the problems it
found on standard error (not when quiet) and the report on standard output
or into a file.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from podnuma.cli.guard import (
    STDIN_TWICE,
    command_path,
    echo_err,
    echo_out,
    fail,
    guard,
    is_terminal,
    one_line,
    plain_note,
)
from podnuma.cli.outputfile import check_output_file, format_from_suffix
from podnuma.errors import InputError
from podnuma.inputs.pathcheck import cannot_write, path_message, path_problem

__all__ = ["MAX_STDERR_ISSUES", "analyze"]

MAX_STDERR_ISSUES = 50

#: the width of the table written into a pipe or a file
TABLE_WIDTH = 220


@contextlib.contextmanager
def _progress(total: int, what: str, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on standard error when it is a terminal
    (:mod:`podnuma.cli.progress`)."""
    if not is_terminal(sys.stderr) or total < 2 or quiet:
        yield None
        return
    from podnuma.cli.progress import bar

    with bar(what, total, quiet=quiet) as b:
        yield b.advance


class _Scratch:
    """A temporary directory made when first asked for (for standard
    input's copy: ``tempfile`` is not even imported otherwise), removed by
    :meth:`close`; ``names``: the copies' paths and the names they stand
    for in messages and the report (:data:`~podnuma.inputs.documents.STDIN_NAME`);
    ``bases``: the directory their relative references resolve against
    (the working directory, as for a scenario read from standard input)."""

    def __init__(self) -> None:
        self._dir: Any = None
        self.names: dict[str, str] = {}
        self.bases: dict[str, str] = {}

    def path(self) -> Path:
        if self._dir is None:
            import tempfile

            self._dir = tempfile.TemporaryDirectory(prefix="podnuma-fleet-")
        return Path(self._dir.name)

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()


def _copy_input(read: Callable[[int], bytes], tmp: Path, n: int, name: str,
                failing: str = "cannot read input") -> Path:
    """What ``read`` gives saved to a file in ``tmp`` (the ``n``-th copy), a
    chunk at a time and at most the fleet's byte limit of it
    (:data:`~podnuma.inputs.limits.FLEET_LIMITS`, as a dump file is read);
    named ``.json`` when it starts (after white space) as JSON does, else
    ``.yaml``. ``InputError`` naming it (``name``) when it cannot be read
    (``failing``: how that message begins), is larger, or cannot be saved."""
    from podnuma.inputs.limits import FLEET_LIMITS

    limit = FLEET_LIMITS.max_bytes
    part = tmp / f"input-{n}.part"
    lead = b""
    total = 0
    with _saving(tmp, name), part.open("wb") as f:
        while True:
            try:
                chunk = read(1 << 20)
            except OSError as e:
                raise InputError(f"{failing}: {e.strerror or e}", file=name) from None
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise InputError(f"input is larger than the limit of {limit} bytes", file=name)
            if not lead:
                lead = chunk.lstrip()[:1]
            f.write(chunk)
    p = tmp / (f"input-{n}.json" if lead in (b"{", b"[") else f"input-{n}.yaml")
    with _saving(tmp, name):
        part.rename(p)
    return p


@contextlib.contextmanager
def _saving(tmp: Path, name: str) -> Iterator[None]:
    """Writing the copy of ``name`` in ``tmp``: an ``OSError`` (a full
    disk) said as such, not as a failure to read the input."""
    try:
        yield
    except OSError as e:
        raise InputError(f"cannot save a copy of it in {tmp.parent}: {e.strerror or e}", file=name) from None


def _stdin_input(tmp: Path, n: int) -> Path:
    """Standard input saved to a file in ``tmp`` (:func:`_copy_input`);
    ``InputError`` when it is closed or cannot be read."""
    from podnuma.inputs.documents import STDIN_NAME

    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is None:  # (closed when the command started)
            raise ValueError
        return _copy_input(stream.read, tmp, n, STDIN_NAME, "cannot read input from standard input")
    except ValueError:  # closed
        raise InputError("cannot read input from standard input: it is closed", file=STDIN_NAME) from None


def _pipe(p: str) -> os.stat_result | None:
    """The status of the input ``p`` when it is a pipe (a shell's
    ``<(command)``, ``/dev/stdin``, a named pipe): read once, as it comes,
    so copied before the dumps are read (the replay reads a dump's pods
    back from the file)."""
    try:
        st = os.stat(p)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISFIFO(st.st_mode) else None


#: a directory of a process's open descriptors (``/proc/PID/fd``, a
#: thread's ``/proc/PID/task/TID/fd``), once its links are followed
_FD_DIR = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd")
#: the most symbolic links followed in one input path (Linux's own bound)
_MAX_LINKS = 40


def _names_descriptor(p: str) -> bool:
    """Whether the input path ``p`` names a descriptor this process holds
    open (``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``,
    ``/proc/PID/fd/N`` of its own PID, a thread's, or a link to any of
    them), followed link by link: what it opens depends on the process
    (a ``--workers`` process's or a Dask worker's standard input is
    ``/dev/null``), so it is copied here, as ``-`` is, and every mode reads
    the same bytes."""
    pid = str(os.getpid())
    if p.startswith("/"):
        at = "/"
    else:
        try:
            at = os.getcwd()
        except OSError:
            return False
    parts = p.split("/")
    parts.reverse()  # (a stack: the next component last)
    links = 0
    while parts:
        part = parts.pop()
        if part in ("", "."):
            continue
        if part == "..":
            at = os.path.dirname(at)
            continue
        m = _FD_DIR.fullmatch(at)
        if at == "/dev/fd" or (m is not None and m.group(1) == pid):  # (/dev/fd: where it is no link)
            return True
        step = os.path.join(at, part)
        try:
            target = os.readlink(step)
        except OSError:  # not a link (or not there: nothing to follow)
            at = step
            continue
        links += 1
        if links > _MAX_LINKS:
            return False
        if target.startswith("/"):
            at = "/"
        parts.extend(reversed(target.split("/")))
    return False


def _copied(p: str) -> tuple[os.stat_result, bool] | None:
    """The status of the input ``p`` when it is copied before the dumps are
    read (:func:`_pipe_input`), and whether it names a descriptor of this
    process (:func:`_names_descriptor`): a pipe (:func:`_pipe`), or
    whatever such a descriptor is open on but a directory (a file, a
    terminal, ``/dev/null``: read through the descriptor's own path in
    this process only). ``None``: read where the replay runs, by its path."""
    st = _pipe(p)
    descriptor = _names_descriptor(p)
    if st is not None:
        return st, descriptor
    if not descriptor:
        return None
    try:
        st = os.stat(p)
    except (OSError, ValueError):
        return None  # (a descriptor not open: the reader says so)
    return None if stat.S_ISDIR(st.st_mode) else (st, True)


def _pipe_input(p: str, tmp: Path, n: int) -> Path:
    """The pipe ``p`` saved to a file in ``tmp`` (:func:`_copy_input`), a
    named one waited on for a writer (bounded:
    :func:`~podnuma.inputs.documents.wait_for_writer`)."""
    from podnuma.inputs.documents import open_input, wait_for_writer

    with open_input(p, what="input", name=p) as fh:
        first = [wait_for_writer(fh, what="input", name=p)]

        def read(n: int) -> bytes:
            if first[0]:
                got, first[0] = first[0], b""
                return got
            return fh.read(n)

        return _copy_input(read, tmp, n, p)


def _working_directory() -> str:
    """The working directory, against which the relative file names in
    standard input and in a shell's ``<(command)`` resolve; ``.`` when it
    is gone (the names then stay as written, and cannot be read)."""
    try:
        return str(Path.cwd())
    except OSError:
        return "."


def _paths(inputs: Sequence[str], tmp: _Scratch) -> list[Path]:
    """The input paths; standard input (``-``), pipes and the paths that
    name a descriptor of this process (``/dev/stdin``, ``/dev/fd/N``:
    :func:`_copied`) saved to files in ``tmp`` (a pipe or descriptor given
    twice read once, its copy given twice, as a file given twice), the names they stand for recorded in ``tmp.names``, the
    directory their relative references resolve against in ``tmp.bases``
    (standard input, a descriptor and an unnamed pipe: the working
    directory; a named pipe: its own directory). With ``--kubeconfig`` the same (``-`` is
    refused before: standard input is not a dump's then, and may be the
    kubeconfig's: :func:`~podnuma.fleet.live.read_kubeconfig`)."""
    from podnuma.inputs.documents import STDIN_NAME, unnamed_pipe

    paths: list[Path] = []
    copies: dict[tuple[int, int], Path] = {}
    for p in inputs:
        got = _copied(p) if p != "-" else None
        st = None if got is None else got[0]
        if st is not None and (st.st_dev, st.st_ino) in copies:
            paths.append(copies[st.st_dev, st.st_ino])
            continue
        if p == "-":
            copy, name, base = _stdin_input(tmp.path(), len(paths)), STDIN_NAME, _working_directory()
        elif got is not None and st is not None:
            copy, name = _pipe_input(p, tmp.path(), len(paths)), p
            # (a descriptor, as standard input: against the working directory)
            base = (_working_directory() if got[1] or unnamed_pipe(st)
                    else str(Path(p).absolute().parent))
            copies[st.st_dev, st.st_ino] = copy
        else:
            paths.append(Path(p))
            continue
        for form in {str(copy), str(copy.resolve())}:  # (as given, and as a reader may resolve it)
            tmp.names[form] = name
        tmp.bases[str(copy)] = base
        paths.append(copy)
    return paths


def _kubeconfig_pipe_once(kubeconfig: str, inputs: Sequence[str]) -> None:
    """Refuse (one line, exit 2) an INPUT that is the pipe the kubeconfig
    is read from (``--kubeconfig - /dev/stdin`` with standard input a pipe,
    the same ``<(command)`` or named pipe twice): a pipe is read once, and
    the kubeconfig takes it."""
    if kubeconfig == "-":
        try:
            st: os.stat_result | None = os.fstat(sys.stdin.fileno()) if sys.stdin is not None else None
        except (OSError, ValueError, AttributeError):  # (closed, or no descriptor: nothing to share)
            st = None
        st = st if st is not None and stat.S_ISFIFO(st.st_mode) else None
    else:
        st = _pipe(kubeconfig)
    if st is None:
        return
    for p in inputs:
        other = _pipe(p) if p != "-" else None
        if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            fail(f"{p}: the same pipe as --kubeconfig {kubeconfig}: a pipe is read once, for the "
                 f"kubeconfig (see '{command_path()} --help')")


def _report_issues(issues: Sequence[dict[str, Any]], quiet: bool) -> None:
    """The issues on standard error: errors and warnings; with ``quiet``,
    errors only (as the other commands, which print errors when quiet).
    Each on one line, inert on a terminal (:func:`~podnuma.cli.guard.one_line`):
    the names it quotes (a pod, a node, a file) come from the inputs."""
    shown = [i for i in issues if i["severity"] == "error" or (i["severity"] == "warning" and not quiet)]
    for i in shown[:MAX_STDERR_ISSUES]:
        where = ": ".join(p for p in (i.get("file"), i.get("path")) if p)
        node = f"node {i['node']}: " if i.get("node") else ""
        echo_err(one_line(f"{i['severity']}: {node}{where + ': ' if where else ''}{i['message']}"))
    if len(shown) > MAX_STDERR_ISSUES:
        echo_err(f"... and {len(shown) - MAX_STDERR_ISSUES} more issue(s) in the report")


def _write(output_file: Path | None, text: str) -> None:
    if output_file is None:
        echo_out(text)
        return
    from podnuma.fileio import atomic_write

    try:
        # a report is for sharing: world-readable, as a shell redirection writes it
        atomic_write(output_file, text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise cannot_write("--output-file", output_file, e) from None


#: the format each suffix of ``--output-file`` names (as ``topology``'s)
_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".html": "html", ".htm": "html",
             ".txt": "table"}


def _format(fmt: str | None, output_file: Path | None) -> str:
    """The report's format: ``-o``'s, else the one ``--output-file``'s
    suffix names, else ``table`` (:func:`~podnuma.cli.outputfile.format_from_suffix`)."""
    return format_from_suffix(fmt, output_file, _SUFFIXES, "table")


def analyze(
    inputs: tuple[str, ...], what_ifs: tuple[str, ...], set_values: tuple[str, ...], fmt: str | None,
    output_file: Path | None, workers: int | None, dask_target: str | None,
    kubeconfig: str | None, context: str | None, scenario_dir: Path | None, *, quiet: bool,
) -> None:
    """Replay every node's running pods and print the report, every error
    through the guard. ``fmt``: ``-o``'s (``None``: not given)."""
    fmt = _format(fmt, output_file)
    if inputs.count("-") > 1:  # standard input can be read once: click's usage error's line
        fail(f"{STDIN_TWICE} (see '{command_path()} --help')")
    if "" in inputs:  # (an empty name is no file: not the working directory)
        fail("'': INPUT: no such file or directory")
    if context is not None and kubeconfig is None:  # (it would be ignored)
        fail(f"--context goes with --kubeconfig (see '{command_path()} --help')")
    if kubeconfig == "-" and "-" in inputs:  # (read once: for the kubeconfig)
        fail("standard input ('-') does not go with --kubeconfig -: standard input is read once, "
             f"for the kubeconfig (see '{command_path()} --help')")
    if kubeconfig is not None and "-" in inputs:  # (the cluster is read live: no dump to take from it)
        fail(f"standard input ('-') does not go with --kubeconfig (see '{command_path()} --help')")
    if kubeconfig is not None:
        _kubeconfig_pipe_once(kubeconfig, inputs)
    from podnuma.inputs.overrides import parse_overrides
    from podnuma.service import fleet as service

    parsed = guard(lambda: service.what_ifs(what_ifs, workers=workers, dask_target=dask_target))
    overrides = guard(lambda: parse_overrides(set_values))
    if output_file is not None:  # (what would stop the final write: before any work)
        out = output_file
        guard(lambda: _output_file_ready(out))
    if scenario_dir is not None:  # (an earlier run's scenarios would stay: before any work)
        guard(lambda: service.scenario_dir_unused(scenario_dir))
    # the directories --as-scenario makes (deepest first): removed again when
    # the scenarios cannot be written, so that a failure leaves nothing
    made = _missing_dirs(scenario_dir) if scenario_dir is not None else []
    if fmt == "html":
        guard(lambda: importlib.import_module("plotly"))  # the fleet extra, before any work
    if dask_target is not None:  # found, not imported: the Dask client may run in a process of its own
        guard(lambda: _installed("distributed"))
    for p in inputs:  # (a file or a directory: the one wording of a path that is not there)
        problem = None if p == "-" else path_problem(p, file_okay=True)
        if problem is not None:
            fail(path_message(p, "INPUT", problem))
    from podnuma.cli.process import exit_at_once, is_own

    if is_own():
        service.for_one_run()
    with contextlib.ExitStack() as stack:
        tmp = _Scratch()
        stack.callback(tmp.close)  # (last: after the executor has ended)
        # the dumps are read where the replay runs: the executor first
        ex = guard(lambda: stack.enter_context(
            service.executor(workers=workers, dask_target=dask_target)))
        def load() -> Any:
            try:
                return service.with_overrides(
                    service.load(_paths(inputs, tmp), kubeconfig=kubeconfig,
                                 context=context, executor=ex, bases=tmp.bases),
                    overrides,
                )
            except InputError as e:  # (standard input by its name, not its copy's)
                raise service.renamed_error(e, tmp.names) from None

        fleet = guard(load)
        if scenario_dir is not None:  # (what would stop the writing: before any output)
            stack.callback(_remove_empty, made)  # (kept when the scenarios are written)
            guard(lambda: service.prepare_scenario_dir(fleet, parsed, scenario_dir))
        guard(lambda: _analyze(fleet, parsed, fmt, output_file, ex, overrides, quiet, tmp.names))
        if scenario_dir is not None:
            count = guard(lambda: service.write_scenarios(fleet, parsed, scenario_dir, made))
            made.clear()
            plain_note(quiet)(f"wrote {count} scenario(s) to {scenario_dir}")
    # the report written, the executor's processes and the scratch files
    # gone: the process need not free the fleet object by object
    exit_at_once()


def _missing_dirs(directory: Path) -> list[Path]:
    """``directory`` and its parents that do not exist (deepest first): the
    directories writing into it makes."""
    return [p for p in (directory, *directory.parents) if not os.path.lexists(p)]


def _remove_empty(dirs: Sequence[Path]) -> None:
    """Remove the directories ``dirs`` (deepest first) that are empty."""
    for d in dirs:
        with contextlib.suppress(OSError):
            d.rmdir()


def _output_file_ready(path: Path) -> None:
    """``InputError`` (naming ``--output-file``'s file) for what would stop
    the report's atomic write into ``path`` once the replay is done
    (:func:`~podnuma.cli.outputfile.check_output_file`, every command's
    check). Checked before any work, as ``--as-scenario`` is; nothing is
    written."""
    check_output_file(path, "--output-file")


def _installed(module: str) -> None:
    """An optional module is there (:class:`ModuleNotFoundError` if not),
    without importing it."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _analyze(
    fleet: Any, what_ifs: Sequence[Any], fmt: str, output_file: Path | None, executor: Any,
    overrides: Sequence[Any], quiet: bool, names: dict[str, str],
) -> None:
    from podnuma.render.output import render_output
    from podnuma.service import fleet as service

    with _progress(len(fleet.nodes), "replaying nodes", quiet) as progress:
        report = service.analyze(fleet, what_ifs, executor=executor, progress=progress)
    wind_down = getattr(executor, "wind_down", None)
    if wind_down is not None:  # a cluster closes while the report is written
        wind_down()
    if overrides:
        report["set"] = [str(o) for o in overrides]
        service.refuse_stopped_by_set(report)  # (the input was --set: refused as simulate refuses it)
    report = service.renamed(report, names)  # (standard input by its name, not its copy's)
    _report_issues(report["issues"], quiet)
    if fmt == "table" and output_file is None and sys.stdout is not None:
        from podnuma.render.table import make_console, plain_width

        # colours as simulate's table has them: on a terminal or with
        # FORCE_COLOR (into a pipe, the plain table's width), never with NO_COLOR
        tty = is_terminal(sys.stdout)
        console = make_console(sys.stdout, width=None if tty else plain_width(TABLE_WIDTH))
        if tty or console.is_terminal:
            from podnuma.render.fleet import fleet_tables

            console.print(fleet_tables(report))
            return
    _write(output_file, render_output(fmt, lambda: report, {
        "html": lambda: service.report_html(fleet, report),
        "table": lambda: _table_text(report),
    }))


def _table_text(report: dict[str, Any]) -> str:
    from rich.console import Console

    from podnuma.render.fleet import fleet_tables
    from podnuma.render.table import plain_width

    # (COLUMNS when set, as every table's; else wide: a report is read in a file or a pager)
    console = Console(record=True, width=plain_width(TABLE_WIDTH), file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(fleet_tables(report))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"
