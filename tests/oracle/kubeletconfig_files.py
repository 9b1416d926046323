"""What the kubelet-configuration file differential tests share: podnuma's
answer for a ``--kubelet-config`` file (its error's words, or ``None``)
and the kubelet's (``kubelet-oracle kubeletconfig --file``: one JSON line a
file, ``error`` when the kubelet's loader refuses it)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.pods import load_config_file

__all__ = ["kubelet_reason", "oracle_file_answers", "outcomes", "podnuma_file_error", "words_agree", "write_files"]


def podnuma_file_error(path: Path) -> str | None:
    """podnuma's words for the file, ``None`` when it loads."""
    try:
        load_config_file(path)
    except (InputError, KubeletStartupError) as e:
        return str(e)
    return None


def oracle_file_answers(oracle_binary: str, paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The kubelet's loader's answer for each file, in order."""
    proc = subprocess.run([oracle_binary, "kubeletconfig", "--file", *map(str, paths)], capture_output=True,
                          text=True, check=True, timeout=300)  # fmt: skip
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(paths)
    return answers


def write_files(items: Sequence[tuple[str, bytes | str]], tmp_path: Path, suffix: str) -> list[Path]:
    """Each item's content in a file of its own (``00000.<suffix>``...)."""
    paths = []
    for i, (_, data) in enumerate(items):
        p = tmp_path / f"{i:05d}.{suffix}"
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")
        paths.append(p)
    return paths


def kubelet_reason(error: str) -> str:
    """The kubelet's own words in the oracle's error (after its file's
    name); a document it quotes (``Object 'Kind' is missing in '...'``)
    with its line breaks escaped, as podnuma's one line writes it."""
    reason = error.split(", error ", 1)[-1]
    head, sep, doc = reason.partition("' is missing in '")
    if sep:
        reason = head + sep + doc.replace("\r", "\\r").replace("\n", "\\n")
    return reason


def outcomes(
    oracle_binary: str, tmp_path: Path, items: Sequence[tuple[str, bytes | str]], suffix: str
) -> tuple[list[str], int, list[tuple[str, str, str]]]:
    """Each item written to a file, loaded by podnuma and by the kubelet:
    (a line for each item one loads and the other refuses; how many both
    load; ``(name, podnuma's words, the kubelet's error)`` for each both
    refuse, whose words the caller compares)."""
    paths = write_files(items, tmp_path, suffix)
    answers = oracle_file_answers(oracle_binary, paths)
    mismatches: list[str] = []
    loaded = 0
    refused: list[tuple[str, str, str]] = []
    for (name, _), path, answer in zip(items, paths, answers, strict=True):
        theirs, mine = answer.get("error"), podnuma_file_error(path)
        if (theirs is None) != (mine is None):
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {theirs!r}")
        elif theirs is None or mine is None:
            loaded += 1
        else:
            refused.append((name, mine, theirs))
    return mismatches, loaded, refused


def words_agree(
    oracle_binary: str, tmp_path: Path, items: Sequence[tuple[str, bytes | str]], suffix: str
) -> tuple[list[str], int, int]:
    """:func:`outcomes`, and for each file both refuse, the kubelet's own
    words found in podnuma's: (the differences, how many both load, how
    many both refuse)."""
    mismatches, loaded, refused = outcomes(oracle_binary, tmp_path, items, suffix)
    for name, mine, theirs in refused:
        if kubelet_reason(theirs) not in mine:
            mismatches.append(f"{name}: podnuma {mine!r} != kubelet {kubelet_reason(theirs)!r}")
    return mismatches, loaded, len(refused)
