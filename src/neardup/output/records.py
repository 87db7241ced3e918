"""Copying chosen records of a WARC file into a new WARC file, byte for byte.

A document read from a WARC file knows where its record starts (the ``offset`` of the
``documents`` table): its byte offset, or in a gzipped file the offset of the gzip member holding
it. A gzipped record is copied as its whole member, still compressed (the member's end is where
its inflater stops); a plain record as its header block, the ``Content-Length`` bytes of its
block and the blank line after them. A member holding more than one record cannot be cut, and
is refused. The file's leading ``warcinfo`` record, when it has one, is copied first, so that
every output file describes itself as its input did.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

import numpy as np
import numpy.typing as npt

from neardup.errors import OutputError
from neardup.sources.location import open_binary

__all__ = ["write_warc_records"]

_PIECE: Final = 1 << 16
_LENGTH: Final = re.compile(rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.I | re.M)
_TYPE: Final = re.compile(rb"^warc-type:[ \t]*(\S+)", re.I | re.M)


def _member(raw: BinaryIO, offset: int) -> tuple[bytes, bytes]:
    """The gzip member starting at ``offset``: its compressed bytes and its content."""
    raw.seek(offset)
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    compressed, content = bytearray(), bytearray()
    while not inflater.eof:
        piece = raw.read(_PIECE)
        if not piece:
            raise OutputError(f"offset {offset}: the gzip member ends before its end")
        compressed += piece
        content += inflater.decompress(piece)
    used = len(compressed) - len(inflater.unused_data)
    return bytes(compressed[:used]), bytes(content)


def _head_and_length(head: bytes, offset: int) -> tuple[int, int]:
    """Where a record's header block ends (after its blank line) and its block's length."""
    match = re.search(rb"\r?\n\r?\n", head)
    found = _LENGTH.search(head[:match.start()]) if match else None
    if not head.startswith(b"WARC/") or match is None or found is None:
        raise OutputError(f"offset {offset}: no WARC record header with a Content-Length there")
    return match.end(), int(found.group(1))


def _gzip_record(raw: BinaryIO, offset: int) -> tuple[bytes, bytes]:
    """The member of one record (refused when the member holds more), and its header block."""
    member, content = _member(raw, offset)
    end, length = _head_and_length(content, offset)
    if content[end + length:].strip(b"\r\n"):
        raise OutputError(f"offset {offset}: several records share this gzip member (a file "
                          "gzipped whole), so one cannot be copied alone; --write copies WARC "
                          "records of files gzipped record by record (the usual .warc.gz) or "
                          "not gzipped")
    return member, content[:end]


def _plain_record(raw: BinaryIO, offset: int) -> tuple[bytes, bytes]:
    """An uncompressed record: header block, block and the blank line after it."""
    raw.seek(offset)
    head = raw.read(_PIECE)
    while b"\n\r\n" not in head and b"\n\n" not in head:
        more = raw.read(_PIECE)
        if not more:
            break
        head += more
    end, length = _head_and_length(head, offset)
    raw.seek(offset)
    record = raw.read(end + length)
    tail = raw.read(4)
    blank = len(tail) - len(tail.lstrip(b"\r\n"))
    return record + tail[:blank], head[:end]


def _records(raw: BinaryIO, gz: bool, offsets: Iterator[int]) -> Iterator[tuple[bytes, bytes]]:
    for offset in offsets:
        yield (_gzip_record if gz else _plain_record)(raw, offset)


def _warcinfo(raw: BinaryIO, gz: bool) -> bytes | None:
    """The file's first record when it is a ``warcinfo`` record."""
    try:
        record, head = next(_records(raw, gz, iter([0])))
    except OutputError:
        return None
    found = _TYPE.search(head)
    return record if found is not None and found.group(1).lower() == b"warcinfo" else None


def write_warc_records(source: str, target: Path, gz: bool,
                       chosen: npt.NDArray[np.int64]) -> tuple[int, int]:
    """Write the records starting at ``chosen`` (sorted offsets) of WARC file ``source`` to
    ``target``, after the file's warcinfo record if it has one."""
    written = 0
    try:
        with open_binary(source) as raw, open(target, "wb") as out:
            info = _warcinfo(raw, gz)
            if info is not None and chosen.size:
                out.write(info)
            for record, _head in _records(raw, gz, (int(offset) for offset in chosen)):
                out.write(record)
                written += 1
    except (OSError, zlib.error) as err:
        raise OutputError(f"{source}: cannot copy its records ({err})") from err
    except OutputError as err:
        raise OutputError(f"{source}: {err}") from err
    return written, 0
