"""Reading Parquet files in record batches (a large file never sits in memory whole).

Column conventions: :mod:`neardup.sources.rows`. Only scalar columns are read (strings, binary,
numbers, booleans, timestamps, dates); list and struct columns are left on disk. pyarrow is
imported on first use, so that starting the CLI stays fast. Parquet needs random access: it cannot
be read from stdin. With a :class:`~neardup.sources.blocks.BlockCursor`, only the row groups
holding one of the cursor's blocks are read, and only the rows of its blocks become documents.
Damaged data inside a row group loses the rest of that row group only, whatever the number of
readers sharing the file, so the documents read do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from neardup.document import Document
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import ReadContext
from neardup.sources.location import filesystem_of, is_url
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
        if is_url(path):
            filesystem, inner = filesystem_of(path)
            return pq.ParquetFile(inner, filesystem=filesystem)
        return pq.ParquetFile(path)
    except (OSError, ValueError, pa.ArrowException) as err:
        ctx.stats.skip("unreadable-file")
        ctx.stats.error(f"{source}: not a readable Parquet file ({err})")
        return None


def _row_groups(parquet: Any, cursor: BlockCursor | None) -> Iterator[tuple[int, int]]:
    """(row group, its first row) of each row group holding a block of ``cursor``."""
    first = 0
    for group in range(parquet.metadata.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        blocks = range(first // cursor.blocks.size, (first + rows - 1) // cursor.blocks.size + 1) \
            if cursor is not None and rows else range(0, 1)
        if rows and any(cursor is None or cursor.blocks.owns(block) for block in blocks):
            yield group, first
        first += rows


def read_parquet(path: str, source: str, ctx: ReadContext,
                 cursor: BlockCursor | None = None) -> Iterator[Document]:
    """Documents from a Parquet file (``source`` is the path as the user gave it)."""
    counts_file = cursor is None or cursor.blocks.counts_file
    parquet = _open(path, source, ctx if counts_file else ReadContext(type(ctx.stats)()))
    if parquet is None:
        return
    ctx.stats.files += int(counts_file)
    columns = _scalar_columns(parquet.schema_arrow)
    try:
        for group, first in _row_groups(parquet, cursor):
            yield from _group_documents(parquet, group, first, columns, source, ctx, cursor)
    finally:
        parquet.close()


def _group_documents(parquet: Any, group: int, first: int, columns: list[str], source: str,
                     ctx: ReadContext, cursor: BlockCursor | None) -> Iterator[Document]:
    """The documents of one row group. Damaged data ends the row group, not the file: the
    rows read before it stay, the rest of the group is counted once as a ``bad-record`` (by the
    reader owning the row where it was met) and the next row group is read."""
    import pyarrow as pa

    row = first
    try:
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns,
                                          row_groups=[group]):
            for values in batch.to_pylist():
                row += 1
                if cursor is not None and not cursor.take(row - 1):
                    continue
                yield from _document(values, source, row - 1, ctx)
    except (OSError, ValueError, pa.ArrowException) as err:
        if cursor is None or cursor.take(row):
            ctx.stats.skip("bad-record")
            cause = " ".join(str(err).split())  # one line
            ctx.stats.error(f"{source}: row {row}: Parquet data damaged ({cause}); "
                            f"skipped the rest of row group {group}")


def _document(values: dict[str, Any], source: str, row: int,
              ctx: ReadContext) -> Iterator[Document]:
    ctx.stats.records += 1
    doc = row_to_document(values, source=source, offset=row, default_id=f"{source}:{row}",
                          ctx=ctx)
    if doc is not None:
        yield doc
