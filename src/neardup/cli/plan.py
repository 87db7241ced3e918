"""``neardup plan``: Manku's design of permuted Hamming tables for f, k and N."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import click

from neardup.cli.method_option import MethodChoice
from neardup.config import DEFAULT_METHOD
from neardup.index.planner import Plan, TableLayout, plan

__all__ = ["count_option", "disk_advice", "free_bytes", "parse_count", "plan_command",
           "render_estimate", "render_plan"]

_POWER = re.compile(r"^\s*(\d+)\s*(?:\^|\*\*)\s*(\d+)\s*$")


def parse_count(text: str) -> int:
    """A positive count written as ``2^34``, ``2**34``, ``1e9``, ``8_000_000`` or ``8,000,000``;
    ValueError otherwise."""
    clean = str(text).replace("_", "").replace(",", "").strip()
    power = _POWER.match(clean)
    if power:
        if int(power[2]) > 64:
            raise ValueError(f"{text!r} is too large")
        count = int(pow(int(power[1]), int(power[2])))
    elif re.fullmatch(r"\d+", clean):
        count = int(clean)
    else:
        number = float(clean)
        if not number.is_integer():
            raise ValueError(f"{text!r} is not a whole number")
        count = int(number)
    if not 1 <= count <= 2**64:
        raise ValueError(f"{text!r} is not in 1..2**64")
    return count


def count_option(ctx: click.Context, param: click.Parameter, value: str) -> int:
    try:
        return parse_count(value)
    except (ValueError, OverflowError):
        raise click.BadParameter(f"{value!r} is not a count (write 2^34, 2**34, 1e9 or "
                                 "8000000)") from None


def _count_text(count: int) -> str:
    if count & (count - 1) == 0:
        return f"2^{count.bit_length() - 1} ({count:,})"
    return f"{count:,} (2^{math.log2(count):.2f})"


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    raise AssertionError  # pragma: no cover


def _segments(segments: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"{start}-{start + width - 1}" for start, width in segments)


def _row(index: int, layout: TableLayout, result: Plan) -> str:
    expected = result.expected_matches(layout.prefix_bits)
    return (f"{index:>5}  {layout.prefix_bits:>4}  {expected:>14,.6g}  "
            f"{_segments(layout.leading_segments()):<24}  {_segments(layout.segments)}")


def render_plan(result: Plan) -> str:
    """The plan as a short report with one row per table."""
    count = len(result.layouts)
    budget = f" (budget {result.table_budget})" if result.table_budget is not None else ""
    lines = [
        f"f={result.bits}, k={result.k}, N={_count_text(result.fingerprints)}",
        f"{count} tables{budget}, every prefix p_i >= {result.min_prefix} bits "
        f"(the paper's recursion on real-valued widths: {result.paper_recursion})",
        f"blocks: {result.blocks}",
        "",
        f"{'table':>5}  {'p_i':>4}  {'expected/probe':>14}  {'leading bits':<24}  "
        "permutation (bit ranges in placement order, bit 0 most significant)",
        *(_row(i, layout, result) for i, layout in enumerate(result.layouts, 1)),
        "",
        f"expected fingerprints checked per probe: {result.expected_per_probe:,.6g} over {count} "
        f"tables, at most {result.expected_matches(min(result.prefix_bits)):,.6g} in one table",
        f"memory uncompressed: {_size(result.bytes_uncompressed)} (8 bytes x N x {count} tables)",
        f"memory compressed:   {_size(result.bytes_compressed)} "
        f"({result.compressed_bits_per_fingerprint:.2f} bits per fingerprint, modelled for "
        f"uniformly random fingerprints, blocks of the compressed format included)",
    ]
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:,.1f} min"
    return f"{seconds / 3600:,.1f} h"


def free_bytes(folder: Path) -> tuple[Path, int]:
    """The free bytes of the disk that holds ``folder`` (or would: its nearest existing
    parent), and that parent."""
    found = folder.absolute()
    while not found.exists() and found != found.parent:
        found = found.parent
    return found, shutil.disk_usage(found).free


def disk_advice(estimate: Any, free: int) -> str | None:
    """What to do when the default work directory's peak exceeds ``free`` bytes (None: it
    fits)."""
    if estimate.work_bytes <= free:
        return None
    compact = estimate.compact_work_bytes
    if compact is None:
        return "the work directory does not fit there: give dedup --work on a larger disk"
    if compact <= free:
        return "the default work directory does not fit there: run dedup with --compact-work"
    return ("neither form of the work directory fits there: give dedup --work on a larger "
            "disk (with --compact-work it needs the least)")


def _disk_lines(estimate: Any, where: Path, free: int) -> list[str]:
    lines = [f"  disk: work directory {_size(estimate.work_bytes)} at its peak "
             f"({_size(estimate.kept_work_bytes)} kept after the run), outputs "
             f"{_size(estimate.output_bytes)}"]
    if estimate.compact_work_bytes is not None:
        lines.append(f"        with --compact-work: {_size(estimate.compact_work_bytes)} at its "
                     f"peak ({_size(estimate.compact_kept_work_bytes)} kept), for more CPU")
    lines.append(f"        free on the disk of {where}: {_size(free)}")
    advice = disk_advice(estimate, free)
    return [*lines, f"        {advice}"] if advice else lines


def render_estimate(estimate: Any, where: Path, free: int) -> str:
    """A run estimate (:class:`neardup.engine.sizing.RunEstimate`) as a short report, its work
    directory set against the ``free`` bytes of the disk of ``where``."""
    return "\n".join([
        f"dedup of {estimate.documents:,} documents of {estimate.mean_bytes:,} bytes, method "
        f"{estimate.method}, {estimate.workers} workers:",
        *_disk_lines(estimate, where, free),
        f"  peak memory: {_size(estimate.peak_memory_bytes)} (all the run's processes)",
        f"  time: {_duration(estimate.wall_seconds)} wall, {_duration(estimate.cpu_seconds)} CPU",
        f"  basis: {estimate.basis}",
    ])


@click.command("plan")
@click.option("--bits", "f", type=click.IntRange(2, 256), default=64, show_default=True,
              help="Fingerprint width f (tables are spelled out for 64-bit fingerprints).")
@click.option("--k", type=click.IntRange(0, 255), default=3, show_default=True,
              help="Largest Hamming distance every table set must find.")
@click.option("--fingerprints", default=None,
              callback=lambda ctx, param, value: None if value is None else
              count_option(ctx, param, value),
              help="How many fingerprints are stored: 2^34, 2**34, 1e9 or an integer.")
@click.option("--documents", default=None,
              callback=lambda ctx, param, value: None if value is None else
              count_option(ctx, param, value),
              help="Size a dedup run of this many documents instead (disk, peak memory, "
                   "time on this machine, from measured costs).")
@click.option("--method", type=MethodChoice(), default=DEFAULT_METHOD,
              show_default=True, help="With --documents: the dedup method.")
@click.option("--mean-bytes", type=click.IntRange(1, None), default=None,
              help="With --documents: mean document size [default: the measured corpus's].")
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="With --documents: worker processes [default: one per core].")
@click.option("--min-prefix", type=click.IntRange(1, 256), default=None,
              help="Shortest prefix p_i allowed: the fewest tables that reach it.")
@click.option("--tables", type=click.IntRange(1, None), default=None,
              help="Table budget: the design with at most this many tables whose shortest "
                   "prefix is longest.")
@click.option("--block-bytes", type=click.IntRange(24, 1 << 20), default=1024, show_default=True,
              help="Block size of the compressed tables, for the memory estimate.")
@click.option("--work", "work", type=click.Path(path_type=Path), default=Path("."),
              help="With --documents: where the work directory will be: its disk's free "
                   "space is checked against the estimate [default: this folder].")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_command(f: int, k: int, fingerprints: int | None, documents: int | None, method: str,
                 mean_bytes: int | None, workers: int | None, min_prefix: int | None,
                 tables: int | None, block_bytes: int, work: Path, as_json: bool) -> None:
    """Print Manku's permuted-table design for --fingerprints (blocks, tables and permutations,
    each table's prefix length p_i, expected fingerprints checked per probe, memory with and
    without compression), or, with --documents, the disk, peak memory and time of a dedup
    (the work directory in both forms, against the free space of the --work folder's disk)."""
    if (fingerprints is None) == (documents is None):
        raise click.UsageError("give exactly one of --fingerprints and --documents")
    if documents is not None:
        from neardup.engine.sizing import estimate_run

        estimate = estimate_run(documents, method, mean_bytes=mean_bytes, workers=workers)
        where, free = free_bytes(work)
        found = estimate.as_dict() | {"work_folder": str(where), "free_bytes": free,
                                      "disk_advice": disk_advice(estimate, free)}
        click.echo(json.dumps(found, indent=2) if as_json
                   else render_estimate(estimate, where, free))
        return
    if (min_prefix is None) == (tables is None):
        raise click.UsageError("give exactly one of --min-prefix and --tables")
    assert fingerprints is not None
    result = plan(f, k, fingerprints, min_prefix=min_prefix, tables=tables,
                  block_bytes=block_bytes)
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else render_plan(result))
