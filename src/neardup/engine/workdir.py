"""The work directory of a batch run: its identity, its durable files and its completion markers.

A run's work directory holds every intermediate file of the stages (see :mod:`neardup.engine`).
``identity.json`` records what the outputs depend on (the full method config, the inputs, the
media, the partitioning); a re-run with the same work directory and another identity is refused
with an error naming each difference, so that a resume never mixes two configurations. Options
that change only speed or memory (workers, memory limit) are not part of it.

Every file a stage produces is written under a temporary name, synced and renamed into place
(:func:`write_atomic`, :func:`publish_dir`); a stage marks a finished partition or step with a
marker file (:meth:`WorkDir.mark`), written last, so that whatever a ``kill -9`` interrupts is
either complete and marked, or ignored and redone. A marker seals the files it marks done (their
sizes and checksums, :mod:`neardup.engine.markers`) and :meth:`WorkDir.done` verifies them: a
damaged file makes its step not done, said in one line, and the step is computed again. The
identity is sealed too: a damaged or missing one drops every marker (nothing can be trusted).
"""

from __future__ import annotations

import errno
import fnmatch
import json
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.engine.markers import (
    Notice,
    marker_path,
    open_sealed,
    read_marker,
    say,
    sealed_bytes,
    write_marker,
)
from neardup.errors import ConfigError, CorruptDataError, OutputError
from neardup.store import durable
from neardup.store.durable import TMP_SUFFIX, publish_dir

__all__ = ["WorkDir", "drop_scratch", "full_disk", "naming_full_disks", "publish_dir",
           "read_array", "read_identity", "write_array", "write_atomic"]

IDENTITY = "identity.json"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` durably (:func:`neardup.store.durable.write_atomic`)."""
    try:
        durable.write_atomic(path, data)
    except OSError as err:
        raise OutputError(f"{path}: cannot write ({err.strerror or err})") from err


def write_array(path: Path, array: npt.NDArray[Any]) -> None:
    """Write one array as ``.npy`` (synced; the caller publishes its directory atomically)."""
    with open(path, "wb") as out:
        np.save(out, np.ascontiguousarray(array), allow_pickle=False)
        durable.sync(out)


def read_array(path: Path, mmap: bool = False) -> npt.NDArray[Any]:
    """The array in ``path`` (memory-mapped when ``mmap``); a file that is not a whole ``.npy``
    raises :class:`CorruptDataError` naming it."""
    try:
        array: npt.NDArray[Any] = np.load(path, allow_pickle=False,
                                          mmap_mode="r" if mmap else None)
    except (ValueError, EOFError) as err:
        raise CorruptDataError(f"{path}: not a whole array ({err})") from err
    return array


_FAILED_WRITE = re.compile(r"write (\d+) bytes")
"""numpy's words for a write that did not fit (``Not enough free space to write N bytes``)."""
_SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")
"""numpy's words for a write cut short (items, not bytes)."""


def full_disk(error: OSError, folders: Sequence[Path],
              needed: Callable[[], int | None] = lambda: None) -> OutputError | None:
    """An error naming the folder whose disk is full (the file's, else the one of ``folders``
    with the least space free), its free bytes, the bytes the failed write needed where known
    and ``needed()``, what the run needs in the first folder (the work directory) when
    known; None when ``error`` is not a full disk."""
    failed = _FAILED_WRITE.search(str(error))
    if error.errno not in (errno.ENOSPC, errno.EDQUOT) and failed is None \
            and not _SHORT_WRITE.search(str(error)):
        return None
    free = {folder: _free_bytes(folder) for folder in folders}
    folder = (Path(str(error.filename)).parent if error.filename is not None
              else min(free, key=lambda found: free[found]))
    wanted = f"; a write of {int(failed.group(1)):,} bytes failed" if failed else ""
    whole = needed() if folder == folders[0] or folders[0] in folder.parents else None
    if whole is not None:
        wanted += f"; the run needs about {whole:,} bytes there, judged by the inputs' size"
    return OutputError(f"{folder}: the disk is full ({_free_bytes(folder):,} bytes free"
                       f"{wanted}); free some space or use a folder on another disk "
                       "(--work, --out)")


def _free_bytes(folder: Path) -> int:
    for candidate in (folder, *folder.parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return 0


@contextmanager
def naming_full_disks(folders: Sequence[Path],
                      needed: Callable[[], int | None] = lambda: None) -> Iterator[None]:
    """Inside, an OSError of a full disk becomes :func:`full_disk`'s error."""
    try:
        yield
    except OSError as err:
        explained = full_disk(err, folders, needed)
        if explained is None:
            raise
        raise explained from err


def drop_scratch(folder: Path, keep: tuple[str, ...]) -> None:
    """Remove every entry of a stage's temporary ``folder`` but ``keep`` (its results), before
    it is published: the buckets and joins that made them are read by no later stage. A kept
    name may be a path inside a sub-folder (``candidates/pairs.bin``) and a pattern
    (``candidates/table*``)."""
    for path in list(folder.iterdir()):
        if any(fnmatch.fnmatchcase(path.name, name) for name in keep):
            continue
        inner = tuple(name.split("/", 1)[1] for name in keep
                      if "/" in name and fnmatch.fnmatchcase(path.name, name.split("/", 1)[0]))
        if inner and path.is_dir():
            drop_scratch(path, inner)
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


FORMAT = 4
"""The version of the work directory's files, recorded in its identity: a work directory of
another version is refused (its own run's) or not joined (``--against``), never misread."""


def identity_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``name: old -> new`` for every leaf that differs."""
    before, after = _flatten(old), _flatten(new)
    return [f"{key}: {before.get(key)!r} -> {after.get(key)!r}"
            for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)]


def read_identity(root: Path) -> dict[str, Any] | None:
    """The identity recorded in the work directory ``root`` (an earlier run's), None when it has
    none; a damaged one raises :class:`CorruptDataError` naming it."""
    payload = open_sealed(root / IDENTITY)
    if payload is None:
        return None
    identity = payload.get("identity")
    if not isinstance(identity, dict):
        raise CorruptDataError(f"{root / IDENTITY}: damaged (not an identity)")
    return identity


class WorkDir:
    """A run's work directory: identity check, stage folders, sealed markers. ``notice`` says
    the damaged files found (one line each)."""

    def __init__(self, root: Path, identity: Mapping[str, Any], *,
                 replace_other: bool = False, notice: Notice = say) -> None:
        self.root = root
        self.notice = notice
        self._replace_other = replace_other
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(f"{root}: cannot create the work directory "
                              f"({err.strerror or err})") from err
        self._check_identity(json.loads(json.dumps(identity, sort_keys=True, default=str)))
        self._remove_debris()

    def _write_identity(self, identity: dict[str, Any]) -> None:
        write_atomic(self.root / IDENTITY, sealed_bytes({"identity": identity}))

    def _recorded_identity(self) -> dict[str, Any] | None:
        """The identity recorded (None when there is none that can be trusted: then no marker
        can be either, and they are dropped, said in one line when there were some)."""
        path = self.root / IDENTITY
        try:
            payload = open_sealed(path)
            cause = "missing" if payload is None else ""
        except CorruptDataError as err:
            payload, cause = None, str(err).removeprefix(f"{path}: ")
        if payload is not None and isinstance(payload.get("identity"), dict):
            identity: dict[str, Any] = payload["identity"]
            return identity
        done = self.root / "done"
        if done.exists():
            self.notice(f"work directory: {path} is {cause or 'damaged (not an identity)'}; "
                        "computing every stage again")
            shutil.rmtree(done)
        return None

    def _check_identity(self, identity: dict[str, Any]) -> None:
        recorded = self._recorded_identity()
        if recorded is None:
            self._write_identity(identity)
            return
        differences = identity_differences(recorded, identity)
        if differences and self._replace_other:
            shutil.rmtree(self.root)
            self.root.mkdir(parents=True)
            self._write_identity(identity)
            return
        if differences:
            raise ConfigError(
                f"{self.root}: this work directory belongs to a run with another configuration "
                f"({'; '.join(differences)}); use another --work or remove it")

    def _remove_debris(self) -> None:
        """Temporary files and folders of an interrupted write are never read: remove them."""
        for path in list(self.root.rglob(f"*{TMP_SUFFIX}")):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def stage(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def marker(self, name: str) -> Path:
        return marker_path(self.root, name)

    def done(self, name: str) -> dict[str, Any] | None:
        """The record a finished step left, or None when it has not finished or when its marker
        or a file it marks is damaged (said in one line; the step is then computed again)."""
        return read_marker(self.root, name, self.notice)

    def mark(self, name: str, record: Mapping[str, Any], files: Iterable[Path] = ()) -> None:
        """Record that step ``name`` has finished, with the seals of the ``files`` it leaves
        for later steps (written last, atomically)."""
        write_marker(self.root, name, record, files)

    @staticmethod
    def mark_at(root: Path, name: str, record: Mapping[str, Any],
                files: Iterable[Path] = ()) -> None:
        """:meth:`mark` for a worker process that has only the directory's path."""
        write_marker(root, name, record, files)

    def temporary(self, final: Path) -> Path:
        """A fresh temporary directory beside ``final`` (see :func:`publish_dir`)."""
        temporary = final.with_name(final.name + TMP_SUFFIX)
        if temporary.exists():
            shutil.rmtree(temporary)
        temporary.mkdir(parents=True)
        return temporary

    def files(self, stage: str, pattern: str) -> Iterator[Path]:
        yield from sorted((self.root / stage).glob(pattern))
