"""Suite-wide hooks.

``PODNUMA_COLLECT_SCENARIOS=FILE``: every scenario file podnuma loads during
the run is appended (absolute path, one per line) to FILE. The differential
suite (tests/oracle) runs the end-to-end tests that way to send each of
their scenarios through the kubelet oracle too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_COLLECT = os.environ.get("PODNUMA_COLLECT_SCENARIOS")

if _COLLECT:
    import podnuma.inputs.scenario as _load_module

    _original = _load_module.load_scenario

    def _recording_load_scenario(path: Path) -> Any:
        with open(_COLLECT, "a", encoding="utf-8") as fh:
            fh.write(str(Path(path).resolve()) + "\n")
        return _original(path)

    _load_module.load_scenario = _recording_load_scenario  # type: ignore[assignment]
