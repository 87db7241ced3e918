"""The output tables of ``dedup`` and their schema, written as Parquet (default) or JSONL.

``documents``: doc, id, url, host, source, offset, length, fetched, text_chars, tokens, identical,
lexical, shingle (the three exact-level hashes as 16-digit hex), simhash (hex, simhash method), and
revisit_of (the doc a revisit repeats, or null).
``pairs``: a, b, method, relation, hamming (simhash) or estimate (sketches), resemblance,
containment_ab, containment_ba, shared (chunk methods).
``clusters``: doc, cluster (its smallest doc), kept, kept_doc, reason.
``links`` (``dedup --links``): doc, url: one row per out-link of an HTML document.
``growth`` (``--method shingle-paragraphs``): one row per iteration of Pereira's algorithm
(:mod:`neardup.overlap.iterative`); any other table a near method returns is written the same way.
``summary.json``: counts, skips by reason, time per stage and the config tags.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.errors import OutputError
from neardup.methods.pairs import Pairs
from neardup.pipeline.dedup import DedupResult

__all__ = ["OUTPUT_FORMATS", "documents_table", "pairs_table", "write_dedup_outputs"]

OUTPUT_FORMATS = ("parquet", "jsonl")


def _hex(value: int) -> str:
    return f"{value:016x}"


def documents_table(result: DedupResult, with_simhash: bool) -> pa.Table:
    docs = result.documents
    revisit: dict[str, int] = {}
    for i, p in enumerate(docs):
        if p.revisit_of is None:
            revisit.setdefault(p.id, i)
    columns: dict[str, Any] = {
        "doc": pa.array(range(len(docs)), pa.int64()),
        "id": [p.id for p in docs], "url": [p.url for p in docs], "host": [p.host for p in docs],
        "source": [p.source for p in docs],
        "offset": pa.array([p.offset for p in docs], pa.int64()),
        "length": pa.array([p.length for p in docs], pa.int64()),
        "fetched": [p.fetched for p in docs],
        "text_chars": pa.array([p.text_chars for p in docs], pa.int64()),
        "tokens": pa.array([p.tokens for p in docs], pa.int64()),
        "identical": [_hex(p.identical) for p in docs], "lexical": [_hex(p.lexical) for p in docs],
        "shingle": [_hex(p.shingle) for p in docs],
    }
    if with_simhash:
        columns["simhash"] = [_hex(p.simhash) for p in docs]
    columns["revisit_of"] = pa.array(
        [revisit.get(p.revisit_of) if p.revisit_of else None for p in docs], pa.int64())
    return pa.table(columns)


def pairs_table(result: DedupResult) -> pa.Table:
    """Every pair, sorted by (a, b, method): the order the batch engine writes too."""
    pairs = result.pairs
    order = np.lexsort((pairs.method, pairs.b, pairs.a))
    return pa.table(Pairs(**{name: getattr(pairs, name)[order]
                             for name in Pairs.__slots__}).columns())


def links_table(result: DedupResult) -> pa.Table:
    """One row (doc, url) per out-link, in document order then link order."""
    docs = [doc for doc, p in enumerate(result.documents) for _ in p.links]
    urls = [url for p in result.documents for url in p.links]
    return pa.table({"doc": pa.array(docs, pa.int64()), "url": pa.array(urls, pa.string())})


def clusters_table(result: DedupResult) -> pa.Table:
    count = len(result.documents)
    return pa.table({
        "doc": pa.array(range(count), pa.int64()),
        "cluster": pa.array(result.cluster, pa.int64()),
        "kept": pa.array(result.kept_doc == np.arange(count), pa.bool_()),
        "kept_doc": pa.array(result.kept_doc, pa.int64()),
        "reason": result.reasons,
    })


def _json_value(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _write_jsonl(table: pa.Table, path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in table.to_pylist():
            out.write(json.dumps({k: _json_value(v) for k, v in row.items()}, ensure_ascii=False))
            out.write("\n")


def write_table(table: pa.Table, directory: Path, name: str, fmt: str) -> Path:
    path = directory / f"{name}.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        _write_jsonl(table, path)
    return path


def write_dedup_outputs(
    result: DedupResult, directory: str | os.PathLike[str], summary: dict[str, object],
    fmt: str = "parquet", with_simhash: bool = False, with_links: bool = False,
) -> list[Path]:
    """Write documents, pairs, clusters and summary.json into ``directory`` (created if needed)."""
    if fmt not in OUTPUT_FORMATS:
        raise OutputError(f"format {fmt!r}: use one of {', '.join(OUTPUT_FORMATS)}")
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = [write_table(documents_table(result, with_simhash), out, "documents", fmt),
                   write_table(pairs_table(result), out, "pairs", fmt),
                   write_table(clusters_table(result), out, "clusters", fmt)]
        if with_links:
            written.append(write_table(links_table(result), out, "links", fmt))
        for name, rows in result.tables.items():
            written.append(write_table(pa.Table.from_pylist(rows), out, name, fmt))
        summary_path = out / "summary.json"
        summary_path.write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    except OSError as error:
        raise OutputError(f"{out}: {error.strerror or error}") from error
    return [*written, summary_path]
