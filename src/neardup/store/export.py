"""A store's documents and clusters as Arrow tables, in the schema of ``dedup``'s outputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from neardup.store.records import unsigned

__all__ = ["arrow_tables"]


def arrow_tables(stored: list[tuple[Any, ...]]) -> tuple[pa.Table, pa.Table]:
    """The ``documents`` and ``clusters`` tables of checked document rows (in doc order; a
    cluster keeps its first document)."""
    rows = [(r[0], r[1], r[2], r[3], r[6], r[7], r[5], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[4]) for r in stored]
    columns = list(zip(*rows, strict=True)) if rows else [()] * 15
    hexed = [[f"{unsigned(v):016x}" for v in columns[i]] for i in range(9, 13)]
    documents = pa.table({
        "doc": pa.array(columns[0], pa.int64()), "id": list(columns[1]),
        "url": list(columns[2]), "host": list(columns[3]), "source": list(columns[4]),
        "length": pa.array(columns[5], pa.int64()), "fetched": list(columns[6]),
        "text_chars": pa.array(columns[7], pa.int64()),
        "tokens": pa.array(columns[8], pa.int64()), "identical": hexed[0],
        "lexical": hexed[1], "shingle": hexed[2], "simhash": hexed[3],
        "sweep": list(columns[14])})
    cluster = np.array(columns[13], dtype=np.int64)
    doc = np.array(columns[0], dtype=np.int64)
    clusters = pa.table({"doc": doc, "cluster": cluster, "kept": doc == cluster,
                         "kept_doc": cluster})
    return documents, clusters
