"""Fleet what-if (``podnuma fleet``): a cluster's running pods replayed per node.

Inputs (``inputs.py``, ``live.py``), the per-node replay and its what-ifs
(``replay.py``, ``whatif.py``), execution backends (``execute.py``: one
process, local processes, Dask), the fleet-wide report data (``report.py``)
and synthetic fleets (``generate.py``). No click, no printing: the command
is ``podnuma.cli.fleet``.
"""

#: the most local worker processes a command starts (``--workers N``,
#: ``--dask local:N``): more than any machine's cores would only load it
MAX_LOCAL_WORKERS = 512
