"""Bit-level kernels (numba) of the compressed Hamming tables: encode, search, decode.

The stream is a sequence of 64-bit words; bits are written most significant first within a word,
words in order, so bit ``pos`` of the stream is bit ``63 - pos % 64`` of word ``pos // 64``. A
block is ``block_words`` consecutive words. It opens with its first value (64 bits), then holds one
entry per following value: the Huffman code of its symbol ``h`` (the position, counting from the
least significant bit 0, of the leading 1-bit of the XOR with the previous value, or
:data:`EQUAL` for a repeated value), then the ``h`` bits of the value below that position. The
bits above ``h`` are the previous value's and the bit at ``h`` is 1 (sorted order: the previous
value had a 0 there), so the value is ``((previous >> h) | 1) << h | low``.

Decoders never read outside the stream and report a status instead of raising (numba): 0 for
success, else one of the ``BAD_*`` codes, which :mod:`neardup.index.compressed` turns into a
:class:`~neardup.errors.CorruptDataError`.
"""

from __future__ import annotations

import numpy as np

from neardup._types import I64, U8, U16, U64
from neardup.text.compiled import njit

__all__ = [
    "BAD_BLOCK_END",
    "BAD_CODE",
    "BAD_KEY",
    "BAD_ORDER",
    "EQUAL",
    "block_starts",
    "decode_all",
    "decode_range",
    "encode_blocks",
    "entry_symbols",
    "lower_bound",
]


EQUAL = 64
"""The symbol of a value equal to the previous one (its XOR has no 1-bit); no bits follow."""
BAD_CODE, BAD_BLOCK_END, BAD_ORDER, BAD_KEY = 1, 2, 3, 4
_LENGTH_BITS = 5
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1
_ZERO = np.uint64(0)
_ONE = np.uint64(1)


@njit(cache=True, inline="always")
def _msb(x: np.uint64) -> int:  # pragma: no cover - compiled
    """Position of the most significant 1-bit of ``x > 0`` (bit 0 the least significant)."""
    position = 0
    for step in (32, 16, 8, 4, 2, 1):
        if x >> np.uint64(step):
            x >>= np.uint64(step)
            position += step
    return position


@njit(cache=True)
def entry_symbols(values: U64) -> U8:  # pragma: no cover - compiled
    """The symbol of each value after the first: ``h`` of its XOR with the previous, or EQUAL."""
    out = np.empty(max(values.size - 1, 0), dtype=np.uint8)
    for i in range(1, values.size):
        x = values[i] ^ values[i - 1]
        out[i - 1] = EQUAL if x == 0 else _msb(x)
    return out


@njit(cache=True)
def block_starts(symbols: U8, lengths: U8, block_bits: int) -> I64:  # pragma: no cover
    """Index of the first value of every block: a block takes entries while they fit."""
    starts = np.empty(symbols.size + 1, dtype=np.int64)
    starts[0] = 0
    blocks, position = 1, 64
    for i in range(symbols.size):
        symbol = symbols[i]
        need = int(lengths[symbol]) + (int(symbol) if symbol < EQUAL else 0)
        if position + need > block_bits:
            starts[blocks] = i + 1
            blocks += 1
            position = 64
        else:
            position += need
    return starts[:blocks]


@njit(cache=True, inline="always")
def _put(words: U64, position: int, value: np.uint64, width: int) -> None:  # pragma: no cover
    """Write the low ``width`` (1..64) bits of ``value`` at bit ``position``."""
    word, offset = position >> 6, position & 63
    space = 64 - offset
    if width <= space:
        words[word] |= value << np.uint64(space - width)
    else:
        rest = width - space
        words[word] |= value >> np.uint64(rest)
        words[word + 1] |= value << np.uint64(64 - rest)


@njit(cache=True)
def encode_blocks(values: U64, symbols: U8, codes: U64, lengths: U8, starts: I64,
                  block_words: int) -> U64:  # pragma: no cover - compiled
    """The stream of all blocks (``starts`` from :func:`block_starts`)."""
    words = np.zeros(starts.size * block_words, dtype=np.uint64)
    for block in range(starts.size):
        first = starts[block]
        last = starts[block + 1] if block + 1 < starts.size else values.size
        words[block * block_words] = values[first]
        position = block * block_words * 64 + 64
        for i in range(first + 1, last):
            symbol = symbols[i - 1]
            _put(words, position, codes[symbol], int(lengths[symbol]))
            position += int(lengths[symbol])
            if 0 < symbol < EQUAL:
                low = values[i] & ((_ONE << np.uint64(symbol)) - _ONE)
                _put(words, position, low, int(symbol))
                position += int(symbol)
    return words


@njit(cache=True, inline="always")
def _window(words: U64, position: int) -> np.uint64:  # pragma: no cover - compiled
    """The 64 bits of the stream from bit ``position`` on (zeros past its end)."""
    word, offset = position >> 6, position & 63
    high = words[word] if word < words.size else _ZERO
    if offset == 0:
        return high
    low = words[word + 1] if word + 1 < words.size else _ZERO
    return (high << np.uint64(offset)) | (low >> np.uint64(64 - offset))


@njit(cache=True)
def _decode_block(words: U64, block: int, block_words: int, count: int, key: np.uint64,
                  table: U16, peek: int, low: np.uint64, high: np.uint64, out: U64,
                  n: int) -> tuple[int, int, bool]:  # pragma: no cover - compiled
    """Decode up to ``count`` values of a block, appending those in [low, high] to ``out[n:]``.

    Returns (new n, status, stopped): ``stopped`` when a value above ``high`` ended the decoding
    early; a block decoded whole must end on its key.
    """
    position = block * block_words * 64
    end = position + block_words * 64
    value = words[block * block_words]
    position += 64
    for i in range(count):
        if i:
            window = _window(words, position)
            entry = table[window >> np.uint64(64 - peek)]
            length = int(entry & _LENGTH_MASK)
            symbol = int(entry >> _LENGTH_BITS)
            if length == 0:
                return n, BAD_CODE, False
            if symbol < EQUAL:
                h = np.uint64(symbol)
                if (value >> h) & _ONE:
                    return n, BAD_ORDER, False
                if length + symbol > 64:  # the low bits run past this window
                    window = _window(words, position + length)
                else:
                    window <<= np.uint64(length)
                bits = window >> np.uint64(64 - symbol) if symbol else _ZERO
                value = (((value >> h) | _ONE) << h) | bits
                position += symbol
            position += length
            if position > end:
                return n, BAD_BLOCK_END, False
        if value > high:
            return n, 0, True
        if value >= low:
            out[n] = value
            n += 1
    return n, (0 if value == key else BAD_KEY), False


@njit(cache=True)
def lower_bound(keys: U64, x: np.uint64) -> int:  # pragma: no cover - compiled
    """The first index i with keys[i] >= x (keys sorted; len(keys) if none).

    Interpolation search; a step that does not halve the interval is followed by a bisection
    step, so skewed keys cost at most about twice a binary search.
    """
    lo, hi = 0, keys.size  # the answer lies in [lo, hi]
    bisect = False
    while lo < hi:
        if keys[lo] >= x:
            return lo
        if keys[hi - 1] < x:
            return hi
        # keys[lo] < x <= keys[hi - 1]: the answer lies in [lo + 1, hi - 1]
        if bisect:
            guess = (lo + hi) // 2
        else:
            span = np.float64(keys[hi - 1] - keys[lo])
            share = np.float64(x - keys[lo]) / span
            guess = lo + int(share * (hi - 1 - lo))
        guess = min(max(guess, lo + 1), hi - 1)
        size = hi - lo
        if keys[guess] >= x:
            lo, hi = lo + 1, guess
        else:
            lo, hi = guess + 1, hi - 1
        bisect = not bisect and 2 * (hi - lo) > size
    return lo


@njit(cache=True)
def decode_range(words: U64, keys: U64, offsets: I64, table: U16, peek: int, block_words: int,
                 low_bound: int, high_bound: int) -> tuple[U64, int]:  # pragma: no cover
    """The stored values in [low, high] and a status, decoding only the blocks whose key range
    can hold them: from the first block whose key is >= low to the first whose key is > high.
    The bounds come as int64 holding the bit patterns of the uint64 bounds."""
    low, high = np.uint64(low_bound), np.uint64(high_bound)
    first = lower_bound(keys, low)
    if first >= keys.size:
        return np.empty(0, dtype=np.uint64), 0
    last = first
    while last < keys.size - 1 and keys[last] <= high:
        last += 1
    out = np.empty(offsets[last + 1] - offsets[first], dtype=np.uint64)
    n = 0
    for block in range(first, last + 1):
        count = offsets[block + 1] - offsets[block]
        n, status, stopped = _decode_block(words, block, block_words, count, keys[block], table,
                                           peek, low, high, out, n)
        if status or stopped:
            return out[:n], status
    return out[:n], 0


@njit(cache=True)
def decode_all(words: U64, keys: U64, offsets: I64, table: U16, peek: int,
               block_words: int) -> tuple[U64, int]:  # pragma: no cover - compiled
    """Every stored value and a status; each block must end on its key."""
    out = np.empty(offsets[-1], dtype=np.uint64)
    top = ~_ZERO
    for block in range(keys.size):
        _, status, _ = _decode_block(words, block, block_words, offsets[block + 1] - offsets[block],
                                     keys[block], table, peek, _ZERO, top, out, offsets[block])
        if status:
            return out, status
    return out, 0
