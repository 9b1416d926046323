"""The agent's loop: start, watch the manifest directory, stop on a signal.

Watching uses **watchfiles** (inotify on Linux, FSEvents/kqueue elsewhere;
its polling mode where native events are not available): any change in the
directory triggers a full re-read (:meth:`Agent.sync`), and a re-read also
happens every ``resync`` seconds without events, as the kubelet's file
source re-lists every 20 s. When the native watcher cannot start (inotify
limits, some network file systems) the loop falls back to polling and says
so in the log; ``poll=True`` asks for polling from the start.

Running out of file descriptors ends nothing: a sync or a watcher that
fails with ``EMFILE``/``ENFILE`` is logged and tried again later (waits
from :data:`RETRY_SECONDS`, doubled up to the resync period). At start the
soft ``RLIMIT_NOFILE`` is raised as the Go runtime raises the kubelet's
(:func:`podnuma.agent.fds.raise_open_files_limit`).

SIGTERM and SIGINT stop the loop; the PodResources server and the metrics
endpoint are shut down, the status file records the stop, exit code 0.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from podnuma.agent.cgroups import CgroupApplier, CgroupTree, NoCgroups, detect_version
from podnuma.agent.core import Agent, _now
from podnuma.agent.fds import descriptors_exhausted, raise_open_files_limit
from podnuma.agent.logs import kv
from podnuma.agent.metrics import AgentMetrics
from podnuma.agent.state import StateDir
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.errors import InputError
from podnuma.machine.topology import Machine

__all__ = ["AgentOptions", "run_agent", "default_socket"]

DEFAULT_RESYNC_SECONDS = 20.0
#: the first wait before a sync or the watcher is tried again after the
#: process ran out of file descriptors (doubled each time, up to the resync)
RETRY_SECONDS = 1.0


@dataclass(frozen=True)
class AgentOptions:
    manifests: Path
    state_dir: Path
    machine: Machine
    config: KubeletConfig
    podresources_socket: Path | None
    cgroup_root: Path | None = None
    cgroup_driver: str = "cgroupfs"
    cgroup_version: int | None = None  # None: detected from the root
    metrics_port: int | None = None
    metrics_address: str = "127.0.0.1"
    poll: bool = False
    resync: float = DEFAULT_RESYNC_SECONDS
    debounce_ms: int = 50


def default_socket(state_dir: Path) -> Path:
    """``<state-dir>/pod-resources/kubelet.sock``, where the kubelet puts its
    socket under its root directory."""
    return state_dir / "pod-resources" / "kubelet.sock"


def _sync(agent: Agent, opts: AgentOptions, stop: threading.Event, log: logging.Logger) -> None:
    """``agent.sync()``, tried again while the process is out of file
    descriptors (logged each time; waits of :data:`RETRY_SECONDS`, doubled
    up to the resync period) until it succeeds or ``stop`` is set."""
    delay = min(RETRY_SECONDS, opts.resync)
    while True:
        try:
            agent.sync()
            return
        except OSError as e:
            if not descriptors_exhausted(e):
                raise
            log.warning(
                "Sync failed, out of file descriptors: trying again",
                extra=kv(error=f"{type(e).__name__}: {e}", retryInSeconds=delay),
            )
        if stop.wait(delay):
            return
        delay = min(delay * 2, max(opts.resync, RETRY_SECONDS))


def _watch(agent: Agent, opts: AgentOptions, stop: threading.Event, log: logging.Logger) -> None:
    import watchfiles

    force_polling = opts.poll
    delay = min(RETRY_SECONDS, opts.resync)
    while not stop.is_set():
        try:
            for _changes in watchfiles.watch(
                opts.manifests,
                watch_filter=None,
                debounce=opts.debounce_ms,
                step=min(50, opts.debounce_ms),
                stop_event=stop,
                rust_timeout=max(1, int(opts.resync * 1000)),
                yield_on_timeout=True,
                raise_interrupt=False,
                force_polling=force_polling,
                poll_delay_ms=200,
                recursive=False,
            ):
                delay = min(RETRY_SECONDS, opts.resync)
                _sync(agent, opts, stop, log)
            return
        except (OSError, RuntimeError) as e:
            if descriptors_exhausted(e):
                # A passing condition (a client holding many connections,
                # say): the watcher is started again later, in the same
                # mode; meanwhile a sync picks up what changed.
                log.warning(
                    "File watcher failed, out of file descriptors: trying again",
                    extra=kv(error=f"{type(e).__name__}: {e}", retryInSeconds=delay),
                )
                _sync(agent, opts, stop, log)
                stop.wait(delay)
                delay = min(delay * 2, max(opts.resync, RETRY_SECONDS))
                continue
            if not opts.manifests.is_dir():
                # As the kubelet's file source: a missing directory is an
                # empty one (every pod goes); look again every resync.
                log.warning(
                    "Manifest directory missing, no pods from it",
                    extra=kv(manifests=str(opts.manifests)),
                )
                _sync(agent, opts, stop, log)
                while not stop.wait(opts.resync) and not opts.manifests.is_dir():
                    pass
                _sync(agent, opts, stop, log)
                continue
            if force_polling:
                raise
            log.warning(
                "File watcher failed, polling instead", extra=kv(error=f"{type(e).__name__}: {e}")
            )
            force_polling = True


def run_agent(
    opts: AgentOptions,
    *,
    stop: threading.Event | None = None,
    logger: logging.Logger,
    on_ready: Callable[[Agent], None] | None = None,
) -> int:
    """Run until ``stop`` is set (SIGTERM/SIGINT set it when called from the
    main thread). Start-up problems raise (``InputError``,
    ``KubeletStartupError`` with the kubelet's message)."""
    stop = stop or threading.Event()
    raised = raise_open_files_limit()  # (as the kubelet's Go runtime does at start)
    if raised is not None:
        logger.info("Open files limit raised", extra=kv(softLimit=raised[1], was=raised[0]))
    if not opts.manifests.is_dir():
        raise InputError("--manifests: not a directory", file=str(opts.manifests))
    state = StateDir(opts.state_dir)
    cgroups: CgroupApplier = NoCgroups()
    if opts.cgroup_root is not None:
        if not opts.cgroup_root.is_dir():
            raise InputError("--cgroup-root: not a directory", file=str(opts.cgroup_root))
        version = opts.cgroup_version or detect_version(opts.cgroup_root)
        cgroups = CgroupTree(
            opts.cgroup_root, "systemd" if opts.cgroup_driver == "systemd" else "cgroupfs", version
        )
    metrics = AgentMetrics()
    agent = Agent(
        machine=opts.machine,
        config=opts.config,
        manifests=opts.manifests,
        state=state,
        logger=logger,
        metrics=metrics,
        cgroups=cgroups,
    )

    if threading.current_thread() is threading.main_thread():

        def _on_signal(signum: int, _frame: FrameType | None) -> None:
            logger.info("Signal received, stopping", extra=kv(signal=signal.Signals(signum).name))
            stop.set()

        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)

    grpc_server = None
    metrics_server = None
    try:
        _sync(agent, opts, stop, logger)
        if opts.podresources_socket is not None:
            from podnuma.grpc.server import serve_unix

            grpc_server = serve_unix(
                opts.podresources_socket,
                agent.provider(),
                on_request=metrics.on_podresources_request,
            )
            logger.info(
                "Serving the PodResources API", extra=kv(socket=str(opts.podresources_socket))
            )
        if opts.metrics_port is not None:
            try:
                metrics_server = metrics.serve(opts.metrics_port, opts.metrics_address)
            except OSError as e:
                raise InputError(
                    f"--metrics-port: cannot listen on {opts.metrics_address}:{opts.metrics_port}: "
                    f"{e.strerror or e}"
                ) from None
            port = getattr(metrics_server, "server_port", opts.metrics_port)
            logger.info(
                "Serving metrics",
                extra=kv(address=f"http://{opts.metrics_address}:{port}/metrics"),
            )
        if on_ready is not None:
            on_ready(agent)
        _watch(agent, opts, stop, logger)
    finally:
        if grpc_server is not None:
            grpc_server.stop(1.0).wait()
        if metrics_server is not None:
            metrics_server.shutdown()
            metrics_server.server_close()
        with agent.lock:
            agent.stopped = _now()
            agent.write_status()
        logger.info("Agent stopped", extra=kv(syncs=agent.syncs))
    return 0
