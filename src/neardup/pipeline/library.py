"""``neardup.dedup``: deduplicate in-memory data in one call, one result row per input row.

    >>> import neardup
    >>> rows = neardup.dedup(["a page of text", "a page of text", "another one"])
    >>> rows.column("kept").to_pylist()
    [True, False, True]

``data`` is a list (or any iterable) of strings, of dicts with a text field, or of Documents, a
pandas DataFrame or a pyarrow Table; ``text``, ``id`` and ``url`` name its columns. The result is
a pyarrow Table (``.to_pandas()`` when pandas is installed) with, per input row: ``row``, ``id``,
``cluster`` (the smallest row of its cluster), ``kept`` (it survives), ``kept_row`` (the row that
survives for it) and ``reason``. :func:`neardup.find_duplicates` returns the full result, pairs
included (``result.pairs_table()``: method and relation by name).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neardup.config import DedupConfig, KeepPolicy, method_names, threshold_methods
from neardup.errors import ConfigError
from neardup.pipeline.dedup import find_duplicates
from neardup.pipeline.inputs import TextKind, documents_from

__all__ = ["dedup", "dedup_config"]


def dedup_config(method: str = "simhash", *, threshold: float | None = None, k: int = 3,
                 keep: KeepPolicy = "first") -> DedupConfig:
    """The config of the common options, refusing a threshold the method would ignore."""
    if method not in method_names():
        raise ConfigError(f"method {method!r}: use one of {', '.join(method_names())}")
    if threshold is not None and method not in threshold_methods():
        raise ConfigError(
            f"threshold {threshold} has no effect with method {method!r}: it is read by "
            f"{' and '.join(threshold_methods())}"
            + (" (simhash pairs documents within k bits)" if method == "simhash" else ""))
    if threshold is not None and not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold {threshold}: must be in (0, 1]")
    return DedupConfig(method=method, threshold=threshold or 0.0, max_hamming=k, keep=keep)


def dedup(data: Iterable[Any] | Any, *, method: str = "simhash", threshold: float | None = None,
          k: int = 3, keep: KeepPolicy = "first", text: str = "text", id: str | None = None,
          url: str | None = None, kind: TextKind = "text", config: DedupConfig | None = None,
          workers: int = 1) -> Any:
    """Deduplicate ``data``; a pyarrow Table with one row per input row (module docstring).

    ``kind="html"`` extracts the text of HTML first. ``config`` replaces method, threshold, k
    and keep by a full :class:`DedupConfig`."""
    import pyarrow as pa

    if config is None:
        config = dedup_config(method, threshold=threshold, k=k, keep=keep)
    documents = list(documents_from(data, text=text, id=id, url=url, kind=kind))
    result = find_duplicates(documents, config, workers=workers)
    if len(result.documents) != len(documents):
        raise ConfigError(f"{len(documents) - len(result.documents)} revisit Documents repeat "
                          "no document of the input: give their originals too")
    table = result.table()
    return pa.table({"row": table.column("doc"), "id": table.column("id"),
                     "cluster": table.column("cluster"), "kept": table.column("kept"),
                     "kept_row": table.column("kept_doc"), "reason": table.column("reason")})
