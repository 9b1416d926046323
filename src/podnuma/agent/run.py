"""The agent's loop: start, watch the manifest directory, stop on a signal.

Watching uses **watchfiles** (inotify on Linux, FSEvents/kqueue elsewhere;
its polling mode where native events are not available): any change in the
directory (the one holding the static-pod path when that is one file)
triggers a full re-read (:meth:`Agent.sync`), and a re-read also happens
every ``resync`` seconds without events, as the kubelet's file source
re-lists every 20 s. A static-pod path that does not exist is an empty
set, looked for every second (the kubelet's watch retry) and read once it
is there. When the native watcher cannot start (inotify
limits, some network file systems) the loop falls back to polling and says
so in the log; ``poll=True`` asks for polling from the start.

Running out of file descriptors ends nothing: a sync or a watcher that
fails with ``EMFILE``/``ENFILE`` is logged and tried again later (waits
from :data:`RETRY_SECONDS`, doubled up to the resync period). At start the
soft ``RLIMIT_NOFILE`` is raised as the Go runtime raises the kubelet's
(:func:`podnuma.fds.raise_open_files_limit`).

SIGTERM and SIGINT stop the loop; the PodResources server and the metrics
endpoint are shut down, the status file records the stop, exit code 0.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from podnuma.agent.cgroups import CgroupApplier, CgroupTree, NoCgroups, detect_version
from podnuma.agent.core import Agent, _now
from podnuma.agent.logs import kv
from podnuma.agent.metrics import AgentMetrics, MetricsServer
from podnuma.agent.state import StateDir
from podnuma.agent.static_pod_path import static_pod_path_problem
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.cgroups.from_run import CgroupLayout, config_layout
from podnuma.errors import InputError
from podnuma.fds import descriptors_exhausted, raise_open_files_limit
from podnuma.inputs.overrides import OPTION, Override, set_by
from podnuma.inputs.pathcheck import check_directory
from podnuma.inputs.pods import ConfigSource
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
    #: where the kubelet's configuration puts the pods' cgroups under
    #: ``cgroup_root`` (``None``: ``/``, with kubepods and QoS levels)
    cgroup_layout: CgroupLayout | None = None
    metrics_port: int | None = None
    metrics_address: str = "127.0.0.1"
    poll: bool = False
    resync: float = DEFAULT_RESYNC_SECONDS
    debounce_ms: int = 50


def agent_cgroup_layout(config: KubeletConfig, driver: str, source: ConfigSource | None,
                        overrides: Sequence[Override]) -> CgroupLayout:
    """Where ``config`` puts the pods' cgroups (its ``cgroupRoot``,
    ``cgroupsPerQOS``, ``enforceNodeAllocatable``) with ``driver``; a root
    the driver cannot name is refused at the field, in the configuration
    file or ``--set`` that gave it, as the kubelet refuses to start on it
    (``source``: where ``--kubelet-config``'s configuration is, ``None``
    for the built-in one): ``kubeletConfig.cgroupRoot`` of a scenario
    holding it inline, ``cgroupRoot`` of a configuration file (the one
    given, or the one a scenario's ``kubeletConfigFile`` names), as
    ``cgroups plan`` says."""
    try:
        return config_layout(config, "systemd" if driver == "systemd" else "cgroupfs")
    except InputError as err:
        if set_by("cgroupRoot", overrides) is not None:
            raise InputError(err.message, path="cgroupRoot", file=OPTION) from None
        if source is None:
            raise InputError(err.message, path="cgroupRoot") from None
        path = f"{source.prefix}.cgroupRoot" if source.prefix else "cgroupRoot"
        raise source.doc.enrich(InputError(err.message, path=path, file=source.input.name)) from None


def default_socket(state_dir: Path) -> Path:
    """``<state-dir>/pod-resources/kubelet.sock``, where the kubelet puts its
    socket under its root directory. ``InputError`` when ``pod-resources``
    there is a symbolic link: the socket the agent makes (and removes at its
    end) by default is in a directory of the state directory's own, not
    wherever a link leads (``--podresources-socket`` puts it elsewhere)."""
    directory = state_dir / "pod-resources"
    if directory.is_symlink():
        raise InputError(f"{directory.name}: a symbolic link: the PodResources socket is made by default "
                         "in a directory of the state directory's own (give --podresources-socket to "
                         "make it elsewhere)", file=str(state_dir))
    return directory / "kubelet.sock"


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


def _watched(path: Path) -> Path | None:
    """What is watched for changes of the static-pod path ``path``: the
    directory itself, the directory holding it when it is one file (a
    file replaced by a rename is seen there); ``None`` while it cannot be
    looked at (missing)."""
    try:
        st = os.stat(os.fsencode(path).rstrip(b"/"))
    except (OSError, ValueError):
        return None
    return path if stat.S_ISDIR(st.st_mode) else path.parent


def _wait_for_path(agent: Agent, opts: AgentOptions, stop: threading.Event, log: logging.Logger) -> None:
    """While the static-pod path cannot be looked at (the kubelet's file
    source: ``path does not exist, ignoring``, an empty set sent, the watch
    tried again every second): synced now (every pod of it goes) and at
    every resync, looked for every second; synced once it is there."""
    _sync(agent, opts, stop, log)  # (the sync logs the path missing)
    step = min(RETRY_SECONDS, opts.resync)
    waited = 0.0
    while not stop.wait(step):
        if _watched(opts.manifests) is not None:
            _sync(agent, opts, stop, log)
            return
        waited += step
        if waited >= opts.resync:
            waited = 0.0
            _sync(agent, opts, stop, log)


def _watch(agent: Agent, opts: AgentOptions, stop: threading.Event, log: logging.Logger) -> None:
    import watchfiles

    force_polling = opts.poll
    delay = min(RETRY_SECONDS, opts.resync)
    while not stop.is_set():
        target = _watched(opts.manifests)
        if target is None:
            _wait_for_path(agent, opts, stop, log)
            continue
        try:
            moved = False
            for _changes in watchfiles.watch(
                target,
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
                if _watched(opts.manifests) != target:
                    # (the path is gone, or became a file or a directory:
                    # what is watched changes)
                    moved = True
                    break
            if not moved:
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
            if _watched(opts.manifests) != target:
                # As the kubelet's file source: a missing path is an empty
                # set (every pod goes), looked for again.
                continue
            if force_polling:
                raise
            log.warning(
                "File watcher failed, polling instead", extra=kv(error=f"{type(e).__name__}: {e}")
            )
            force_polling = True


def _check_directory(path: Path, option: str) -> None:
    """``InputError`` unless ``path`` is a directory that can be reached
    and listed."""
    check_directory(path, option)  # (a directory that cannot be listed: cannot read)


def _bind_metrics(metrics: AgentMetrics, opts: AgentOptions, port: int) -> MetricsServer:
    try:
        return metrics.bind(port, opts.metrics_address)
    except OSError as e:
        raise InputError(
            f"--metrics-port: cannot listen on {opts.metrics_address}:{port}: {e.strerror or e}"
        ) from None


def run_agent(
    opts: AgentOptions,
    *,
    stop: threading.Event | None = None,
    logger: logging.Logger,
    on_ready: Callable[[Agent], None] | None = None,
) -> int:
    """Run until ``stop`` is set (SIGTERM/SIGINT set it when called from the
    main thread). Start-up problems raise (``InputError``,
    ``KubeletStartupError`` with the kubelet's message).

    Everything that can refuse a start cheaply is checked before the state
    directory is restored: the directories, the state directory's lock
    (one agent per directory), the socket (:func:`~podnuma.grpc.server.check_unix`:
    its path, what is there, a server listening on it, whether a socket can
    be bound beside it) and the metrics port (bound, served once the first
    sync is done). A start refused for any of them leaves the state
    directory as it was."""
    stop = stop or threading.Event()
    raised = raise_open_files_limit()  # (as the kubelet's Go runtime does at start)
    if raised is not None:
        logger.info("Open files limit raised", extra=kv(softLimit=raised[1], was=raised[0]))
    problem = static_pod_path_problem(str(opts.manifests))
    if problem is not None:
        raise InputError(f"--manifests: {problem}", file=str(opts.manifests))
    cgroups: CgroupApplier = NoCgroups()
    if opts.cgroup_root is not None:
        _check_directory(opts.cgroup_root, "--cgroup-root")
        version = opts.cgroup_version or detect_version(opts.cgroup_root)
        cgroups = CgroupTree(
            opts.cgroup_root, "systemd" if opts.cgroup_driver == "systemd" else "cgroupfs", version,
            opts.cgroup_layout,
        )
    state = StateDir(opts.state_dir)
    state.lock()  # (before anything in it is read, cleaned or written)
    try:
        return _run_locked(opts, state, cgroups, stop, logger, on_ready)
    finally:
        state.unlock()


def _run_locked(
    opts: AgentOptions,
    state: StateDir,
    cgroups: CgroupApplier,
    stop: threading.Event,
    logger: logging.Logger,
    on_ready: Callable[[Agent], None] | None,
) -> int:
    if opts.podresources_socket is not None:
        from podnuma.grpc.server import check_unix

        check_unix(opts.podresources_socket)
    metrics = AgentMetrics()
    metrics_server = None if opts.metrics_port is None else _bind_metrics(metrics, opts, opts.metrics_port)
    try:
        agent = Agent(
            machine=opts.machine,
            config=opts.config,
            manifests=opts.manifests,
            state=state,
            logger=logger,
            metrics=metrics,
            cgroups=cgroups,
        )
    except BaseException:
        if metrics_server is not None:
            metrics_server.server_close()
        raise

    if threading.current_thread() is threading.main_thread():

        def _on_signal(signum: int, _frame: FrameType | None) -> None:
            logger.info("Signal received, stopping", extra=kv(signal=signal.Signals(signum).name))
            stop.set()

        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)

    grpc_server = None
    metrics_serving = False
    ended = False
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
        if metrics_server is not None:
            threading.Thread(target=metrics_server.serve_forever, name="metrics", daemon=True).start()
            metrics_serving = True
            logger.info(
                "Serving metrics",
                extra=kv(address=f"http://{opts.metrics_address}:{metrics_server.server_port}/metrics"),
            )
        if on_ready is not None:
            on_ready(agent)
        _watch(agent, opts, stop, logger)
        ended = True
    finally:
        if grpc_server is not None:
            grpc_server.stop(1.0).wait()
        if metrics_server is not None:
            if metrics_serving:
                metrics_server.shutdown()
            metrics_server.server_close()
        unwritten: InputError | OSError | None = None
        try:
            with agent.lock:
                agent.stopped = _now()
                agent.write_status()
        except (InputError, OSError) as e:
            unwritten = e
            if not ended:  # (the error that stopped the agent is told; this one logged)
                logger.warning("Status file not written at stop", extra=kv(error=str(e)))
        logger.info("Agent stopped", extra=kv(syncs=agent.syncs))
    if unwritten is not None:
        raise unwritten
    return 0
