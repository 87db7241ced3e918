"""Comparing the outputs of two dedup runs: their Parquet tables and their summaries."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

TABLES = ("documents", "pairs", "clusters")
"""The tables every run writes."""

TIMINGS = frozenset({"seconds", "cpu_seconds", "engine", "phases"})
"""Summary keys that hold timings or say how the run executed (not what it found)."""


def output_rows(folder: Path, name: str) -> list[dict[str, Any]]:
    """The rows of the run's table ``name`` (``<folder>/<name>.parquet``)."""
    rows: list[dict[str, Any]] = pq.read_table(folder / f"{name}.parquet").to_pylist()
    return rows


def output_tables(folder: Path, names: Sequence[str] = TABLES) -> dict[str, list[dict[str, Any]]]:
    """The rows of each table of ``names``."""
    return {name: output_rows(folder, name) for name in names}


def assert_same_tables(actual: Path, expected: Path, names: Sequence[str] = TABLES, *,
                       same_bytes: bool = False, types: bool = False,
                       rows: Callable[[list[dict[str, Any]]], Any] | None = None) -> None:
    """Each table of ``names`` has the same columns and rows in both runs: the same Arrow types
    too when ``types``, the same file bytes when ``same_bytes``. ``rows`` maps the actual
    run's rows before they are compared (to write URIs as paths, say)."""
    for name in names:
        found, wanted = actual / f"{name}.parquet", expected / f"{name}.parquet"
        if same_bytes:
            assert found.read_bytes() == wanted.read_bytes(), name
            continue
        found_table, wanted_table = pq.read_table(found), pq.read_table(wanted)
        assert found_table.column_names == wanted_table.column_names, name
        if types:
            assert found_table.schema.remove_metadata() == wanted_table.schema.remove_metadata(), \
                name
        found_rows = found_table.to_pylist()
        assert (rows(found_rows) if rows else found_rows) == wanted_table.to_pylist(), name


def without_timings(value: Any, ignored: frozenset[str] = TIMINGS) -> Any:
    """``value`` (a summary or part of one) without the keys of ``ignored``, at any depth."""
    if isinstance(value, dict):
        return {key: without_timings(item, ignored) for key, item in value.items()
                if key not in ignored}
    return value


def summary_facts(folder: Path, ignored: frozenset[str] = TIMINGS) -> dict[str, Any]:
    """The run's ``summary.json`` without timings: what the run found."""
    facts: dict[str, Any] = without_timings(json.loads((folder / "summary.json").read_text()),
                                            ignored)
    return facts
