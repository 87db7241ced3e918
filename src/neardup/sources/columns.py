"""Arrow columns to and from numpy through their buffers, so that a run never imports pandas.

pyarrow asks pandas whether a value is a Series, importing pandas (0.5 CPU s and 45 MB of a
one-document run) the first time: ``pa.array`` does on any argument (a Python list and a numpy
array alike), ``to_numpy`` on any column. ``pa.Array.from_buffers`` over numpy arrays and
``np.frombuffer`` over a column's buffers ask nothing. The results are those of ``pa.array``
with the same type and of ``to_numpy``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = ["numbers_of", "numeric_array", "string_array", "string_lists"]

_TYPES: dict[np.dtype[Any], pa.DataType] = {
    np.dtype(np.int64): pa.int64(), np.dtype(np.uint64): pa.uint64(),
    np.dtype(np.int32): pa.int32(), np.dtype(np.uint32): pa.uint32(),
    np.dtype(np.float64): pa.float64(), np.dtype(np.bool_): pa.bool_()}
_DTYPES: dict[pa.DataType, np.dtype[Any]] = {kind: dtype for dtype, kind in _TYPES.items()}
_INT32_MAX = 2**31 - 1


def numeric_array(values: npt.ArrayLike, kind: pa.DataType | None = None,
                  mask: npt.NDArray[np.bool_] | None = None) -> pa.Array:
    """A one-dimensional numeric or boolean column (of Arrow type ``kind``, by default that of
    the values' dtype; ``mask``: True where null), as ``pa.array(values, kind, mask=mask)``."""
    if kind is None:
        kind = _TYPES.get(np.asarray(values).dtype)
    dtype = _DTYPES.get(kind) if kind is not None else None
    if dtype is None:
        raise TypeError(f"no numpy buffer for Arrow type {kind} ({np.asarray(values).dtype})")
    data = np.ascontiguousarray(values, dtype=dtype)
    if data.ndim != 1:
        raise TypeError(f"a column needs one dimension, not {data.ndim}")
    validity, nulls = None, 0
    if mask is not None and (nulls := int(np.count_nonzero(mask))):
        validity = _bitmap(~np.asarray(mask, dtype=np.bool_))
    buffer = _bitmap(data) if dtype == np.bool_ else pa.py_buffer(data)
    return pa.Array.from_buffers(kind, data.size, [validity, buffer], null_count=nulls)


def _bitmap(bits: npt.NDArray[np.bool_]) -> pa.Buffer:
    return pa.py_buffer(np.packbits(bits, bitorder="little"))


def _offsets(lengths: list[int]) -> npt.NDArray[np.int32]:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > _INT32_MAX:
        raise OverflowError(f"{offsets[-1]} elements exceed one Arrow column's 32-bit offsets")
    return offsets.astype(np.int32)


def string_array(values: Sequence[str | None]) -> pa.Array:
    """A string column (``None``: null) from Python strings, UTF-8 encoded."""
    encoded = [b"" if value is None else value.encode("utf-8") for value in values]
    offsets = _offsets([len(item) for item in encoded])
    nulls = sum(value is None for value in values)
    validity = None
    if nulls:
        present = np.fromiter((value is not None for value in values), dtype=np.bool_,
                              count=len(values))
        validity = _bitmap(present)
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(values), [validity, pa.py_buffer(offsets), data],
                                 null_count=nulls)


def string_lists(rows: Sequence[Sequence[str]]) -> pa.Array:
    """A column of lists of strings (none null), one list per row."""
    offsets = _offsets([len(row) for row in rows])
    values = string_array([item for row in rows for item in row])
    return pa.ListArray.from_arrays(numeric_array(offsets), values)


def numbers_of(column: pa.Array | pa.ChunkedArray) -> npt.NDArray[Any]:
    """The values of a numeric or boolean column without nulls as numpy (of another column:
    its ``to_numpy``, which may import pandas). One numeric chunk gives a read-only view, as
    ``to_numpy``."""
    dtype = _DTYPES.get(column.type)
    if dtype is None or column.null_count:
        return column.to_numpy()  # type: ignore[no-any-return]
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [_values(chunk, dtype) for chunk in chunks]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


def _values(chunk: pa.Array, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """The values of one chunk without nulls (booleans unpacked from their bits)."""
    end = chunk.offset + len(chunk)
    if dtype == np.bool_:
        bits = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, count=end, bitorder="little")[chunk.offset:].astype(np.bool_)
    return np.frombuffer(chunk.buffers()[1], dtype=dtype)[chunk.offset:end]
