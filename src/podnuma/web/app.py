"""The web application behind ``podnuma serve``: the page and its HTTP API.

Built on FastAPI (the OpenAPI description at ``/openapi.json`` comes from
the framework). Every ``/api``
answer is the JSON document the matching command prints with ``-o json``;
invalid input answers 400 with ``{"error": MESSAGE}`` where MESSAGE is what
the command prints after ``error:`` (``FILE: FIELD.PATH: MESSAGE``). A
request the API does not take (an unknown field or query parameter, a value
of another JSON type, fields that cannot go together, a body that is not a
JSON object) answers 422, each problem on a line of its own named by the
request's field path (several: also listed in ``errors``); a method a path
does not take, 405 with ``Allow``; every error, the refusals of the
middlewares below included, in that shape and with the page's security
headers (:class:`PageHeaders` runs outermost).

Limits (:class:`~podnuma.web.worker.Limits`; docs/limits.md): request
bodies over ``max_body`` bytes answer 413 before the body is read through;
a client gets ``read_timeout`` seconds to send a request's headers (else
the connection is closed) and as long again for its body (408); work runs
in a job process (:mod:`podnuma.web.worker`) that also encodes the answer,
killed after ``time_limit`` seconds (422); at most ``workers`` jobs at once
(503 when they stay busy; a request waiting for one holds no thread:
:meth:`~podnuma.web.worker.WorkerPool.run_async`). Every body is read through the one bounded
reading path (:mod:`podnuma.inputs.documents`), the JSON bodies of
``/api/compare``, ``/api/advise`` and ``/api/fleet/analyze`` included
(400 ``request body: ...`` when they are not JSON or over its bounds); a
cluster dump's file and directory counts are capped by its request model
(422, before it waits for a job process) and its file names checked before
any is written (:func:`podnuma.service.fleet.check_dump`), within the
request's time limit, which covers laying the files out and removing them.
uvicorn's own 400 (a request its HTTP parser refuses) is in the same
``{"error": ...}`` shape (:func:`_timed_h11`). Requests must name a
loopback host when the server listens on loopback (no DNS rebinding), and a
state-changing request from a browser must come from the page itself
(``Sec-Fetch-Site`` / ``Origin``; 403 otherwise). SIGTERM kills the running
jobs (their requests answer 503 "the server is stopping") and stops the
server within a second (:func:`make_server`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.message
import functools
import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
from collections import OrderedDict
from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    MutableMapping,
    Sequence,
)
from types import FrameType
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route, Router

from podnuma.errors import InputError
from podnuma.fds import descriptors_exhausted, raise_open_files_limit
from podnuma.fieldkit import inert, type_name
from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText, go_json_number
from podnuma.inputs.documents import load_json
from podnuma.inputs.limits import DEFAULT_LIMITS
from podnuma.service.fleet import MAX_DUMP_DIRS, MAX_DUMP_FILES, dump_size_problem
from podnuma.service.messages import version
from podnuma.service.whatif import builtin_defaults, shared_pool_problem
from podnuma.web import service
from podnuma.web.examples import (
    EXAMPLES,
    WHATIF_CONFIG,
    WHATIF_NODE,
    WHATIF_POD,
    describe,
    example_text,
)
from podnuma.web.warning_headers import warning_headers
from podnuma.web.worker import Busy, Encoded, JobError, Limits, TimeLimitExceeded, WorkerPool

__all__ = ["create_app", "make_server", "LOOPBACK_HOSTS", "SameOrigin", "BodyLimit", "TrustedHost"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
FLEET_PAGES = 4

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: a job's preparation (laying out its files), given the check of its deadline
Prepare = Callable[[Callable[[], None]], None]


async def _refuse(send: Send, status: int, message: str, *, close: bool = True) -> None:
    """Answer ``{"error": message}`` from a middleware (before the
    application runs); ``close``: and close the connection (its request, or
    the rest of its body, is not read)."""
    body = json.dumps({"error": _problem(message)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Answer 413 to a request whose body is (or turns out to be) larger
    than ``max_body`` bytes, without reading more of it."""

    def __init__(self, app: ASGIApp, max_body: int, read_timeout: float = 5.0) -> None:
        self.app = app
        self.max_body = max_body
        self.read_timeout = read_timeout

    def _message(self) -> str:
        return f"the request body is larger than the server's limit of {self.max_body} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.max_body
                except ValueError:
                    too_big = True
                if too_big:
                    await _refuse(send, 413, self._message())
                    return
        # Read the body here (it is small: at most max_body bytes), then
        # hand it to the application in one message.
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout(self.read_timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return  # the client went away
                    chunk = message.get("body", b"")
                    seen += len(chunk)
                    if seen > self.max_body:
                        await _refuse(send, 413, self._message())
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await _refuse(send, 408, f"the request body was not received within {self.read_timeout:g} s")
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class SameOrigin:
    """Refuse (403) a state-changing request a browser sends on behalf of
    another site: ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``,
    or an ``Origin`` whose host is not the request's ``Host``. Requests
    without either header (command-line clients) pass: they are no
    cross-site forgery."""

    SAFE = frozenset({"GET", "HEAD", "OPTIONS"})

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @staticmethod
    def cross_site(headers: dict[bytes, bytes]) -> str | None:
        site = headers.get(b"sec-fetch-site")
        if site is not None and site not in (b"same-origin", b"none"):
            return f"Sec-Fetch-Site: {site.decode('latin-1')}"
        origin = headers.get(b"origin")
        if origin is not None:
            text = origin.decode("latin-1")
            host = headers.get(b"host", b"").decode("latin-1").lower()
            parts = urlsplit(text)
            if text == "null" or parts.scheme not in ("http", "https") or (
                parts.netloc.lower() != host
            ):
                return f"Origin: {text}"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method", "GET") not in self.SAFE:
            headers = dict(scope.get("headers", ()))
            why = self.cross_site(headers)
            if why is not None:
                await _refuse(send, 403, f"cross-origin request refused ({why}): "
                              "use the page this server serves")
                return
        await self.app(scope, receive, send)


def _shown(text: str, limit: int = 200) -> str:
    """A request's text in a message: at most ``limit`` characters."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


#: the longest problem of an error answered whole
MESSAGE_LINE = 1000
#: the most problems an error answer lists (then one line: ``and K more problems``)
MAX_PROBLEMS = 20


def _problem(text: str) -> str:
    """One problem as an answer gives it: on one line and inert
    (:func:`~podnuma.fieldkit.inert`, the escaping of the CLI's ``error:``
    line: a line break or an escape sequence a request's value or name
    holds is written escaped, so one problem stays one line), a lone
    surrogate (a request's ``"\\udc80"``, echoed) written escaped, and cut to
    its first and last 200 characters when longer than
    :data:`MESSAGE_LINE` (so long a line echoes a request's value, a
    100,000-character ``set`` value say, which an answer does not repeat
    in full)."""
    line = inert(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return line if len(line) <= MESSAGE_LINE else _cut(line)


def _cut(line: str) -> str:
    """A long line's first and last 200 characters (the echo's start, and
    what the message says of it), with its length."""
    return f"{line[:200]}... ({len(line)} characters) ...{line[-200:]}"


class TrustedHost:
    """Refuse (400, with the API's ``{"error": ...}``) a request whose
    ``Host`` header is not one of ``allowed_hosts`` (``"*"``: any): a server
    on loopback answers only to loopback names, so a page of another site
    whose name resolves to 127.0.0.1 (DNS rebinding) reaches no API."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]) -> None:
        self.app = app
        self.allowed = tuple(h.lower() for h in allowed_hosts)

    @staticmethod
    def host_of(value: str) -> str:
        """The name of a ``Host`` header, without its port (``[::1]:8080``: ``[::1]``)."""
        value = value.strip().lower()
        if value.startswith("["):
            end = value.find("]")
            return value[: end + 1] if end >= 0 else value
        return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "*" in self.allowed:
            await self.app(scope, receive, send)
            return
        raw = dict(scope.get("headers", ())).get(b"host")
        host = None if raw is None else raw.decode("latin-1")
        if host is not None and self.host_of(host) in self.allowed:
            await self.app(scope, receive, send)
            return
        given = "no Host header" if host is None else f"Host header {_shown(host, 100)!r}"
        await _refuse(send, 400, f"{given} refused: this server answers only to "
                      f"{', '.join(self.allowed)} (it listens on loopback)", close=False)


def _no_delay(transport: asyncio.BaseTransport) -> None:
    """Send each write at once (TCP_NODELAY). asyncio sets it only on
    sockets created with ``proto=IPPROTO_TCP``, which a listening socket
    from :func:`socket.create_server` is not (its ``proto`` is 0): without
    it, an answer's body waits behind its head for the client's delayed
    acknowledgement, about 40 ms a request."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class PageHeaders:
    """Add the page's security headers (a content security policy, no
    MIME sniffing, no referrer) to every answer that does not set its own."""

    HEADERS = (
        (b"content-security-policy",
         b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
         b"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    )

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in self.HEADERS if h[0] not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


#: the largest request head (request line and headers) the server reads
MAX_HEAD = 64 * 1024
#: where a request head ends (a blank line; h11 takes a bare LF too)
_HEAD_END = re.compile(rb"\n\r?\n")


def _parser_refusal(why: str | None = None) -> bytes:
    """The body of uvicorn's own 400 (a request its HTTP parser, h11,
    refuses): the API's ``{"error": ...}`` with ``why`` or h11's reason,
    when it gives one (the exception being handled)."""
    if why is None:
        exc = sys.exc_info()[1]
        why = str(exc) if exc is not None else ""
    message = "invalid HTTP request" + (f" ({_shown(why, 100)})" if why else "")
    return json.dumps({"error": _problem(message)}).encode()


#: the most connections the server holds open at once; fewer when the
#: process may open fewer files (:func:`connection_limit`)
MAX_CONNECTIONS = 512
#: descriptors kept for the server's own files, pipes and workers
_FD_RESERVE = 64
#: the listening socket's queue, and the most connections asyncio accepts
#: in one go (each a descriptor before the server sees it)
_ACCEPT_BURST = 32
_CLOSE = (b"connection", b"close")


def connection_limit() -> int:
    """How many connections the server holds open at once:
    :data:`MAX_CONNECTIONS`, or the soft ``RLIMIT_NOFILE`` less
    :data:`_FD_RESERVE` when that is smaller (at least 8), so that a flood
    of connections is answered 503 rather than left in the kernel's queue
    while ``accept`` fails for want of a descriptor."""
    import resource

    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (OSError, ValueError):
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - _FD_RESERVE))


def _two_lengths(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request head gives both ``Content-Length`` and
    ``Transfer-Encoding`` (names lower-cased by the server)."""
    names = {name for name, _ in headers}
    return b"content-length" in names and b"transfer-encoding" in names


def _timed_h11(header_timeout: float, max_connections: int) -> type[Any]:
    """uvicorn's h11 protocol with a deadline on each request's headers:
    a connection that has not sent a whole request head within
    ``header_timeout`` seconds of opening (or of the previous answer) is
    closed, however slowly it trickles bytes; a connection past
    ``max_connections`` open at once is answered 503 and closed as it
    opens; a request giving both ``Content-Length`` and
    ``Transfer-Encoding`` is answered, then its connection closed. The 400 its parser answers
    to a request it cannot read (a bad ``Content-Length``, no ``Host`` in
    HTTP/1.1) is in the API's error shape, with the page's security
    headers, rather than uvicorn's plain text. A request head over
    :data:`MAX_HEAD` bytes is refused (400) however its bytes arrive: they
    are counted here as they come (h11 checks its buffer only while a head
    is incomplete, so a long head in one read passed it), and those a
    previous request's reads brought (pipelined) when its answer is done."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedH11(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _head_seen = 0  # bytes of the awaited request head received so far
        _head_tail = b""  # its last two (a blank line across two reads)

        def _head_too_long(self, data: bytes) -> bool:
            """Whether, with ``data``, the awaited request head is over
            :data:`MAX_HEAD` bytes (the head ending in ``data``: counted
            afresh for the next)."""
            seen = self._head_tail + data
            end = _HEAD_END.search(seen)
            if end is not None:
                size = self._head_seen - len(self._head_tail) + end.end()
                self._head_seen, self._head_tail = 0, b""
                return size > MAX_HEAD
            self._head_seen += len(data)
            self._head_tail = seen[-2:]
            return self._head_seen > MAX_HEAD

        def _refuse_head(self) -> None:
            """400 to a request head over :data:`MAX_HEAD` bytes, written as
            they are (h11 has read no request to answer), then close."""
            self._disarm()
            self.logger.warning("Invalid HTTP request received.")
            body = _parser_refusal(f"the request head is larger than the server's limit of {MAX_HEAD} bytes")
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close"), *PageHeaders.HEADERS]
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\n" + b"".join(
                name + b": " + value + b"\r\n" for name, value in headers) + b"\r\n" + body)
            self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE and self._head_too_long(data):
                self._refuse_head()
                return
            super().data_received(data)

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is None or self.cycle.response_complete:
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                self._refuse_connection()
                return
            _no_delay(transport)
            self._arm()

        def _refuse_connection(self) -> None:
            """503 to a connection past ``max_connections``, written before
            any request (whose bytes are not read), then close: the
            connection's descriptor is given back at once."""
            body = json.dumps({"error": _problem(
                f"the server has {max_connections} connections open, its limit: try again later")}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close"), (b"retry-after", b"1"), *PageHeaders.HEADERS]
            self.transport.write(b"HTTP/1.1 503 Service Unavailable\r\n" + b"".join(
                name + b": " + value + b"\r\n" for name, value in headers) + b"\r\n" + body)
            self.transport.close()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request head arrived
                self._disarm()
                self._head_seen, self._head_tail = 0, b""
                if self.cycle is not None and _two_lengths(self.cycle.scope["headers"]):
                    # (RFC 9112 6.3: the body read as chunked, the connection
                    # closed after the answer, whatever follows it unread)
                    self.cycle.keep_alive = False
                    self.cycle.scope["headers"] = [*self.cycle.scope["headers"], _CLOSE]

        def on_response_complete(self) -> None:
            self._arm()  # the next request's head (a pipelined one disarms it at once)
            if not self.transport.is_closing() and self.conn.their_state is h11.DONE:
                # the next head's bytes a previous read brought: counted before h11 reads them
                self._head_seen, self._head_tail = 0, b""
                if self._head_too_long(self.conn.trailing_data[0]):
                    self._refuse_head()
                    return
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            body = _parser_refusal()
            headers = [(b"content-type", b"application/json"),
                       (b"content-length", str(len(body)).encode()), (b"connection", b"close"),
                       *PageHeaders.HEADERS]
            for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                          h11.Data(data=body), h11.EndOfMessage()):
                output = self.conn.send(event)
                if output:
                    self.transport.write(output)
            self.transport.close()

    return TimedH11


class _Server(uvicorn.Server):
    """uvicorn's server, whose exit (SIGTERM, SIGINT) first kills the
    running jobs so that every pending request answers at once."""

    def __init__(self, config: uvicorn.Config, pool: WorkerPool) -> None:
        super().__init__(config)
        self.pool = pool

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.pool.kill_all()
        super().handle_exit(sig, frame)

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().set_exception_handler(_loop_problem)
        await super().serve(sockets=sockets)


def _loop_problem(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's report of a problem outside any request: running
    out of descriptors while accepting (asyncio accepts again a second
    later; the waiting client is answered then) is one line on standard
    error, not a traceback; anything else goes to asyncio's own report."""
    exc = context.get("exception")
    if isinstance(exc, OSError) and descriptors_exhausted(exc):
        print(f"podnuma: warning: out of file descriptors ({exc.strerror}): new connections wait",
              file=sys.stderr, flush=True)
        return
    loop.default_exception_handler(context)


def make_server(app: FastAPI) -> uvicorn.Server:
    """The uvicorn server for ``app`` with the app's limits: the header
    deadline, a short keep-alive, one second of graceful shutdown, the
    connections' cap (the soft ``RLIMIT_NOFILE`` raised first, as the
    agent raises it)."""
    limits: Limits = app.state.limits
    raise_open_files_limit()  # (as the agent does; the connections' cap is then what a flood meets)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, http=_timed_h11(limits.read_timeout, connection_limit()),
        # (also how many connections one wake-up of the loop accepts before
        # any is answered: fewer than the descriptors kept aside)
        backlog=_ACCEPT_BURST,
        # (h11's own check of an incomplete head, at the same size: MAX_HEAD)
        h11_max_incomplete_event_size=MAX_HEAD,
        timeout_keep_alive=5, timeout_graceful_shutdown=1, lifespan="off",
        # (left to uvicorn, its log formatter asks standard output whether it
        # is a terminal: a standard output closed when the command started,
        # None, stopped the server before it began)
        use_colors=None if sys.stdout is not None else False,
    )
    return _Server(config, app.state.pool)


def _error(status: int, problems: str | Sequence[str]) -> JSONResponse:
    """The answer ``{"error": ...}`` to one problem (a string) or several:
    each made one inert line (:func:`_problem`), the lines joined in
    ``error``; several: also listed in ``errors``, one entry a problem. At
    most :data:`MAX_PROBLEMS` are listed, then ``and K more problems``."""
    given = [problems] if isinstance(problems, str) else list(problems)
    lines = [_problem(p) for p in given[:MAX_PROBLEMS]] or ["invalid request"]
    if len(given) > MAX_PROBLEMS:
        more = len(given) - MAX_PROBLEMS
        lines.append(f"and {more} more problem{'s' if more > 1 else ''}")
    body: dict[str, Any] = {"error": "\n".join(lines)}
    if len(lines) > 1:  # several problems: also one entry each
        body["errors"] = lines
    return JSONResponse(body, status_code=status)


#: the name the messages give a JSON request body (``FILE: MESSAGE``)
BODY_NAME = "request body"


class BodyError(HTTPException):
    """A JSON request body that is not read (not JSON, not UTF-8, nested
    too deeply, a number too long): 400 with the ``{"error": ...}`` body."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)
        self.message = message


class _BoundedJSONRequest(Request):
    """A request whose JSON body, parsed for a model (``/api/compare``,
    ``/api/advise``, ``/api/fleet/analyze``), is read through the one
    bounded reading path (:func:`~podnuma.inputs.documents.load_json`:
    nesting, values, duplicate keys, numbers) rather than by :func:`json.loads`
    alone, whose failures the framework answers with a bare ``{"detail":
    ...}``; what it refuses is a :class:`BodyError`."""

    _bounded: Any

    async def json(self) -> Any:
        if not hasattr(self, "_bounded"):
            body = await self.body()  # (at most the server's max_body bytes: BodyLimit)
            # read in a thread, its refusal worded there too (a duplicate
            # key's position is looked for as it is worded): the server's
            # loop answers meanwhile (a body of 100,000 keys takes a few
            # tenths of a second)
            self._bounded = await _threaded(_read_body, body)
        return self._bounded


def _read_body(body: bytes) -> Any:
    """A request body as :meth:`_BoundedJSONRequest.json` reads it."""
    try:
        # (a number with a fraction or an exponent keeps its text, past the
        # float range too: a refusal shows it as sent, 2.5e0 not 2.5)
        got = load_json(body, name=BODY_NAME, limits=DEFAULT_LIMITS.with_bytes(max(len(body), 1)),
                        numbers=go_json_number)
    except InputError as e:
        raise BodyError(service.error_message(e)) from None
    except RecursionError:  # (load_json words its own; this one is the last resort)
        raise BodyError(f"{BODY_NAME}: nested too deeply") from None
    if isinstance(got, JSONFloat | JSONNumberText):
        # a body that is one number, kept with its text: a plain float, so
        # that it is refused as any number is (a model would take a float
        # subclass's attributes for its fields)
        return float(got)
    return got


class _BoundedJSONRoute(APIRoute):
    """The routes of the application: JSON bodies as :class:`_BoundedJSONRequest` reads them."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def bounded(request: Request) -> Response:
            return await handler(_BoundedJSONRequest(request.scope, request.receive))

        return bounded


class ErrorBody(BaseModel):
    error: str = Field(description="What the CLI prints after 'error:' (FILE: FIELD.PATH: MESSAGE); "
                      "several problems of one input: a line each.")
    errors: list[str] | None = Field(None, description="Several problems (fields of a request, or an advise "
                                     "request whose pods file holds several invalid pods): the lines of "
                                     "error, one problem each, as the CLI prints them.")


class ExampleInfo(BaseModel):
    id: str
    name: str
    group: str
    title: str


class ExampleText(ExampleInfo):
    description: str
    text: str


def _field_error(message: str, at: str = "") -> PydanticCustomError:
    """A request field's problem, in the API's words (``at``: where inside
    the field, ``[2]``), in place of the model's own."""
    return PydanticCustomError("request_field", "{message}", {"message": message, "at": at})


def _found(value: object) -> str:
    """A request's value as a message shows it: a scalar as JSON writes it
    (shortened; a number with a fraction or an exponent as the request
    wrote it: ``2.5e0``, ``1e400``), anything else by its kind."""
    if isinstance(value, JSONFloat):
        return _shown(value.text, 60)
    if value is None or isinstance(value, bool | int | float | str):
        return _shown(json.dumps(value, ensure_ascii=False), 60)
    return type_name(value)


#: the most ``set`` values (a list) and ``whatIfs`` a request may give
MAX_SET_VALUES = 256
MAX_WHAT_IFS = 32


def _set_value(value: object) -> object:
    """``set``: ``PATH=VALUE`` lines (a string) or a list of at most
    :data:`MAX_SET_VALUES` strings, as
    :func:`~podnuma.inputs.overrides.request_overrides` reads them."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        if len(value) > MAX_SET_VALUES:
            raise _field_error(f"{len(value)} values, more than the limit of {MAX_SET_VALUES}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise _field_error(f"must be a PATH=VALUE string, got {type_name(item)}", f"[{i}]")
        return value
    raise _field_error(f"must be PATH=VALUE lines (a string) or a list of strings, got {type_name(value)}")


def _shared_pool(value: object) -> object:
    """``sharedPoolCpus``: ``"auto"`` or a whole number of CPUs >= 1 (a
    JSON number: not ``true``, not ``1.0``, not ``"2"``), at most the bound
    ``--shared-pool-cpus`` has (:func:`~podnuma.service.whatif.shared_pool_problem`)."""
    if value is None or value == "auto":
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        problem = shared_pool_problem(value)  # (the bound --shared-pool-cpus has)
        if problem is None:
            return value
        raise _field_error(problem)
    raise _field_error(f"expected auto or a whole number of CPUs >= 1, found {_found(value)}")


SetField = Annotated[
    list[str] | str | None,
    BeforeValidator(_set_value),
    Field(description="As the CLI's --set: PATH=VALUE strings, or one text of PATH=VALUE lines."),
]


#: with a scenario, these are the scenario's (its step's pod, its node, its configuration)
_SCENARIO_GIVES = ("pod", "podName", "node", "nodeName", "kubeletConfig", "kubeletConfigName")
#: a what-if request's name fields and the text each names
_NAMES = (("podName", "pod"), ("nodeName", "node"), ("kubeletConfigName", "kubeletConfig"),
          ("scenarioName", "scenario"))


def _conflicts(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The fields of a what-if request that cannot go with the others:
    ``(field, message)``, one each (a field given as null is not given).
    With ``scenario``, the pod, node and configuration are the scenario's:
    none of their fields; without it, no ``step``; a name field only with
    the text it names."""
    given = {name for name, value in data.items() if value is not None}
    out: list[tuple[str, str]] = []
    if "scenario" in given:
        out += [(name, "not with scenario (the pod, node and kubelet configuration are "
                 "the scenario's)") for name in _SCENARIO_GIVES if name in given]
    elif "step" in given:
        out.append(("step", "only with scenario (the addPod step of the scenario to take the pod from)"))
    out += [(name, f"only with {text} (the name of its text, for messages)")
            for name, text in _NAMES if name in given and text not in given
            and not ("scenario" in given and name in _SCENARIO_GIVES)]
    return out


def _missing(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The fields a what-if request lacks (asked once its fields go
    together): a pod, or a scenario instead; with a scenario, the step to
    take the pod from."""
    given = {name for name, value in data.items() if value is not None}
    if "scenario" in given:
        return [] if "step" in given else [
            ("step", "Field required with scenario (the addPod step to take the pod from)")]
    if "pod" not in given:
        return [("pod", "Field required (a Pod manifest; or scenario and step instead)")]
    return []


def _few_unknown(model: type[BaseModel], data: object) -> object:
    """A request body with more fields its model does not have than an
    answer lists (:data:`MAX_PROBLEMS`) is refused as a whole, in one
    problem naming the first few, before the model looks at any field: the
    problems a request costs the server are bounded (a 1 MiB body holds
    100,000 fields)."""
    if isinstance(data, Mapping) and len(data) > len(model.model_fields) + MAX_PROBLEMS:
        unknown = [key for key in data if key not in model.model_fields]
        if len(unknown) > MAX_PROBLEMS:
            first = ", ".join(_shown(json.dumps(key, ensure_ascii=False), 60) for key in unknown[:3])
            raise _field_error(f"{len(unknown)} unknown fields (the first: {first}; this request takes "
                               f"{', '.join(model.model_fields)})")
    return data


class _WhatIf(BaseModel):
    """What ``/api/compare`` and ``/api/advise`` both take: a Pod manifest
    (YAML or JSON text, several documents or a List allowed), with a node
    and a kubelet configuration (the CLI's built-in ones when left out); or
    instead an ``addPod`` step of a scenario, whose node and configuration
    are used. Strict: a field it does not have is refused (as the CLI
    refuses an option it does not have), not ignored, and a value of
    another JSON type is refused, not converted (``"1"`` is no step,
    ``"yes"`` no boolean); fields that cannot go together are refused
    (:func:`_conflicts`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pod: str | None = Field(None, description="Pod manifest text (YAML or JSON).")
    podName: str = Field("pod.yaml", description="Its file name, for messages (with pod only).")
    node: str | None = Field(None, description="A scenario 'node' mapping (text).")
    nodeName: str = Field("node.yaml", description="Its file name, for messages (with node only).")
    kubeletConfig: str | None = Field(None, description="A KubeletConfiguration (text).")
    kubeletConfigName: str = Field("kubelet-config.yaml",
                                   description="Its file name, for messages (with kubeletConfig only).")
    scenario: str | None = Field(None, description="A scenario (text), instead of the three above.")
    scenarioName: str = Field("scenario.yaml", description="Its file name, for messages (with scenario only).")
    step: int | None = Field(None, description="With scenario: the addPod step to take the pod from.")
    set: SetField = None

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: object) -> object:
        return _few_unknown(cls, data)


class CompareRequest(_WhatIf):
    """``/api/compare``: a pod as ``podnuma compare POD [--node] [--kubelet-config]
    [--set]`` takes it, or a scenario's step; advise's own fields
    (``sharedPoolCpus``, ``strategy``, ``sidecars``, ``asScenario``) are refused."""


class AdviseRequest(_WhatIf):
    """``/api/advise``: a pod as ``podnuma advise`` takes it, with advise's
    own options."""

    # the CLI's --shared-pool-cpus, --strategy, --sidecar, --as-scenario
    sharedPoolCpus: Annotated[int | Literal["auto"] | None, BeforeValidator(_shared_pool)] = Field(
        None, description="--shared-pool-cpus: auto (default) or a number of CPUs >= 1.")
    strategy: Literal["keep-limits", "keep-cpus", "max-freed"] | None = Field(
        None, description="--strategy (default keep-limits).")
    sidecars: list[str] = Field(default_factory=list, max_length=64,
                                description="--sidecar NAME, each container to treat as a sidecar.")
    asScenario: bool = Field(False, description="Include the scenario replaying every figure (scenario) "
                             "and one per other node shape proposed (shapeScenarios).")


#: advise's fields /api/compare does not take, and the CLI option each is
ADVISE_ONLY = {"sharedPoolCpus": "--shared-pool-cpus", "strategy": "--strategy", "sidecars": "--sidecar",
               "asScenario": "--as-scenario"}


def _dump_count(files: object) -> object:
    """``files``, before its entries are looked at: no more files or
    directories than a dump may lay out (so that a request of 100,000
    entries of another type costs one problem, not 100,000)."""
    if isinstance(files, Mapping) and all(isinstance(name, str) for name in files):
        problem = dump_size_problem(files)
        if problem is not None:
            raise _field_error(problem)
    return files


def _dump_files(files: dict[str, str]) -> dict[str, str]:
    """``files``: at least one, and no more files or directories than a
    dump may lay out (:func:`~podnuma.service.fleet.dump_size_problem`),
    refused here, before the request waits for a slot or writes anything."""
    if not files:
        raise _field_error("give at least one file (name -> text)")
    problem = dump_size_problem(files)
    if problem is not None:
        raise _field_error(problem)
    return files


class FleetDumpRequest(BaseModel):
    """A cluster dump, as ``podnuma fleet analyze DIR`` reads it from a
    directory: each file's relative name and text (strict: a field it does
    not have, or a value of another JSON type, is refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    files: Annotated[dict[str, str], BeforeValidator(_dump_count), AfterValidator(_dump_files)] = Field(
        description=f"File name (e.g. nodes.json, configz/NODE.json) -> text: at least one, at most "
        f"{MAX_DUMP_FILES} files in at most {MAX_DUMP_DIRS} distinct directories.")
    whatIfs: list[str] = Field(default_factory=list, max_length=MAX_WHAT_IFS,
                               description=f"As the CLI's --what-if values (at most {MAX_WHAT_IFS}).")
    set: SetField = None

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: object) -> object:
        return _few_unknown(cls, data)


#: the JSON body each path takes
BODY_MODELS: dict[str, type[BaseModel]] = {
    "/api/compare": CompareRequest, "/api/advise": AdviseRequest, "/api/fleet/analyze": FleetDumpRequest,
}


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input (the CLI's message)"},
    413: {"model": ErrorBody, "description": "Request body over the size limit"},
    501: {"model": ErrorBody, "description": "An optional part (the fleet extra) is not installed"},
    422: {"model": ErrorBody, "description": "Over the time or memory limit, or a bad parameter"},
    503: {"model": ErrorBody, "description": "Every worker busy"},
}

_SCENARIO_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "A scenario (the podnuma.io/v1 Scenario contract), YAML or JSON.",
        "content": {
            "application/yaml": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
            "text/plain": {"schema": {"type": "string"}},
        },
    }
}

DetailParam = Annotated[
    bool,
    Query(description="As the CLI's --detail: every provider's hints and the PodResources view per step."),
]
NameParam = Annotated[
    str | None,
    Query(description="The uploaded file's name, used in error messages like the CLI's file argument."),
]
def _step_value(value: object) -> object:
    """``step``: a whole number as the CLI's ``--step`` takes it (digits, a
    leading ``-`` allowed), never ``1.0`` or `` 1``."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    raise _field_error(f"expected a whole number (a step index from 0), found {_found(value)}")


_INTEGER = re.compile(r"-?[0-9]{1,30}")

StepParam = Annotated[int | None, BeforeValidator(_step_value), Query(description="Step index (from 0).")]
SetParam = Annotated[
    list[str] | None,
    Query(description="As the CLI's --set PATH=VALUE (repeatable): a kubelet configuration "
                      "field by its KubeletConfiguration JSON path, applied on top of the scenario's."),
]


def _query_names(dependant: Any) -> set[str]:
    """The query parameters a route's dependant (FastAPI's) and its
    dependencies take."""
    names = {str(f.alias) for f in getattr(dependant, "query_params", ())}
    for sub in getattr(dependant, "dependencies", ()):
        names |= _query_names(sub)
    return names


async def _known_query(request: Request) -> None:
    """An API request's query parameters are those its path takes: any
    other is refused (422, as an unknown field of a JSON body is), not
    ignored (a misspelt ``?detial=true`` would answer as if not asked)."""
    if not request.url.path.startswith("/api/") or not request.query_params:
        return
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    known = sorted(_query_names(dependant))
    takes = f"this path takes {', '.join(known)}" if known else "this path takes none"
    unknown = sorted(set(request.query_params) - set(known))
    if unknown:
        raise RequestValidationError([
            {"type": "extra_forbidden", "loc": ("query", name), "msg": f"unknown query parameter ({takes})",
             "input": request.query_params.get(name)} for name in unknown])


def _where(loc: Sequence[Any]) -> str:
    """A validation error's location as the request's field path: the
    field, then each index or key in brackets (``sidecars[2]``,
    ``files[nodes.json]``), as the CLI's messages write paths."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:]
    if not parts:
        return ""
    return str(parts[0]) + "".join(f"[{p}]" for p in parts[1:])


def _json_type(ctype: str | None) -> bool:
    """Whether a Content-Type is JSON's (as the framework decides whether to parse a body)."""
    if not ctype:
        return False
    parsed = email.message.Message()
    parsed["content-type"] = ctype
    sub = parsed.get_content_subtype()
    return parsed.get_content_maintype() == "application" and (sub == "json" or sub.endswith("+json"))


_SEND_JSON = "send a JSON object, with Content-Type: application/json"


def _body_problem(request: Request, err: Mapping[str, Any]) -> str:
    """The problem of a JSON body as a whole: none, not sent as JSON, or not an object."""
    ctype = request.headers.get("content-type")
    if err.get("type") == "missing":
        return f"{BODY_NAME}: empty ({_SEND_JSON})"
    if not _json_type(ctype):
        said = "no Content-Type" if ctype is None else f"Content-Type {_shown(ctype, 100)!r}"
        return f"{BODY_NAME}: {said}, not application/json ({_SEND_JSON})"
    return f"{BODY_NAME}: expected a JSON object, found {type_name(err.get('input'))}"


def _unknown_field(request: Request, field: str) -> str:
    route = request.scope.get("route")
    path = str(getattr(route, "path", request.url.path))
    if path == "/api/compare" and field in ADVISE_ONLY:
        return f"advise only (the CLI's {ADVISE_ONLY[field]}): /api/compare does not take it"
    model = BODY_MODELS.get(path)
    takes = f" (this request takes {', '.join(model.model_fields)})" if model is not None else ""
    return f"unknown field{takes}"


def _conflict_errors(
    data: Mapping[str, Any],
    find: Callable[[Mapping[str, Any]], list[tuple[str, str]]] | None = None,
) -> list[dict[str, Any]]:
    """:func:`_conflicts` (or ``find``'s problems) as validation errors."""
    return [{"type": "request_field", "loc": ("body", name), "msg": message, "input": data.get(name)}
            for name, message in (find or _conflicts)(data)]


def _problems(request: Request, exc: RequestValidationError) -> list[str]:
    """A request's problems, one line each: ``FIELD.PATH: MESSAGE`` (the
    request's own field path, not the model's), or ``request body: ...``
    for a JSON body that is not there, not JSON or not an object; and for a
    what-if request the fields that cannot go together (:func:`_conflicts`),
    found in its body even when other fields are wrong."""
    errors: list[Mapping[str, Any]] = list(exc.errors())
    route = request.scope.get("route")
    # (the body the model refused; none when the endpoint refuses the conflicts itself)
    if getattr(route, "path", None) in ("/api/compare", "/api/advise") and isinstance(exc.body, Mapping):
        errors += _conflict_errors(exc.body)
    lines: dict[str, None] = {}  # (in order, each once: a dict, not a list, for a linear count)
    for err in errors:
        loc = tuple(err.get("loc", ()))
        kind = str(err.get("type", ""))
        ctx = err.get("ctx") or {}
        where = _where(loc) + (str(ctx.get("at", "")) if kind == "request_field" else "")
        msg = str(err.get("msg") or "invalid")
        if loc and loc[0] == "body":
            if not where:
                lines[f"{BODY_NAME}: {msg}" if kind == "request_field" else _body_problem(request, err)] = None
                continue
            if kind == "extra_forbidden":
                msg = _unknown_field(request, where)
            elif kind.endswith("_type") or kind == "literal_error":
                msg = f"{msg}, found {_found(err.get('input'))}"
        lines[f"{where}: {msg}" if where else msg] = None
    return list(lines) or ["invalid request"]


class _NoRoute:
    """What comes after the routes (before the page's files): a path a
    route has, asked with a method it does not take, answers 405 with
    ``Allow`` (its methods) in the API's error shape; ``HEAD`` where the
    route takes ``GET`` is answered as ``GET`` without the body; any other
    ``/api`` path answers 404; everything else is the page's files. (The
    page, mounted at ``/``, would otherwise answer them: 404 or 405 ``GET,
    HEAD``.)"""

    def __init__(self, page: ASGIApp, router: Router) -> None:
        self.page = page
        self.router = router

    def methods(self, path: str) -> set[str]:
        """The methods the routes whose path this is take."""
        out: set[str] = set()
        for route in self.router.routes:
            if isinstance(route, Route) and route.path_regex.match(path):
                out |= route.methods or set()
        if "GET" in out:
            out.add("HEAD")
        return out

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path, method = str(scope["path"]), str(scope["method"])
            methods = self.methods(path)
            if method == "HEAD" and "GET" in methods:
                # (the server sends no body to a HEAD request: its own record of it)
                await self.router({**scope, "method": "GET", "path_params": {}}, receive, send)
                return
            if methods:
                allow = ", ".join(sorted(methods))
                response = _error(405, f"method {_shown(method, 20)} not allowed on {_shown(path)} "
                                  f"(it takes {allow})")
                response.headers["Allow"] = allow
                await response(scope, receive, send)
                return
            if path == "/api" or path.startswith("/api/"):
                await _error(404, f"no such path: {_shown(path)}")(scope, receive, send)
                return
        await self.page(scope, receive, send)


def create_app(limits: Limits | None = None, *, allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS) -> FastAPI:
    """The application. ``allowed_hosts``: the Host header values accepted
    (``("*",)`` for any)."""
    limits = limits or Limits()
    pool = WorkerPool(limits)
    app = FastAPI(
        title="podnuma",
        summary="The kubelet's node resource managers (CPU, memory, topology; pod-level "
        "resource managers), simulated.",
        version=version(),
        responses=_ERRORS,
        # The interactive pages would load their scripts from a CDN: the
        # description itself is served, at /openapi.json.
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(_known_query)],
    )
    app.state.pool = pool
    app.state.limits = limits
    app.router.route_class = _BoundedJSONRoute

    @app.exception_handler(BodyError)
    async def _bad_body(request: Request, exc: BodyError) -> JSONResponse:
        return _error(400, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # (a page file that does not exist, and whatever else the framework
        # refuses): the API's error shape
        response = _error(exc.status_code, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def _bad_parameter(request: Request, exc: RequestValidationError) -> JSONResponse:
        # several problems: a line each (in "errors" too)
        return _error(422, _problems(request, exc))

    async def job(
        fn: Callable[..., Any], *args: Any, media_type: str | None = None, readable: str | None = None,
        prepare: Prepare | None = None, cleanup: Callable[[], None] | None = None,
    ) -> Any:
        """``fn(*args)`` in a job process (waiting for one holds no thread:
        :meth:`WorkerPool.run_async`; ``prepare`` and ``cleanup`` around it,
        in its slot): its answer, or the error."""
        try:
            out = await pool.run_async(fn, *args, readable=readable, prepare=prepare, cleanup=cleanup)
        except InputError as e:  # (from prepare: what the request holds cannot be laid out)
            return _error(400, service.error_message(e))
        except JobError as e:
            status = {"input": 400, "startup": 400, "limit": 422}.get(e.kind, 500)
            return _error(status, e.problems)
        except TimeLimitExceeded as e:
            return _error(422, str(e))
        except Busy as e:
            return _error(503, str(e))
        if isinstance(out, Encoded):  # encoded by the job, inside its limits
            resp = Response(out.body, media_type=media_type or out.media_type)
            for value in warning_headers(out.warnings):  # (as the API server gives them)
                resp.raw_headers.append((b"warning", value.encode("utf-8")))
            return resp
        return out

    async def page_job(fn: Callable[..., Any], *args: Any, readable: str | None = None,
                       prepare: Prepare | None = None,
                       cleanup: Callable[[], None] | None = None) -> str | JSONResponse:
        """A fleet report page drawn by a job: its text, or the error."""
        out = await job(fn, *args, readable=readable, prepare=prepare, cleanup=cleanup)
        if isinstance(out, JSONResponse):
            return out
        assert isinstance(out, Response)
        return bytes(out.body).decode("utf-8")

    async def scenario_text(request: Request, name: str | None) -> tuple[str, str] | JSONResponse:
        ctype = request.headers.get("content-type", "")
        default = "scenario.json" if "json" in ctype else "scenario.yaml"
        file = service.safe_name(name, default)
        raw = await request.body()
        try:
            return raw.decode("utf-8"), file
        except UnicodeDecodeError as e:
            return _error(400, f"{file}: scenario file is not UTF-8 text (byte {e.start})")

    async def on_scenario(
        request: Request, name: str | None, fn: Callable[..., Any], *args: Any,
        runner: Callable[..., Any] = job,
    ) -> Any:
        """``fn(text, file, *args)`` in a job on the request's scenario text
        (400 when the body is not UTF-8 text)."""
        got = await scenario_text(request, name)
        if isinstance(got, JSONResponse):
            return got
        return await runner(fn, *got, *args)

    @app.get("/api/examples", response_model=list[ExampleInfo], tags=["examples"])
    def list_examples() -> list[ExampleInfo]:
        """The example scenarios shipped with podnuma."""
        out = []
        for ex in EXAMPLES:
            title, _ = describe(example_text(ex.path))
            out.append(ExampleInfo(id=ex.id, name=ex.name, group=ex.group, title=title))
        return out

    @app.get("/api/examples/{example_id}", response_model=ExampleText, tags=["examples"],
             responses={404: {"model": ErrorBody}})
    def get_example(example_id: str) -> ExampleText | JSONResponse:
        """One example scenario: its text and the comment that opens it."""
        for ex in EXAMPLES:
            if ex.id == example_id:
                text = example_text(ex.path)
                title, description = describe(text)
                return ExampleText(id=ex.id, name=ex.name, group=ex.group, title=title,
                                   description=description, text=text)
        return _error(404, f"no example {example_id!r}")

    @app.get("/api/examples-whatif", tags=["examples"])
    def get_whatif_example() -> dict[str, str]:
        """The what-if example: a pod, a node and a kubelet configuration."""
        return {
            "pod": example_text(WHATIF_POD), "podName": f"examples/{WHATIF_POD}",
            "node": example_text(WHATIF_NODE), "nodeName": f"examples/{WHATIF_NODE}",
            "kubeletConfig": example_text(WHATIF_CONFIG),
            "kubeletConfigName": f"examples/{WHATIF_CONFIG}",
        }

    @app.get("/api/defaults", tags=["examples"])
    def get_defaults() -> dict[str, Any]:
        """The built-in node (as a node form) and kubelet configuration (YAML
        text) the commands use without ``--node`` / ``--kubelet-config``."""
        return builtin_defaults()

    @app.post("/api/simulate", tags=["scenario"], openapi_extra=_SCENARIO_BODY)
    async def simulate(
        request: Request, name: NameParam = None, detail: DetailParam = False, set: SetParam = None
    ) -> Any:
        """Run a scenario: the output document of ``podnuma simulate -o json``
        (``detail=true``: ``--detail``, every provider's hints and the
        PodResources view per step; ``set``: ``--set``)."""
        return await on_scenario(request, name, service.simulate, detail, set or [])

    @app.post("/api/explain", tags=["scenario"], openapi_extra=_SCENARIO_BODY)
    async def explain(
        request: Request, name: NameParam = None, step: StepParam = None,
        pod: Annotated[str | None, Query(description="NAMESPACE/NAME or UID")] = None,
        search: Annotated[bool, Query(description="Re-run variations to find the nearest "
                                      "admissible configuration (slower).")] = True,
        set: SetParam = None,
    ) -> Any:
        """Why each admission went as it did: ``podnuma explain -o json``."""
        return await on_scenario(request, name, service.explain, step, pod, search, set or [])

    @app.post("/api/restart", tags=["scenario"], openapi_extra=_SCENARIO_BODY)
    async def restart(request: Request, name: NameParam = None, set: SetParam = None) -> Any:
        """A kubelet restart after the scenario's steps: every running pod
        re-admitted as kubelet v1.37.2 does (``podnuma restart -o json``),
        with the restart scenario that replays it (``scenario``; ``set``:
        ``--set``)."""
        return await on_scenario(request, name, service.restart, set or [])

    @app.post("/api/topology", tags=["scenario"], openapi_extra=_SCENARIO_BODY,
              responses={200: {
                  "content": {"image/svg+xml": {}, "application/json": {}},
                  "headers": {"Warning": {
                      "description": "svg: each warning the command prints on standard error, "
                                     "as the Kubernetes API server writes warnings "
                                     "(299 - \"TEXT\"); json: in the answer's warnings.",
                      "schema": {"type": "string"}}},
              }})
    async def topology(
        request: Request, name: NameParam = None, step: StepParam = None,
        format: Annotated[str, Query(pattern="^(svg|json)$", description="svg: the picture "
                                     "of podnuma topology; json: who owns each CPU.")] = "svg",
        set: SetParam = None,
    ) -> Any:
        """The machine after a step, every CPU coloured by its owner (an SVG
        gives its warnings in ``Warning`` headers)."""
        if format == "json":
            return await on_scenario(request, name, service.topology_owners, step, set or [])
        return await on_scenario(request, name, service.topology_svg, step, set or [])

    async def whatif(req: CompareRequest | AdviseRequest, advise: bool) -> Any:
        given = req.model_dump(exclude_unset=True)
        if _conflicts(given):
            raise RequestValidationError(_conflict_errors(given))
        if _missing(given):
            raise RequestValidationError(_conflict_errors(given, _missing))
        return await job(service.whatif_request, req.model_dump(), advise)

    @app.post("/api/compare", tags=["pod-level"])
    async def compare(req: CompareRequest) -> Any:
        """A pod as written vs its other form: ``podnuma compare -o json``."""
        return await whatif(req, False)

    @app.post("/api/advise", tags=["pod-level"])
    async def advise(req: AdviseRequest) -> Any:
        """The pod-level rewrite of a pod and what it saves: ``podnuma advise -o json``."""
        return await whatif(req, True)

    fleet_pages: OrderedDict[str, str] = OrderedDict()  # the last few rendered reports

    @app.post("/api/fleet/html", tags=["fleet"], openapi_extra={"requestBody": {
        "required": True, "description": "A FleetReport (podnuma fleet analyze -o json).",
        "content": {"application/json": {"schema": {"type": "object"}}}}})
    async def fleet_html(request: Request, name: NameParam = None) -> Any:
        """Draw a fleet report with the fleet's HTML renderer (charts
        included); answers the address of the page, kept for the last
        few reports."""
        file = service.safe_name(name, "fleet-report.json")
        raw = await request.body()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return _error(400, f"{file}: fleet report is not UTF-8 text (byte {e.start})")
        if not FLEET_EXTRA:
            return _error(501, NO_FLEET_EXTRA)
        return keep_page(await page_job(service.fleet_html, text, file))

    def keep_page(page: str | JSONResponse) -> Any:
        if isinstance(page, JSONResponse):
            return page
        token = secrets.token_urlsafe(16)
        fleet_pages[token] = page
        while len(fleet_pages) > FLEET_PAGES:
            fleet_pages.popitem(last=False)
        return {"url": f"/fleet/{token}"}

    @app.post("/api/fleet/analyze", tags=["fleet"])
    async def fleet_analyze(req: FleetDumpRequest) -> Any:
        """Analyse a cluster dump as ``podnuma fleet analyze -o html`` does
        (charts, node table, drill-down pictures); answers the address of
        the page, kept for the last few reports."""
        if not FLEET_EXTRA:
            return _error(501, NO_FLEET_EXTRA)
        # the server lays the files out (names checked, nothing parsed) in a
        # directory of the request's own, once the job has its slot (a request
        # waiting for one has written nothing), within the request's time
        # limit (checked before each file); the job reads them, and nothing
        # else, under the job's limits; the directory goes after it, off the loop
        # (the file and directory counts were bounded by the request's model)
        tmp = os.path.join(tempfile.gettempdir(), f"podnuma-fleet-{secrets.token_hex(12)}")
        page = await page_job(
            service.fleet_analyze_html, req.files, req.whatIfs, tmp, req.set, readable=tmp,
            prepare=functools.partial(service.fleet_write_dump, req.files, tmp),
            cleanup=functools.partial(shutil.rmtree, tmp, ignore_errors=True))
        return keep_page(page)

    @app.get("/fleet/{token}", include_in_schema=False)
    def fleet_page(token: str) -> Response:
        page = fleet_pages.get(token)
        if page is None:
            return _error(404, "no such report (the server keeps the last few)")
        # An opaque origin: the report's own scripts (its charts) run, but
        # cannot reach this site.
        return Response(page, media_type="text/html", headers={"Content-Security-Policy": (
            "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'")})

    # after the routes: a method a route does not take (405), an /api path
    # no route has (404), and then the page's files
    page = StaticFiles(packages=[("podnuma.web", "static")], html=True)
    app.mount("/", _NoRoute(page, app.router), name="page")

    # the last added runs first: the origin and the host are checked before
    # the body is read, and every answer (their refusals included) gets the
    # page's headers
    app.add_middleware(BodyLimit, max_body=limits.max_body, read_timeout=limits.read_timeout)
    app.add_middleware(TrustedHost, allowed_hosts=allowed_hosts)
    app.add_middleware(SameOrigin)
    app.add_middleware(PageHeaders)
    return app


async def _threaded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args, **kwargs)


#: Whether the fleet extra (plotly, which draws the fleet pages) is installed.
FLEET_EXTRA = importlib.util.find_spec("plotly") is not None
NO_FLEET_EXTRA = "drawing fleet reports needs the fleet extra: pip install 'podnuma[fleet]'"
