"""What each command costs to start: the child's CPU time of a tiny run.

Runs the real command line in a child process, as the console script does
(``from podnuma.cli import run``), on inputs so small that the run is
almost all start-up: ``simulate`` of a one-step scenario (the node of
``bench_scaling.py``), ``explain`` of it, ``fleet analyze`` of a 2-node
fleet, ``demo``, ``--version``; and, for scale, the interpreter alone
(``python -c pass``), ``import click``, and ``simulate`` and ``fleet
analyze`` run by click alone (the console script runs both without click:
``podnuma.cli.fast``). Each command runs ``--repeat``
times per variant, the variants taking turns, and the table gives the
least and the median CPU time (user + system of the child: the figure to
compare on a shared, loaded machine) and the number of modules the
command imported (``python -X importtime``). At N steps, ``simulate``'s
start-up is (start-up / N) of every step's budget.

``--variant LABEL=PYTHON[:SRC]`` (repeatable), as in ``bench_scaling.py``:
another interpreter (another install: a compiled build, an older one) and,
given ``SRC``, ``PYTHONPATH=SRC`` (a checkout's ``src/``); the last column
is each variant's least CPU time as a ratio to the first variant's.
Without it, one variant: this interpreter. A variant without ``SRC``
inherits ``PYTHONPATH``: unset it when comparing installs.

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` is
removed from their environment) after one unmeasured run of each command,
as an installed package runs: without the cache every run compiles every
module it imports again, which costs more than the rest of the start-up.

A benchmark, not a test.

    python bench/bench_startup.py [--repeat 7] [--commands NAME,...]
        [--variant LABEL=PYTHON[:SRC] ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scaling import scenario  # noqa: E402

#: the console script's body (``main`` for a podnuma older than ``run``)
RUN = (
    "import sys\n"
    "try:\n    from podnuma.cli import run\n"
    "except ImportError:\n    from podnuma.cli import main\n    run = lambda: sys.exit(main())\n"
    "run()"
)
#: the same command line run by click alone (without the console script's
#: fast path, ``podnuma.cli.fast``): what the fast path saves
RUN_CLICK = "import sys; from podnuma.cli.app import main; sys.exit(main())"


def commands(tmp: Path) -> dict[str, list[str]]:
    """Each measured command (name -> the child's arguments after ``python``)."""
    s1 = str(tmp / "s1.json")
    fleet = str(tmp / "fleet")

    def podnuma(*args: str) -> list[str]:
        return ["-c", RUN, *args]

    return {
        "python -c pass": ["-c", "pass"],
        "import click": ["-c", "import click"],
        "--version": podnuma("--version"),
        "simulate -o json": podnuma("simulate", s1, "-o", "json"),
        "simulate (table)": podnuma("simulate", s1),
        "explain -o json": podnuma("explain", s1, "--no-search", "-o", "json"),
        "explain (text)": podnuma("explain", s1, "--no-search"),
        "demo -o json": podnuma("demo", "-o", "json"),
        "demo (table)": podnuma("demo"),
        "fleet analyze -o json": podnuma("fleet", "analyze", fleet, "-o", "json"),
        # the form a distributed run or a bench takes (one process here)
        "fleet analyze --output-file": podnuma("fleet", "analyze", fleet, "-o", "json", "--workers", "1",
                                               "--output-file", str(tmp / "report.json")),
        "simulate -o json (click)": ["-c", RUN_CLICK, "simulate", s1, "-o", "json"],
        "fleet analyze (click)": ["-c", RUN_CLICK, "fleet", "analyze", fleet, "-o", "json"],
    }


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src:
        env["PYTHONPATH"] = src
    return env


def cpu_of(python: str, args: list[str], env: dict[str, str], cwd: Path) -> float:
    """The child's user + system CPU seconds; fails on a non-zero exit."""
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen([python, *args], stdout=null, stderr=subprocess.PIPE, env=env,
                                cwd=cwd)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{python} {' '.join(args)}: exit {proc.returncode}: "
                         f"{err.decode(errors='replace')[-500:]}")
    return usage.ru_utime + usage.ru_stime


def modules_of(python: str, args: list[str], env: dict[str, str], cwd: Path) -> int:
    """How many modules the command imported (``-X importtime`` lines)."""
    proc = subprocess.run([python, "-X", "importtime", *args], capture_output=True, env=env,
                          cwd=cwd, check=True)
    lines = proc.stderr.decode(errors="replace").splitlines()
    return sum(1 for line in lines if line.startswith("import time:") and "self [us]" not in line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs of each command per variant")
    ap.add_argument("--commands", default="", help="only these (comma-separated names)")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHON[:SRC]")
    args = ap.parse_args()
    variants: list[tuple[str, str, str | None]] = []
    for v in args.variant:
        label, _, rest = v.partition("=")
        python, _, src = rest.partition(":")
        variants.append((label, python or sys.executable, src or None))
    if not variants:
        variants = [("this", sys.executable, None)]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as name:
        tmp = Path(name)
        (tmp / "s1.json").write_text(json.dumps(scenario(1, {
            "cpuManagerPolicy": "static", "reservedSystemCPUs": "0,128",
            "topologyManagerPolicy": "none",
        })))
        _, python, src = variants[0]
        subprocess.run([python, "-c", RUN, "fleet", "generate", "--nodes", "2",
                        "--pods-per-node", "5", "--output-dir", str(tmp / "fleet")],
                       env=_env(src), check=True, capture_output=True)
        table = commands(tmp)
        wanted = [c.strip() for c in args.commands.split(",") if c.strip()]
        if wanted:
            unknown = sorted(set(wanted) - set(table))
            if unknown:
                raise SystemExit(f"unknown commands {unknown}; known: {sorted(table)}")
            table = {k: v for k, v in table.items() if k in wanted}
        print(f"start-up: CPU ms of the child (user + system), least and median of "
              f"{args.repeat} runs; load average {os.getloadavg()[0]:.1f}")
        print(f"{'command':<24} {'variant':<14} {'least':>7} {'median':>7} {'modules':>8} "
              f"{'vs first':>9}")
        for cmd, cargs in table.items():
            times: dict[str, list[float]] = {label: [] for label, _, _ in variants}
            for _label, python, src in variants:  # one unmeasured run: bytecode caches
                cpu_of(python, cargs, _env(src), tmp)
            for _ in range(args.repeat):  # the variants take turns
                for label, python, src in variants:
                    times[label].append(cpu_of(python, cargs, _env(src), tmp))
            first: float | None = None
            for label, python, src in variants:
                least = min(times[label])
                first = least if first is None else first
                mods = modules_of(python, cargs, _env(src), tmp)
                ratio = f"{least / first:>8.2f}x" if first else ""
                print(f"{cmd:<24} {label:<14} {least * 1e3:>7.0f} "
                      f"{statistics.median(times[label]) * 1e3:>7.0f} {mods:>8} {ratio:>9}",
                      flush=True)


if __name__ == "__main__":
    main()
