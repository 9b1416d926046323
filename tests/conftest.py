"""Suite-wide test settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _plain_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain output is 120 columns unless ``COLUMNS`` says otherwise; some
    runners (pytest-xdist workers) export ``COLUMNS``, so every test starts
    without it and the tests about it set it themselves."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
