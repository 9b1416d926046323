"""Shared command-line plumbing of the what-if commands: error to exit code
mapping (as ``podnuma.cli``: 2 = invalid input or a configuration the kubelet
would refuse, 1 = a bug) and the common options. Kept here rather than
imported from ``podnuma.cli``, which imports these commands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.errors import InputError, KubeletStartupError
from podnuma.machine.topology import Machine
from podnuma.node import Node
from podnuma.scenario.startup import StartupFailure, startup_failure
from podnuma.whatif.inputs import default_config, default_machine, load_config_file, load_node_file

__all__ = ["EXIT_INPUT", "EXIT_BUG", "fail", "guard", "node_and_config"]

EXIT_BUG = 1
EXIT_INPUT = 2

T = TypeVar("T")


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def guard(fn: Callable[[], T]) -> T:
    """Run ``fn``; podnuma's errors become a one-line message and an exit code."""
    try:
        return fn()
    except InputError as e:
        fail(str(e), EXIT_INPUT)
    except KubeletStartupError as e:
        where = e.location() if isinstance(e, StartupFailure) else ""
        fail(f"kubelet would not start: {e}" + (f" ({where})" if where else ""), EXIT_INPUT)
    except (KeyboardInterrupt, SystemExit, click.exceptions.Exit, click.ClickException):
        raise
    except Exception as e:
        if os.environ.get("PODNUMA_DEBUG") == "1":
            raise
        fail(
            f"internal error: {type(e).__name__}: {e} (set PODNUMA_DEBUG=1 for a traceback)",
            EXIT_BUG,
        )


def node_and_config(
    node_file: Path | None, config_file: Path | None
) -> tuple[Machine, KubeletConfig, str, str]:
    """The machine and configuration from the options, or the built-in ones;
    plus a description of where each came from."""
    machine = load_node_file(node_file) if node_file is not None else default_machine()
    cfg_name = str(config_file) if config_file is not None else "built-in kubelet configuration"
    try:
        config = load_config_file(config_file) if config_file is not None else default_config()
        # The node as configured must start (the what-if runs vary the scope
        # and the pod form, not this): a configuration the kubelet refuses,
        # or one that does not fit the node, is invalid input.
        Node(machine, config)
    except StartupFailure:
        raise
    except KubeletStartupError as e:
        cfg = locals().get("config")
        raise startup_failure(
            e, file=cfg_name, config=cfg if isinstance(cfg, KubeletConfig) else None,
            kubelet_config_file=cfg_name,
        ) from None
    node_from = str(node_file) if node_file is not None else "built-in (2 sockets x 8 cores x 2 threads, 64Gi per NUMA node)"
    cfg_from = (
        str(config_file)
        if config_file is not None
        else "built-in (static CPU, Static memory, restricted, scope pod, reserved CPUs 0,16)"
    )
    return machine, config, node_from, cfg_from


node_option = click.option(
    "--node",
    "node_file",
    type=click.Path(path_type=Path, dir_okay=True),
    default=None,
    help="The node: a file with a scenario 'node' mapping (any machine form) or a scenario file. "
    "Default: a built-in 2-socket node (32 CPUs, 2 NUMA nodes).",
)
config_option = click.option(
    "--kubelet-config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=True),
    default=None,
    help="A KubeletConfiguration file or a scenario file (its kubeletConfig). "
    "Default: static CPU / Static memory / restricted / scope pod.",
)
