"""Importing Dask (``distributed``) for less CPU.

A ``--dask`` run imports ``distributed`` once, in the Dask client process
(:mod:`podnuma.fleet.daskproc`), and until that import is done no worker
can take a task: it is on the run's critical path. Three parts of it do work
that does not need doing:

* The cyclic garbage collector runs dozens of passes over the objects the
  import creates (classes, functions, module dictionaries; no cycle among
  them is garbage). It is off during the import, and in the client process
  those objects are then moved out of its reach (:func:`gc.freeze`), so the
  later passes there, and in the local workers forked from it, skip them.
* ``distributed`` imports numpy when it is installed (for the buffers of
  the messages it receives; else it uses ``bytearray``), about 0.09 CPU s;
  the command's processes send bytes, never arrays: the client process
  imports Dask without it (the engine imports numpy where it needs it, for
  the hint merge of machines with many NUMA nodes). Dask imports Jinja2
  when it is installed, for the HTML its objects show in a notebook (else
  asking for that HTML raises ``ImportError``), about 0.01 CPU s: the
  client process and its workers show none.
* Dask and ``distributed`` read their settings files (``dask.yaml``,
  ``distributed.yaml`` and the user's) with ``yaml.safe_load``, PyYAML's
  pure-Python loader. During the import they are read through podnuma's
  bounded reader instead (:func:`read_settings`: at most the size limit
  read, then :func:`~podnuma.inputs.documents.load_safe_yaml`: composed
  once, by libyaml's parser where PyYAML has it, size, depth, nodes and
  aliases checked, the values built by PyYAML's safe resolver and
  constructor: the same safe schema, the same values).

Measured (docs/speed.md): 0.34 CPU s with Dask's way (numpy included),
0.27-0.29 CPU s this way.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

__all__ = ["import_dask"]


#: modules Dask imports when they are there, and does without (``numpy``:
#: ``distributed`` allocates the buffers of the messages it receives with
#: it, else with ``bytearray``; the fleet's tasks send bytes, not arrays.
#: ``jinja2``: ``dask.widgets`` renders the notebook HTML of clients,
#: clusters and futures with it, else that HTML raises ``ImportError``)
OPTIONAL = ("numpy", "jinja2")


def read_settings(stream: Any) -> Any:
    """``yaml.safe_load(stream)`` for Dask's settings files, through the
    bounded reader: a text (``dask.config`` passes one) or a file (the
    defaults files), of which no more than the size limit is read (one
    character more, for the reader to refuse)."""
    from podnuma.errors import InputError
    from podnuma.inputs.documents import load_safe_yaml
    from podnuma.inputs.limits import DEFAULT_LIMITS

    name = str(getattr(stream, "name", "a Dask settings file"))
    limit = DEFAULT_LIMITS.max_bytes
    text = stream if isinstance(stream, (str, bytes)) else stream.read(limit + 1)
    if isinstance(text, bytes):
        if len(text) > limit:  # (its characters may be fewer than its bytes)
            raise InputError(f"larger than the limit of {limit} bytes", file=name)
        text = text.decode("utf-8")
    return load_safe_yaml(text, name=name)


def import_dask(*, freeze: bool = False, lean: bool = False) -> None:
    """``distributed`` (and ``dask``) imported, as cheaply as can be.
    ``freeze``: the objects alive afterwards are left out of the garbage
    collector's passes for good (:func:`gc.freeze`); ``lean``: without
    the :data:`OPTIONAL` modules not imported yet (a later ``import``
    still finds them). Both only in a process that lives for one run and
    runs nothing else, such as the Dask client process and the workers it
    forks."""
    if "distributed" not in sys.modules:
        import yaml

        blocked = [m for m in OPTIONAL if m not in sys.modules] if lean else []
        for m in blocked:
            sys.modules[m] = None  # type: ignore[assignment]  # import raises ImportError

        paused = gc.isenabled()
        plain = yaml.safe_load
        if paused:
            gc.disable()
        yaml.safe_load = read_settings
        try:
            import distributed  # noqa: F401
        finally:
            yaml.safe_load = plain
            for m in blocked:
                if sys.modules.get(m, "") is None:
                    del sys.modules[m]
            if paused:
                gc.enable()
    if freeze:
        gc.freeze()
