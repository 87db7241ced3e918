"""Copying chosen rows of one input file into an output file of the same format.

- Parquet: the chosen rows with the input's schema (every column and type, list and struct
  columns included, and the schema's metadata) and the input's compression, read and written a
  batch at a time.
- JSONL (gzipped or not): the chosen lines, byte for byte; annotated, each line gets the
  :data:`~neardup.output.selection.ANNOTATIONS` fields spliced before its closing brace (the
  original bytes stay as they were).
- HTML or text files (one document each): the file itself.

A writer returns the number of rows written and the number left out (lines that are not a JSON
object, which cannot be annotated).
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

import numpy as np
import numpy.typing as npt

from neardup.errors import OutputError
from neardup.output.selection import ANNOTATIONS, FileRows
from neardup.sources.gunzip import GZIP_ERRORS, gunzip
from neardup.sources.location import filesystem_of, is_url, open_binary

__all__ = ["copy_file", "write_jsonl_rows", "write_parquet_rows"]

_BATCH_ROWS: Final = 1024
_READ_ERRORS: tuple[type[BaseException], ...] = (OSError, *GZIP_ERRORS)
_COMPRESSIONS: Final = frozenset({"snappy", "gzip", "brotli", "zstd", "lz4", "none"})


def _compression(parquet: Any) -> str:
    """The codec of the input's first column chunk (snappy for an empty file)."""
    if parquet.metadata.num_row_groups == 0 or parquet.metadata.num_columns == 0:
        return "snappy"
    codec = str(parquet.metadata.row_group(0).column(0).compression).lower()
    codec = {"uncompressed": "none", "lz4_raw": "lz4"}.get(codec, codec)
    return codec if codec in _COMPRESSIONS else "snappy"


def _annotation_columns(rows: FileRows, slots: npt.NDArray[np.int64]) -> dict[str, Any]:
    """The annotation columns of a batch: ``slots[i]`` is the index in ``rows`` of the batch's
    row i, or -1 when that row became no document (its annotations are null)."""
    import pyarrow as pa

    missing = slots < 0
    safe = np.where(missing, 0, slots)
    reasons = np.array([*rows.reason, "skipped"], dtype=object)
    return {
        "neardup_doc": pa.array(rows.doc[safe], pa.int64(), mask=missing),
        "neardup_cluster": pa.array(rows.cluster[safe], pa.int64(), mask=missing),
        "neardup_kept": pa.array(rows.kept[safe], pa.bool_(), mask=missing),
        "neardup_kept_doc": pa.array(rows.kept_doc[safe], pa.int64(), mask=missing),
        "neardup_reason": pa.array(reasons[np.where(missing, len(rows.reason), slots)].tolist(),
                                   pa.string()),
    }


def _annotated_schema(schema: Any, source: str) -> Any:
    import pyarrow as pa

    clash = sorted(set(schema.names) & set(ANNOTATIONS))
    if clash:
        raise OutputError(f"{source}: already has a column {clash[0]}; cannot annotate it")
    types = (pa.int64(), pa.int64(), pa.bool_(), pa.int64(), pa.string())
    for name, kind in zip(ANNOTATIONS, types, strict=True):
        schema = schema.append(pa.field(name, kind))
    return schema


def _batch_rows(batch: Any, start: int, rows: FileRows, chosen: npt.NDArray[np.int64] | None,
                schema: Any) -> Any:
    """The rows of one batch (first row ``start``) to write: those in ``chosen``, or every row
    annotated when ``chosen`` is None."""
    import pyarrow as pa

    end = start + batch.num_rows
    if chosen is not None:
        low, high = np.searchsorted(chosen, [start, end])
        return batch.take(pa.array(chosen[low:high] - start, pa.int64()))
    slots = np.full(batch.num_rows, -1, dtype=np.int64)
    low, high = np.searchsorted(rows.offsets, [start, end])
    slots[rows.offsets[low:high] - start] = np.arange(low, high)
    columns = {name: batch.column(i) for i, name in enumerate(batch.schema.names)}
    return pa.RecordBatch.from_pydict(columns | _annotation_columns(rows, slots), schema=schema)


def _parquet_file(source: str) -> Any:
    import pyarrow.parquet as pq

    if is_url(source):
        filesystem, inner = filesystem_of(source)
        return pq.ParquetFile(inner, filesystem=filesystem)
    return pq.ParquetFile(source)


def write_parquet_rows(source: str, target: Path, rows: FileRows,
                       chosen: npt.NDArray[np.int64] | None) -> tuple[int, int]:
    """Write the rows ``chosen`` (sorted row numbers) of Parquet file ``source`` to ``target``;
    with ``chosen`` None, every row with its annotations."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written = 0
    try:
        with _parquet_file(source) as parquet:
            schema = parquet.schema_arrow
            if chosen is None:
                schema = _annotated_schema(schema, source)
            with pq.ParquetWriter(target, schema, compression=_compression(parquet)) as out:
                start = 0
                for batch in parquet.iter_batches(batch_size=_BATCH_ROWS):
                    piece = _batch_rows(batch, start, rows, chosen, schema)
                    start += batch.num_rows
                    if piece.num_rows:
                        out.write_batch(piece)
                        written += piece.num_rows
    except (OSError, pa.ArrowException) as err:
        raise OutputError(f"{source}: cannot copy its rows ({err})") from err
    return written, 0


def _lines(source: str, gz: bool) -> Iterator[bytes]:
    with open_binary(source) as raw:
        if not gz:
            yield from raw
            return
        with gunzip(raw) as unzipped:
            while line := unzipped.readline():
                yield line


def _spliced(line: bytes, fields: dict[str, object]) -> bytes | None:
    """``line`` (a JSON object) with ``fields`` added before its closing brace; None when the
    line is not a JSON object."""
    body = line.rstrip()
    if not body.lstrip().startswith(b"{") or not body.endswith(b"}"):
        return None
    if b'"neardup_' in body:
        try:
            clash = set(json.loads(body)) & set(ANNOTATIONS)
        except ValueError:
            return None
        if clash:
            raise OutputError(f"a line already has a field {sorted(clash)[0]}; cannot annotate it")
    added = json.dumps(fields, ensure_ascii=False)[1:-1].encode()
    inner = body[:-1]
    separator = b", " if inner.strip() != b"{" else b""
    return inner + separator + added + b"}\n"


def _annotations(rows: FileRows, slot: int) -> dict[str, object]:
    if slot < 0:
        return dict(zip(ANNOTATIONS, (None, None, None, None, "skipped"), strict=True))
    return dict(zip(ANNOTATIONS, (int(rows.doc[slot]), int(rows.cluster[slot]),
                                  bool(rows.kept[slot]), int(rows.kept_doc[slot]),
                                  rows.reason[slot]), strict=True))


def write_jsonl_rows(source: str, target: Path, gz: bool, rows: FileRows,
                     chosen: npt.NDArray[np.int64] | None) -> tuple[int, int]:
    """Write the lines ``chosen`` (sorted 1-based line numbers) of JSONL file ``source`` to
    ``target`` (gzipped when ``gz``); with ``chosen`` None, every JSON-object line annotated."""
    wanted = set(chosen.tolist()) if chosen is not None else None
    slots = {int(offset): slot for slot, offset in enumerate(rows.offsets)} if wanted is None \
        else {}
    written = left_out = 0
    try:
        with open(target, "wb") as raw, _sink(raw, gz) as out:
            for number, line in enumerate(_lines(source, gz), start=1):
                if wanted is not None:
                    if number in wanted:
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                        written += 1
                    continue
                if not line.strip():
                    continue
                spliced = _spliced(line, _annotations(rows, slots.get(number, -1)))
                if spliced is None:
                    left_out += 1
                else:
                    out.write(spliced)
                    written += 1
    except _READ_ERRORS as err:
        raise OutputError(f"{source}: cannot copy its lines ({err})") from err
    except OutputError as err:
        raise OutputError(f"{source}: {err}") from err
    return written, left_out


def _sink(raw: BinaryIO, gz: bool) -> Any:
    """``raw`` itself, or a gzip stream over it (no file name or time in its header, so the same
    rows give the same bytes). ISA-L's deflate at its level 2 took a tenth of the CPU of
    zlib's level 6 on the scale benchmark's JSONL (0.044 s against 0.48 s for 9.6 MB) for a file
    9% larger."""
    if not gz:
        return contextlib.nullcontext(raw)
    try:
        igzip: Any = importlib.import_module("isal.igzip")
    except ImportError:  # pragma: no cover - isal is a dependency
        return gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0)
    return igzip.IGzipFile(filename="", fileobj=raw, mode="wb", compresslevel=2, mtime=0)


def copy_file(source: str, target: Path) -> tuple[int, int]:
    """Copy a one-document file."""
    try:
        with open_binary(source) as raw, open(target, "wb") as out:
            shutil.copyfileobj(raw, out, 1 << 20)
    except OSError as err:
        raise OutputError(f"{source}: cannot copy it ({err.strerror or err})") from err
    return 1, 0
