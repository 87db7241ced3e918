"""Manku's planner (section 3.1): how many permuted tables, which permutations, which prefixes.

A design cuts the f bits into r blocks and builds one table per choice of r - k leading blocks
(``C(r, k)`` tables). Two fingerprints within Hamming distance k differ in at most k blocks, so
they agree on every leading block of at least one table (pigeonhole). A table may go on
recursively: the k blocks that do not lead are cut again into blocks of their own, and so on, until
every table's fixed prefix ``p_i`` is long enough; the count of tables is the paper's recursion

    X(f, k, d) = 1                                                  if d <= tau
               = min over r > k of C(r, k) * X(f k / r, k, d - (r - k) f / r)   otherwise

with ``d = log2(N)`` and ``tau = d - p_min``.

Two choices where the paper is loose:
- **Whole bits.** ``f k / r`` is seldom an integer. Blocks here have whole bits: the f bits are cut
  into r blocks whose widths differ by at most one, the wider first (the paper's own 11, 11, 11,
  11, 10, 10), and the recursion is evaluated per table on what that table actually has left. The
  tables of one level may then need different continuations (a table whose leading blocks are
  narrower may need one more level). :func:`tables_needed` counts tables this way by default, and
  with ``whole_bits=False`` evaluates the paper's formula literally, on real-valued widths.
- **``d <= tau``, not ``d < tau``.** ``tau = d - p_min`` says a table is done when its prefix
  reaches ``p_min``; the strict inequality printed in the paper would demand ``p_i > p_min``, and
  Example 3.1's designs (p_min = 31, 28, 25, 16) would then not be the answers. The count depends on
  ``p_min`` only: ``d`` cancels out of ``d - tau``.

A design is searched for the fewest tables, then the fewest expected fingerprints per probe, then
the fewest blocks. Leading blocks are placed in block order, the other bits after them in bit order
(the paper picks one of several such permutations at random; any of them finds the same pairs).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

from neardup.errors import ConfigError
from neardup.index.compressed import DEFAULT_BLOCK_BYTES, modelled_bits_per_fingerprint
from neardup.index.hamming import BITS, TablePlan

__all__ = ["COMPRESSION_BASIS", "MAX_TABLES", "Plan", "Split", "TableLayout", "describe", "plan",
           "tables_needed"]

MAX_TABLES = 10_000
"""The largest design :func:`plan` spells out table by table."""
COMPRESSION_BASIS = ("modelled: Huffman-coded leading 1-bit of successive XORs (section 3.2) on "
                     "a sorted table of N uniformly random fingerprints, blocks, keys and "
                     "offsets included")


@dataclass(frozen=True, slots=True)
class Split:
    """One level of a design: the bits still free cut into blocks (widths, most significant
    first), ``lead`` of which lead each table; per choice of leading blocks (in the order of
    ``itertools.combinations``), the next level, or None when those tables are complete."""

    widths: tuple[int, ...]
    lead: int
    children: tuple[Split | None, ...]

    @property
    def tables(self) -> int:
        return sum(1 if child is None else child.tables for child in self.children)


@dataclass(frozen=True, slots=True)
class TableLayout:
    """One table for any width f: bit segments (start, width) in placement order, bit 0 the most
    significant, and the length of its prefix ``p_i``."""

    segments: tuple[tuple[int, int], ...]
    prefix_bits: int

    def leading_segments(self) -> tuple[tuple[int, int], ...]:
        """The segments that make up the prefix (the last one cut to fit)."""
        out, left = [], self.prefix_bits
        for start, width in self.segments:
            if left <= 0:
                break
            out.append((start, min(width, left)))
            left -= width
        return tuple(out)


def _widths(bits: int, blocks: int) -> tuple[int, ...]:
    base, extra = divmod(bits, blocks)
    return tuple(base + 1 if i < extra else base for i in range(blocks))


def _choices(bits: int, r: int, lead: int) -> list[tuple[int, int]]:
    """(bits fixed, how many choices fix that many) over the choices of ``lead`` of the r blocks
    of ``bits`` (``bits mod r`` blocks are one bit wider)."""
    base, extra = divmod(bits, r)
    return [(lead * base + wide, math.comb(extra, wide) * math.comb(r - extra, lead - wide))
            for wide in range(max(0, lead - (r - extra)), min(extra, lead) + 1)]


@functools.cache
def _best(free: int, need: int, k: int) -> tuple[int, int, int] | None:
    """The best design for ``free`` bits that must fix ``need`` more: (tables, cost, r), where
    cost is the sum over tables of 2**(bits left free) (the expected probe cost up to a factor),
    and r = 0 for a finished table. None when no design can fix that many bits."""
    if need <= 0:
        return 1, 1 << free, 0
    best: tuple[int, int, int] | None = None
    for r in range(k + 1, free + 1):
        if best is not None and math.comb(r, k) > best[0]:
            break
        count = cost = 0
        for fixed, ways in _choices(free, r, r - k):
            child = _best(free - fixed, need - fixed, k)
            if child is None:
                break
            count, cost = count + ways * child[0], cost + ways * child[1]
        else:
            if best is None or (count, cost) < best[:2]:
                best = (count, cost, r)
    return best


@functools.cache
def _real(free: float, need: float, k: int) -> float:
    """The paper's recursion on real-valued widths (math.inf when no design exists)."""
    if need <= 1e-9:
        return 1.0
    best = math.inf
    for r in range(k + 1, math.floor(free) + 1):
        if math.comb(r, k) >= best:
            break
        fixed = (r - k) * free / r
        best = min(best, math.comb(r, k) * _real(free - fixed, need - fixed, k))
    return best


def _check(f: int, k: int) -> None:
    if not 2 <= f <= 256:
        raise ConfigError(f"f={f!r}: must be in 2..256 bits")
    if not 0 <= k < f:
        raise ConfigError(f"k={k!r}: must be in 0..{f - 1} for f={f}")


def tables_needed(f: int, k: int, d: float, p_min: float, *, whole_bits: bool = True) -> int:
    """X(f, k, d) with ``tau = d - p_min``: the fewest tables whose prefixes are all at least
    ``p_min`` bits and that find every pair within ``k``. With ``whole_bits=False`` the paper's
    formula on real-valued block widths (see the module docstring)."""
    _check(f, k)
    tau = d - p_min
    need = d - tau  # the bits a table's prefix must fix: d cancels out
    if whole_bits:
        found = _best(f, math.ceil(need - 1e-9), k)
        count = math.inf if found is None else found[0]
    else:
        count = _real(float(f), float(need), k)
    if math.isinf(count):
        raise ConfigError(f"p_min={p_min!r}: no design fixes more than {f - k} of {f} bits at "
                          f"k={k}")
    return int(count)


def _split(free: int, need: int, k: int) -> Split | None:
    found = _best(free, need, k)
    if found is None or found[2] == 0:
        return None
    r = found[2]
    widths = _widths(free, r)
    children = []
    for chosen in itertools.combinations(range(r), r - k):
        fixed = sum(widths[i] for i in chosen)
        children.append(_split(free - fixed, need - fixed, k))
    return Split(widths, r - k, tuple(children))


def _runs(positions: list[int]) -> tuple[tuple[int, int], ...]:
    runs: list[list[int]] = []
    for bit in positions:
        if runs and runs[-1][0] + runs[-1][1] == bit:
            runs[-1][1] += 1
        else:
            runs.append([bit, 1])
    return tuple((start, width) for start, width in runs)


def _layouts(split: Split | None, free: list[int], prefix: list[int]) -> list[TableLayout]:
    if split is None:
        return [TableLayout(_runs(prefix + free), len(prefix))]
    edges = list(itertools.accumulate(split.widths, initial=0))
    blocks = [free[a:b] for a, b in itertools.pairwise(edges)]
    layouts = []
    chosen_sets = itertools.combinations(range(len(blocks)), split.lead)
    for chosen, child in zip(chosen_sets, split.children, strict=True):
        leading = [bit for i in chosen for bit in blocks[i]]
        rest = [bit for i, block in enumerate(blocks) if i not in chosen for bit in block]
        layouts.extend(_layouts(child, rest, prefix + leading))
    return layouts


def describe(split: Split | None, free: int) -> str:
    """The blocks of a design in words, level by level."""
    if split is None:
        return "no split"
    widths = ",".join(str(w) for w in split.widths)
    text = f"{len(split.widths)} blocks of {widths} bits, {split.lead} leading"
    groups: dict[str, int] = {}
    for chosen, child in zip(itertools.combinations(split.widths, split.lead), split.children,
                             strict=True):
        if child is not None:
            left = free - sum(chosen)
            key = f"the other {left} bits in {describe(child, left)}"
            groups[key] = groups.get(key, 0) + 1
    total = math.comb(len(split.widths), split.lead)
    for key, count in groups.items():
        text += f"; then, {'for each choice' if count == total else f'for {count} choices'}, "
        text += key
    return text


@dataclass(frozen=True, slots=True)
class Plan:
    """A design for ``fingerprints`` f-bit fingerprints and distance ``k``, with its costs."""

    bits: int
    k: int
    fingerprints: int
    min_prefix: int
    table_budget: int | None
    design: Split
    layouts: tuple[TableLayout, ...]
    paper_recursion: int
    compressed_bits_per_fingerprint: float

    @property
    def tables(self) -> list[TablePlan]:
        """The tables as :class:`TablePlan` for :func:`~neardup.index.hamming.hamming_pairs`
        (64-bit fingerprints only)."""
        if self.bits != BITS:
            raise ConfigError(f"f={self.bits}: table plans exist for 64-bit fingerprints only")
        return [TablePlan(layout.segments, layout.prefix_bits) for layout in self.layouts]

    @property
    def prefix_bits(self) -> list[int]:
        return [layout.prefix_bits for layout in self.layouts]

    @property
    def blocks(self) -> str:
        return describe(self.design, self.bits)

    def expected_matches(self, prefix_bits: int) -> float:
        """Fingerprints expected to share a random query's top ``prefix_bits`` (N / 2**p)."""
        return self.fingerprints / 2.0**prefix_bits

    @property
    def expected_per_probe(self) -> float:
        """Fingerprints checked per query, summed over the tables (the paper's estimate)."""
        return sum(self.expected_matches(p) for p in self.prefix_bits)

    @property
    def bytes_uncompressed(self) -> int:
        return 8 * self.fingerprints * len(self.layouts)

    @property
    def bytes_compressed(self) -> int:
        """Modelled: :func:`~neardup.index.compressed.modelled_bits_per_fingerprint`."""
        per_table = self.compressed_bits_per_fingerprint * self.fingerprints / 8
        return math.ceil(per_table * len(self.layouts))

    def as_dict(self) -> dict[str, object]:
        """The plan as JSON-ready values: ``tables`` is the count, ``table_plans`` the tables."""
        return {
            "bits": self.bits, "k": self.k, "fingerprints": self.fingerprints,
            "log2_fingerprints": math.log2(self.fingerprints), "min_prefix": self.min_prefix,
            "table_budget": self.table_budget, "tables": len(self.layouts), "blocks": self.blocks,
            "paper_recursion": self.paper_recursion,
            "expected_per_probe": self.expected_per_probe,
            "max_expected_per_table": self.expected_matches(min(self.prefix_bits)),
            "table_plans": [
                {"prefix_bits": t.prefix_bits, "segments": [list(s) for s in t.segments],
                 "leading_segments": [list(s) for s in t.leading_segments()],
                 "expected_per_probe": self.expected_matches(t.prefix_bits)}
                for t in self.layouts],
            "memory": {
                "uncompressed_bytes": self.bytes_uncompressed,
                "compressed_bytes": self.bytes_compressed,
                "compressed_bits_per_fingerprint": self.compressed_bits_per_fingerprint,
                "compression_basis": COMPRESSION_BASIS},
        }


def _budget_prefix(f: int, k: int, budget: int) -> int:
    if budget < k + 1:
        raise ConfigError(f"tables={budget!r}: k={k} needs at least {k + 1} tables")
    return max(p for p in range(1, f - k + 1) if tables_needed(f, k, 0, p) <= budget)


def plan(f: int = BITS, k: int = 3, fingerprints: int = 2**34, *, min_prefix: int | None = None,
         tables: int | None = None, block_bytes: int = DEFAULT_BLOCK_BYTES) -> Plan:
    """The design whose prefixes are all at least ``min_prefix`` bits with the fewest tables; or,
    with ``tables``, the design with at most that many tables whose shortest prefix is longest."""
    _check(f, k)
    if fingerprints < 1:
        raise ConfigError(f"fingerprints={fingerprints!r}: must be at least 1")
    if (min_prefix is None) == (tables is None):
        raise ConfigError("give exactly one of min_prefix and tables")
    if tables is not None:
        min_prefix = _budget_prefix(f, k, tables)
    assert min_prefix is not None
    if not 1 <= min_prefix <= f - k:
        raise ConfigError(f"min_prefix={min_prefix!r}: must be in 1..{f - k} for f={f}, k={k}")
    count = tables_needed(f, k, math.log2(fingerprints), min_prefix)
    if count > MAX_TABLES:
        raise ConfigError(f"min_prefix={min_prefix}: the design needs {count} tables; plans are "
                          f"spelled out for at most {MAX_TABLES}")
    design = _split(f, min_prefix, k)
    assert design is not None
    return Plan(f, k, fingerprints, min_prefix, tables, design,
                tuple(_layouts(design, list(range(f)), [])),
                tables_needed(f, k, math.log2(fingerprints), min_prefix, whole_bits=False),
                modelled_bits_per_fingerprint(fingerprints, block_bytes))
