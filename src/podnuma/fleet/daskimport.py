"""Importing Dask (``distributed``) for less CPU.

A ``--dask`` run imports ``distributed`` once, in the Dask client process
(:mod:`podnuma.fleet.daskproc`), and until that import is done no worker
can take a task: it is on the run's critical path. Two parts of it do work
that does not need doing:

* The cyclic garbage collector runs dozens of passes over the objects the
  import creates (classes, functions, module dictionaries; no cycle among
  them is garbage). It is off during the import, and in the client process
  those objects are then moved out of its reach (:func:`gc.freeze`), so the
  later passes there, and in the local workers forked from it, skip them.
* Dask and ``distributed`` read their settings files (``dask.yaml``,
  ``distributed.yaml`` and the user's) with ``yaml.safe_load``, PyYAML's
  pure-Python loader. During the import it reads with libyaml's
  ``CSafeLoader`` (the same safe schema, the same values), where PyYAML was
  built with it.

Measured: the import about 0.03 CPU s cheaper for each (0.28 to 0.22 CPU s
with numpy and PyYAML already imported; docs/speed.md).
"""

from __future__ import annotations

import gc
import sys
from typing import Any

__all__ = ["import_dask"]


def import_dask(*, freeze: bool = False) -> None:
    """``distributed`` (and ``dask``) imported, as cheaply as can be.
    ``freeze``: the objects alive afterwards are left out of the garbage
    collector's passes for good (:func:`gc.freeze`): only in a process
    that lives for one run, such as the Dask client process."""
    if "distributed" not in sys.modules:
        import yaml

        paused = gc.isenabled()
        loader: Any = getattr(yaml, "CSafeLoader", None)
        plain = yaml.safe_load

        def safe_load(stream: Any) -> Any:
            return yaml.load(stream, Loader=loader)  # noqa: S506 - libyaml's safe loader

        if paused:
            gc.disable()
        if loader is not None:
            yaml.safe_load = safe_load
        try:
            import distributed  # noqa: F401
        finally:
            yaml.safe_load = plain
            if paused:
                gc.enable()
    if freeze:
        gc.freeze()
