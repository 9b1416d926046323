"""The ``podnuma`` process around a fast-path command (``podnuma.cli.process``):
the garbage collector held off while ``simulate`` loads, then frozen and
on again for the run; nothing changed in a process that is not podnuma's
own.

Each case that holds or freezes the collector runs in a fresh interpreter
(a frozen collector would keep this test process's objects for good).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from podnuma.cli import process
from tests.terminal import run_on_a_terminal

from ..scenario.helpers import base

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("_PODNUMA_COMPLETE", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=180, cwd=cwd, env=env)


#: runs ``simulate`` as the console script does (or, given ``shared``, as a
#: caller that is not podnuma's own process) and prints on standard error
#: the collector's state while the scenario loads (``service.stream``), as
#: the steps are written (``write_run_stream``) and at the end
PROBE = """
import gc, json, sys
from podnuma.cli import simulate_stream
from podnuma.service import scenario as service
seen = {}
stream, write = service.stream, simulate_stream.write_run_stream
def spy_stream(*a, **k):
    seen["loading"] = gc.isenabled()
    return stream(*a, **k)
def spy_write(*a, **k):
    seen["writing"] = [gc.isenabled(), gc.get_freeze_count() > 0]
    return write(*a, **k)
service.stream, simulate_stream.write_run_stream = spy_stream, spy_write
from podnuma.cli import main
code = main(sys.argv[2:], own_process=sys.argv[1] == "own")
seen["end"] = [gc.isenabled(), gc.get_freeze_count() > 0]
sys.stdout.flush()
sys.stderr.write("\\nPROBE " + json.dumps(seen) + "\\n")
sys.exit(code)
"""


def _simulate(tmp_path: Path, who: str, doc: object) -> tuple[str, int, dict[str, object]]:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    proc = _python(PROBE, who, "simulate", str(path), "-o", "json", cwd=tmp_path)
    err, _, probe = proc.stderr.rpartition("\nPROBE ")
    seen: dict[str, object] = json.loads(probe)
    return proc.stdout + err, proc.returncode, seen


def test_own_process_holds_the_collector_while_loading(tmp_path: Path) -> None:
    out, code, seen = _simulate(tmp_path, "own", base())
    assert code == 0 and json.loads(out)["steps"]
    # off while the scenario loads, frozen and on again for the steps
    assert seen == {"loading": False, "writing": [True, True], "end": [True, True]}


def test_a_shared_process_keeps_its_collector(tmp_path: Path) -> None:
    out, code, seen = _simulate(tmp_path, "shared", base())
    assert code == 0 and json.loads(out)["steps"]
    assert seen == {"loading": True, "writing": [True, False], "end": [True, False]}


def test_the_collector_is_on_again_after_a_refused_input(tmp_path: Path) -> None:
    doc = base()
    doc["kubeletConfig"]["cpuManagerPolicy"] = "no-such-policy"  # refused while loading
    out, code, seen = _simulate(tmp_path, "own", doc)
    assert code == 2 and out.startswith("error: ")
    assert seen == {"loading": False, "end": [True, False]}


def test_held_and_loaded(tmp_path: Path) -> None:
    code = """
import gc
from podnuma.cli import process
with process.held(True):
    off = not gc.isenabled()
    process.loaded()
    on = gc.isenabled()
    process.loaded()  # once only
print(off, on, gc.isenabled(), gc.get_freeze_count() > 0)
try:
    with process.held(True):
        raise ValueError
except ValueError:
    pass
print(gc.isenabled())
gc.disable()
with process.held(True):  # already off: left as it was
    pass
print(gc.isenabled())
"""
    proc = _python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "True", "True", "True", "False"]


def test_not_own_process_changes_nothing() -> None:
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    with process.held(False):
        assert gc.isenabled()
        process.loaded()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


#: the console script's entry (``podnuma.cli.run``), saying on standard
#: error (file descriptor 2, which outlives ``sys.stderr``) that the
#: functions registered with atexit ran, with whether the pods a fleet run
#: keeps are frozen in this process, and whether Python's finalization
#: ran (an object of ``__main__`` destroyed)
ENDING = """
import atexit, os, sys
def said():
    from podnuma.fleet import podscan
    os.write(2, b"\\nATEXIT freeze=%d\\n" % podscan._FREEZE[0])
atexit.register(said)
class Probe:
    def __del__(self):
        os.write(2, b"\\nFINALIZED\\n")
probe = Probe()
sys.argv = ["podnuma", *sys.argv[1:]]
from podnuma.cli import run
run()
"""


def test_a_fleet_report_written_ends_the_process_at_once(tmp_path: Path) -> None:
    """``fleet analyze`` whose report is written (standard output or
    ``--output-file``) and whose executor is closed, and ``simulate`` whose
    run is printed, end without Python's finalization, their output whole,
    once the functions registered with atexit have run (a library's
    clean-up); ``fleet analyze`` in its own process keeps its pods frozen
    out of the collector's passes. A failing command and a command that
    does not say so end as usual."""
    fleet = str(ROOT / "examples" / "fleet")
    proc = _python(ENDING, "fleet", "analyze", fleet, "-o", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "FleetReport"
    assert "FINALIZED" not in proc.stderr and "not replayed" in proc.stderr  # (its warnings flushed)
    assert "ATEXIT freeze=1" in proc.stderr

    out = tmp_path / "report.json"
    proc = _python(ENDING, "fleet", "analyze", fleet, "-o", "json", "--output-file", str(out),
                   "--workers", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["kind"] == "FleetReport" and proc.stdout == ""
    assert "FINALIZED" not in proc.stderr and "ATEXIT" in proc.stderr

    proc = _python(ENDING, "fleet", "analyze", str(tmp_path / "missing"), cwd=tmp_path)
    assert proc.returncode == 2 and "FINALIZED" in proc.stderr and "ATEXIT" in proc.stderr

    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(base()), encoding="utf-8")
    for output in ("json", "table"):  # simulate's run printed: at once too
        proc = _python(ENDING, "simulate", str(scenario), "-o", output, cwd=tmp_path)
        assert proc.returncode == 0 and "FINALIZED" not in proc.stderr
        assert "ATEXIT freeze=0" in proc.stderr
        assert (json.loads(proc.stdout)["steps"] if output == "json" else "admitted" in proc.stdout)

    proc = _python(ENDING, "--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("podnuma, version")
    assert "FINALIZED" in proc.stderr


def test_a_closed_standard_stream_ends_as_before(tmp_path: Path) -> None:
    """A standard output or error closed when the command starts (``>&-``,
    ``2>&-``): the command ends as usual, with its exit code; with standard
    error closed the output is written all the same (``fleet analyze``'s
    progress bar asked a closed standard error whether it was a terminal,
    and the report was lost, exit 1); with standard output closed there is
    nothing to write, and nothing fails (``simulate`` flushed it: exit 1)."""
    out = tmp_path / "report.json"
    fleet = str(ROOT / "examples" / "fleet")
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(base()), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    cases = [
        ('"$0" -m podnuma.cli fleet analyze "$1" -o json --output-file "$2" >&-', 0, None),
        ('"$0" -m podnuma.cli simulate "$3" -o json 2>&-', 0, '"admitted": true'),
        ('"$0" -m podnuma.cli fleet analyze "$1"/missing 2>&-', 2, ""),
        ('"$0" -m podnuma.cli fleet analyze "$1" -o json 2>&-', 0, '"kind": "FleetReport"'),
        ('"$0" -m podnuma.cli fleet analyze "$1" -o json --workers 2 2>&-', 0, '"kind": "FleetReport"'),
        ('"$0" -m podnuma.cli fleet analyze "$1" 2>&-', 0, "pods replayed"),
        ('"$0" -m podnuma.cli simulate "$3" >&-', 0, None),
        ('"$0" -m podnuma.cli simulate "$3" -o yaml >&-', 0, None),
        ('"$0" -m podnuma.cli simulate "$3" -o json --as-scenario "$2.yaml" >&-', 0, None),
        ('"$0" -m podnuma.cli topology "$3" -o png >&-', 0, None),
    ]
    for line, want, printed in cases:
        proc = subprocess.run(["sh", "-c", line, sys.executable, fleet, str(out), str(scenario)],
                              capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env)
        assert proc.returncode == want, (line, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, (line, proc.stderr)
        if printed is not None:
            assert printed in proc.stdout, (line, proc.stdout[:300])
    assert json.loads(out.read_text())["kind"] == "FleetReport"


def test_a_closed_standard_error_under_dask(tmp_path: Path) -> None:
    """``--dask local:2`` with standard error closed when the command
    starts: the client process and its workers are forked all the same
    (standard error was flushed before each fork) and the report is written."""
    from ..fleet.conftest import need

    need("distributed")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    line = '"$0" -m podnuma.cli fleet analyze "$1" -o json --dask local:2 2>&-'
    proc = subprocess.run(["sh", "-c", line, sys.executable, str(ROOT / "examples" / "fleet")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "FleetReport"


def _on_a_terminal(line: str, *args: str, extra: dict[str, str] | None = None) -> tuple[int, str]:
    """``sh -c line`` (``$0`` this interpreter, then ``args``) with standard
    error a terminal (standard output ``/dev/null``): its exit code and what
    the terminal showed."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), TERM="xterm", COLUMNS="100",
               PODNUMA_PROGRESS_AFTER_S="0")  # (the bar at once, however short the work)
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    code, shown = run_on_a_terminal(["sh", "-c", line, sys.executable, *args], stream="stderr", env=env,
                                    cwd=ROOT)
    return code, shown.decode("utf-8", "replace")


def test_a_bar_only_for_work_that_lasts_and_plain_under_no_color() -> None:
    """A progress bar is drawn only once the work has run for the time
    ``PODNUMA_PROGRESS_AFTER_S`` says (half a second by default: one
    admission's explanation drew one that flashed; here a minute, which
    the explanation never lasts, however loaded the machine); under
    ``NO_COLOR`` it has no style at all (it was bold)."""
    scenario = str(ROOT / "examples" / "pod-level" / "init-and-sidecars.yaml")
    code, shown = _on_a_terminal('"$0" -m podnuma.cli explain "$1" >/dev/null', scenario,
                                 extra={"PODNUMA_PROGRESS_AFTER_S": "60"})
    assert code == 0 and "explaining admissions" not in shown, shown
    code, shown = _on_a_terminal('"$0" -m podnuma.cli explain "$1" >/dev/null', scenario,
                                 extra={"NO_COLOR": "1"})
    assert code == 0 and "explaining admissions" in shown and "\x1b[1m" not in shown, shown


def test_a_closed_standard_output_with_a_progress_bar_on_the_terminal() -> None:
    """Standard output closed and standard error a terminal: the progress
    bar is shown, and neither the bar nor what follows it touches the closed
    standard output (rich put a proxy of it, ``None``, in its place and left
    it there: ``fleet analyze`` failed with an internal error, ``-o json``
    printed the report on the terminal, ``explain`` its whole text)."""
    fleet = str(ROOT / "examples" / "fleet")
    scenario = str(ROOT / "examples" / "pod-level" / "init-and-sidecars.yaml")
    code, shown = _on_a_terminal('"$0" -m podnuma.cli fleet analyze "$1" >&-', fleet)
    assert code == 0 and "internal error" not in shown and "pods replayed" not in shown, shown
    code, shown = _on_a_terminal('"$0" -m podnuma.cli fleet analyze "$1" -o json >&-', fleet)
    assert code == 0 and "FleetReport" not in shown, shown
    code, closed = _on_a_terminal('"$0" -m podnuma.cli explain "$1" >&-', scenario)
    code_null, to_null = _on_a_terminal('"$0" -m podnuma.cli explain "$1" >/dev/null', scenario)
    assert code == code_null == 0
    # the bar on the terminal (redrawn as often as time allows), and none of
    # the explanation's text
    assert "explaining admissions" in closed and "explaining admissions" in to_null, closed
    for text in ("kep-node", "step 0", "QoS Guaranteed", "admitted", "hints for the pod"):
        assert text not in closed and text not in to_null, closed


def test_serve_with_standard_output_closed_serves() -> None:
    """``podnuma serve >&-``: the server starts and answers (uvicorn's log
    formatter asked the closed standard output whether it was a terminal:
    a traceback, exit 1)."""
    import re
    import urllib.request

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(["sh", "-c", 'exec "$0" -m podnuma.cli serve --port 0 >&-', sys.executable],
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.match(r"podnuma: serving on (http://127\.0\.0\.1:\d+)/", line)
        assert m, line + proc.stderr.read()
        with urllib.request.urlopen(m.group(1) + "/", timeout=30) as answer:
            assert answer.status == 200
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    """A thread still running when the command ends (none of podnuma's do):
    the process ends as usual, after it."""
    code = """
import os, threading, time
from podnuma.cli import process
def late():
    time.sleep(0.3)
    os.write(1, b"thread done\\n")
threading.Thread(target=late).start()
process.begin()
process.exit_at_once()
process.end(3)
"""
    proc = _python(code, cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == "thread done\n"
    daemon = (code.replace("threading.Thread(target=late)", "threading.Thread(target=late, daemon=True)")
              .replace("time.sleep(0.3)", "time.sleep(60)"))
    proc = _python(daemon, cwd=tmp_path)  # a daemon thread does not keep it (nor its minute)
    assert proc.returncode == 3 and proc.stdout == ""


def test_a_fleet_report_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """A reader that closes the pipe after the first bytes: exit 0, no
    traceback (the standard output that cannot flush ends the process as
    usual)."""
    from podnuma.fleet.generate import generate_fleet

    generate_fleet(tmp_path / "fleet", nodes=40, pods_per_node=10, seed=3)  # a report past the pipe's buffer
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen([sys.executable, "-c", ENDING, "fleet", "analyze", str(tmp_path / "fleet"),
                             "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env=env)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(1)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=180) == 0
    assert "Traceback" not in err and "Exception ignored" not in err


#: a module Python imports at start-up when it is on the path: it says on
#: file descriptor 2 whether Python's finalization ran (its object destroyed)
SITECUSTOMIZE = """
import os
class _Probe:
    def __del__(self):
        os.write(2, b"\\\\nFINALIZED\\\\n")
probe = _Probe()
"""


def test_the_console_entry_ends_at_once_only_as_the_main_module(tmp_path: Path) -> None:
    """``python -m podnuma.cli`` (the main module calls ``run`` at its top
    level, as the console script does) ends at once; ``run`` called under
    ``python -m cProfile`` (which writes its profile once the command has
    raised ``SystemExit``) or from a function that catches its
    ``SystemExit`` only raises it, as before."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(base()), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(site), str(ROOT / "src"))))

    def python(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=180,
                              cwd=tmp_path, env=env)

    proc = python("-m", "podnuma.cli", "simulate", str(scenario), "-o", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["steps"]
    assert "FINALIZED" not in proc.stderr
    proc = python("-m", "podnuma.cli", "--version")  # (a command that does not say so)
    assert proc.returncode == 0 and "FINALIZED" in proc.stderr

    profile = tmp_path / "profile.out"
    proc = python("-m", "cProfile", "-o", str(profile), "-m", "podnuma.cli", "simulate", str(scenario),
                  "-o", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["steps"]
    assert profile.stat().st_size > 0  # (written after the command's SystemExit)

    caught = """
import sys
from podnuma.cli import run
def call():
    try:
        run()
    except SystemExit as e:
        print("went on after", e.code)
sys.argv = ["podnuma", "simulate", sys.argv[1], "-o", "json"]
call()
"""
    proc = python("-c", caught, str(scenario))
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("went on after 0")
