"""In-memory inputs as Documents: plain strings, dicts, pandas DataFrames and pyarrow Tables.

``documents_from`` turns what a library user has at hand (a list or any iterable, a pandas
DataFrame, a pyarrow Table, a Hugging Face ``datasets.Dataset``) into :class:`Document` objects,
one per row, in order, numbered by position when no id column is named. Anything else fails with a
:class:`ConfigError` naming the row and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from neardup.document import Document
from neardup.errors import ConfigError

__all__ = ["BATCH", "TextKind", "documents_from", "is_dataset", "is_table", "table_rows"]

TextKind = Literal["text", "html"]


BATCH = 10_000
"""Rows of a table turned into Python values at a time."""


def is_dataset(data: object) -> bool:
    """A Hugging Face ``datasets.Dataset`` (the package is optional; never imported here)."""
    return type(data).__module__.startswith("datasets") and hasattr(data, "with_format")


def is_table(data: object) -> bool:
    """A pyarrow Table, a pandas DataFrame or a ``datasets.Dataset`` (pandas and datasets are
    optional; they are never imported here)."""
    module = type(data).__module__
    return (module.startswith("pyarrow") and hasattr(data, "column_names")) or (
        module.startswith("pandas") and hasattr(data, "columns")) or is_dataset(data)


def _column_names(data: Any) -> list[str]:
    columns = data.columns if type(data).__module__.startswith("pandas") else data.column_names
    return [str(name) for name in columns]


def _batches(data: Any, names: list[str]) -> Iterator[dict[str, list[Any]]]:
    """The columns ``names`` of the table, as Python values, :data:`BATCH` rows at a time (a
    Dataset's selected rows, in order). Only those columns are converted: another column of
    the table may hold anything."""
    if is_dataset(data):
        for batch in data.with_format("arrow", columns=names).iter(batch_size=BATCH):
            yield {name: batch.column(name).to_pylist() for name in names}
        return
    pandas = type(data).__module__.startswith("pandas")
    for start in range(0, len(data), BATCH):
        if pandas:  # each value as it is (an object column of mixed types converts as well)
            yield {name: _pandas_values(data[name].iloc[start:start + BATCH]) for name in names}
        else:
            part = data.slice(start, BATCH)
            yield {name: part.column(name).to_pylist() for name in names}


def _pandas_values(series: Any) -> list[Any]:
    """A pandas column's values as Python objects, its missing ones (None, NaN, NA) as None."""
    return list(series.astype(object).where(series.notna(), None).tolist())


def table_rows(data: Any, columns: dict[str, str | None]) -> Iterator[dict[str, Any]]:
    """The rows of a pyarrow Table, pandas DataFrame or Dataset as dicts of the named columns."""
    wanted = {role: name for role, name in columns.items() if name is not None}
    present = _column_names(data)
    for role, name in wanted.items():
        if name not in present:
            raise ConfigError(f"no column {name!r} for the {role} (columns: "
                              f"{', '.join(present) or 'none'}); name it with {role}=...")
    for values in _batches(data, list(dict.fromkeys(wanted.values()))):
        for row in range(len(next(iter(values.values())))):
            yield {name: column[row] for name, column in values.items()}


def _from_mapping(row: Mapping[str, Any], position: int, text: str, id_column: str | None,
                  url_column: str | None, kind: TextKind) -> Document:
    if text not in row:
        raise ConfigError(f"row {position}: no {text!r} field (fields: "
                          f"{', '.join(map(str, row)) or 'none'}); name it with text=...")
    value = row[text]
    if value is not None and not isinstance(value, str | bytes):
        raise ConfigError(f"row {position}: field {text!r} is {type(value).__name__}, "
                          "not text")
    raw = b"" if value is None else value if isinstance(value, bytes) else value.encode()
    ident = row.get(id_column) if id_column is not None else None
    url = row.get(url_column) if url_column is not None else None
    return Document(id=str(position if ident is None else ident), raw=raw, kind=kind,
                    url=None if url is None else str(url))


def _document(item: object, position: int, text: str, id_column: str | None,
              url_column: str | None, kind: TextKind) -> Document:
    if isinstance(item, Document):
        return item
    if isinstance(item, str):
        return Document(id=str(position), raw=item.encode("utf-8"), kind=kind)
    if isinstance(item, bytes):
        return Document(id=str(position), raw=item, kind=kind)
    if isinstance(item, Mapping):
        return _from_mapping(item, position, text, id_column, url_column, kind)
    raise ConfigError(f"row {position} is a {type(item).__name__}: give strings, dicts with a "
                      f"{text!r} field, Documents, a pandas DataFrame or a pyarrow Table")


def documents_from(data: Iterable[Any] | Any, *, text: str = "text", id: str | None = None,
                   url: str | None = None, kind: TextKind = "text") -> Iterator[Document]:
    """One Document per item or row of ``data``, in order (see the module docstring)."""
    if kind not in ("text", "html"):
        raise ConfigError(f"kind {kind!r}: use 'text' or 'html'")
    if isinstance(data, str | bytes):
        raise ConfigError("give a list of texts, not one text")
    rows: Iterable[Any] = (table_rows(data, {"text": text, "id": id, "url": url})
                           if is_table(data) else data)
    for position, item in enumerate(rows):
        yield _document(item, position, text, id, url, kind)
