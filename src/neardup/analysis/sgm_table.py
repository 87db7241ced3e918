"""S&GM98's Table 1 in the report: space and time per chunking and per phase.

One row per phase of every ``dedup --method chunks`` run given to the report (one run per
chunking: ``lines:4``, ``lines:2``...), read from its ``summary.json``: the FPrint-DocID relation's
rows and bytes (a 32-bit fingerprint and a 32-bit document id per row, as the paper stores
them), the pairs the phase expanded or counted, its CPU and wall time and the peak memory it
allocated (tracemalloc).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neardup.analysis.dedupdir import DedupRun
from neardup.analysis.model import SECTION_TITLES, Section, Stat, Table, Value

__all__ = ["ROW_BYTES", "chunks_section"]

ROW_BYTES = 8
"""Bytes of one FPrint-DocID row: a 32-bit fingerprint and a 32-bit document id."""
_PAIR_COUNTS = ("pairs_expanded", "pairs_counted", "pairs_to_scan", "candidates")


def _pairs(phase: dict[str, Any]) -> Value:
    for name in _PAIR_COUNTS:
        if name in phase:
            return int(phase[name])
    return None


def _rows(run: DedupRun, label: str) -> list[tuple[Value, ...]]:
    near = run.summary["near"]
    rows = int(near.get("fprint_docid_rows", 0))
    out: list[tuple[Value, ...]] = []
    for name, phase in near.get("phases", {}).items():
        if not isinstance(phase, dict):
            continue
        out.append((label, str(near.get("chunk")), near.get("min_shared"),
                    str(near.get("algorithm")), rows, rows * ROW_BYTES, name, _pairs(phase),
                    phase.get("cpu_seconds"), phase.get("wall_seconds"),
                    phase.get("peak_bytes")))
    return out


def chunks_section(runs: Sequence[DedupRun], labels: Sequence[str]) -> Section:
    """The Table 1 section over the runs of S&GM's overlap among ``runs`` (those whose near
    record names its algorithm; omitted when none)."""
    chosen = [(run, label) for run, label in zip(runs, labels, strict=True)
              if isinstance(run.summary.get("near"), dict) and "algorithm" in run.summary["near"]]
    if not chosen:
        return Section("chunks", SECTION_TITLES["chunks"],
                       omitted="no chunks run: run dedup --method chunks (one per chunking)")
    rows = tuple(row for run, label in chosen for row in _rows(run, label))
    table = Table("Space and time per chunking and phase",
                  ("run", "chunking", "T", "algorithm", "FPrint-DocID rows", "relation bytes",
                   "phase", "pairs", "CPU s", "wall s", "peak memory"),
                  ("text", "text", "count", "text", "count", "bytes", "text", "count",
                   "number", "number", "bytes"), rows)
    overlap = sum(int(run.summary["near"].get("overlap_pairs", 0)) for run, _ in chosen)
    return Section(
        "chunks", SECTION_TITLES["chunks"],
        "; ".join(run.describe(label, "summary.json") for run, label in chosen),
        caption="S&GM98's Table 1 in kind: per chunking, the FPrint-DocID relation (8 bytes a "
                "row) and, per phase of the overlap algorithm, the pairs it expanded or counted, "
                "its time and the peak memory it allocated.",
        stats=(Stat("chunkings", "chunking runs", len(chosen)),
               Stat("overlap_pairs", "pairs sharing at least T chunks, all runs", overlap)),
        tables=(table,))
