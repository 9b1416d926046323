"""The kubelet oracle binary (and the runtime oracle built beside it) for
the differential suite.

``PODNUMA_ORACLE`` names a built ``kubelet-oracle``; otherwise ``oracle/build``
builds it (Go >= 1.26, module download included) and its last stdout line is
the binary's path. Without Go the differential tests are skipped with one
reason, except under ``CI=true``, where that is a failure.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"kubelet oracle unavailable under CI: {reason}", pytrace=False)
    pytest.skip(f"kubelet oracle tests skipped: {reason}")


def _go_available() -> bool:
    return shutil.which("go") is not None or Path("/usr/local/go/bin/go").exists()


@pytest.fixture(scope="session")
def oracle_binary(tmp_path_factory: pytest.TempPathFactory) -> str:
    env = os.environ.get("PODNUMA_ORACLE")
    if env:
        if not os.access(env, os.X_OK):
            _unavailable(f"PODNUMA_ORACLE={env} is not an executable")
        return env
    if not _go_available():
        _unavailable("Go is not installed (Go >= 1.26 builds oracle/)")
    build = ROOT / "oracle" / "build"
    if not build.exists():
        _unavailable("oracle/build is missing")
    # one build at a time (pytest-xdist workers share the module cache)
    lock_path = tmp_path_factory.getbasetemp().parent / "kubelet-oracle-build.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env_vars = dict(os.environ)
        env_vars["PATH"] = env_vars.get("PATH", "") + os.pathsep + "/usr/local/go/bin"
        proc = subprocess.run(
            [str(build)], capture_output=True, text=True, timeout=3600, check=False, env=env_vars
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        pytest.fail(f"oracle/build failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}", pytrace=False)
    path = lines[-1].strip()
    if not os.access(path, os.X_OK):
        pytest.fail(f"oracle/build printed {path!r}, not an executable", pytrace=False)
    return path


@pytest.fixture(scope="session")
def runtime_oracle(oracle_binary: str) -> str:
    """``runtime-oracle`` (containerd's and runc's side of a container's
    cgroup): ``PODNUMA_RUNTIME_ORACLE``, else the one ``oracle/build``
    builds beside ``kubelet-oracle``."""
    env = os.environ.get("PODNUMA_RUNTIME_ORACLE")
    path = env or str(Path(oracle_binary).with_name("runtime-oracle"))
    if not os.access(path, os.X_OK):
        _unavailable(f"{path} is not an executable (oracle/build builds it beside kubelet-oracle)")
    return path


def pytest_report_header() -> str:
    from tests.oracle.harness import random_settings

    seed, count = random_settings()
    return f"kubelet oracle: seed {seed}, {count} random scenarios (PODNUMA_ORACLE_SEED / PODNUMA_ORACLE_COUNT)"
