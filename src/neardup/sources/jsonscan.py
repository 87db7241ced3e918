"""Flat JSON objects scanned by a compiled kernel: the fastest path of JSONL reading.

A run of JSONL lines (:mod:`neardup.sources.jsonl`) is scanned in one compiled pass over its
bytes. Each line must be one flat object whose values are strings, integers of at most
:data:`MAX_DIGITS` digits, ``true``, ``false`` or ``null``; strings are unescaped into a buffer of
UTF-8 bytes, so that a document's text is cut from it as the bytes it holds, never decoded into a
Python string and encoded back (pyarrow's JSON reader took about half the CPU of reading a line
of real text, this scan about a sixth).

The result must be what ``json.loads`` gives line by line, so the scan accepts only what it reads
exactly as ``json.loads`` does and declines the whole run otherwise (the caller then tries
pyarrow's reader, then the lines one by one): a line that is not such an object (an array, a
nested value, a fraction or an exponent, ``NaN``, two objects, trailing bytes, a byte-order
mark); a key given twice (``json.loads`` keeps the last value); bytes that are not strict UTF-8
(encoded surrogates, overlong forms), a control character inside a string, an escape of a lone
surrogate (``\\ud800`` not followed by a low one), an unknown escape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from neardup._types import I64, U8
from neardup.text.compiled import njit

__all__ = ["FALSE", "INTEGER", "MAX_DIGITS", "NULL", "STRING", "TRUE", "ScannedRun",
           "scan_run"]

STRING: Final = 0
INTEGER: Final = 1
TRUE: Final = 2
FALSE: Final = 3
NULL: Final = 4
MAX_DIGITS: Final = 18
"""Integers with more digits are declined (``json.loads`` reads any size; int64 holds 18)."""
_KIND, _KEY, _KEY_END, _VALUE, _VALUE_END = range(5)
"""Columns of a field's row: kind, key start and end in the strings buffer, value (start and
end of a string there, or an integer)."""
_FIELD = 5
"""How many columns a field's row has."""
_FULL = -2
"""What a line's scan returns when the field rows are full."""


@njit(cache=True, inline="always", interpretable=True)
def _space(byte: int) -> bool:  # pragma: no cover - compiled
    return byte == 32 or byte == 9 or byte == 10 or byte == 13


@njit(cache=True, interpretable=True)
def _skip_space(buf: U8, at: int, end: int) -> int:  # pragma: no cover - compiled
    while at < end and _space(int(buf[at])):
        at += 1
    return at


@njit(cache=True, interpretable=True)
def _hex(byte: int) -> int:  # pragma: no cover - compiled
    """The value of a hexadecimal digit, -1 for another byte."""
    if 48 <= byte <= 57:
        return byte - 48
    if 97 <= byte <= 102:
        return byte - 87
    if 65 <= byte <= 70:
        return byte - 55
    return -1


@njit(cache=True, inline="always", interpretable=True)
def _utf8_size(buf: U8, at: int, end: int) -> int:  # pragma: no cover - compiled
    """The size of the strict UTF-8 sequence at ``at`` (lead byte >= 0x80), 0 if invalid
    (overlong, surrogate, beyond U+10FFFF, cut short)."""
    lead = int(buf[at])
    if 0xC2 <= lead <= 0xDF:
        size, low, high = 2, 0x80, 0xBF
    elif 0xE0 <= lead <= 0xEF:
        size = 3
        low = 0xA0 if lead == 0xE0 else 0x80
        high = 0x9F if lead == 0xED else 0xBF
    elif 0xF0 <= lead <= 0xF4:
        size = 4
        low = 0x90 if lead == 0xF0 else 0x80
        high = 0x8F if lead == 0xF4 else 0xBF
    else:
        return 0
    if at + size > end:
        return 0
    second = int(buf[at + 1])
    if second < low or second > high:
        return 0
    for j in range(2, size):
        if int(buf[at + j]) & 0xC0 != 0x80:
            return 0
    return size


@njit(cache=True, interpretable=True)
def _put_code_point(out: U8, n: int, cp: int) -> int:  # pragma: no cover - compiled
    """Write the UTF-8 bytes of ``cp`` (not a surrogate) at ``out[n]``; the next output."""
    if cp < 0x80:
        out[n] = cp
        return n + 1
    if cp < 0x800:
        out[n] = 0xC0 | (cp >> 6)
        out[n + 1] = 0x80 | (cp & 0x3F)
        return n + 2
    if cp < 0x10000:
        out[n] = 0xE0 | (cp >> 12)
        out[n + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[n + 2] = 0x80 | (cp & 0x3F)
        return n + 3
    out[n] = 0xF0 | (cp >> 18)
    out[n + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[n + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[n + 3] = 0x80 | (cp & 0x3F)
    return n + 4


@njit(cache=True, interpretable=True)
def _unicode(buf: U8, at: int, end: int) -> int:  # pragma: no cover - compiled
    """The code unit of the escape ``\\uXXXX`` at ``at``, -1 when there is none."""
    if at + 6 > end or int(buf[at]) != 92 or int(buf[at + 1]) != 117:
        return -1
    unit = 0
    for j in range(2, 6):
        digit = _hex(int(buf[at + j]))
        if digit < 0:
            return -1
        unit = unit * 16 + digit
    return unit


@njit(cache=True, interpretable=True)
def _escape(buf: U8, at: int, end: int, out: U8, n: int) -> tuple[int, int]:
    # pragma: no cover - compiled
    """Unescape the escape whose backslash is at ``at``: (next byte, next output), or (-1, n).
    A surrogate pair of escapes is one code point, as ``json.loads`` reads it; a lone
    surrogate is declined."""
    if at + 1 >= end:
        return -1, n
    byte = int(buf[at + 1])
    if byte == 34 or byte == 92 or byte == 47:
        out[n] = byte
    elif byte == 98:
        out[n] = 8
    elif byte == 102:
        out[n] = 12
    elif byte == 110:
        out[n] = 10
    elif byte == 114:
        out[n] = 13
    elif byte == 116:
        out[n] = 9
    elif byte == 117:
        cp = _unicode(buf, at, end)
        if cp < 0 or 0xDC00 <= cp <= 0xDFFF:
            return -1, n
        if cp < 0xD800 or cp > 0xDFFF:
            return at + 6, _put_code_point(out, n, cp)
        low = _unicode(buf, at + 6, end)
        if low < 0xDC00 or low > 0xDFFF:
            return -1, n
        return at + 12, _put_code_point(out, n, 0x10000 + ((cp - 0xD800) << 10) + low - 0xDC00)
    else:
        return -1, n
    return at + 2, n + 1


@njit(cache=True, inline="always", interpretable=True)
def _string(buf: U8, at: int, end: int, out: U8, n: int, plain: U8) -> tuple[int, int]:
    # pragma: no cover - compiled
    """Unescape the string whose opening quote is at ``at`` into ``out[n:]``: (the byte after
    its closing quote, the end of its bytes in ``out``), or (-1, n) when it is declined.
    ``plain``: 1 for the bytes copied as they are (ASCII but quote, backslash, controls)."""
    at += 1
    while at < end:
        byte = buf[at]
        if plain[byte]:
            out[n] = byte
            n += 1
            at += 1
            continue
        if byte == 34:
            return at + 1, n
        if byte == 92:
            at, n = _escape(buf, at, end, out, n)
            if at < 0:
                return -1, n
        elif byte < 0x80:  # a control character
            return -1, n
        else:
            size = _utf8_size(buf, at, end)
            if size == 0:
                return -1, n
            for j in range(size):
                out[n + j] = buf[at + j]
            n += size
            at += size
    return -1, n


@njit(cache=True, interpretable=True)
def _literal(buf: U8, at: int, end: int, word: U8) -> bool:  # pragma: no cover - compiled
    if at + word.size > end:
        return False
    for j in range(word.size):  # noqa: SIM110 - numba compiles no generator
        if buf[at + j] != word[j]:
            return False
    return True


@njit(cache=True, interpretable=True)
def _integer(buf: U8, at: int, end: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """(the byte after the integer at ``at``, its value), or (-1, 0) for a number declined."""
    negative = at < end and int(buf[at]) == 45
    first = at + 1 if negative else at
    digit = first
    value = 0
    while digit < end and 48 <= int(buf[digit]) <= 57:
        value = value * 10 + int(buf[digit]) - 48
        digit += 1
    digits = digit - first
    if digits == 0 or digits > MAX_DIGITS or (digits > 1 and int(buf[first]) == 48):
        return -1, 0
    if digit < end and (int(buf[digit]) == 46 or int(buf[digit]) | 32 == 101):
        return -1, 0  # a fraction or an exponent: a float
    return digit, -value if negative else value


@njit(cache=True, interpretable=True)
def _same_key(out: U8, fields: I64, one: int, other: int) -> bool:  # pragma: no cover
    start, stop = fields[one, _KEY], fields[one, _KEY_END]
    begin = fields[other, _KEY]
    if stop - start != fields[other, _KEY_END] - begin:
        return False
    for j in range(stop - start):  # noqa: SIM110 - numba compiles no generator
        if out[start + j] != out[begin + j]:
            return False
    return True


@njit(cache=True, interpretable=True)
def _value(buf: U8, at: int, end: int, out: U8, n: int, fields: I64, f: int,
           words: U8, plain: U8) -> tuple[int, int]:  # pragma: no cover - compiled
    """Scan the value at ``at`` into field row ``f``: (the byte after it, output end), or -1."""
    byte = int(buf[at]) if at < end else -1
    if byte == 34:
        fields[f, _KIND] = STRING
        fields[f, _VALUE] = n
        at, n = _string(buf, at, end, out, n, plain)
        fields[f, _VALUE_END] = n
    elif byte == 45 or 48 <= byte <= 57:
        at, value = _integer(buf, at, end)
        fields[f, _KIND] = INTEGER
        fields[f, _VALUE] = value
    elif byte == 116 and _literal(buf, at, end, words[0:4]):
        fields[f, _KIND] = TRUE
        at += 4
    elif byte == 102 and _literal(buf, at, end, words[4:9]):
        fields[f, _KIND] = FALSE
        at += 5
    elif byte == 110 and _literal(buf, at, end, words[9:13]):
        fields[f, _KIND] = NULL
        at += 4
    else:
        at = -1
    return at, n


@njit(cache=True, interpretable=True)
def _line(buf: U8, at: int, end: int, out: U8, n: int, fields: I64, f: int,
          words: U8, plain: U8) -> tuple[int, int]:  # pragma: no cover - compiled
    """Scan the line ``buf[at:end]``, one flat object, into field rows from ``f``: (the next
    free field row, output end), or (-1, n) when it is declined."""
    first = f
    at = _skip_space(buf, at, end)
    if at >= end or int(buf[at]) != 123:
        return -1, n
    at = _skip_space(buf, at + 1, end)
    if at < end and int(buf[at]) == 125:
        return (f, n) if _skip_space(buf, at + 1, end) == end else (-1, n)
    while True:
        if f >= fields.shape[0]:
            return _FULL, n
        if at >= end or int(buf[at]) != 34:
            return -1, n
        fields[f, _KEY] = n
        at, n = _string(buf, at, end, out, n, plain)
        fields[f, _KEY_END] = n
        if at < 0:
            return -1, n
        for other in range(first, f):
            if _same_key(out, fields, other, f):
                return -1, n
        at = _skip_space(buf, at, end)
        if at >= end or int(buf[at]) != 58:
            return -1, n
        at, n = _value(buf, _skip_space(buf, at + 1, end), end, out, n, fields, f, words,
                       plain)
        if at < 0:
            return -1, n
        f += 1
        at = _skip_space(buf, at, end)
        if at < end and int(buf[at]) == 125:
            return (f, n) if _skip_space(buf, at + 1, end) == end else (-1, n)
        if at >= end or int(buf[at]) != 44:
            return -1, n
        at = _skip_space(buf, at + 1, end)


@njit(cache=True, interpretable=True)
def _grown(fields: I64, f: int) -> I64:  # pragma: no cover - compiled
    """``fields`` with its first ``f`` rows, in twice the room."""
    wider = np.empty((2 * fields.shape[0], _FIELD), dtype=np.int64)
    wider[:f] = fields[:f]
    return wider


@njit(cache=True, interpretable=(0,))  # the tables are not work
def _scan(buf: U8, ends: I64, words: U8, plain: U8) -> tuple[U8, I64, I64, bool]:
    # pragma: no cover - compiled
    """(strings buffer, field rows, the first field row of each line and one past the last,
    True) of the lines ending at ``ends``; False when a line is declined. The field rows
    start with room for 8 a line and double when a line finds them full (it is scanned
    again): room for the most a run could hold ('"":1,' is 5 bytes) would be 10 MB a run."""
    out = np.empty(buf.size, dtype=np.uint8)
    fields = np.empty((8 * ends.size + 16, _FIELD), dtype=np.int64)
    firsts = np.zeros(ends.size + 1, dtype=np.int64)
    n = f = at = 0
    for line in range(ends.size):
        found, written = _line(buf, at, int(ends[line]), out, n, fields, f, words, plain)
        while found == _FULL:
            fields = _grown(fields, f)
            found, written = _line(buf, at, int(ends[line]), out, n, fields, f, words, plain)
        if found < 0:
            return out[:0], fields[:0], firsts[:0], False
        f, n = found, written
        firsts[line + 1] = f
        at = int(ends[line])
    return out[:n], fields[:f], firsts, True


_WORDS: Final = np.frombuffer(b"truefalsenull", dtype=np.uint8)
_PLAIN: Final = np.zeros(256, dtype=np.uint8)
_PLAIN[0x20:0x80] = 1
_PLAIN[[34, 92]] = 0


class ScannedRun:
    """The lines of a run as scanned: each line's fields, their values as ``json.loads`` gives
    them except strings named in ``raw``, kept as their UTF-8 bytes. (The field rows are kept
    as one flat list of numbers: a list a field would be a container for the garbage collector
    to track, and collections came twice as often.)"""

    def __init__(self, strings: bytes, fields: I64, firsts: I64) -> None:
        self.strings = strings
        self.fields: list[int] = fields.ravel().tolist()
        self.firsts: list[int] = (firsts * _FIELD).tolist()
        self.keys: dict[bytes, str] = {}

    def __len__(self) -> int:
        return len(self.firsts) - 1

    def _key(self, start: int, end: int) -> str:
        raw = self.strings[start:end]
        key = self.keys.get(raw)
        if key is None:
            key = self.keys[raw] = raw.decode("utf-8")
        return key

    def row(self, line: int, raw: Sequence[str]) -> dict[str, Any]:
        """Line ``line``'s object; the strings of the keys in ``raw`` as bytes."""
        found: dict[str, Any] = {}
        strings, fields = self.strings, self.fields
        for at in range(self.firsts[line], self.firsts[line + 1], _FIELD):
            kind, value = fields[at + _KIND], fields[at + _VALUE]
            name = self._key(fields[at + _KEY], fields[at + _KEY_END])
            if kind == STRING:
                cut = strings[value:fields[at + _VALUE_END]]
                found[name] = cut if name in raw else cut.decode("utf-8")
            elif kind == INTEGER:
                found[name] = value
            else:
                found[name] = True if kind == TRUE else False if kind == FALSE else None
        return found


def scan_run(blob: bytes, ends: Sequence[int]) -> ScannedRun | None:
    """The run ``blob`` of lines ending at ``ends`` (offsets in ``blob``), scanned; None when a
    line is declined (see the module's docstring)."""
    buf = np.frombuffer(blob, dtype=np.uint8)
    strings, fields, firsts, whole = _scan(buf, np.array(ends, dtype=np.int64), _WORDS, _PLAIN)
    if not whole:
        return None
    return ScannedRun(strings.tobytes(), fields, firsts)
