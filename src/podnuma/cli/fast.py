"""The command line's fast path: ``podnuma simulate FILE [-o json|yaml|table|wide]``
and ``podnuma fleet analyze INPUT... [-o json]`` started without click.

click's import is about a third of ``podnuma simulate``'s start-up (it loads
``inspect``, ``ast``, ``datetime``, ``uuid``... and, on its first message,
``locale`` through ``gettext``), and at 10,000 steps every 10 ms of start-up
is a microsecond of every step (docs/speed.md). :func:`fast_main` reads the
command lines that are run most, ``podnuma [-q] simulate FILE`` (the table,
on a terminal, a file or a pipe; ``-o wide``, ``json`` or ``yaml``, with ``--detail``, the option given as ``-o json``, ``-ojson``,
``-o=json`` (kubectl's form, which ``simulate``'s click option reads too:
:class:`podnuma.cli.options.OutputFormat`), ``--output json`` or
``--output=json``) and ``podnuma [-q] fleet analyze
INPUT...`` (``-o json`` or the table; ``--workers N``, ``--dask TARGET``
and ``--output-file FILE`` in the forms click surely reads the same: a
distributed run's serial start is shortest without click), and runs them as
the click commands would (:func:`podnuma.cli.simulate_stream.simulate_streamed`
and :func:`podnuma.cli.fleet_analyze.analyze`, the functions those commands
call). Anything else, or anything it is not sure of, returns ``None``
before doing any work, and click runs the command line: another command,
another option, an option given twice, ``--help``, a file click would
refuse (not readable), shell completion, or a standard output or error
whose bytes click would write differently (no encoding, ASCII).

The output, the messages and the exit codes are the click command's,
byte for byte (``tests/cli/test_fast_path.py`` runs both ways and compares).
"""

from __future__ import annotations

import os
import sys

__all__ = ["fast_main"]

#: the commands the fast path runs: their words, the formats it writes, the
#: default format (None: -o is required), whether --detail is an option and
#: how many files they take (None: one or more)
_COMMANDS: dict[tuple[str, ...], tuple[tuple[str, ...], str | None, bool, int | None]] = {
    ("simulate",): (("json", "yaml", "table", "wide"), "table", True, 1),
    ("fleet", "analyze"): (("json", "table"), "table", False, None),
}

#: the commands whose click ``-o`` reads ``-o=FORMAT`` as ``-o FORMAT``
#: (:class:`podnuma.cli.options.OutputFormat`); for another command the
#: fast path reads ``=FORMAT`` as click does, as no format (left to click)
_SHORT_EQUALS: frozenset[tuple[str, ...]] = frozenset({("simulate",)})

#: the options with a value each command also takes (each at most once)
_VALUED: dict[tuple[str, ...], tuple[str, ...]] = {
    ("simulate",): (),
    ("fleet", "analyze"): ("--workers", "--dask", "--output-file"),
}

#: what :func:`_parse` read: the command's words, quiet, the files, the
#: format, --detail, the other options' values by name (a plain tuple: a
#: NamedTuple's class costs a millisecond of start-up)
_Command = tuple[tuple[str, ...], bool, tuple[str, ...], str, bool, dict[str, str]]


def _clear_value(option: str, value: str) -> bool:
    """Whether click surely reads ``value`` of ``option`` as the fast path
    does: a worker count of plain digits (1 to ``MAX_LOCAL_WORKERS``), a Dask target and an
    output file that do not look like options, the file not an existing
    one that cannot be read (click's ``Path`` refuses it); anything else is left to click and its message."""
    if not value or value.startswith("-"):
        return False
    if option == "--workers":
        # (a count of at most 9 digits: past 4,300 Python refuses to read
        # one, where click names the value in its message)
        from podnuma.fleet import MAX_LOCAL_WORKERS

        return len(value) <= 9 and value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_LOCAL_WORKERS
    if option == "--output-file":
        from podnuma.inputs.pathtext import names_directory

        if names_directory(value):  # (a directory's name: click's option refuses it, in its words)
            return False
        try:
            os.stat(value)
        except OSError:
            return True
        except ValueError:  # an embedded NUL byte
            return False
        # (a directory: refused by the command, either way, 'PATH:
        # --output-file: cannot write: Is a directory')
        return os.access(value, os.R_OK)
    return True


def _parse(argv: list[str]) -> _Command | None:
    """``[-q|--quiet]... simulate FILE (-o|--output) FORMAT [--detail]`` or
    ``[-q|--quiet]... fleet analyze INPUT... [(-o|--output) FORMAT]`` in
    click's grammar (options before, between or after the files), or
    ``None``."""
    quiet = False
    i = 0
    while i < len(argv) and argv[i] in ("-q", "--quiet"):
        quiet = True
        i += 1
    matched = [w for w in _COMMANDS if tuple(argv[i:i + len(w)]) == w]
    if not matched:
        return None
    words = matched[0]
    formats, default, has_detail, count = _COMMANDS[words]
    valued = _VALUED[words]
    files: list[str] = []
    output: str | None = None
    detail = False
    options: dict[str, str] = {}
    rest = argv[i + len(words):]
    j = 0
    while j < len(rest):
        token = rest[j]
        value: str | None = None
        name, eq, given = token.partition("=")
        if name in valued:
            if eq:
                option_value = given
            elif j + 1 < len(rest):
                option_value = rest[j + 1]
                j += 1
            else:
                return None
            if name in options or not _clear_value(name, option_value):
                return None
            options[name] = option_value
        elif token in ("-o", "--output"):
            if j + 1 >= len(rest):
                return None
            value = rest[j + 1]
            j += 1
        elif token.startswith("--output="):
            value = token[len("--output="):]
        elif token.startswith("-o") and not token.startswith("--"):
            value = token[2:]
            if value.startswith("=") and words in _SHORT_EQUALS:
                value = value[1:]  # -o=json (an unknown format still left to click)
        elif token == "--detail" and has_detail:
            if detail:
                return None
            detail = True
        elif token == "-" or not token.startswith("-"):
            files.append(token)
        else:
            return None
        if value is not None:
            if output is not None or value not in formats:
                return None
            output = value
        j += 1
    if output is None and "--output-file" in options:  # (the format its suffix names: click's way)
        return None
    output = output or default
    if output is None or not files or (count is not None and len(files) != count):
        return None
    if detail and output not in ("json", "yaml"):  # (click's usage error says why)
        return None
    return (words, quiet, tuple(files), output, detail, options)


def _plain_text_stream(stream: object) -> bool:
    """A text stream click writes to as it is (an encoding and an error
    handler, not ASCII)."""
    import codecs

    encoding = getattr(stream, "encoding", None)
    if encoding is None or getattr(stream, "errors", None) is None:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return False


def _readable(path: str) -> bool:
    """Whether click's ``Path(dir_okay=True, allow_dash=True)`` accepts
    ``path`` as it is: '-', a path that does not exist (the reader names
    the problem) or one that can be read; not ``''`` (click's
    :class:`~podnuma.cli.options.NamedPath` names it)."""
    if path == "-":
        return True
    if not path:
        return False
    try:
        os.stat(path)
    except OSError:
        return True
    except ValueError:  # an embedded NUL byte: click's message
        return False
    return os.access(path, os.R_OK)


def fast_main(argv: list[str] | None = None, *, own_process: bool = False) -> int | None:
    """Run the command line without click and return its exit code, or
    ``None`` when it is not one the fast path runs (nothing done then).
    ``own_process``: the process runs this command only (the garbage
    collector is held off while ``simulate`` loads: :mod:`podnuma.cli.process`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    command = _parse(args)
    if command is None or os.environ.get("_PODNUMA_COMPLETE"):
        return None
    if not (_plain_text_stream(sys.stderr) and _plain_text_stream(sys.stdout)):
        return None
    words, quiet, files, output, detail, options = command
    if words == ("simulate",) and not _readable(files[0]):
        return None
    from podnuma.cli.guard import (
        EXIT_BUG,
        EXIT_INTERRUPTED,
        EXIT_OK,
        echo_err,
        import_failed,
        plain_note,
        set_command_path,
    )

    set_command_path(" ".join(("podnuma", *words)))
    try:
        if words == ("simulate",):
            from podnuma.cli.process import held

            with held(own_process):
                from podnuma.cli.simulate_stream import simulate_streamed

                simulate_streamed(files[0], output, detail, None, (), plain_note(quiet))
        else:
            from podnuma.cli.fleet_analyze import analyze

            workers = options.get("--workers")
            output_file = None
            if "--output-file" in options:
                from pathlib import Path

                output_file = Path(options["--output-file"])
            analyze(files, (), (), output, output_file, None if workers is None else int(workers),
                    options.get("--dask"), None, None, None, quiet=quiet)
    except SystemExit as e:  # as podnuma.cli.app.main ends
        code = e.code
        if code is None:
            return EXIT_OK
        if isinstance(code, int):
            return code
        echo_err(str(code))
        return EXIT_BUG
    except (EOFError, KeyboardInterrupt):  # click's Abort: a new line, then the word
        echo_err("")
        echo_err("Aborted!")
        return EXIT_INTERRUPTED
    except ImportError as e:  # a module failing to import outside the guard
        try:
            import_failed(e)
        except SystemExit as exit_:
            return exit_.code if isinstance(exit_.code, int) else EXIT_BUG
    return EXIT_OK
