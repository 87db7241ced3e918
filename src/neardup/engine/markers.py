"""Sealed markers: what a finished stage or partition left, with the size and checksum of each
of its files, so that a re-run trusts nothing it cannot verify.

A marker (``done/<name>.json``) holds the stage's record, the files it marks done (paths
relative to the work directory, each with its size and its xxh3_64 checksum) and the checksum
of all of that (``xxh3``). It is written atomically, after the files it names. Reading it back
(:func:`read_marker`) checks the marker's own checksum, then the size and the checksum of every
file it names: a damaged marker or file makes the step not done (it is computed again, said in
one line); :func:`checked_marker` raises instead, naming the file (for a step that cannot be
computed again here: an earlier run's, read by ``--against``).

Hashing streams each file in blocks from the page cache; on this machine it costs far less than
reading the same files into a stage (see ``benchmarks/results/workdir_checksums.json``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

from neardup.errors import CorruptDataError, OutputError
from neardup.store import durable

__all__ = ["Damage", "checked_marker", "file_digest", "first_damage", "folder_files", "marked",
           "marker_path", "open_sealed", "read_marker", "say", "seal", "sealed_bytes",
           "write_marker"]

BLOCK = 4 << 20
"""Bytes hashed per read."""

Notice = Callable[[str], None]


def say(line: str) -> None:
    """The default notice: one line on stderr."""
    print(line, file=sys.stderr, flush=True)


def file_digest(path: Path) -> tuple[int, str]:
    """(size, xxh3_64 hex digest) of the file's bytes, read in blocks (no larger than the
    file: a run seals dozens of small files, and a zeroed 4 MB block for each cost more than
    hashing them)."""
    hasher = xxhash.xxh3_64()
    size = 0
    with open(path, "rb", buffering=0) as source:
        buffer = bytearray(max(1, min(BLOCK, os.fstat(source.fileno()).st_size)))
        view = memoryview(buffer)
        while count := source.readinto(buffer):
            hasher.update(view[:count])
            size += count
    return size, hasher.hexdigest()


def folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted (none when it is absent)."""
    return sorted(path for path in folder.rglob("*") if path.is_file())


def seal(root: Path, files: Iterable[Path]) -> dict[str, list[Any]]:
    """``{path relative to root: [size, checksum]}`` of ``files``."""
    sealed: dict[str, list[Any]] = {}
    for path in files:
        size, digest = file_digest(path)
        sealed[str(path.relative_to(root))] = [size, digest]
    return sealed


@dataclass(frozen=True, slots=True)
class Damage:
    """A file that is not as sealed: ``cause`` is ``missing``, ``size`` or ``checksum``."""

    path: Path
    cause: str


def first_damage(root: Path, sealed: Mapping[str, list[Any]]) -> Damage | None:
    """The first file of ``sealed`` that is missing, of another size or of another checksum;
    sizes are compared first, for every file, so a truncation costs no hashing."""
    for name, (size, _) in sealed.items():
        path = root / name
        try:
            found = path.stat().st_size
        except OSError:
            return Damage(path, "missing")
        if found != size:
            return Damage(path, f"size {found} bytes, marked {size}")
    for name, (_, digest) in sealed.items():
        path = root / name
        try:
            if file_digest(path)[1] != digest:
                return Damage(path, "checksum")
        except OSError:
            return Damage(path, "missing")
    return None


def _digest_of(payload: Mapping[str, Any]) -> str:
    return xxhash.xxh3_64_hexdigest(json.dumps(payload, sort_keys=True).encode())


def sealed_bytes(payload: Mapping[str, Any]) -> bytes:
    """``payload`` as JSON with its own checksum (``xxh3``)."""
    return json.dumps({**payload, "xxh3": _digest_of(payload)}, sort_keys=True).encode()


def _payload(path: Path) -> dict[str, Any] | Damage | None:
    """The payload sealed in ``path``, None when it is absent, a :class:`Damage` when its bytes
    are not what was sealed."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        return Damage(path, f"unreadable: {err.strerror or err}")
    try:
        found = json.loads(data)
        payload = {key: value for key, value in found.items() if key != "xxh3"}
        if "xxh3" not in found:
            return Damage(path, "no checksum: written by an earlier version")
        intact = found["xxh3"] == _digest_of(payload)
    except (ValueError, AttributeError, TypeError, UnicodeDecodeError):
        intact = False
    return payload if intact else Damage(path, "checksum")


def open_sealed(path: Path) -> dict[str, Any] | None:
    """The payload :func:`sealed_bytes` wrote to ``path``; None when the file is absent; a
    :class:`CorruptDataError` naming it when its bytes are not what was sealed."""
    found = _payload(path)
    if isinstance(found, Damage):
        raise CorruptDataError(f"{found.path}: damaged ({found.cause})")
    return found


def marker_path(root: Path, name: str) -> Path:
    return root / "done" / f"{name}.json"


def write_marker(root: Path, name: str, record: Mapping[str, Any],
                 files: Iterable[Path] = ()) -> None:
    """Mark step ``name`` done with ``record`` and the seals of ``files`` (written last,
    atomically)."""
    path = marker_path(root, name)
    payload = {"record": dict(record), "files": seal(root, files)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        durable.write_atomic(path, sealed_bytes(payload))
    except OSError as err:
        raise OutputError(f"{path}: cannot write ({err.strerror or err})") from err


def _marker(root: Path, name: str) -> dict[str, Any] | Damage | None:
    """The payload (record and seals) of step ``name``'s marker, None when it is not marked,
    a :class:`Damage` when the marker itself is damaged."""
    path = marker_path(root, name)
    payload = _payload(path)
    if payload is None or isinstance(payload, Damage):
        return payload
    if not isinstance(payload.get("record"), dict) or not isinstance(payload.get("files"), dict):
        return Damage(path, "not a marker")
    return payload


def _inspect(root: Path, name: str) -> dict[str, Any] | Damage | None:
    """The record of step ``name``, None when it is not marked, or the first damage found."""
    payload = _marker(root, name)
    if payload is None or isinstance(payload, Damage):
        return payload
    damage = first_damage(root, payload["files"])
    if damage is not None:
        return damage
    record: dict[str, Any] = payload["record"]
    return record


def marked(root: Path, name: str) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    """(record, seals) of step ``name`` without verifying its files (for a reader that
    verifies only the files it reads, with :func:`first_damage`); None when not marked; a
    damaged marker raises :class:`CorruptDataError` naming it."""
    payload = _marker(root, name)
    if isinstance(payload, Damage):
        raise CorruptDataError(f"{payload.path}: damaged ({payload.cause})")
    return None if payload is None else (payload["record"], payload["files"])


def read_marker(root: Path, name: str, notice: Notice = say) -> dict[str, Any] | None:
    """The record of step ``name`` when it is marked done and every file it marks is intact;
    otherwise None (the step is computed again): a damaged marker or file is said in one line
    and the marker removed."""
    found = _inspect(root, name)
    if isinstance(found, Damage):
        notice(f"work directory: {found.path} is damaged ({found.cause}); "
               f"computing {name.replace('/', ' ')} again")
        marker_path(root, name).unlink(missing_ok=True)
        return None
    return found


def checked_marker(root: Path, name: str) -> dict[str, Any] | None:
    """:func:`read_marker` for a step that cannot be computed again here: a damaged marker or
    file raises :class:`CorruptDataError` naming it and the cause."""
    found = _inspect(root, name)
    if isinstance(found, Damage):
        raise CorruptDataError(f"{found.path}: damaged ({found.cause})")
    return found
