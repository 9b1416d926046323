"""``podnuma agent``: run the node agent (see :mod:`podnuma.agent`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from podnuma.cli.options import (
    NamedPath,
    PathRefused,
    Seconds,
    SocketPath,
    config_option,
    node_option,
    param_name,
    set_option,
    stdin_used_once,
)
from podnuma.inputs.pathcheck import path_message

__all__ = ["agent_command"]


class _StaticPodPath(NamedPath):
    """``--manifests``: what the kubelet's ``staticPodPath`` may be (a
    directory, one file, or nothing yet), refused in podnuma's wording
    otherwise (:mod:`podnuma.agent.static_pod_path`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and value:
            from podnuma.agent.static_pod_path import static_pod_path_problem

            path = os.fsdecode(value)
            problem = static_pod_path_problem(path)
            if problem is not None:
                raise PathRefused(path_message(path, param_name(param), problem))
            return self.coerce_path_result(path)
        return super().convert(value, param, ctx)


@click.command("agent")
@click.option(
    "--manifests",
    type=_StaticPodPath(path_type=Path),
    required=True,
    help="The static-pod directory to watch (one pod a file, YAML or JSON), or one manifest file; "
    "one that does not exist yet is watched for.",
)
@click.option(
    "--state-dir",
    type=NamedPath(path_type=Path, file_okay=False),
    required=True,
    help="Where cpu_manager_state, memory_manager_state and the status file live (created if needed).",
)
@node_option
@config_option
@click.option(
    "--podresources-socket",
    type=SocketPath(creates=True),
    default=None,
    help="Unix socket of the PodResources API [default: STATE_DIR/pod-resources/kubelet.sock].",
)
@click.option(
    "--cgroup-root",
    type=NamedPath(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="Write the pods' cgroups (cpuset, CPU, memory) under this cgroup mount or directory.",
)
@click.option(
    "--cgroup-driver",
    type=click.Choice(("cgroupfs", "systemd")),
    default="cgroupfs",
    show_default=True,
    help="Cgroup naming, as the kubelet's cgroupDriver.",
)
@click.option(
    "--cgroup-version",
    type=click.Choice(("1", "2")),
    default=None,
    help="Cgroup version [default: detected from --cgroup-root].",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve Prometheus metrics on 127.0.0.1:PORT (off by default).",
)
@click.option("--poll", is_flag=True, help="Poll the directory instead of native file events.")
@click.option(
    "--resync",
    type=Seconds(min=0.1),
    default=20.0,
    show_default=True,
    help="Seconds between full re-reads of the directory without events.",
)
@set_option
def agent_command(
    manifests: Path,
    state_dir: Path,
    node_file: str | None,
    config_file: str | None,
    podresources_socket: Path | None,
    cgroup_root: Path | None,
    cgroup_driver: str,
    cgroup_version: str | None,
    metrics_port: int | None,
    poll: bool,
    resync: float,
    set_values: tuple[str, ...],
) -> None:
    """Admit the pods of a static-pod directory as the kubelet does, keep the
    kubelet's checkpoints, serve the PodResources API. Stops on SIGTERM/SIGINT."""
    from podnuma.cli.app import _guard

    stdin_used_once(node_file, config_file)

    def go() -> int:
        # Everything of the agent extra first, before anything starts: without
        # it, the guard says which extra to install.
        import watchfiles  # noqa: F401

        import podnuma.grpc.server  # noqa: F401
        from podnuma.agent.logs import setup_logging
        from podnuma.agent.run import AgentOptions, agent_cgroup_layout, default_socket, run_agent
        from podnuma.inputs.overrides import parse_overrides
        from podnuma.inputs.pods import config_source, node_and_config
        from podnuma.inputs.text import TextInput

        overrides = parse_overrides(set_values)
        # the machine and the configuration (--set applied), the kubelet started
        # on them once: what it refuses is named by file (or --set) and field
        config_input = TextInput.read(config_file, what="kubelet configuration") if config_file is not None else None
        machine, config, _, _ = node_and_config(
            TextInput.read(node_file, what="node") if node_file is not None else None,
            config_input,
            overrides,
        )
        layout = None
        if cgroup_root is not None:  # the pods' cgroups where the configuration puts them
            # (the file and field path of cgroupRoot: the scenario's
            # kubeletConfig, or the file it or --kubelet-config names)
            source = config_source(config_input) if config_input is not None else None
            layout = agent_cgroup_layout(config, cgroup_driver, source, overrides)
        opts = AgentOptions(
            manifests=manifests,
            state_dir=state_dir,
            machine=machine,
            config=config,
            podresources_socket=podresources_socket or default_socket(state_dir),
            cgroup_root=cgroup_root,
            cgroup_driver=cgroup_driver,
            cgroup_version=int(cgroup_version) if cgroup_version else None,
            cgroup_layout=layout,
            metrics_port=metrics_port,
            poll=poll,
            resync=resync,
        )
        # (a checkpoint of the state directory the kubelet refuses is raised
        # with the kubelet's message, which names the file)
        return run_agent(opts, logger=setup_logging())

    _guard(go)
