"""Imported by the web jobs' fork server where the fleet extra is installed:
plotly is drawn with once (:func:`podnuma.render.fleet_html.warm_up`) so the
fleet jobs, which may open no file but their request's own, draw reports
without importing or reading anything. Without plotly this module's import
fails and the fork server goes on without it (the fleet endpoints then
answer that the extra is missing)."""

from __future__ import annotations

import contextlib
import importlib
import pkgutil

import podnuma.fleet
from podnuma.render.fleet_html import warm_up  # ImportError without the fleet extra

# the fleet's modules a job runs (those needing another extra, e.g. the
# Kubernetes client or Dask, are not: a job never reads a live cluster)
for _info in pkgutil.walk_packages(podnuma.fleet.__path__, "podnuma.fleet."):
    with contextlib.suppress(ImportError):
        importlib.import_module(_info.name)

# Any other failure must not stop the fork server (and with it every job):
# a fleet job then reports its own error.
with contextlib.suppress(Exception):
    warm_up()
