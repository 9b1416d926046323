"""The web door's limits, as a review found them wanting, over a real
server (uvicorn on a loopback port) or the worker pool itself: a cluster
dump's file and directory counts are capped before anything is written;
the time limit covers laying the files out and removing them; a request
queued behind a job that runs to the limit gets the slot it frees; a
``--host`` on loopback however written keeps the Host check; uvicorn's own
parser refusals and a long ``set`` value answer in the API's error shape,
the value cut short."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import fleet_dumps_left, need, running
from tests.web.test_api import EXAMPLES, ROOT, call

SCENARIO = (EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_bytes()


def _fleet_extra() -> None:
    from podnuma.web.app import FLEET_EXTRA

    need("the fleet extra (plotly)", FLEET_EXTRA)






def _gone(tmp: Path, within: float = 60.0) -> bool:
    """Whether ``tmp`` holds no dump, or comes to within ``within`` seconds."""
    deadline = time.monotonic() + within
    while fleet_dumps_left(tmp):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _error(status: int, data: bytes) -> str:
    body = json.loads(data)
    assert list(body) == ["error"], body
    return str(body["error"])


# ------------------------------------------------------------------ dump size


def _deep_dump(count: int) -> dict[str, str]:
    """The review's dump: names 16 parts deep, each in directories of its own."""
    return {f"{i:x}/" + "/".join(["a"] * 14) + "/f.json": "{}" for i in range(count)}


def test_dump_caps_are_documented_sizes() -> None:
    from podnuma.service.fleet import MAX_DUMP_DIRS, MAX_DUMP_FILES

    # a real dump (a few hundred files in a directory or two) fits with room to spare
    assert MAX_DUMP_FILES >= 1000 and MAX_DUMP_DIRS >= 100
    doc = (ROOT / "docs" / "commands" / "serve.md").read_text()
    assert f"{MAX_DUMP_FILES:,} files" in doc and f"{MAX_DUMP_DIRS:,} distinct directories" in doc


@pytest.mark.parametrize("case", ["too-many-files", "too-many-directories", "review-deep-dump"])
def test_a_dump_over_the_caps_is_refused_before_anything_is_written(own_tmp: Path, case: str) -> None:
    from podnuma.service.fleet import MAX_DUMP_DIRS, MAX_DUMP_FILES

    if case == "too-many-files":
        files = {f"f{i}.json": "{}" for i in range(MAX_DUMP_FILES + 1)}
        want = f"files: {MAX_DUMP_FILES + 1} files, more than the limit of {MAX_DUMP_FILES} files"
    elif case == "too-many-directories":
        files = {f"d{i}/f.json": "{}" for i in range(MAX_DUMP_DIRS + 1)}
        want = f"files: {MAX_DUMP_DIRS + 1} distinct directories, more than the limit of {MAX_DUMP_DIRS}"
    else:
        files = _deep_dump(21_757)
        want = f"files: 21757 files, more than the limit of {MAX_DUMP_FILES} files"
    body = json.dumps({"files": files}).encode()
    # (a body limit above the review's dump: the count refuses it, not the size)
    with running(workers=1, time_limit=20.0, max_body=4 << 20) as url:
        status, _, data = call(url + "/api/fleet/analyze", body, "application/json")
        assert status == 422, data[:300]
        assert _error(status, data).startswith(want), data[:300]
        assert fleet_dumps_left(own_tmp) == []  # nothing written
        # the one job process is free at once: a simulation answers
        assert call(url + "/api/simulate", SCENARIO)[0] == 200


def test_the_service_refuses_a_dump_over_the_caps_too(tmp_path: Path) -> None:
    from podnuma.errors import InputError
    from podnuma.service.fleet import MAX_DUMP_DIRS, write_dump

    with pytest.raises(InputError, match=r"^files: the dump has .* distinct directories"):
        write_dump({f"d{i}/f.json": "{}" for i in range(MAX_DUMP_DIRS + 1)}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_dump_at_the_caps_is_laid_out_and_removed(own_tmp: Path) -> None:
    """A dump of as many files and directories as allowed is laid out (its
    files are read: none is a Kubernetes object, 400 as the CLI's exit 2),
    and removed after."""
    _fleet_extra()
    from podnuma.service.fleet import MAX_DUMP_DIRS, MAX_DUMP_FILES

    files = {f"d{i % MAX_DUMP_DIRS}/f{i}.json": "{}" for i in range(MAX_DUMP_FILES)}
    with running(workers=1, time_limit=300.0) as url:
        status, _, data = call(url + "/api/fleet/analyze", json.dumps({"files": files}).encode(),
                               "application/json")
        assert status == 400, data[:300]
        assert "more than the limit" not in _error(status, data)
    assert _gone(own_tmp)


# ------------------------------------------------------------------ the time limit covers prepare and cleanup


def _value(x: int) -> int:
    return x


def _sleep(seconds: float) -> int:
    time.sleep(seconds)
    return 0


def _run_pool(limit: float, *jobs: Callable[[Any], Any]) -> list[Any]:
    """Run ``jobs`` (each given the pool) at once on a pool of one warm job
    process, in the order given; each job's result or exception."""
    import anyio

    from podnuma.web.worker import Limits, WorkerPool

    pool = WorkerPool(Limits(time_limit=limit, workers=1))
    pool.warm_up()
    out: list[Any] = [None] * len(jobs)

    async def main() -> None:
        async def one(i: int) -> None:
            try:
                out[i] = await jobs[i](pool)
            except Exception as e:
                out[i] = e

        async with anyio.create_task_group() as tg:
            for i in range(len(jobs)):
                tg.start_soon(one, i)

    try:
        anyio.run(main)
    finally:
        pool.kill_all()
    return out


def test_a_slow_prepare_is_stopped_at_the_time_limit_and_cleaned_up() -> None:
    """``prepare`` (laying a dump out) runs under the request's time limit:
    one that would go on for ever is stopped there (its check raises),
    the job is not run, the cleanup still runs, and the slot is free for
    the next request."""
    from podnuma.web.worker import TimeLimitExceeded

    cleaned = threading.Event()
    steps = [0]

    def prepare(check: Callable[[], None]) -> None:
        while True:  # (a dump that takes for ever to write)
            check()
            steps[0] += 1
            time.sleep(0.02)

    async def slow(pool: Any) -> Any:
        return await pool.run_async(_value, 1, prepare=prepare, cleanup=cleaned.set)

    async def after(pool: Any) -> Any:
        import anyio

        await anyio.sleep(0.5)  # (queued behind the slow one)
        return await pool.run_async(_value, 2)

    first, second = _run_pool(2.0, slow, after)
    assert isinstance(first, TimeLimitExceeded), first
    assert str(first).startswith("the simulation took longer than the server's limit of 2 s")
    assert steps[0] > 0
    assert cleaned.wait(60)
    assert second == 2


def test_a_slow_cleanup_does_not_hold_the_slot_past_the_limit() -> None:
    """A cleanup that outlasts the limit is left to finish on its own: the
    request answers, and the one queued behind it runs."""
    release = threading.Event()
    finished = threading.Event()

    def cleanup() -> None:
        release.wait(120)
        finished.set()

    async def slow(pool: Any) -> Any:
        return await pool.run_async(_value, 1, cleanup=cleanup)

    async def after(pool: Any) -> Any:
        import anyio

        await anyio.sleep(0.5)
        return await pool.run_async(_value, 2)

    try:
        first, second = _run_pool(2.0, slow, after)
        assert (first, second) == (1, 2)
        assert not finished.is_set()  # still running, in the background
    finally:
        release.set()
    assert finished.wait(60)


# ------------------------------------------------------------------ queued behind a job at the limit


def test_a_request_queued_behind_a_job_at_the_limit_gets_its_slot() -> None:
    """One job process; a job that runs past the limit, and a quick one
    queued right behind it: the quick one waits for the slot the kill
    frees, and runs (not 503)."""
    from podnuma.web.worker import TimeLimitExceeded

    async def long(pool: Any) -> Any:
        return await pool.run_async(_sleep, 600)

    async def quick(pool: Any) -> Any:
        return await pool.run_async(_value, 7)

    first, second = _run_pool(2.0, long, quick)
    assert isinstance(first, TimeLimitExceeded), first
    assert second == 7, second


def test_the_server_answers_the_queued_request() -> None:
    """The review's case over HTTP: a long explain, then a quick simulate
    sent right after it, one job process, a 3 s limit: 422 and 200."""
    from tests.web.test_api import heavy_scenario

    with running(workers=1, time_limit=3.0) as url:
        got: dict[str, int] = {}

        def post(key: str, path: str, body: bytes, ctype: str) -> None:
            got[key] = call(url + path, body, ctype)[0]

        long = threading.Thread(target=post, args=("long", "/api/explain", heavy_scenario(),
                                                    "application/json"))
        long.start()
        time.sleep(0.3)
        quick = threading.Thread(target=post, args=("quick", "/api/simulate", SCENARIO, "application/yaml"))
        quick.start()
        long.join(120)
        quick.join(120)
        assert got == {"long": 422, "quick": 200}


# ------------------------------------------------------------------ --host on loopback


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGKILL) -> str:
    """``proc`` ended (``sig`` first; killed if it is still there after a
    minute: a hang guard); what is left of its stderr."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate(timeout=60)
        raise
    return err or ""


def _serve(host: str) -> tuple[subprocess.Popen[str], str, str]:
    """``podnuma serve`` on ``host``, its URL and its first line; a server
    that does not say where it serves is ended, and its stderr is the
    failure."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnuma.cli", "serve", "--port", "0", "--host", host],
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    guard = threading.Timer(120, proc.kill)  # (a hang guard: a server that never says a line is ended)
    guard.start()
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.match(r"podnuma: serving on (http://(\S+):(\d+))/", line)
    except BaseException:
        _stop(proc)
        raise
    finally:
        guard.cancel()
    if m is None:
        pytest.fail(f"podnuma serve --host {host} did not serve: {line}{_stop(proc)}")
    return proc, m.group(1), line


def _can_listen(host: str) -> bool:
    """Whether this machine lets a socket listen on ``host`` (an IPv6
    loopback needs IPv6 configured)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            sock.listen(1)
    except OSError:
        return False
    return True


def _host_status(url: str, host: str) -> int:
    parts = urllib.parse.urlsplit(url)
    import http.client

    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        conn.request("GET", "/api/defaults", headers={"Host": host})
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.parametrize("host", ["127.0.0.2", "0:0:0:0:0:0:0:1"])
def test_a_loopback_host_however_written_keeps_the_host_check(host: str) -> None:
    if ":" in host and not (socket.has_ipv6 and _can_listen(host)):
        pytest.skip("cannot listen on IPv6 loopback here")
    proc, url, line = _serve(host)  # (from here on a server that fails is a failure)
    try:
        port = urllib.parse.urlsplit(url).port
        shown = f"[{host}]" if ":" in host else host
        assert _host_status(url, f"{shown}:{port}") == 200
        assert _host_status(url, "localhost") == 200
        assert _host_status(url, "attacker.example") == 400
    except BaseException:
        _stop(proc)
        raise
    err = _stop(proc, signal.SIGINT)
    assert "beyond loopback" not in line + err


# ------------------------------------------------------------------ the parser's refusals, long values


def _raw(url: str, data: bytes) -> tuple[int, dict[str, str], bytes]:
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=60) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, headers, body


PARSER_REFUSALS = {
    "content-length-abc": (b"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
                           "invalid HTTP request (bad Content-Length)"),
    "content-length-negative": (b"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
                                "invalid HTTP request (bad Content-Length)"),
    "no-host": (b"GET /api/examples HTTP/1.1\r\n\r\n", "invalid HTTP request (Missing mandatory Host: header)"),
    "long-head": (b"GET /api/examples HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 200_000 + b"\r\n\r\n",
                  "invalid HTTP request (the request head is larger than the server's limit of 65536 bytes)"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(PARSER_REFUSALS))
def test_the_http_parsers_refusals_have_the_error_shape(server: str, case: str) -> None:
    raw, want = PARSER_REFUSALS[case]
    status, headers, body = _raw(server, raw)
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": want}
    assert "content-security-policy" in headers and "x-content-type-options" in headers


def test_a_long_set_value_is_cut_short_in_the_message(server: str) -> None:
    value = "a" * 60_000  # (the request head stays within the server's 64 KiB)
    status, _, data = call(server + "/api/simulate?set=" + value, SCENARIO)
    assert status == 400
    message = _error(status, data)
    assert len(data) < 1000, len(data)
    assert "(60007 characters)" in message or "characters)" in message
    assert message.endswith("expected PATH=VALUE (e.g. cpuManagerPolicy=static)"), message[-200:]
