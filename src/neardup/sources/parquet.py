"""Reading Parquet files in record batches (a large file never sits in memory whole).

Column conventions: :mod:`neardup.sources.rows`. Only scalar columns are read (strings, binary,
numbers, booleans, timestamps, dates); list and struct columns are left on disk. pyarrow is
imported on first use, so that starting the CLI stays fast. Parquet needs random access: it cannot
be read from stdin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from neardup.document import Document
from neardup.sources.context import ReadContext
from neardup.sources.rows import row_to_document

__all__ = ["BATCH_ROWS", "read_parquet"]

BATCH_ROWS: Final = 256


def _scalar_columns(schema: Any) -> list[str]:
    import pyarrow as pa

    kinds = (
        pa.types.is_string,
        pa.types.is_large_string,
        pa.types.is_binary,
        pa.types.is_large_binary,
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_boolean,
        pa.types.is_timestamp,
        pa.types.is_date,
    )
    return [f.name for f in schema if any(kind(f.type) for kind in kinds)]


def _open(path: str, source: str, ctx: ReadContext) -> Any | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError, pa.ArrowException) as err:
        ctx.stats.skip("unreadable-file")
        ctx.stats.error(f"{source}: not a readable Parquet file ({err})")
        return None


def read_parquet(path: str, source: str, ctx: ReadContext) -> Iterator[Document]:
    """Documents from a Parquet file (``source`` is the path as the user gave it)."""
    import pyarrow as pa

    parquet = _open(path, source, ctx)
    if parquet is None:
        return
    ctx.stats.files += 1
    columns = _scalar_columns(parquet.schema_arrow)
    row = 0
    try:
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            for values in batch.to_pylist():
                ctx.stats.records += 1
                doc = row_to_document(
                    values, source=source, offset=row, default_id=f"{source}:{row}", ctx=ctx
                )
                row += 1
                if doc is not None:
                    yield doc
    except (OSError, ValueError, pa.ArrowException) as err:
        ctx.stats.skip("bad-record")
        ctx.stats.error(f"{source}: row {row}: Parquet data damaged ({err}); stopped there")
    finally:
        parquet.close()
