"""A real control plane (etcd + kube-apiserver built from the Go module
proxy by cluster/build), started once per test session on loopback.

Without the binaries the tests skip, except under CI=true (.ci/run builds
them), where a missing binary fails the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import controlplane
from .controlplane import ControlPlane


def need_binaries(names: tuple[str, ...]) -> None:
    missing = controlplane.missing_binaries(names)
    if not controlplane.have_openssl():
        missing.append("openssl")
    if missing:
        reason = (f"{', '.join(missing)} not built in {controlplane.bin_dir()} "
                  "(run cluster/build, or set PODNUMA_CLUSTER_BIN)")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # One control plane per session: keep these tests on one xdist worker
    # (the suite runs with --dist loadgroup).
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.xdist_group("cluster"))


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    need_binaries(controlplane.CONTROL_PLANE_BINARIES)
    cp = controlplane.start(tmp_path_factory.mktemp("control-plane"))
    try:
        yield cp
    finally:
        cp.stop()
