from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet.generate import generate_fleet

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


def need(module: str) -> None:
    """Skip when an optional dependency is missing; fail under CI=true."""
    if importlib.util.find_spec(module) is None:
        reason = f"{module} is not installed (pip install 'podnuma[fleet]')"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def copy_of(src: Path, tmp_path: Path) -> Path:
    """A copy of the fleet ``src`` under ``tmp_path``, free to damage."""
    dst = tmp_path / "fleet"
    shutil.copytree(src, dst)
    return dst


def generated(tmp_path_factory: pytest.TempPathFactory, name: str, **options: Any) -> Path:
    """A fleet written by ``generate_fleet`` with ``options`` (a module's
    fleet, generated once and copied by :func:`copy_of` for each test)."""
    d = tmp_path_factory.mktemp(name) / "fleet"
    generate_fleet(d, **options)
    return d


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the recorded cluster dump, free to damage."""
    return copy_of(EXAMPLE, tmp_path)


@pytest.fixture(scope="session")
def small_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("gen") / "fleet"
    generate_fleet(d, nodes=10, pods_per_node=24, seed=7)
    return d


@pytest.fixture(scope="session")
def dask_client() -> Any:
    need("distributed")
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
