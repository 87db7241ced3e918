"""The ``dedup`` options of the chunk-overlap methods (chunks, smfa, shingle-paragraphs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from neardup.config import DEFAULT_MEMORY_LIMIT
from neardup.config.method_configs import ChunkMethod
from neardup.config.overlap import (
    ChunkConfig,
    OverlapConfig,
    ParagraphConfig,
    SmfaConfig,
    parse_bytes,
)

__all__ = ["CHUNK_OPTIONS", "chunk_options", "pairs_memory"]

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = (
    click.option("--chunk", "chunk_spec", default="lines:4", show_default=True,
                 help="chunks: lines:N, words:N, sentences, paragraphs, document or "
                      "shingle-paragraphs (S&GM98: lines:4, lines:2)."),
    click.option("--min-shared", type=click.IntRange(1, None), default=None,
                 help="chunks: T, the chunks a pair must share [default: 15 for lines:4, 25 for "
                      "lines:2, 1 for document, else 15]."),
    click.option("--algorithm", type=click.Choice(["sort", "coarse"]), default="sort",
                 show_default=True,
                 help="chunks: the sort-based join (external) or coarse counting."),
    click.option("--buckets", type=click.IntRange(1, 2**32), default=None,
                 help="chunks, coarse: counters in the array A [default: 2 x pairs / T, rounded "
                      "up to a power of two, 2**16 to 2**28]."),
    click.option("--hashes", type=click.IntRange(1, 8), default=2, show_default=True,
                 help="chunks, coarse: hash functions (a pair must be heavy under all)."),
    click.option("--pilot", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.0,
                 show_default=True,
                 help="chunks, coarse: fraction of the chunks sampled to defer heavy pairs "
                      "(0: no pilot)."),
    click.option("--segments", type=click.IntRange(1, 1000), default=3, show_default=True,
                 help="smfa: the longest HTML block segments fingerprinted."),
    click.option("--level", type=click.IntRange(1, 100), default=100, show_default=True,
                 help="shingle-paragraphs: near-duplicates share this percentage of both "
                      "documents' shingle paragraphs (Pereira: 90, 70, 50; 100: only equal)."),
    click.option("--min-chars", type=click.IntRange(0, None), default=450, show_default=True,
                 help="shingle-paragraphs: only documents longer than this many characters."),
    click.option("--iterations", type=click.IntRange(1, 10_000), default=1, show_default=True,
                 help="shingle-paragraphs: sub-collections m of the iterative algorithm; growth "
                      "is recorded after each."),
)


def chunk_options(command: F) -> F:
    """Add the options above to ``command``."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def pairs_memory(limit: str | None) -> int | None:
    """chunks, sort: the pairs held before spilling sorted runs, a quarter of the run's
    ``--memory-limit`` (``none``: all in memory)."""
    size = parse_bytes(limit or DEFAULT_MEMORY_LIMIT)
    return None if size is None else max(2**16, size // 4)


def _chunk_method(options: dict[str, Any]) -> ChunkMethod:
    drop = options.get("drop_common")
    overlap = OverlapConfig(
        min_shared=options.get("min_shared"), algorithm=options.get("algorithm", "sort"),
        memory_limit=pairs_memory(options.get("memory_limit")),
        buckets=options.get("buckets"), hashes=options.get("hashes", 2),
        pilot=options.get("pilot", 0.0), drop_common=drop or None)
    return ChunkMethod(ChunkConfig.parse(options.get("chunk_spec") or "lines:4"), overlap,
                       write_relations=bool(options.get("write_relations", False)))


def _paragraph_config(options: dict[str, Any]) -> ParagraphConfig:
    return ParagraphConfig(min_chars=options.get("min_chars", 450),
                           level=options.get("level", 100),
                           iterations=options.get("iterations", 1))


CHUNK_OPTIONS: dict[type[Any], tuple[Callable[[dict[str, Any]], object], tuple[str, ...]]] = {
    ChunkMethod: (_chunk_method, ("chunk_spec", "min_shared", "algorithm", "buckets", "hashes",
                                  "pilot", "drop_common", "write_relations")),
    SmfaConfig: (lambda options: SmfaConfig(segments=options.get("segments", 3)),
                 ("segments",)),
    ParagraphConfig: (_paragraph_config, ("min_chars", "level", "iterations")),
}
"""How the options build the configs of chunks, smfa and shingle-paragraphs, and the options
each reads."""
