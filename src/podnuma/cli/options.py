"""Options and output plumbing shared by the commands.

The grammar every command follows (kubectl's habits):

* ``-o/--output FORMAT`` is always the format (``table``, ``wide``,
  ``json``, ``yaml``; ``svg``/``png``/``text`` where a picture is the
  output); files are written with a named option (``--checkpoint-dir``,
  ``--output-file``) or by redirection;
* every file argument accepts ``-`` for standard input;
* nothing is printed before the inputs are validated (the command computes
  its whole output inside the guard, then prints it);
* progress and notes go to standard error, and not at all with
  ``podnuma --quiet``.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from podnuma.cli.app import is_quiet
from podnuma.cli.guard import EXIT_INPUT, STDIN_TWICE, one_line
from podnuma.cli.outputfile import check_output_file
from podnuma.inputs.pathcheck import cannot_write, path_message, path_problem, write_problem
from podnuma.inputs.pathtext import names_directory
from podnuma.render.formats import FORMATS

if TYPE_CHECKING:
    from podnuma.api.kubeletconfig import KubeletConfig
    from podnuma.inputs.text import TextInput

__all__ = [
    "FILE",
    "READ_FILE",
    "checkpoint_option",
    "config_option",
    "echo",
    "note",
    "note_not_modelled",
    "echo_bytes",
    "file_argument",
    "node_option",
    "OutputFormat",
    "output_option",
    "progress_bar",
    "read_input",
    "set_option",
    "as_scenario_option",
    "check_output_file",
    "EMPTY_NAME",
    "NamedPath",
    "PathRefused",
    "path_message",
    "path_problem",
    "dash_is_stdout",
    "dash_refused",
    "write_scenario_file",
    "Seconds",
    "SocketPath",
    "socket_problem",
    "MOST_SECONDS",
    "SECONDS_SYNTAX",
]

F = TypeVar("F", bound=Callable[..., Any])

class PathRefused(click.ClickException):
    """A path an option names that cannot be used: ``error: PATH: OPTION:
    PROBLEM`` (:mod:`podnuma.inputs.pathcheck`), one line, exit 2, as a field
    error is said (no usage hint: the option was used rightly)."""

    exit_code = EXIT_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {one_line(self.format_message())}", err=True)


def param_name(param: click.Parameter | None) -> str:
    """How a message names ``param``: its long option (``--sysfs``), or an
    argument's metavar (``DIRECTORY``)."""
    if param is None:
        return "PATH"
    if isinstance(param, click.Option):
        return next((o for o in param.opts if o.startswith("--")), param.opts[0])
    return param.human_readable_name


class NamedPath(click.Path):
    """click's ``Path`` that refuses an empty name: ``''`` (a shell's unset
    ``"$VAR"``) names no file, where ``Path('')`` would be the working
    directory (read, or written into: ``--checkpoint-dir ''``).

    A directory (``file_okay=False``) is checked here in podnuma's one
    wording (:func:`~podnuma.inputs.pathcheck.path_problem`): ``exists=True``
    for one the command reads (``--sysfs``), else one it creates when
    missing (``--checkpoint-dir``); ``-`` is never a directory.

    A file's name ending in ``/`` (``r.json/``, which ``Path`` would read
    as ``r.json``) is refused here for a file the command writes
    (``writes=True``: ``PATH: OPTION: cannot write: Is a directory``, as a
    shell's ``> r.json/`` says it: :func:`~podnuma.fileio.file_name_errno`) or takes as
    a ``Path``; a file argument read as given (``FILE``) is refused by its
    reader, in the system's words (``Not a directory``)."""

    def __init__(self, *args: Any, writes: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writes = writes

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and not value:
            self.fail(f"{EMPTY_NAME}", param, ctx)
        if self.file_okay and (self.writes or self.type is not None) and names_directory(os.fsdecode(value)):
            path = os.fsdecode(value)
            raise PathRefused(path_message(path, param_name(param), _file_name_problem(path, self.writes)))
        if self.file_okay and not self.dir_okay and isinstance(value, str | bytes) and value != "-" \
                and os.path.isdir(value):
            # (click's own words, "Invalid value ... is a directory", are not the grammar's)
            path = os.fsdecode(value)
            raise PathRefused(path_message(path, param_name(param), _directory_problem(path, self.writes)))
        if not self.file_okay and self.dir_okay:
            path = os.fsdecode(value)
            problem = path_problem(path, must_exist=self.exists)
            if problem is not None:
                raise PathRefused(path_message(path, param_name(param), problem))
            return self.coerce_path_result(path)
        return super().convert(value, param, ctx)


def _directory_problem(path: str, writes: bool) -> str:
    """What is wrong with a directory where a file is named: a file the
    command writes cannot be made there (``--output-file DIR`` says it the
    same way), one it reads cannot be read."""
    why = os.strerror(errno.EISDIR)
    if writes:
        return f"cannot write: {write_problem(path, OSError(errno.EISDIR, why, path))}"
    return f"cannot read: {why}"


def _file_name_problem(path: str, writes: bool) -> str:
    """What is wrong with a file named as a directory (``r.json/``): what
    making a file there fails with (``writes``), else what reading it does."""
    if writes:
        from podnuma.fileio import file_name_errno

        code = file_name_errno(path)
        code = code if code is not None else errno.EISDIR
        return f"cannot write: {write_problem(path, OSError(code, os.strerror(code), path))}"
    try:
        os.stat(path)
    except OSError as e:
        return e.strerror or str(e)
    return os.strerror(errno.EISDIR)


#: what is said of ``-`` given as a socket
DASH_SOCKET = "'-' names no socket (standard input and output are not sockets): name a socket"


class SocketPath(NamedPath):
    """A unix socket an option names, told in podnuma's one wording
    (``PATH: OPTION: PROBLEM``, as :class:`NamedPath` tells a directory)
    as the command line is read: ``-`` is refused (never a socket named
    ``-``: :data:`DASH_SOCKET`), and so is a directory there, ``not a
    socket (a directory)``; one the command connects to (``creates=False``:
    ``podresources --socket``) must be there, ``no such socket``. What else
    is there is looked at when the socket is used (:func:`socket_problem`
    for a client, before it dials: ``not a socket (a regular file)``; the
    agent's server, which creates its socket, says it in its own words)."""

    def __init__(self, *, creates: bool) -> None:
        super().__init__(path_type=Path, dir_okay=False)
        self.creates = creates

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and value:
            # (a name ending in "/" is told as the same name without it: "sd/"
            # a directory, "nosuch/" no such socket)
            path = os.fsdecode(value)
            problem = None
            if path == "-":
                problem = DASH_SOCKET
            elif os.path.isdir(path):
                problem = "not a socket (a directory)"
            elif not self.creates and not os.path.exists(path):
                problem = socket_problem(path)  # (missing, a file on the way, a link to nothing)
            if problem is not None:
                raise PathRefused(path_message(path, param_name(param), problem))
            if not names_directory(path):
                return self.coerce_path_result(path)
        return super().convert(value, param, ctx)


def socket_problem(path: str | os.PathLike[str], *, creates: bool = False) -> str | None:
    """What is wrong with ``path`` as a unix socket (see :class:`SocketPath`):
    ``None`` for a socket, or a missing path the command creates."""
    text = os.fspath(path)
    if text == "-":
        return DASH_SOCKET
    try:
        st = os.stat(text)
    except FileNotFoundError:
        if os.path.lexists(text):
            return "no such socket (a symbolic link to nothing)"
        return None if creates else "no such socket"
    except OSError as e:
        return f"cannot reach it: {e.strerror or e}"
    except ValueError as e:  # (an embedded NUL byte)
        return f"cannot reach it: {e}"
    if stat.S_ISSOCK(st.st_mode):
        return None
    kind = "a directory" if stat.S_ISDIR(st.st_mode) else _kind(st.st_mode)
    return f"not a socket ({kind})"


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "a special file"


#: the largest number of seconds an option takes (11.6 days): a wait the
#: system is asked for in milliseconds as a C int (epoll, select) overflows
#: past 24.8 days, so a larger one would be a crash, not a longer wait
MOST_SECONDS = 1_000_000.0


class Seconds(click.FloatRange):
    """A number of seconds (``--time-limit``, ``--read-timeout``,
    ``--resync``, ``--search-time``): one type for every command's seconds.
    ``FloatRange`` lets ``nan`` through (it compares false with both
    bounds) and takes ``inf`` and ``1e400`` (read as ``inf``); none is a
    number of seconds: refused when the command line is read (one line,
    exit 2), before the command does anything. At most
    :data:`MOST_SECONDS`.

    The spelling taken is a plain decimal number (:data:`SECONDS_SYNTAX`:
    ``10``, ``0.5``, ``.5``, ``5.``, ``1e3``, a sign): what Go's
    ``strconv.ParseFloat`` reads in base 10, without its hexadecimal form,
    ``Inf`` and ``NaN``. Python's ``float`` would also take ``1_0`` (as 10),
    spaces around the number and digits of other scripts; every spelling
    not taken is said one way, ``X is not a number of seconds``, as ``inf``
    and ``1e400`` are."""

    name = "seconds"

    def __init__(self, min: float) -> None:
        super().__init__(min=min, max=MOST_SECONDS)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and SECONDS_SYNTAX.fullmatch(value) is None:
            plain = value.isprintable() and value != "" and not any(c.isspace() for c in value)
            self.fail(f"{value if plain else repr(value)} is not a number of seconds", param, ctx)
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a number of seconds", param, ctx)
        return super().convert(number, param, ctx)


#: how a number of seconds is spelled (:class:`Seconds`): ASCII digits, an
#: optional sign, fraction and exponent; no ``_``, no spaces
SECONDS_SYNTAX = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


#: the words for an empty file name, wherever one is given
EMPTY_NAME = "'': no such file or directory"

#: a file argument: a path, or ``-`` for standard input (not checked for
#: existence here: the inputs layer reads it and names the problem)
FILE = NamedPath(dir_okay=True, allow_dash=True)

#: a file an option reads (``--node``, ``--kubelet-config``, ``--pods``): a
#: path, or ``-`` for standard input; a directory there is refused as the
#: command line is read, ``DIR: OPTION: cannot read: Is a directory``, the
#: one wording of every option naming a file (``--kubeconfig`` too)
READ_FILE = NamedPath(dir_okay=False, allow_dash=True)


def file_argument(name: str, **kwargs: Any) -> Callable[[F], F]:
    """A positional file argument accepting ``-``."""
    return click.argument(name, type=FILE, **kwargs)


class OutputFormat(click.Choice):  # type: ignore[type-arg]
    """The choice of an ``-o/--output`` option, also given as ``-o=FORMAT``.

    kubectl (pflag) reads ``-o=json`` as ``-o json``; click's parser hands
    the short option everything after the letter, ``=json``, and a plain
    :class:`click.Choice` refused it (while ``-ojson`` and
    ``--output=json`` were read). The parser does not say which form the
    value came in, so one leading ``=`` is dropped here when what follows
    is one of the choices; any other value (``=bogus``, ``==json``) is
    refused as before, naming the value as given.

    ``-o table`` and ``-o wide`` are every command's (the one grammar): a
    command without a wider table takes ``wide`` as its ``table``, and one
    whose view for people has another name (``advise``'s ``pods``, ``node
    discover``'s ``yaml``) takes both as that view."""

    def __init__(self, choices: Sequence[str], case_sensitive: bool = True) -> None:
        native = tuple(choices)
        people = "table" if "table" in native else native[0]
        self.aliases = {a: people for a in ("table", "wide") if a not in native}
        shown = list(native)
        at = shown.index(people) + 1
        for a in ("table", "wide"):
            if a in self.aliases:
                shown.insert(at, a)
                at += 1
        super().__init__(shown, case_sensitive)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("=") and value[1:] in self.choices:
            value = value[1:]
        got = super().convert(value, param, ctx)
        return self.aliases.get(got, got)


def output_option(command: str, help: str) -> Callable[[F], F]:
    """``-o/--output``: the output format, one of ``command``'s formats
    (:data:`~podnuma.render.output.FORMATS`; the first is the default),
    ``-o=FORMAT`` read as kubectl reads it (:class:`OutputFormat`)."""
    choices = FORMATS[command]
    return click.option(
        "--output", "-o", type=OutputFormat(choices), default=choices[0], show_default=True,
        help=help,
    )


def read_input(path: str | None, what: str) -> Callable[[], TextInput] | None:
    """The file argument ``path`` (``-``: standard input) as an input read
    when the service needs it, or ``None`` when the option was not given."""
    if path is None:
        return None
    from podnuma.inputs.text import TextInput

    given = path
    return lambda: TextInput.read(given, what=what)


checkpoint_option = click.option(
    "--checkpoint-dir",
    type=NamedPath(path_type=Path, file_okay=False),
    default=None,
    help="Write cpu_manager_state and memory_manager_state there (created if needed).",
)

node_option = click.option(
    "--node",
    "node_file",
    type=READ_FILE,
    default=None,
    help="The node: a file with a scenario 'node' mapping (any machine form) or a scenario file "
    "('-': standard input). Default: a built-in 2-socket node (32 CPUs, 2 NUMA nodes).",
)

config_option = click.option(
    "--kubelet-config",
    "config_file",
    type=READ_FILE,
    default=None,
    help="A KubeletConfiguration file or a scenario file (its kubeletConfig, or the file its kubeletConfigFile names); '-': standard "
    "input. Default: static CPU / Static memory / restricted / scope pod.",
)


set_option = click.option(
    "--set",
    "set_values",
    multiple=True,
    metavar="PATH=VALUE",
    help="Override a kubelet configuration field by its KubeletConfiguration JSON path "
    "(cpuManagerPolicy=static, cpuManagerPolicyOptions.full-pcpus-only=true, "
    "reservedSystemCPUs=0-1, featureGates.PodLevelResourceManagers=true); the value is read "
    "as YAML, as the configuration file reads it; repeatable, applied in order on top of the "
    "configuration given.",
)


def dash_is_stdout(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """The callback of an option naming the file written instead of
    standard output (``--output-file``): ``-`` is standard output
    (kubectl's habit), as if the option were not given."""
    return None if value is not None and str(value) == "-" else value


def dash_refused(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """The callback of an option naming a file written beside the
    command's output (``--as-scenario``): ``-`` would be standard output,
    which the output takes: refused (one line, exit 2), never a file named
    ``-``."""
    if value is not None and str(value) == "-":
        raise click.BadParameter("'-' would be standard output, which carries the command's "
                                 "output: name a file")
    return value


as_scenario_option = click.option(
    "--as-scenario",
    "as_scenario",
    type=NamedPath(path_type=Path, dir_okay=False, writes=True),
    default=None,
    metavar="FILE",
    callback=dash_refused,
    help="Also write the scenario as it ran to FILE: the kubelet configuration with every "
    "--set applied, inline, so that podnuma simulate and the kubelet oracle replay it.",
)


def write_scenario_file(path: Path, scenario: Mapping[str, Any], overrides: Sequence[object] = ()) -> None:
    """Write a scenario document (``--as-scenario``) atomically, mode 0644:
    JSON for a ``.json`` name (as ``advise`` and ``restart`` write theirs),
    else YAML with a comment naming the ``--set`` overrides it carries. The
    YAML is PyYAML's safe dump through podnuma's one YAML writer
    (:func:`~podnuma.render.yaml_text.dump_safe_yaml`), which quotes every
    string the scenario reader would otherwise take for a number, a
    boolean or a null (a pod named ``1e3``): the file replays as it ran."""
    from podnuma.fileio import atomic_write

    if str(path).lower().endswith(".json"):
        from podnuma.render.serialize import dump_scenario_json

        text = dump_scenario_json(dict(scenario))
    else:
        from podnuma.render.yaml_text import dump_safe_yaml

        head = ""
        if overrides:
            head = "# kubeletConfig with --set " + " --set ".join(str(o) for o in overrides) + "\n"
        text = head + dump_safe_yaml(dict(scenario))
    try:
        atomic_write(path, text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise cannot_write("--as-scenario", path, e) from None


def echo(text: str) -> None:
    """Write ``text`` (already complete) to standard output, as is: colour
    codes are in it only when colour was wanted (a terminal, or
    ``FORCE_COLOR``), so click must not strip them."""
    click.echo(text, nl=False, color=True)


def echo_bytes(data: bytes) -> None:
    """Write bytes (a PNG) to standard output (nothing when it was closed
    when the command started)."""
    if sys.stdout is None:
        return
    stream = sys.stdout.buffer
    stream.write(data)
    stream.flush()


def note(message: str) -> None:
    """A note on standard error (not with ``--quiet``); a warning (a message
    starting ``warning: ``) always."""
    if message.startswith("warning: "):
        click.echo(one_line(message), err=True)
    elif not is_quiet():
        click.echo(f"note: {one_line(message)}", err=True)


def note_not_modelled(config: KubeletConfig, file: str, prefix: str = "kubeletConfig.") -> None:
    """The configuration's warnings and notes (see ``not_modelled_notes``)."""
    from podnuma.service.messages import not_modelled_notes

    for line in not_modelled_notes(config, file, prefix):
        note(line)


@contextlib.contextmanager
def progress_bar(what: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on standard error for long work: ``advance(done,
    total)`` (:mod:`podnuma.cli.progress`: on a terminal, not with
    ``--quiet``, once the work has run half a second)."""
    from podnuma.cli.progress import bar

    with bar(what, quiet=is_quiet()) as b:
        yield b.update


def stdin_used_once(*paths: str | Path | None) -> None:
    """Standard input can be read once: two ``-`` arguments are a usage error."""
    if sum(1 for p in paths if p is not None and str(p) == "-") > 1:
        raise click.UsageError(STDIN_TWICE)
