"""Sizing a batch run before it starts: disk, peak memory and time on this machine.

The estimates come from per-document costs that ``benchmarks/scale.py --write-costs`` measured
with whole ``neardup dedup`` processes and stored in ``costs.json`` beside this module:

- time: the fingerprint stage costs ``fingerprint_core_s`` core-seconds per document (reading,
  decompressing, canonical form, prints, writing partitions), scaled by the mean document size
  and shared by the workers (at most one per core); the later stages run in one process at
  ``serial_s`` seconds per document; plus a fixed start-up;
- disk: ``work_peak_bytes`` per document, the largest size the work directory reached during
  the run (the partitions plus the bucket files of the stage then running), and ``work_bytes``,
  what it keeps once finished (the partitions, numbering, pairs and clusters a re-run or an
  ``--against`` run reads), both scaled by the mean size (the verification shingle sets
  dominate); ``compact_work_peak_bytes`` and ``compact_work_bytes``, the same for a work
  directory of token sequences (the engine's ``compact_sets``, ``dedup --compact-work``),
  measured apart (``benchmarks/workdir_sets.py``); ``output_bytes`` per document for the
  tables;
- memory: the peak summed over the run's processes, interpolated between the sizes measured and
  extended past the largest by the line through the last two (flat when one size was measured:
  said so in :attr:`RunEstimate.basis`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.errors import ConfigError

__all__ = ["COSTS", "RunEstimate", "estimate_run", "load_costs", "work_bytes_for"]

COSTS = Path(__file__).with_name("costs.json")


@dataclass(frozen=True, slots=True)
class RunEstimate:
    """What a ``dedup`` of ``documents`` documents is expected to need."""

    documents: int
    method: str
    mean_bytes: int
    workers: int
    work_bytes: float
    """The work directory at its largest, during the run."""
    kept_work_bytes: float
    """What the work directory keeps once the run has finished."""
    compact_work_bytes: float | None
    """:attr:`work_bytes` for a work directory of token sequences (None: not measured)."""
    compact_kept_work_bytes: float | None
    """:attr:`kept_work_bytes` for a work directory of token sequences."""
    output_bytes: float
    peak_memory_bytes: float
    wall_seconds: float
    cpu_seconds: float
    basis: str

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def load_costs(path: Path = COSTS) -> dict[str, Any]:
    try:
        costs: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path}: no measured costs ({err}); run benchmarks/scale.py "
                          "--write-costs") from err
    return costs


def _memory(points: list[list[float]], documents: int) -> tuple[float, str]:
    """Peak bytes at ``documents`` from the measured (documents, MiB) points: joined by lines
    between them (the engine's memory levels off once its budget is reached, so one line
    through all of them overstates the large sizes), extended past the largest by the line
    through the last two (never falling), and held at the smallest's below it."""
    points = sorted(points)
    sizes = [n for n, _ in points]
    peaks = [m for _, m in points]
    if len(points) == 1:
        return peaks[0] * 2**20, f"memory flat at the peak measured at {sizes[0]:,.0f}"
    measured = f"memory between the peaks measured at {', '.join(f'{n:,.0f}' for n in sizes)}"
    if documents <= sizes[-1]:
        return float(np.interp(documents, sizes, peaks)) * 2**20, measured + " documents"
    slope = max(0.0, (peaks[-1] - peaks[-2]) / (sizes[-1] - sizes[-2]))
    return (peaks[-1] + slope * (documents - sizes[-1])) * 2**20, (
        measured + " documents, extended by the line through the last two")


def _work_per_document(unit: dict[str, Any], *, compact: bool = False,
                       peak: bool = True) -> float:
    """The work directory's bytes a document of the measured size: at its peak or kept, of
    stored sets or (``compact``) of token sequences; KeyError when not measured."""
    prefix = "compact_" if compact else ""
    kept = unit[f"{prefix}work_bytes"]
    return float(unit.get(f"{prefix}work_peak_bytes", kept) if peak else kept)


def work_bytes_for(input_bytes: int, method: str, *, compact: bool = False) -> int | None:
    """The work directory's largest size for inputs of ``input_bytes`` (as stored: compressed
    inputs need more), scaled from the measured run of ``method`` (``compact``: of token
    sequences); None when it was not measured."""
    try:
        unit = load_costs()["methods"][method]
        return int(input_bytes * _work_per_document(unit, compact=compact) / unit["mean_bytes"])
    except (ConfigError, KeyError, TypeError, ZeroDivisionError):
        return None


def _compact_work(unit: dict[str, Any], documents: float, *, peak: bool) -> float | None:
    try:
        return documents * _work_per_document(unit, compact=True, peak=peak)
    except KeyError:
        return None


def estimate_run(documents: int, method: str, *, mean_bytes: int | None = None,
                 workers: int | None = None, costs: dict[str, Any] | None = None
                 ) -> RunEstimate:
    """The estimate for ``documents`` documents of ``mean_bytes`` (default: those measured)."""
    costs = load_costs() if costs is None else costs
    if method not in costs["methods"]:
        raise ConfigError(f"no measured costs for method {method!r} (measured: "
                          f"{', '.join(sorted(costs['methods']))})")
    unit = costs["methods"][method]
    size = mean_bytes or int(unit["mean_bytes"])
    scale = size / unit["mean_bytes"]
    cores = os.cpu_count() or 1
    workers = workers or cores
    parallel = documents * unit["fingerprint_core_s"] * scale
    wall = unit["startup_s"] + parallel / min(workers, cores) + documents * unit["serial_s"]
    memory, how = _memory(unit["peak_tree_rss_mb"], documents)
    return RunEstimate(
        documents=documents, method=method, mean_bytes=size, workers=workers,
        work_bytes=documents * _work_per_document(unit) * scale,
        kept_work_bytes=documents * _work_per_document(unit, peak=False) * scale,
        compact_work_bytes=_compact_work(unit, documents * scale, peak=True),
        compact_kept_work_bytes=_compact_work(unit, documents * scale, peak=False),
        output_bytes=documents * unit["output_bytes"],
        peak_memory_bytes=memory, wall_seconds=wall,
        cpu_seconds=unit["startup_s"] + parallel + documents * unit["serial_s"],
        basis=f"measured by {costs['measured_by']} on {costs['machine']} "
              f"({unit['documents']:,} documents of {unit['mean_bytes']:,.0f} bytes, "
              f"{unit['workers']} workers); time and disk linear in documents and mean bytes; "
              f"{how}" + (f"; compact work directory: {costs['compact_measured_by']}"
                          if "compact_measured_by" in costs else ""))
