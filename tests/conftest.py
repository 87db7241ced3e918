"""Shared pytest fixtures."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Tests check answers, never speed: no per-example deadline (a loaded machine is not a failure).
settings.register_profile("neardup", deadline=None)
settings.load_profile("neardup")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only data set next to the repository (``../shared/data``); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"../shared/data absent: {SHARED_DATA} not found; real-data tests need it")
    return SHARED_DATA


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One local[2] Spark session per test module (starting a JVM takes seconds)."""
    from neardup.engine.spark.session import spark_session

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime for Spark")
    with spark_session("local[2]", 4) as session:
        yield session
