"""A command run with one of its standard streams a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal


def run_on_a_terminal(argv: Sequence[str], *, stream: Literal["stdout", "stderr"], env: Mapping[str, str],
                      cwd: Path) -> tuple[int, bytes]:
    """``argv`` run with ``stream`` a pseudo-terminal, read here to its end
    (the other stream and standard input ``/dev/null``): its exit code and
    what the terminal showed."""
    master, slave = pty.openpty()
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: slave}
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=streams["stdout"],
                            stderr=streams["stderr"], env=dict(env), cwd=cwd)
    os.close(slave)
    shown: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # (the terminal's other side closed)
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = proc.wait(timeout=300)
    reader.join(timeout=10)
    os.close(master)
    return code, b"".join(shown)
