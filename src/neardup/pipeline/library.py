"""The library's doors to the batch engine: :func:`dedup` and :func:`find_duplicates`.

    >>> import neardup
    >>> rows = neardup.dedup(["a page of text", "a page of text", "another one"])
    >>> rows.column("kept").to_pylist()
    [True, False, True]

Both run :func:`neardup.engine.run_engine`, the engine behind ``neardup dedup``, with the same
defaults (those of :class:`~neardup.config.DedupConfig`: min-hash at resemblance 0.8 over
5-word shingles, site templates removed, the first copy kept), so the library and the command
line give the same clusters on the same rows. The rows are read once, as they come (a generator
of millions of rows is never held as a list), fingerprinted in this process and written to a
temporary work area that is removed afterwards (nothing in it is synced to disk: a crash loses
nothing anybody reads again); the later stages use ``workers`` processes.

``data`` is an iterable of strings, of dicts with a text field, or of Documents, a pandas
DataFrame or a pyarrow Table; ``text``, ``id`` and ``url`` name its columns.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neardup.config import (
    DedupConfig,
    KeepPolicy,
    SimHashMethod,
    method_spec,
    threshold_refusal,
)
from neardup.document import Document
from neardup.engine.result import DedupResult
from neardup.engine.run import DEFAULT_MEMORY_BYTES, EngineOptions, run_engine
from neardup.errors import ConfigError
from neardup.pipeline.inputs import TextKind, documents_from, is_dataset, is_table
from neardup.store.durable import scratch_area

__all__ = ["ANNOTATIONS", "Output", "dedup", "dedup_config", "find_duplicates"]

Output = Literal["table", "kept", "removed", "annotated"]
ANNOTATIONS = {"neardup_doc": "row", "neardup_cluster": "cluster", "neardup_kept": "kept",
               "neardup_kept_doc": "kept_row", "neardup_reason": "reason"}
"""The columns ``output="annotated"`` adds (those of ``dedup --write annotated``), from the
result table's columns."""

_DEFAULTS = DedupConfig()


def dedup_config(method: str | None = None, *, threshold: float | None = None,
                 k: int | None = None, keep: KeepPolicy | None = None) -> DedupConfig:
    """:class:`DedupConfig`'s defaults with the options given; an option the method does not
    read is refused."""
    method = method or _DEFAULTS.method
    method_spec(method)  # refuses an unknown method, naming the known ones
    if (refusal := threshold_refusal(method, threshold)) is not None:
        raise ConfigError(refusal)
    if k is not None and method_spec(method).params is not SimHashMethod:
        raise ConfigError(f"k={k} has no effect with method {method!r}: it is the Hamming "
                          "distance of simhash's search")
    params = SimHashMethod(max_hamming=k) if k is not None else None
    given: dict[str, Any] = {"method": method, "threshold": threshold, "params": params,
                             "keep": keep}
    return DedupConfig(**{name: value for name, value in given.items() if value is not None})


def find_duplicates(docs: Iterable[Document | str | Mapping[str, Any]],
                    config: DedupConfig | None = None, *, workers: int = 1,
                    memory_limit: int = DEFAULT_MEMORY_BYTES,
                    progress: Callable[[str, int, int], None] | None = None,
                    columns: list[str] | None = None, compact_work: bool = False) -> DedupResult:
    """Find exact and near-duplicate documents and cluster them with the batch engine.

    ``docs``: Documents, plain strings, or dicts with a ``text`` field. ``config``: the
    defaults of :class:`DedupConfig` unless given. ``memory_limit``: the bytes the engine's
    stages may hold (the command line's ``--memory-limit``; beyond it they spill to disk).
    ``compact_work``: a smaller work area (``--compact-work``: about 2.4 times less temporary
    disk, for some more CPU; same results). Returns every table of the run (documents,
    clusters, pairs, a method's extra tables; only ``columns`` of the documents table when
    given) and its summary as a :class:`DedupResult`."""
    with tempfile.TemporaryDirectory(prefix="neardup-") as scratch, scratch_area():
        out = Path(scratch) / "out"
        options = EngineOptions(work=Path(scratch) / "work", memory_limit=memory_limit,
                                workers=max(1, workers), compact_sets=compact_work)
        run_engine([], out, config or DedupConfig(), options, progress=progress,
                   documents=documents_from(docs))
        return DedupResult.read(out, columns)


def dedup(data: Iterable[Any] | Any, *, method: str | None = None,
          threshold: float | None = None, k: int | None = None, keep: KeepPolicy | None = None,
          text: str = "text", id: str | None = None, url: str | None = None,
          kind: TextKind = "text", config: DedupConfig | None = None,
          workers: int = 1, memory_limit: int = DEFAULT_MEMORY_BYTES,
          output: Output = "table", compact_work: bool = False) -> Any:
    """Deduplicate ``data``.

    ``output="table"`` (the default): a pyarrow Table with one row per input row, in order:
    ``row``, ``id``, ``cluster`` (the smallest row of its cluster), ``kept`` (the row survives),
    ``kept_row`` (the row that survives for it) and ``reason``. ``"kept"`` or ``"removed"``:
    those rows of ``data`` itself, as it came (a list, a pandas DataFrame, a pyarrow Table or a
    ``datasets.Dataset``); ``"annotated"``: every row of ``data`` with the columns of
    :data:`ANNOTATIONS` added (a list gives dicts). A generator is read once, so it takes
    ``output="table"`` only. The defaults are the command line's: ``method="minhash"`` at
    ``threshold=0.8`` (``k``, simhash's Hamming distance, 3), ``keep="first"``, site templates
    removed. ``kind="html"`` extracts the text of HTML first. ``config`` replaces method,
    threshold, k and keep by a full :class:`DedupConfig`. ``workers``, ``memory_limit`` and
    ``compact_work``: as for :func:`find_duplicates`."""
    import pyarrow as pa

    if output not in ("table", "kept", "removed", "annotated"):
        raise ConfigError(f"output={output!r}: use table, kept, removed or annotated")
    if output != "table" and not (is_table(data) or _is_list(data)):
        raise ConfigError(f"output={output!r} returns rows of the data, which must be read twice "
                          f"(a list, a DataFrame, a pyarrow Table or a Dataset), not a "
                          f"{type(data).__name__}: use output='table' and its kept column")
    if config is None:
        config = dedup_config(method, threshold=threshold, k=k, keep=keep)
    elif (method, threshold, k, keep) != (None, None, None, None):
        raise ConfigError("give config= or method/threshold/k/keep, not both")
    documents = documents_from(data, text=text, id=id, url=url, kind=kind)
    result = find_duplicates(documents, config, workers=workers, memory_limit=memory_limit,
                             columns=["id"], compact_work=compact_work)
    dropped = int(result.stats.get("revisits_without_original", 0))
    if dropped:
        raise ConfigError(f"{dropped} revisit Documents repeat no document of the input: give "
                          "their originals too")
    table = result.table()
    rows = pa.table({"row": table.column("doc"), "id": table.column("id"),
                     "cluster": table.column("cluster"), "kept": table.column("kept"),
                     "kept_row": table.column("kept_doc"), "reason": table.column("reason")})
    return rows if output == "table" else _rows_of(data, rows, output)


def _is_list(data: object) -> bool:
    return isinstance(data, Sequence) and not isinstance(data, str | bytes)


def _rows_of(data: Any, rows: Any, output: Output) -> Any:
    """The kept, removed or annotated rows of ``data``, in its own type."""
    kept = np.asarray(rows.column("kept").to_numpy(zero_copy_only=False), dtype=np.bool_)
    chosen = kept if output == "kept" else ~kept
    added = {name: rows.column(column) for name, column in ANNOTATIONS.items()}
    if is_dataset(data):
        if output != "annotated":
            return data.select(np.flatnonzero(chosen).tolist())
        for name, column in added.items():
            data = data.add_column(name, column.to_pylist())
        return data
    if is_table(data) and hasattr(data, "column_names"):  # pyarrow
        if output != "annotated":
            return data.filter(chosen)
        for name, column in added.items():
            data = data.append_column(name, column)
        return data
    if is_table(data):  # pandas
        if output != "annotated":
            return data[chosen]
        return data.assign(**{name: column.to_numpy(zero_copy_only=False)
                              for name, column in added.items()})
    if output != "annotated":
        return [item for item, take in zip(data, chosen.tolist(), strict=True) if take]
    values = {name: column.to_pylist() for name, column in added.items()}
    return [{**(dict(item) if isinstance(item, Mapping) else {"text": item}),
             **{name: column[row] for name, column in values.items()}}
            for row, item in enumerate(data)]
