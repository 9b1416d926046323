"""The one error guard and the exit codes, without click.

A command does its work inside :func:`guard`, which maps every error to
one ``error:`` line on standard error and an exit code:

* 0 (:data:`EXIT_OK`): the command did its work (whether or not pods were
  admitted), or the reader of its output went away (``podnuma demo | head``);
* 2 (:data:`EXIT_INPUT`): invalid input (a file, a field, a value; a
  corrupt checkpoint; a configuration the kubelet would refuse to start
  with; a bad option; an input that needs more memory than the process may
  take, as the web server answers 422);
* 1 (:data:`EXIT_BUG`): anything unexpected (a bug): a one-line message,
  the traceback only with ``PODNUMA_DEBUG=1``;
* 130 (:data:`EXIT_INTERRUPTED`): stopped by Ctrl-C (``Aborted!``), 128 +
  SIGINT as a shell reports a command the signal ended; ``SIGTERM`` ends
  the process by the signal once the command has cleaned up
  (:class:`podnuma.cli.process.Terminated`).

A module of an optional extra that is not installed (grpc for ``agent`` and
``podresources``, distributed for ``fleet analyze --dask``...) is invalid
input too (exit 2), with the ``pip install 'podnuma[EXTRA]'`` line that
installs it (:func:`missing_extra`).

This module does not import click, so that the command line's fast path
(:mod:`podnuma.cli.fast`) runs a command without it; with click loaded (every
other run), the messages go through ``click.echo`` as before. A click
exception can only exist when click is loaded, which is how the guard tells
one apart without importing click.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable
from typing import NoReturn, TextIO, TypeGuard, TypeVar

from podnuma.fieldkit import inert

__all__ = [
    "STDIN_TWICE",
    "EXIT_BUG",
    "EXIT_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXTRA_MODULES",
    "echo_err",
    "command_path",
    "echo_out",
    "fail",
    "guard",
    "import_failed",
    "is_output_failure",
    "is_terminal",
    "missing_extra",
    "one_line",
    "output_failed",
    "plain_note",
    "quiet_pipe",
    "set_command_path",
]

#: the usage error of two ``-`` arguments (standard input is read once), in
#: the words of click's commands (:func:`podnuma.cli.options.stdin_used_once`)
#: and of the fast path's, which runs without click
STDIN_TWICE = "only one file argument can be '-' (standard input)"

EXIT_OK = 0
EXIT_BUG = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130

T = TypeVar("T")

#: the command path named in messages when click is not running the command
#: (the fast path sets it: ``podnuma simulate``)
_command = ["podnuma"]


def set_command_path(path: str) -> None:
    """The command path messages name while click is not running the
    command (``podnuma simulate``)."""
    _command[0] = path


def is_terminal(stream: object) -> bool:
    """Whether ``stream`` (standard output or error) is a terminal: not
    when it is ``None`` (closed when the command started)."""
    return stream is not None and bool(getattr(stream, "isatty", lambda: False)())


def echo_err(message: str) -> None:
    """``message`` and a newline on standard error: ``click.echo(message,
    err=True)`` when click runs the command; else the same bytes written
    directly (the fast path runs only on a text standard error that is not
    ASCII-encoded, where click writes the message as it is, colour codes
    removed when standard error is not a terminal)."""
    click = sys.modules.get("click")
    if click is not None:
        click.echo(message, err=True)
        return
    _write_plain(sys.stderr, message + "\n")


def echo_out(text: str) -> None:
    """``text`` (complete: no newline added) on standard output, as
    ``click.echo(text, nl=False)`` writes it (see :func:`echo_err`)."""
    click = sys.modules.get("click")
    if click is not None:
        click.echo(text, nl=False)
        return
    _write_plain(sys.stdout, text)


def _write_plain(stream: TextIO | None, text: str) -> None:
    if stream is None:  # no such stream (pythonw): click writes nothing
        return
    if "\x1b" in text and not stream.isatty():
        import re  # as click.utils.strip_ansi does

        text = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", text)
    stream.write(text)
    stream.flush()


def plain_note(quiet: bool) -> Callable[[str], None]:
    """A note on standard error (not when ``quiet``); a warning (a message
    starting ``warning: ``) always (``options.note`` without click)."""

    def note(message: str) -> None:
        if message.startswith("warning: "):
            echo_err(one_line(message))
        elif not quiet:
            echo_err(f"note: {one_line(message)}")

    return note


#: the characters that end a line (``str.splitlines``), escaped in messages
def one_line(message: str) -> str:
    """``message`` on one line and inert on a terminal
    (:func:`~podnuma.fieldkit.inert`): a line break in a file name, an
    escape sequence in a value the message quotes, written escaped."""
    return inert(message)


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print ``error: MESSAGE`` on standard error (on one line: see
    :func:`one_line`) and exit with ``code``."""
    echo_err(f"error: {one_line(message)}")
    sys.exit(code)


def quiet_pipe() -> NoReturn:
    """The reader went away: point stdout at /dev/null so the interpreter's
    final flush cannot fail again, and end quietly."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # (None: closed at the start)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(EXIT_OK)


def _is_click_exception(err: BaseException) -> bool:
    click = sys.modules.get("click")
    return click is not None and isinstance(err, (click.exceptions.Exit, click.ClickException))


#: what writing standard output fails with when it is not a closed pipe
_OUTPUT_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def is_output_failure(err: BaseException) -> TypeGuard[OSError]:
    """Whether ``err`` is standard output refusing what was written (a full
    disk, /dev/full): not a closed pipe, and no file named (the files the
    commands write name themselves). Also outside :func:`guard`: the help,
    the version and the completion script (``podnuma.cli.app``)."""
    return isinstance(err, OSError) and err.filename is None and err.errno in _OUTPUT_FAILURES


def output_failed(err: OSError) -> NoReturn:
    """Standard output cannot take the result: one line, exit 2 (not a
    bug)."""
    fail(f"standard output: cannot write: {err.strerror or err}", EXIT_INPUT)


def guard(fn: Callable[[], T]) -> T:
    """Run ``fn``, mapping podnuma's errors to one message and an exit code."""
    try:
        return fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BrokenPipeError:
        quiet_pipe()
    except ImportError as e:
        import_failed(e)
    except MemoryError:
        # as the web server's job answers it (422): the input needs more
        # memory than the process may take (``ulimit -v``), not a bug
        fail("the input needs more memory than this process may use", EXIT_INPUT)
    except Exception as e:
        if _is_click_exception(e):
            raise
        if is_output_failure(e):
            output_failed(e)
        # the words of errors: imported only when one happened
        from podnuma.service.messages import error_message, is_input_error

        if is_input_error(e):
            fail(error_message(e), EXIT_INPUT)
        if os.environ.get("PODNUMA_DEBUG") == "1":
            raise
        fail(f"{error_message(e)} (set PODNUMA_DEBUG=1 for a traceback)", EXIT_BUG)


#: The top-level modules of each optional extra (pyproject.toml's
#: optional-dependencies), and the extra that installs them.
EXTRA_MODULES: dict[str, str] = {
    "grpc": "agent", "google.protobuf": "agent", "google": "agent", "watchfiles": "agent",
    "prometheus_client": "agent",
    "fastapi": "web", "uvicorn": "web", "starlette": "web", "pydantic": "web",
    "pydantic_core": "web",
    "dask": "fleet", "distributed": "fleet", "plotly": "fleet", "kubernetes": "fleet",
}


def command_path() -> str:
    """The path of the command running (``podnuma fleet analyze``), as
    messages name it."""
    click = sys.modules.get("click")
    if click is not None:
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            return str(ctx.command_path)
        return "podnuma"
    return _command[0]


def missing_extra(err: ImportError) -> str | None:
    """The message for an optional extra that is not installed, or None
    when ``err`` is not about one (a bug, then)."""
    name = err.name or ""
    extra = EXTRA_MODULES.get(name) or EXTRA_MODULES.get(name.partition(".")[0])
    if extra is None:
        return None
    command = command_path()
    return f"{command} needs the {extra} extra ({name} is missing): pip install 'podnuma[{extra}]'"


def import_failed(err: ImportError) -> NoReturn:
    """A module could not be imported: an optional extra not installed
    (exit 2, the line that installs it), else a bug (exit 1)."""
    message = missing_extra(err)
    if message is not None:
        fail(message, EXIT_INPUT)
    if os.environ.get("PODNUMA_DEBUG") == "1":
        raise err
    fail(
        f"internal error: {type(err).__name__}: {err} (set PODNUMA_DEBUG=1 for a traceback)",
        EXIT_BUG,
    )
