"""The inputs of a Spark run: URIs and globs resolved through Hadoop's FileSystem on the driver.

An input with a scheme (``file://``, ``hdfs://``, ``s3a://``, any file system Spark's Hadoop
configuration knows) is resolved with ``org.apache.hadoop.fs.FileSystem`` through the JVM
gateway: a glob expands to its matches sorted by URI, a directory is walked as the local reader
walks one (entries sorted by name at each level, hidden ones skipped; the files met there are
not "named by the user", as locally), a file is taken as given. A URI that names nothing is an
error (as a missing local path is); a glob that matches nothing is passed on unchanged, so that
the run counts it ``no-match`` as it counts a local pattern. The first bytes of every file are
read on the driver to recognise its format (:func:`neardup.sources.sniff.sniff`), which decides
how Spark reads it (:mod:`neardup.engine.spark.sources`). Plain local paths are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neardup.errors import SourceError
from neardup.sources.sniff import HEAD_SIZE, Sniffed, sniff

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["RemoteFile", "Resolved", "hadoop_path", "is_uri", "java_cause", "resolve_inputs"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
_GLOB_MAGIC = re.compile(r"[*?[{]")


def is_uri(path: str) -> bool:
    """Whether ``path`` names a file system (``scheme:/...``): Spark resolves it, not the OS."""
    return bool(_SCHEME.match(path)) and len(path.split(":", 1)[0]) > 1  # not C:/ (Windows)


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """One file behind a URI: its format, or why it could not be read."""

    uri: str
    explicit: bool
    found: Sniffed | None
    problem: str | None = None
    stamp: tuple[int, int] | None = None
    """(bytes, modification time in ms) from the file system: the run's identity holds it, so
    that resuming over a changed file is refused as for a local one."""

    def __post_init__(self) -> None:
        if (self.found is None) == (self.problem is None):
            raise ValueError("RemoteFile: exactly one of found and problem must be set")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The paths a run reads (local paths and file URIs, in order) and each URI's file."""

    paths: tuple[str, ...]
    remote: dict[str, RemoteFile] = field(default_factory=dict)


def _head(fs: Any, path: Any) -> bytes:
    stream = fs.open(path)
    try:
        return bytes(stream.readNBytes(HEAD_SIZE))
    finally:
        stream.close()


def java_cause(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    text = str(java.toString()) if java is not None else str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _remote(fs: Any, status: Any, uri: str, explicit: bool) -> RemoteFile:
    stamp = (int(status.getLen()), int(status.getModificationTime()))
    try:
        head = _head(fs, status.getPath())
    except Exception as error:  # a Java I/O failure reaches Python as a Py4J error
        return RemoteFile(uri, explicit, None, java_cause(error), stamp)
    return RemoteFile(uri, explicit, sniff(head, uri, explicit=explicit), stamp=stamp)


def _walk(fs: Any, folder: Any) -> Iterator[tuple[Any, str]]:
    """(status, URI) of the files under ``folder``, depth first, sorted by name, hidden
    skipped."""
    for status in sorted(fs.listStatus(folder), key=lambda status: str(status.getPath().getName())):
        path = status.getPath()
        if str(path.getName()).startswith("."):
            continue
        if status.isDirectory():
            yield from _walk(fs, path)
        else:
            yield status, str(path.toString())


def hadoop_path(session: SparkSession, uri: str) -> tuple[Any, Any]:
    """(Hadoop FileSystem, Path) of ``uri``, through the driver's JVM gateway."""
    jvm = session.sparkContext._jvm
    assert jvm is not None
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(session.sparkContext._jsc.hadoopConfiguration()), path


def _expand(session: SparkSession, uri: str) -> Iterator[RemoteFile | str]:
    fs, path = hadoop_path(session, uri)
    if _GLOB_MAGIC.search(uri):
        statuses = sorted(fs.globStatus(path) or [], key=lambda status: str(status.getPath()))
        if not statuses:
            yield uri  # counted no-match by the run, as a local pattern
        matches = [(status, str(status.getPath().toString())) for status in statuses]
    elif not fs.exists(path):
        raise SourceError(uri, "no such file or directory")
    else:
        matches = [(fs.getFileStatus(path), uri)]
    for status, name in matches:
        if status.isDirectory():
            for inner, found in _walk(fs, status.getPath()):
                yield _remote(fs, inner, found, False)
        else:
            yield _remote(fs, status, name, True)


def resolve_inputs(session: SparkSession, inputs: Sequence[str]) -> Resolved:
    """The files behind ``inputs``; a URI that names nothing raises :class:`SourceError`."""
    paths: list[str] = []
    remote: dict[str, RemoteFile] = {}
    for given in inputs:
        if not is_uri(given):
            paths.append(given)
            continue
        for item in _expand(session, given):
            if isinstance(item, str):
                paths.append(item)
            else:
                paths.append(item.uri)
                remote[item.uri] = item
    return Resolved(tuple(paths), remote)
