"""The web API's jobs: each request's content, as text, through the
service layer (:mod:`podnuma.service`), to the document the matching
command prints with ``-o json``.

These functions run in the job processes (:mod:`podnuma.web.worker`),
which may open no file: a request's content is a
:class:`~podnuma.inputs.text.TextInput` without a base directory, so every
field naming a file (``kubeletConfigFile``, ``state.*File``,
``node.machineInfoFile``, ``node.sysfs``) is refused at that field before
anything is loaded. Errors are the CLI's (:func:`error_message`).

Every module the jobs need is imported when this module is (the worker's
fork server preloads it): nothing may be left to import lazily in them.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import podnuma
from podnuma.analysis.restart import restart_document
from podnuma.errors import InputError
from podnuma.inputs.overrides import request_overrides
from podnuma.inputs.text import TextInput
from podnuma.inputs.text import request_name as safe_name
from podnuma.render.picture import render_svg
from podnuma.service import fleet, scenario, whatif
from podnuma.service.messages import error_message
from podnuma.service.restart import restart_after_scenario

__all__ = [
    "error_message",
    "safe_name",
    "simulate",
    "explain",
    "topology_svg",
    "topology_owners",
    "whatif_request",
    "restart",
    "fleet_html",
    "fleet_analyze_html",
    "fleet_write_dump",
    "check_dump",
    "shown_name",
]

#: The packages the jobs run (the engine and the layers between it and the
#: web door), imported whole when this module is: the job processes may not
#: open files, so nothing may be left to import lazily in them.
PRELOAD = (
    "podnuma.api", "podnuma.machine", "podnuma.cm", "podnuma.scenario", "podnuma.render",
    "podnuma.units", "podnuma.analysis", "podnuma.inputs", "podnuma.golang", "podnuma.service",
    "podnuma.errors", "podnuma.fileio",
)


def _preload() -> None:
    for info in pkgutil.walk_packages(podnuma.__path__, "podnuma."):
        if info.name.startswith(PRELOAD):
            importlib.import_module(info.name)


_preload()


def simulate(
    text: str, name: str, detail: bool = False, set_values: Sequence[str] = ()
) -> dict[str, Any]:
    """``/api/simulate``: ``podnuma simulate -o json [--detail] [--set ...]``."""
    return scenario.simulate(
        TextInput(text, name), detail=detail, overrides=request_overrides(list(set_values))
    )


def explain(
    text: str, name: str, step: int | None, pod: str | None, search: bool,
    set_values: Sequence[str] = (),
) -> dict[str, Any]:
    """``/api/explain``: ``podnuma explain -o json [--step N] [--pod REF] [--no-search] [--set ...]``."""
    return scenario.explain(
        TextInput(text, name), step=step, pod=pod, search=search,
        overrides=request_overrides(list(set_values)),
    ).document


def topology_svg(text: str, name: str, step: int | None, set_values: Sequence[str] = ()) -> str:
    """``/api/topology?format=svg``: ``podnuma topology -o svg [--step N] [--set ...]``."""
    topo = scenario.topology(
        TextInput(text, name), step=step, overrides=request_overrides(list(set_values))
    )
    return render_svg(topo.run.machine, topo.ownership)


def topology_owners(
    text: str, name: str, step: int | None, set_values: Sequence[str] = ()
) -> dict[str, Any]:
    """``/api/topology?format=json``: ``podnuma topology -o json`` and the
    colours the page draws with."""
    return scenario.topology_owners(
        TextInput(text, name), step=step, overrides=request_overrides(list(set_values))
    )


def restart(text: str, name: str, set_values: Sequence[str] = ()) -> dict[str, Any]:
    """``/api/restart``: ``podnuma restart -o json [--set ...]`` on a
    scenario, with the restart scenario that replays it (``scenario``, as
    ``--as-scenario`` writes it)."""
    report = restart_after_scenario(TextInput(text, name), overrides=request_overrides(list(set_values)))
    return {**restart_document(report), "scenario": report.scenario}


def whatif_request(req: Mapping[str, Any], advise_it: bool) -> dict[str, Any]:
    """``/api/compare`` and ``/api/advise``."""
    return whatif.whatif_request(req, advise_it)


def fleet_html(text: str, name: str) -> str:
    """``/api/fleet/html``: a ``FleetReport`` document drawn as HTML."""
    return fleet.report_html_of_document(TextInput(text, name))


#: The bounds on the file names of a dump sent to ``/api/fleet/analyze``,
#: so that every name can be laid out beneath the server's temporary
#: directory on any file system: a part (directory or file name) of at most
#: 255 bytes (``NAME_MAX``), a whole name of at most 1024 bytes and 16 parts
#: (a dump's names are ``nodes.json``, ``configz/NODE.json`` and the like).
MAX_DUMP_PART = 255
MAX_DUMP_NAME = 1024
MAX_DUMP_DEPTH = 16
#: a plain part of a dump's file name (as :func:`podnuma.service.fleet.write_dump`
#: has it, matched whole: no line break at the end)
_DUMP_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DUMP_SUFFIXES = (".json", ".yaml", ".yml")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: the most characters of a file name an error message shows
_SHOWN = 100


def shown_name(name: str, limit: int = _SHOWN) -> str:
    """A request's file name as an error message shows it: characters that
    do not print (a line break, a lone surrogate, which has no UTF-8) as
    Python escapes them, and a name longer than ``limit`` characters cut
    short, with its length."""
    head = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        for ch in name[: limit + 1]
    )
    if len(name) <= limit and len(head) <= limit:
        return head
    return f"{head[: limit - 30]}... ({len(name)} characters)"


def check_dump(files: Mapping[str, str]) -> None:
    """Refuse, before anything is written, a dump whose files cannot all be
    laid out as given: a name that is not a plain relative name of a data
    file, a part longer than :data:`MAX_DUMP_PART` bytes, a name longer
    than :data:`MAX_DUMP_NAME` bytes or of more than :data:`MAX_DUMP_DEPTH`
    parts, two names of the same file, a name both a file and a directory
    (``a.json`` and ``a.json/b.json``), text that has no UTF-8 (a lone
    surrogate, from a ``"\\udc80"`` escape of the JSON body).
    ``InputError`` naming the file (:func:`shown_name`)."""
    as_files: dict[tuple[str, ...], str] = {}
    as_dirs: dict[tuple[str, ...], str] = {}
    for name, text in files.items():
        shown = shown_name(name)
        parts = tuple(name.replace("\\", "/").split("/"))
        if not all(_DUMP_PART.fullmatch(p) for p in parts) or not parts[-1].lower().endswith(
            _DUMP_SUFFIXES
        ):
            raise InputError("not a plain relative name of a .json, .yaml or .yml file", file=shown)
        # (plain parts are ASCII: a character is a byte)
        longest = max(len(p) for p in parts)
        if longest > MAX_DUMP_PART:
            raise InputError(f"a part of the name is {longest} bytes long, more than the limit of "
                             f"{MAX_DUMP_PART} bytes", file=shown)
        if len(name) > MAX_DUMP_NAME:
            raise InputError(f"the name is {len(name)} bytes long, more than the limit of "
                             f"{MAX_DUMP_NAME} bytes", file=shown)
        if len(parts) > MAX_DUMP_DEPTH:
            raise InputError(f"the name has {len(parts)} parts, more than the limit of "
                             f"{MAX_DUMP_DEPTH} (directories and the file)", file=shown)
        lone = _LONE_SURROGATE.search(text)
        if lone is not None:
            raise InputError(f"not Unicode text: a lone surrogate at character {lone.start()}",
                             file=shown)
        if parts in as_files:
            raise InputError(f"the same file as {shown_name(as_files[parts])}", file=shown)
        if parts in as_dirs:
            raise InputError(f"both a file and a directory: {shown_name(as_dirs[parts])} is "
                             "given too", file=shown)
        for i in range(1, len(parts)):
            if parts[:i] in as_files:
                raise InputError(f"{'/'.join(parts[:i])} is both a file and a directory: "
                                 f"{shown_name(as_files[parts[:i]])} is given too", file=shown)
        as_files[parts] = name
        for i in range(1, len(parts)):
            as_dirs.setdefault(parts[:i], name)


def fleet_write_dump(files: Mapping[str, str], root: str) -> None:
    """``/api/fleet/analyze``, in the server: the dump's files laid out under
    ``root`` (names checked, :func:`check_dump`; nothing parsed) for its job
    to read. ``InputError`` naming the file when one cannot be written."""
    if not files:
        fleet.write_dump(files, Path(root))  # its message: give the files
    check_dump(files)
    for name, text in files.items():
        try:
            fleet.write_dump({name: text}, Path(root))
        except (OSError, UnicodeError, RecursionError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
            raise InputError(f"cannot be laid out in the server's temporary directory: {why}",
                             file=shown_name(name)) from None


def fleet_analyze_html(
    files: Mapping[str, str], what_ifs: list[str], root: str,
    set_values: list[str] | str | None = None,
) -> str:
    """``/api/fleet/analyze``, in a job that may read only beneath ``root``:
    the dump analysed as ``podnuma fleet analyze DIR -o html [--set ...]``
    does, drill-down pictures included."""
    return fleet.analyze_written_dump(files, Path(root), what_ifs, request_overrides(set_values))
