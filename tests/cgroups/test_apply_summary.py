"""``podnuma cgroups apply``'s summary of what it wrote is a note, as every
command's (docs/cli.md): ``note: ...`` on standard error under ``-o table``,
silenced by ``--quiet``; with ``-o json|yaml`` the document on standard
output says it (unchanged), and no note is printed; the stale cgroups'
warning is printed always."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

FULL = Path(__file__).parent / "full.yaml"


def _apply(root: Path, *extra: str, quiet: bool = False) -> Result:
    return CliRunner().invoke(
        cli,
        [*(["-q"] if quiet else []), "cgroups", "apply", str(FULL), "--driver", "cgroupfs",
         "--cgroup-version", "2", "--root", str(root), *extra],
        prog_name="podnuma",
    )  # fmt: skip


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
@pytest.mark.parametrize("table", [[], ["-o", "table"]], ids=["default", "table"])
def test_the_summary_is_a_note(tmp_path: Path, dry_run: bool, table: list[str]) -> None:
    probe, root = tmp_path / "probe", tmp_path / "root"
    probe.mkdir()
    root.mkdir()
    counts = json.loads(_apply(probe, "--dry-run", "-o", "json").stdout)["counts"]
    r = _apply(root, *table, *(["--dry-run"] if dry_run else []))
    assert r.exit_code == 0, r.output
    done, gone = ("would write", "would remove") if dry_run else ("wrote", "removed")
    assert r.stderr == (
        f"note: {done} {counts['written']} files, {counts['created']} new cgroups under {root} "
        f"(plain directory); {gone} 0 cgroups of pods no longer in the plan\n"
    )
    assert r.stdout.splitlines()[0].startswith(("mkdir ", "write "))


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_quiet_silences_the_note(tmp_path: Path, dry_run: bool) -> None:
    loud = _apply(tmp_path, "--dry-run")
    assert loud.exit_code == 0 and loud.stderr.startswith("note: "), loud.output
    r = _apply(tmp_path, *(["--dry-run"] if dry_run else []), quiet=True)
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert r.stdout == loud.stdout and r.stdout.splitlines()  # the operations, as before


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("quiet", [False, True], ids=["loud", "quiet"])
def test_a_document_on_standard_output_and_no_note(tmp_path: Path, fmt: str, quiet: bool) -> None:
    (tmp_path / "root").mkdir()
    r = _apply(tmp_path / "root", "-o", fmt, quiet=quiet)
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    doc = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    assert doc["root"] == str(tmp_path / "root") and doc["dryRun"] is False
    assert doc["cgroupFileSystem"] is False
    assert doc["counts"]["written"] > 0 and doc["counts"]["created"] > 0
    assert set(doc) == {"root", "dryRun", "cgroupFileSystem", "operations", "counts"}


@pytest.mark.parametrize("quiet", [False, True], ids=["loud", "quiet"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_the_stale_warning_is_printed_always(tmp_path: Path, quiet: bool, fmt: str) -> None:
    assert _apply(tmp_path).exit_code == 0
    r = _apply(tmp_path, "--step", "0", "--keep-stale", "-o", fmt, quiet=quiet)
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    where = "the 'stale' lines" if fmt == "table" else "the 'stale' operations"
    assert lines[-1] == f"warning: 6 cgroups of pods no longer in the plan are left (see {where})"
    notes = [line for line in lines if line.startswith("note: ")]
    assert len(notes) == (1 if fmt == "table" and not quiet else 0)
    assert len(lines) == 1 + len(notes)


def test_a_root_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "a\nb"
    root.mkdir()
    r = _apply(root, "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("note: would write ") and "a\\nb" in r.stderr
