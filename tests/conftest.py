"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only data set next to the repository (``../shared/data``); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"../shared/data absent: {SHARED_DATA} not found; real-data tests need it")
    return SHARED_DATA
