"""A buffered byte stream over a plain or gzipped archive that knows where each byte came from.

Gzipped WARC and ARC files hold one record per gzip member, and the byte offset an index stores
is the compressed offset of the member. :class:`ByteStream` reads member after member, remembers
where each one starts, and answers :meth:`ByteStream.offset` for the next unread byte. It never
raises on damage: a corrupt member is abandoned (its offset is appended to ``damaged``) and
reading goes on at the next gzip header; a stream that ends inside a member sets ``truncated``.
A read never runs across the place where data was dropped: it comes back short there.
"""

from __future__ import annotations

import bisect
import re
import zlib
from typing import BinaryIO, Final

__all__ = ["ByteStream"]

_CHUNK: Final = 1 << 16
_MAX_OUT: Final = 1 << 20
_GZIP_MAGIC: Final = b"\x1f\x8b\x08"
_BLANK_LINE = re.compile(rb"\n\r?\n")


class ByteStream:
    """Line and block reads over ``raw`` (decompressing gzip members when ``gz``)."""

    def __init__(self, raw: BinaryIO, *, gz: bool, base: int = 0) -> None:
        self._raw = raw
        self._gz = gz
        self._buf = bytearray()
        self._pos = 0  # next unread byte in _buf
        self._dropped = 0  # decompressed bytes dropped from the front of _buf
        self._starts = [0]  # decompressed position of each member start...
        self._offsets = [base]  # ...and its offset in the file
        self._zlib = zlib.decompressobj(31)
        self._member_start = base
        self._member_fed = 0
        self._pending = b""
        self._fences: list[int] = []
        self._raw_eof = False
        self.damaged: list[int] = []  # file offsets where corrupt gzip data was skipped
        self.truncated = False

    # -- filling --------------------------------------------------------------------------

    def _fill(self) -> bool:
        """Append more decompressed bytes to the buffer; False at the end of the input."""
        if self._raw_eof and not self._pending:
            return False
        if self._pos > _MAX_OUT and self._pos * 2 > len(self._buf):
            self._compact()
        if not self._gz:
            data = self._raw.read(_CHUNK)
            self._buf += data
            self._raw_eof = not data
            return bool(data)
        return self._fill_gz()

    def _compact(self) -> None:
        del self._buf[: self._pos]
        self._dropped += self._pos
        self._pos = 0
        keep = max(0, bisect.bisect_right(self._starts, self._dropped) - 1)
        del self._starts[:keep]
        del self._offsets[:keep]

    def _next_input(self) -> bytes:
        data = self._pending or self._raw.read(_CHUNK)
        self._pending = b""
        if not data:
            self._raw_eof = True
        return data

    def _fill_gz(self) -> bool:
        data = self._next_input()
        if not data:
            if self._member_fed and not self._zlib.eof:
                self.truncated = True
                self._buf += self._zlib.flush()
                self._member_fed = 0
            return False
        try:
            out = self._zlib.decompress(data, _MAX_OUT)
        except zlib.error:
            self._resync(data)
            return True
        self._pending = self._zlib.unconsumed_tail
        self._member_fed += len(data) - len(self._pending)
        self._buf += out
        if self._zlib.eof:
            unused = self._zlib.unused_data
            self._start_member(self._member_start + self._member_fed - len(unused))
            self._pending = unused + self._pending
        return True

    def _start_member(self, offset: int) -> None:
        """The next decompressed byte starts a new member at ``offset`` in the file."""
        self._zlib = zlib.decompressobj(31)
        self._member_start = offset
        self._member_fed = 0
        here = self._dropped + len(self._buf)
        if self._starts[-1] == here:
            self._offsets[-1] = offset
        else:
            self._starts.append(here)
            self._offsets.append(offset)

    def _resync(self, data: bytes) -> None:
        """Corrupt gzip data: skip to the next gzip header after the current member start."""
        self.damaged.append(self._member_start)
        at = self._member_start + self._member_fed
        skip_from = 1 if self._member_fed == 0 else 0
        while True:
            found = data.find(_GZIP_MAGIC, skip_from)
            if found >= 0:
                self._fences.append(self._dropped + len(self._buf))
                self._start_member(at + found)
                self._pending = data[found:]
                return
            keep = data[-2:]
            at += len(data) - len(keep)
            more = self._raw.read(_CHUNK)
            if not more:
                self._raw_eof = True
                self._member_fed = 0
                return
            data, skip_from = keep + more, 0

    # -- reading --------------------------------------------------------------------------

    def _fence(self) -> int:
        """Buffer index that reads must not pass (where damaged data was dropped); -1 if none."""
        here = self._dropped + self._pos
        while self._fences and self._fences[0] <= here:
            del self._fences[0]
        return self._fences[0] - self._dropped if self._fences else -1

    def _ensure(self, n: int) -> int:
        """Buffer up to ``n`` readable bytes; returns how many are available (fewer at a fence
        or at the end of the input)."""
        while True:
            fence = self._fence()
            have = (len(self._buf) if fence < 0 else fence) - self._pos
            if have >= n or fence >= 0 or not self._fill():
                return min(have, n)

    def exhausted(self) -> bool:
        """True when the whole input has been read into the buffer (the end is in sight)."""
        return self._raw_eof and not self._pending

    def offset(self) -> int:
        """The file offset of the next unread byte (its member's offset when gzipped)."""
        here = self._dropped + self._pos
        if not self._gz:
            return self._offsets[0] + here
        index = bisect.bisect_right(self._starts, here) - 1
        return self._offsets[max(index, 0)]

    def position(self) -> int:
        """Decompressed bytes read so far."""
        return self._dropped + self._pos

    def peek(self, n: int) -> bytes:
        """Up to ``n`` next bytes, without consuming them."""
        have = self._ensure(n)
        return bytes(self._buf[self._pos : self._pos + have])

    def readline(self, limit: int = _CHUNK) -> bytes:
        """The next line, newline included (b'' at the end); at most ``limit`` bytes."""
        searched = 0
        while True:
            fence = self._fence()
            have = min((len(self._buf) if fence < 0 else fence) - self._pos, limit)
            end = self._buf.find(b"\n", self._pos + searched, self._pos + have)
            if end >= 0:
                return self._take(end + 1 - self._pos)
            if have >= limit or fence >= 0 or not self._fill():
                return self._take(have)
            searched = have

    def read_head(self, limit: int) -> bytes | None:
        """The bytes up to and including the next empty line (a header block; the empty line
        may be the first one). None when no empty line comes within ``limit`` bytes."""
        searched = 0
        while True:
            fence = self._fence()
            have = min((len(self._buf) if fence < 0 else fence) - self._pos, limit)
            if self._buf.startswith(b"\n", self._pos) or self._buf.startswith(b"\r\n", self._pos):
                return self.readline()
            start = self._pos + max(searched - 2, 0)
            found = _BLANK_LINE.search(self._buf, start, self._pos + have)
            if found is not None:
                return self._take(found.end() - self._pos)
            if have >= limit or fence >= 0 or not self._fill():
                return None
            searched = have

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes (fewer only at the end of the input or at damage)."""
        return self._take(self._ensure(n))

    def skip(self, n: int) -> int:
        """Discard up to ``n`` bytes; returns how many were discarded."""
        done = 0
        while done < n:
            have = self._ensure(min(n - done, _MAX_OUT))
            if have <= 0:
                break
            self._pos += have
            done += have
        return done

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[self._pos : self._pos + n])
        self._pos += n
        return out
