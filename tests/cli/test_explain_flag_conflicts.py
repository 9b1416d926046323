"""explain refuses flags that the rest of the command line makes pointless
(a usage error, exit 2, one line, nothing on standard output) rather than
ignoring one of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "static-dual-socket.yaml"


@pytest.mark.parametrize(("args", "words"), [
    (["--no-search", "--search-time", "5"], "--search-time bounds the search that --no-search turns off"),
    (["-o", "json", "--picture"], "--picture draws in the text; -o json has no picture"),
    (["-o", "yaml", "--picture"], "--picture draws in the text; -o yaml has no picture"),
])
def test_pointless_flags_are_refused(args: list[str], words: str) -> None:
    r = CliRunner().invoke(cli, ["explain", str(EXAMPLE), *args])
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {words}")


@pytest.mark.parametrize("args", [["--no-search"], ["--search-time", "5"], ["-o", "json", "--no-picture"],
                                  ["--picture"]])
def test_the_flags_alone_still_work(args: list[str]) -> None:
    r = CliRunner().invoke(cli, ["explain", str(EXAMPLE), "--step", "1", *args])
    assert r.exit_code == 0, r.output
