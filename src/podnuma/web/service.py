"""The web API's jobs: each request's content, as text, through the
service layer (:mod:`podnuma.service`), to the document the matching
command prints with ``-o json``.

These functions run in the job processes (:mod:`podnuma.web.worker`),
which may open no file: a request's content is a
:class:`~podnuma.inputs.text.TextInput` without a base directory, so every
field naming a file (``kubeletConfigFile``, ``state.*File``,
``node.machineInfoFile``, ``node.sysfs``) is refused at that field before
anything is loaded. Errors are the CLI's (:func:`error_message`). The
warnings and notes the command prints on standard error (a kubelet
configuration decoded only leniently, a field not modelled, an object
skipped) are the answer's ``warnings``: the lines as the command prints
them, in its order; the key is there only when there is one.

Every module the jobs need is imported when this module is (the worker's
fork server preloads it): nothing may be left to import lazily in them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import podnuma
from podnuma.analysis.restart import restart_document
from podnuma.inputs.overrides import request_overrides
from podnuma.inputs.text import TextInput
from podnuma.inputs.text import request_name as safe_name
from podnuma.render.picture import render_svg
from podnuma.service import explain as explain_service
from podnuma.service import fleet, scenario, whatif
from podnuma.service.messages import error_message, shown_note
from podnuma.service.restart import restart_after_scenario
from podnuma.web.answers import Drawn

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
]

SVG_MEDIA_TYPE = "image/svg+xml"

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


class _Notes:
    """What a job's service call notes, as the command prints it
    (:func:`shown_note`): :meth:`answer` adds it to the answer."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, message: str) -> None:
        self.lines.append(shown_note(message))

    def answer(self, doc: dict[str, Any]) -> dict[str, Any]:
        """``doc`` with ``warnings`` (the lines noted), when there is one."""
        if self.lines:
            doc["warnings"] = list(self.lines)
        return doc


def simulate(
    text: str, name: str, detail: bool = False, set_values: Sequence[str] = ()
) -> dict[str, Any]:
    """``/api/simulate``: ``podnuma simulate -o json [--detail] [--set ...]``."""
    notes = _Notes()
    return notes.answer(scenario.simulate(
        TextInput(text, name), detail=detail, overrides=request_overrides(list(set_values)),
        note=notes,
    ))


def explain(
    text: str, name: str, step: int | None, pod: str | None, search: bool,
    set_values: Sequence[str] = (),
) -> dict[str, Any]:
    """``/api/explain``: ``podnuma explain -o json [--step N] [--pod REF] [--no-search] [--set ...]``."""
    notes = _Notes()
    return notes.answer(dict(explain_service.explain(
        TextInput(text, name), step=step, pod=pod, search=search,
        overrides=request_overrides(list(set_values)), note=notes,
    ).document))


def topology_svg(text: str, name: str, step: int | None, set_values: Sequence[str] = ()) -> Drawn:
    """``/api/topology?format=svg``: ``podnuma topology -o svg [--step N]
    [--set ...]``, with the warnings it prints (sent as ``Warning``
    headers: an SVG has no ``warnings`` key)."""
    notes = _Notes()
    topo = scenario.topology(
        TextInput(text, name), step=step, overrides=request_overrides(list(set_values)), note=notes,
    )
    return Drawn(render_svg(topo.run.machine, topo.ownership), SVG_MEDIA_TYPE, tuple(notes.lines))


def topology_owners(
    text: str, name: str, step: int | None, set_values: Sequence[str] = ()
) -> dict[str, Any]:
    """``/api/topology?format=json``: ``podnuma topology -o json`` and the
    colours the page draws with."""
    notes = _Notes()
    return notes.answer(scenario.topology_owners(
        TextInput(text, name), step=step, overrides=request_overrides(list(set_values)), note=notes,
    ))


def restart(text: str, name: str, set_values: Sequence[str] = ()) -> dict[str, Any]:
    """``/api/restart``: ``podnuma restart -o json [--set ...]`` on a
    scenario, with the restart scenario that replays it (``scenario``, as
    ``--as-scenario`` writes it)."""
    notes = _Notes()
    report = restart_after_scenario(
        TextInput(text, name), overrides=request_overrides(list(set_values)), note=notes
    )
    return notes.answer({**restart_document(report), "scenario": report.scenario})


def whatif_request(req: Mapping[str, Any], advise_it: bool) -> dict[str, Any]:
    """``/api/compare`` and ``/api/advise``."""
    notes = _Notes()
    return notes.answer(whatif.whatif_request(req, advise_it, note=notes))


def fleet_html(text: str, name: str) -> str:
    """``/api/fleet/html``: a ``FleetReport`` document drawn as HTML."""
    return fleet.report_html_of_document(TextInput(text, name))


def fleet_write_dump(files: Mapping[str, str], root: str, check: Callable[[], None] | None = None) -> None:
    """``/api/fleet/analyze``, in the server: the dump's files laid out under
    ``root``, a directory made for them here (mode 0700; one already there is
    refused: a fault of the server's, not of the request), names checked
    before any is written, nothing parsed
    (:func:`podnuma.service.fleet.write_dump`), for its job to read;
    ``check`` before each directory and file (the request's deadline)."""
    Path(root).mkdir(mode=0o700)
    fleet.write_dump(files, Path(root), check)


def fleet_analyze_html(
    files: Mapping[str, str], what_ifs: list[str], root: str,
    set_values: list[str] | str | None = None,
) -> str:
    """``/api/fleet/analyze``, in a job that may read only beneath ``root``:
    the dump analysed as ``podnuma fleet analyze DIR -o html [--set ...]``
    does, drill-down pictures included."""
    return fleet.analyze_written_dump(files, Path(root), what_ifs, request_overrides(set_values))
