"""A command that runs out of memory (a ``ulimit -v`` below what its input
needs) ends with one line and exit 2, as the web server answers such a job
422: never ``internal error: MemoryError``, exit 1."""

from __future__ import annotations

from typing import NoReturn

import pytest

from podnuma.cli.guard import EXIT_INPUT, guard


def _out_of_memory() -> NoReturn:
    raise MemoryError


def test_memory_error_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        guard(_out_of_memory)
    assert exited.value.code == EXIT_INPUT == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: the input needs more memory than this process may use"]
