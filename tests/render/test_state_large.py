"""``podnuma state inspect`` of a large checkpoint: every entry drawn (table)
and listed (JSON); past the bounds of ``podnuma.inputs.state`` (entries,
bytes) one line and exit 2. The bounds are lowered here to keep the tests
quick; ``docs/limits.md`` gives the figures measured at the real ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.inputs import state as state_inputs
from podnuma.machine.cpuset import CPUSet

PODS = 1500


def _write(tmp_path: Path, pods: int) -> Path:
    entries = {f"pod-{i:05d}": {"app": CPUSet.of(2 * i), "side": CPUSet.of(2 * i + 1)} for i in range(pods)}
    data = CPUCheckpointData("static", CPUSet.of(2 * pods), entries)
    (tmp_path / "cpu_manager_state").write_bytes(encode_cpu_checkpoint(data))
    return tmp_path


def _inspect(directory: Path, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["state", "inspect", str(directory), *extra])
    return result.exit_code, result.stdout, result.stderr


def test_a_large_checkpoint_is_listed_whole_in_json(tmp_path: Path) -> None:
    code, out, _ = _inspect(_write(tmp_path, PODS), "-o", "json")
    assert code == 0
    pods = json.loads(out)["pods"]
    assert [p["uid"] for p in pods] == [f"pod-{i:05d}" for i in range(PODS)]
    for i, pod in enumerate(pods):
        assert [(c["name"], c["cpus"]) for c in pod["containers"]] == [
            ("app", str(2 * i)), ("side", str(2 * i + 1))
        ]


def test_a_large_checkpoint_is_drawn_whole_in_the_table(tmp_path: Path) -> None:
    code, out, _ = _inspect(_write(tmp_path, PODS))
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("pod-")]
    assert len(rows) == PODS  # one line a pod: its first container, the next under it
    assert rows[0][:3] == ["pod-00000", "app", "0"]
    assert rows[-1][:3] == [f"pod-{PODS - 1:05d}", "app", str(2 * (PODS - 1))]
    sides = [line.split() for line in out.splitlines() if line.strip().startswith("side ")]
    assert [s[1] for s in sides] == [str(2 * i + 1) for i in range(PODS)]
    assert out.rstrip().endswith("no inconsistencies")


def test_more_entries_than_the_bound_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_inputs, "MAX_CHECKPOINT_ENTRIES", 2 * 100)
    code, out, err = _inspect(_write(tmp_path, 100))  # 200 entries: at the bound
    assert code == 0, err
    code, out, err = _inspect(_write(tmp_path, 101))  # 202 entries
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {tmp_path / 'cpu_manager_state'}: 202 entries: more than podnuma reads in a "
        "checkpoint (200; a node runs at most a few hundred containers)"
    ]
    assert out == ""


def test_a_checkpoint_past_the_byte_bound_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = len(encode_cpu_checkpoint(CPUCheckpointData("static", CPUSet.of(0))))
    monkeypatch.setattr(state_inputs, "MAX_CHECKPOINT_BYTES", size + 10)
    code, _, err = _inspect(_write(tmp_path, 20))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cpu_manager_state" in lines[0], lines
    assert f"larger than the limit of {size + 10} bytes" in lines[0]
