from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A short directory for unix sockets (their paths are limited to ~107 bytes)."""
    d = Path(tempfile.mkdtemp(prefix="pn", dir=os.environ.get("PODNUMA_SOCK_TMP", "/tmp")))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
