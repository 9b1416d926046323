"""A file argument's path and directory as pathlib reads them, without
pathlib: the same text on every path made of a few tricky pieces, and the
same directory reaching a scenario's loader."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from podnuma.errors import InputError
from podnuma.inputs import pathtext, text
from podnuma.inputs.pathtext import parent_text, path_text
from podnuma.inputs.scenario import load_scenario_text
from podnuma.inputs.scenario_stream import ScenarioFile

from ..scenario.helpers import base

PIECES = ["", "/", "//", "///", ".", "..", "a", "b.json", " ", "~", "-", "\\", ".x", "é"]


def _paths() -> list[str]:
    return ["".join(p) for k in range(1, 5) for p in itertools.product(PIECES, repeat=k)]


@pytest.mark.skipif(not pathtext._POSIX, reason="POSIX paths are read by hand")
def test_path_and_parent_are_pathlibs() -> None:
    paths = _paths()
    assert len(paths) > 40_000
    for p in paths:
        assert path_text(p) == str(PurePosixPath(p)), p
        assert parent_text(p) == str(PurePosixPath(p).parent), p
        assert path_text(Path(p)) == str(Path(p)) and parent_text(Path(p)) == str(Path(p).parent)


def test_scenario_file_opens_and_resolves_as_pathlib(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "s.json").write_text(json.dumps(base()), encoding="utf-8")
    for arg in ("sub/s.json", "./sub//s.json", "sub/./s.json", str(tmp_path / "sub" / "s.json")):
        src = ScenarioFile(arg)
        try:
            assert src.path == Path(arg) and src.base_dir == Path(arg).parent
            assert src.directory == str(Path(arg).parent) and src.origin == arg
        finally:
            src.close()
    # (a name ending as a directory's is not the file: the system's answer,
    # where pathlib would drop the ending)
    for arg in ("sub/s.json/", "sub/s.json/."):
        with pytest.raises(InputError, match=r": cannot read scenario file: Not a directory$"):
            ScenarioFile(arg)


def test_base_dir_given_as_text_is_a_path(tmp_path: Path) -> None:
    scenario = load_scenario_text(json.dumps(base()), name="s.json", base_dir="sub/x")
    assert scenario.base_dir == Path("sub/x") and isinstance(scenario.base_dir, Path)
    assert scenario == load_scenario_text(json.dumps(base()), name="s.json",
                                          base_dir=Path("sub/x"))


def test_nowhere_is_a_path() -> None:
    """``text.NOWHERE`` is ``Path("/nonexistent")``, made when first asked
    for (importing the module does not make it) and kept: every later read
    is the same object, from the module's globals."""
    assert Path("/nonexistent") == text.NOWHERE and isinstance(text.NOWHERE, Path)
    assert vars(text)["NOWHERE"] is text.NOWHERE
    fresh = subprocess.run(
        [sys.executable, "-c", "import pathlib, podnuma.inputs.text as t\n"
         "before = 'NOWHERE' in vars(t)\n"
         "w = t.NOWHERE\n"
         "print(before, isinstance(w, pathlib.Path), w == pathlib.Path('/nonexistent'), "
         "vars(t).get('NOWHERE') is w, t.NOWHERE is w)"],
        capture_output=True, text=True, timeout=120, check=False)
    assert (fresh.returncode, fresh.stdout.split(), fresh.stderr) == (0, ["False"] + ["True"] * 4, "")
    with pytest.raises(AttributeError):
        text.NO_SUCH_NAME  # type: ignore[attr-defined]  # noqa: B018
