"""Where an input lives: a local path, or the URL of a file system fsspec knows.

``memory://``, ``file://`` and the other file systems built into fsspec need nothing more;
``s3://``, ``gs://`` and ``hf://`` need their packages (the extras ``s3``, ``gcs``, ``hf``). A
URL is read through fsspec as a stream (Parquet through pyarrow's wrapper of the file system),
never copied to a local file first. A URL naming a folder stands for the files under it, and one
with ``*``, ``?`` or ``[`` for its sorted matches, as for local paths.
"""

from __future__ import annotations

import io
import re
from typing import Any, Final

from neardup.errors import SourceError

__all__ = ["expand_url", "filesystem_of", "is_url", "open_binary", "size_of"]

_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_MAGIC: Final = re.compile(r"[*?[]")


def is_url(path: str) -> bool:
    """True for ``scheme://...`` (a Windows drive letter or a plain path is not a URL)."""
    return bool(_URL.match(path))


def filesystem_of(url: str) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path inside it."""
    try:
        import fsspec
    except ImportError as err:  # pragma: no cover - fsspec is a dependency
        raise SourceError(url, "reading URLs needs fsspec (pip install fsspec)") from err
    try:
        filesystem, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:
        raise SourceError(url, f"no file system for this URL ({err}); install the extra "
                               "that brings it (neardup[s3], neardup[gcs], neardup[hf])") from err
    return filesystem, str(path)


def open_binary(path: str, buffer: int = io.DEFAULT_BUFFER_SIZE) -> io.BufferedReader:
    """A binary stream of a local file or of a URL, read ``buffer`` bytes at a time (a reader
    of lines longer than the default 8 KB asks more: JSONL of real text read its lines at two
    system calls each)."""
    if not is_url(path):
        return io.BufferedReader(io.FileIO(path, "r"), buffer)  # open(path, "rb") at that size
    filesystem, inner = filesystem_of(path)
    return io.BufferedReader(filesystem.open(inner, "rb"), buffer)  # read1, as readers use


def size_of(path: str) -> int:
    """The size in bytes of a local file or of a URL (OSError when it is not there)."""
    if not is_url(path):
        import os

        return os.path.getsize(path)
    filesystem, inner = filesystem_of(path)
    try:
        return int(filesystem.size(inner))
    except FileNotFoundError:
        raise
    except Exception as err:  # a file system's own error, as an OSError
        raise OSError(str(err)) from err


def expand_url(url: str) -> tuple[list[str], bool]:
    """The files a URL stands for (itself, its glob matches sorted, or the files under the
    folder it names, sorted), as URLs; and whether it named them itself (a file or a glob),
    rather than a folder."""
    filesystem, inner = filesystem_of(url)
    if _MAGIC.search(inner):
        found = sorted(filesystem.glob(inner))
        return [filesystem.unstrip_protocol(p) for p in found if not filesystem.isdir(p)], True
    if filesystem.isdir(inner):
        found = sorted(filesystem.find(inner))
        return [filesystem.unstrip_protocol(p) for p in found
                if not any(part.startswith(".") for part in p[len(inner):].split("/"))], False
    return [url], True
