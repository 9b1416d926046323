"""``podnuma serve``: the web page and its HTTP API (:mod:`podnuma.web`).

Listens on loopback unless ``--host`` says otherwise; the limits (request
body size, seconds of work per request, simulations at once) have safe
defaults. Needs the ``web`` extra (FastAPI, uvicorn).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import click

from podnuma.cli.options import Seconds

__all__ = ["serve_command"]

def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family, backlog=64)
    except OSError as e:
        raise click.UsageError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _loopback(sock: socket.socket) -> bool:
    """Whether the socket listens on a loopback address (any of 127.0.0.0/8,
    ``::1`` however written, ``::ffff:127.x.y.z``): the address it is
    bound to, whatever name or spelling ``--host`` gave."""
    address = ipaddress.ip_address(str(sock.getsockname()[0]).split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _hosts(host: str, sock: socket.socket, loopback_hosts: tuple[str, ...]) -> tuple[str, ...]:
    """The Host header names a server on loopback answers to: the loopback
    names, ``--host`` as given and the address bound (IPv6 in brackets, as
    a Host header writes it)."""
    out = list(loopback_hosts)
    for name in (host.strip("[]"), str(sock.getsockname()[0])):
        name = name.lower()
        out.append(f"[{name}]" if ":" in name else name)
    return tuple(dict.fromkeys(out))


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default; 0.0.0.0 exposes the server).")
@click.option("--port", "-p", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="Port (0: any free port, printed at start).")
@click.option("--max-body", type=click.IntRange(min=1024), default=1 << 20, show_default=True,
              metavar="BYTES", help="Largest request body accepted.")
@click.option("--time-limit", type=Seconds(min=0.1), default=20.0, show_default=True,
              metavar="SECONDS", help="Longest a request's simulation may run.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Simulations run at once (each in a process of its own).")
@click.option("--read-timeout", type=Seconds(min=0.1), default=5.0, show_default=True,
              metavar="SECONDS", help="Longest a client may take to send a request's headers, "
              "and again its body.")
def serve_command(
    host: str, port: int, max_body: int, time_limit: float, workers: int, read_timeout: float
) -> None:
    """Serve the web page: pick or upload a scenario, step through the
    machine picture, click a CPU for its owner, explain, compare and advise."""
    from podnuma.cli.app import guard

    def load() -> tuple[Any, Any, Any, Any]:
        # without the web extra, the guard says which extra to install
        from podnuma.web.app import LOOPBACK_HOSTS, create_app, make_server
        from podnuma.web.worker import Limits

        return LOOPBACK_HOSTS, create_app, make_server, Limits

    LOOPBACK_HOSTS, create_app, make_server, Limits = guard(load)
    sock = _listen(host, port)
    loopback = _loopback(sock)
    app = create_app(
        Limits(max_body=max_body, time_limit=time_limit, workers=workers,
               read_timeout=read_timeout),
        allowed_hosts=_hosts(host, sock, LOOPBACK_HOSTS) if loopback else ("*",),
    )
    app.state.pool.warm_up()
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    click.echo(f"podnuma: serving on http://{shown}:{bound}/ (Ctrl-C to stop)", err=True)
    if not loopback:
        click.echo(
            "podnuma: warning: listening beyond loopback; anyone who can reach this address "
            "can run simulations", err=True,
        )
    make_server(app).run(sockets=[sock])
