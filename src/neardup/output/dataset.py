"""``dedup --write``: the deduplicated dataset, in the input's own format and shards.

After a run, :func:`write_rows` reads its ``documents`` and ``clusters`` tables
(:mod:`neardup.output.selection`) and the input files again, and writes into ``OUT/<mode>/``:

- ``kept``: the rows of the kept documents (one per cluster, and every unique document);
- ``removed``: the rows of the documents dropped as duplicates;
- ``annotated``: every row, with the columns ``neardup_doc``, ``neardup_cluster``,
  ``neardup_kept``, ``neardup_kept_doc`` and ``neardup_reason`` added (a row that became no
  document, say one without text, gets nulls and the reason ``skipped``).

Each input file gives one output file of the same name and format (Parquet, JSONL, JSONL.gz;
for ``kept`` and ``removed`` also WARC, the chosen records copied byte for byte
(:mod:`neardup.output.records`), and HTML or text files, copied whole), placed as it was under
the folder the inputs share. An input file of which no document was read gives no output file,
nor does a WARC, HTML or text file with nothing to copy. ARC inputs are refused. Every file is
written under a temporary name, synced and renamed, then recorded in ``OUT/<mode>/.neardup/``
with a digest of its input file and of the rows chosen: a re-run skips what is already
complete, rewrites what changed, and removes the files it recorded earlier that this run no
longer writes (files it did not write are never touched). The readers and writers of rows
are imported when a mode is asked for (a run without ``--write`` only prunes).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from neardup.engine.workdir import write_atomic
from neardup.errors import OutputError
from neardup.sources.location import filesystem_of, is_url, open_binary, size_of
from neardup.sources.sniff import read_head, sniff
from neardup.store.durable import sync_dir, sync_path

if TYPE_CHECKING:
    from neardup.output.selection import FileRows

__all__ = ["WRITE_MODES", "write_rows"]

WRITE_MODES: Final = ("kept", "removed", "annotated")
RECORDS: Final = ".neardup"
"""The folder, inside each mode's folder, that records the files written there."""
_VERSION: Final = 1
_ROWS_FORMATS: Final = ("parquet", "jsonl")


def _format(source: str) -> tuple[str, bool]:
    """The format of an input file (and whether it is gzipped); refuses what cannot be copied."""
    try:
        with open_binary(source) as raw:
            found = sniff(read_head(raw), source, explicit=True)
    except OSError as err:
        raise OutputError(f"{source}: cannot read it again to write its rows "
                          f"({err.strerror or err})") from err
    if found.fmt == "arc":
        raise OutputError(f"{source}: --write copies rows of Parquet, JSONL, WARC and HTML or "
                          "text files; ARC inputs are not supported")
    if found.fmt not in (*_ROWS_FORMATS, "warc", "html", "text"):
        raise OutputError(f"{source}: a {found.fmt} file; --write cannot copy its rows")
    return found.fmt, found.gz


def _where(source: str) -> str:
    """The absolute path of a local source, the path inside its file system of a URL."""
    return filesystem_of(source)[1] if is_url(source) else os.path.abspath(source)


def _stamp(source: str) -> str:
    """Size and modification time of a local file; size of a URL (times vary by file system)."""
    if is_url(source):
        return str(size_of(source))
    stat = os.stat(source)
    return f"{stat.st_size}\0{stat.st_mtime_ns}"


def _names(sources: Iterable[str]) -> dict[str, str]:
    """Each source's path relative to the folder all sources share."""
    paths = {source: _where(source) for source in sources}
    if not paths:
        return {}
    common = os.path.commonpath([os.path.dirname(path) for path in paths.values()])
    return {source: os.path.relpath(path, common) for source, path in paths.items()}


def _digest(mode: str, source: str, rows: FileRows) -> str:
    """What the output file depends on: the input file (size and time) and the rows chosen."""
    digest = hashlib.sha256(f"{_VERSION}\0{mode}\0{source}\0{_stamp(source)}\0".encode())
    digest.update(rows.offsets.tobytes())
    digest.update(rows.kept.tobytes())
    if mode == "annotated":
        for array in (rows.doc, rows.cluster, rows.kept_doc):
            digest.update(array.tobytes())
        digest.update("\0".join(rows.reason).encode())
    return digest.hexdigest()


def _record_path(folder: Path, name: str) -> Path:
    return folder / RECORDS / (hashlib.sha1(name.encode()).hexdigest() + ".json")


def _recorded(folder: Path) -> dict[str, Path]:
    """The files recorded in a mode's folder (name -> its record)."""
    records = folder / RECORDS
    found: dict[str, Path] = {}
    for path in sorted(records.glob("*.json")) if records.is_dir() else ():
        try:
            found[json.loads(path.read_text())["name"]] = path
        except (OSError, ValueError, KeyError):
            path.unlink(missing_ok=True)
    return found


def _complete(folder: Path, name: str, digest: str) -> bool:
    try:
        record = json.loads(_record_path(folder, name).read_text())
    except (OSError, ValueError):
        return False
    return bool(record.get("digest") == digest and (folder / name).is_file())


def _write_one(mode: str, rows: FileRows, fmt: str, gz: bool, target: Path) -> tuple[int, int]:
    from neardup.output.records import write_warc_records
    from neardup.output.shards import copy_file, write_jsonl_rows, write_parquet_rows

    chosen = None if mode == "annotated" else rows.offsets_where(mode == "kept")
    if fmt == "parquet":
        return write_parquet_rows(rows.source, target, rows, chosen)
    if fmt == "jsonl":
        return write_jsonl_rows(rows.source, target, gz, rows, chosen)
    if chosen is None:
        raise OutputError(f"{rows.source}: a {fmt.upper()} file has no rows to annotate; "
                          "use --write kept or removed (the clusters table annotates it)")
    if fmt == "warc":
        return write_warc_records(rows.source, target, gz, chosen) if chosen.size else (0, 0)
    return copy_file(rows.source, target) if chosen.size else (0, 0)


def _publish(temporary: Path, target: Path) -> None:
    sync_path(temporary)
    os.replace(temporary, target)
    sync_dir(target.parent)


def _write_shard(folder: Path, mode: str, name: str, rows: FileRows, fmt: str, gz: bool,
                 counts: dict[str, int]) -> bool:
    """Write one output file (unless complete already); False when it has no row to hold."""
    digest = _digest(mode, rows.source, rows)
    if _complete(folder, name, digest):
        counts["files_reused"] += 1
        return True
    target = folder / name
    temporary = target.with_name(f".{target.name}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        written, left_out = _write_one(mode, rows, fmt, gz, temporary)
        if written == 0 and fmt not in _ROWS_FORMATS:
            return False
        _publish(temporary, target)
    except OSError as err:
        raise OutputError(f"{target}: cannot write ({err.strerror or err})") from err
    finally:
        temporary.unlink(missing_ok=True)
    record = _record_path(folder, name)
    record.parent.mkdir(exist_ok=True)
    write_atomic(record, json.dumps({"name": name, "source": rows.source, "digest": digest,
                                     "rows": written, "left_out": left_out}).encode())
    counts["files_written"] += 1
    counts["rows"] += written
    counts["left_out"] += left_out
    return True


def _prune(folder: Path, keep: set[str]) -> int:
    """Remove the files recorded in ``folder`` that this run did not write; returns how many."""
    removed = 0
    for name, record in _recorded(folder).items():
        if name in keep:
            continue
        (folder / name).unlink(missing_ok=True)
        record.unlink(missing_ok=True)
        removed += 1
    return removed


def _check_modes(modes: Sequence[str]) -> None:
    unknown = [mode for mode in modes if mode not in WRITE_MODES]
    if unknown:
        raise OutputError(f"--write {unknown[0]}: use {', '.join(WRITE_MODES)}")


def write_rows(out: Path, modes: Sequence[str]) -> dict[str, Any]:
    """Write the rows of each mode in ``modes`` (see the module docstring) from the run in
    ``out``; returns, per mode, the files written and reused, the rows written and the lines
    left out. Modes not asked for have the files recorded in their folders removed."""
    _check_modes(modes)
    if modes:
        from neardup.output.selection import file_rows, sources
    names = _names(sources(out)) if modes else {}
    formats = {source: _format(source) for source in names}
    counts = {mode: {"files_written": 0, "files_reused": 0, "rows": 0, "left_out": 0}
              for mode in modes}
    produced: dict[str, set[str]] = {mode: set() for mode in WRITE_MODES}
    for rows in file_rows(out) if modes else ():
        fmt, gz = formats[rows.source]
        for mode in modes:
            name = names[rows.source]
            if _write_shard(out / mode, mode, name, rows, fmt, gz, counts[mode]):
                produced[mode].add(name)
    for mode in WRITE_MODES:
        folder = out / mode
        written = produced[mode]
        if folder.is_dir():
            removed = _prune(folder, written)
            if mode in counts:
                counts[mode]["files_removed"] = removed
            elif not any(path.is_file() for path in folder.rglob("*")):
                shutil.rmtree(folder)
    return {mode: counts[mode] | {"folder": str(out / mode)} for mode in modes}
