"""Compressed sorted tables of 64-bit fingerprints (Manku, Jain and Das Sarma, section 3.2).

One table is a sorted sequence of (permuted) fingerprints. Successive values share their leading
bits, so each value after the first is coded by ``h``, the position of the most significant 1-bit
of its XOR with the previous value (bit 0 the least significant), Huffman-coded with a code built
over this table's distribution of ``h``, followed by the ``h`` bits of the value below that
position. Values are packed into blocks of ``block_bytes`` (B = 1024 by default); a block opens with
its first value whole and takes entries while they fit. A block is keyed by its last value; an
interpolation search over the keys finds the blocks a query must decode.

Choices where the paper is silent:
- A repeated value (XOR 0, no 1-bit) has a symbol of its own, ``EQUAL`` (64), with no bits after.
- Codes are canonical and at most 12 bits long; only the 65 code lengths are stored.
- Blocks are all ``block_bytes`` long (the last one padded with zeros), so block i starts at byte
  ``i * block_bytes``; ``block_bytes`` must be a multiple of 8, at least 24.
- Besides the keys, the table stores the index of each block's first value (``offsets``, 8 bytes
  per block), so a block's count is known and checked, and a header with a checksum (xxh3-64) of
  every array.

The table is a few flat numpy arrays (:meth:`CompressedTable.to_arrays`), meant to be saved and
memory-mapped; :meth:`CompressedTable.from_arrays` checks their shapes and consistency (and, unless
told not to, the checksum) and raises :class:`~neardup.errors.CorruptDataError` on any mismatch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from neardup._types import I64, U16, U64
from neardup.errors import ConfigError, CorruptDataError
from neardup.index import blockcodec
from neardup.index.huffman import canonical_codes, check_lengths, code_lengths, decode_table

__all__ = [
    "ARRAY_NAMES",
    "DEFAULT_BLOCK_BYTES",
    "CompressedTable",
    "leading_bit_histogram",
    "modelled_bits_per_fingerprint",
]


DEFAULT_BLOCK_BYTES = 1024
MIN_BLOCK_BYTES = 24  # first value (64 bits) + the longest entry (12 + 63 bits) fit in 192 bits
MAX_BLOCK_BYTES = 1 << 20
FORMAT_VERSION = 1
MAGIC = int.from_bytes(b"NDXORHUF", "big")
SYMBOLS = blockcodec.EQUAL + 1
ARRAY_NAMES = ("header", "code_lengths", "keys", "offsets", "words")
_DTYPES = {"header": np.uint64, "code_lengths": np.uint8, "keys": np.uint64,
           "offsets": np.int64, "words": np.uint64}
_HEADER = ("magic", "version", "block_bytes", "count", "blocks", "checksum")
_STATUS = {blockcodec.BAD_CODE: "a bit pattern that is no Huffman code",
           blockcodec.BAD_BLOCK_END: "an entry runs past the end of its block",
           blockcodec.BAD_ORDER: "values out of order",
           blockcodec.BAD_KEY: "a block does not end on its key"}
_TOP = 2**64 - 1
_decode_range = blockcodec.decode_range
_FIXED_BYTES = 8 * len(_HEADER) + SYMBOLS


def _check_block_bytes(block_bytes: int) -> None:
    if (not MIN_BLOCK_BYTES <= block_bytes <= MAX_BLOCK_BYTES) or block_bytes % 8:
        raise ConfigError(f"block_bytes={block_bytes!r}: must be a multiple of 8 in "
                          f"{MIN_BLOCK_BYTES}..{MAX_BLOCK_BYTES}")


def _sorted_u64(values: npt.ArrayLike) -> U64:
    array = np.ascontiguousarray(np.asarray(values, dtype=np.uint64).ravel())
    descents = np.flatnonzero(array[1:] < array[:-1])
    if descents.size:
        raise ConfigError(f"sorted_values: not sorted ascending at position {descents[0] + 1}")
    return array


def leading_bit_histogram(sorted_values: npt.ArrayLike) -> I64:
    """How often each ``h`` (0..63) occurs between successive values, and at index 64 how many
    values repeat the previous one: the distribution the Huffman code is built on (the paper's
    Figure 2, left)."""
    symbols = blockcodec.entry_symbols(_sorted_u64(sorted_values))
    return np.bincount(symbols, minlength=SYMBOLS).astype(np.int64)


def _checksum(header: U64, arrays: Mapping[str, npt.NDArray[Any]]) -> int:
    digest = xxhash.xxh3_64()
    digest.update(header[: _HEADER.index("checksum")].tobytes())
    for name in ARRAY_NAMES[1:]:
        digest.update(np.ascontiguousarray(arrays[name]).view(np.uint8).data)
    return int(digest.intdigest())


def _corrupt(what: str) -> CorruptDataError:
    return CorruptDataError(f"compressed table: {what}")


class CompressedTable:
    """One sorted table of 64-bit values, compressed; see the module docstring for the format."""

    __slots__ = ("_arrays", "_block_words", "_count", "_keys", "_offsets", "_peek", "_table",
                 "_words", "block_bytes")

    def __init__(self, arrays: dict[str, npt.NDArray[Any]]) -> None:
        """Use :meth:`build` or :meth:`from_arrays`."""
        self._arrays = arrays
        self.block_bytes = int(arrays["header"][_HEADER.index("block_bytes")])
        self._block_words = self.block_bytes // 8
        self._count = int(arrays["offsets"][-1])
        self._words, self._keys, self._offsets = arrays["words"], arrays["keys"], arrays["offsets"]
        self._table, self._peek = decode_table(arrays["code_lengths"])

    @classmethod
    def build(cls, sorted_values: npt.ArrayLike,
              block_bytes: int = DEFAULT_BLOCK_BYTES) -> CompressedTable:
        """Compress ascending 64-bit values (repeats allowed) into blocks of ``block_bytes``."""
        _check_block_bytes(block_bytes)
        values = _sorted_u64(sorted_values)
        symbols = blockcodec.entry_symbols(values)
        lengths = code_lengths(np.bincount(symbols, minlength=SYMBOLS))
        if values.size:
            starts = blockcodec.block_starts(symbols, lengths, block_bytes * 8)
            words = blockcodec.encode_blocks(values, symbols, canonical_codes(lengths), lengths,
                                             starts, block_bytes // 8)
        else:
            starts, words = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
        offsets = np.append(starts, values.size).astype(np.int64)
        arrays: dict[str, npt.NDArray[Any]] = {
            "code_lengths": lengths, "keys": values[offsets[1:] - 1], "offsets": offsets,
            "words": words}
        header = np.array([MAGIC, FORMAT_VERSION, block_bytes, values.size, starts.size, 0],
                          dtype=np.uint64)
        header[-1] = _checksum(header, arrays)
        return cls({"header": header, **arrays})

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]],
                    verify: bool = True) -> CompressedTable:
        """A table from the arrays of :meth:`to_arrays` (memory-mapped ones work, not copied).

        Shapes, counts, the order of keys and block bounds and the code are always checked, in
        time proportional to the number of blocks; ``verify`` also checks the checksum, reading
        every byte. Raises :class:`CorruptDataError` naming what does not match.
        """
        checked = _checked_arrays(arrays)
        if verify and _checksum(checked["header"], checked) != int(checked["header"][-1]):
            raise _corrupt("checksum mismatch: the arrays were altered")
        return cls(checked)

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The table as flat numpy arrays, by name (see :data:`ARRAY_NAMES`)."""
        return dict(self._arrays)

    def __len__(self) -> int:
        return self._count

    @property
    def blocks(self) -> int:
        return int(self._arrays["keys"].size)

    @property
    def nbytes(self) -> int:
        """Bytes of all the arrays: blocks, keys, offsets, code lengths and header."""
        return sum(int(array.nbytes) for array in self._arrays.values())

    @property
    def bits_per_fingerprint(self) -> float:
        """``8 * nbytes / len``: 64 would be no compression (0.0 for an empty table)."""
        return 8 * self.nbytes / len(self) if len(self) else 0.0

    def decoder(self) -> tuple[U64, U64, I64, U16, int, int]:
        """(words, keys, offsets, decode table, peek bits, words per block): what the compiled
        :func:`neardup.index.blockcodec.decode_range` takes, for callers that probe from their
        own compiled loops."""
        return (self._words, self._keys, self._offsets, self._table, self._peek,
                self._block_words)

    def range(self, low: int, high: int) -> U64:
        """Every stored value v with ``low <= v <= high`` (repeats kept), ascending; decodes only
        the blocks that can hold such values."""
        low, high = max(int(low), 0), min(int(high), _TOP)
        if low > high or not self._count:
            return np.empty(0, dtype=np.uint64)
        # the kernel takes the bounds as int64 bit patterns (cheaper to pass than np.uint64)
        values, status = _decode_range(self._words, self._keys, self._offsets, self._table,
                                       self._peek, self._block_words,
                                       low - (low >> 63 << 64), high - (high >> 63 << 64))
        if status:
            raise _corrupt(f"corrupt block data: {_STATUS[status]}")
        return values

    def decode_all(self) -> U64:
        """Every stored value, ascending; each block is checked against its count and key."""
        values, status = blockcodec.decode_all(self._words, self._keys, self._offsets,
                                               self._table, self._peek, self._block_words)
        if status:
            raise _corrupt(f"corrupt block data: {_STATUS[status]}")
        return values


def _array(arrays: Mapping[str, npt.NDArray[Any]], name: str) -> npt.NDArray[Any]:
    if name not in arrays:
        raise _corrupt(f"array {name!r} is missing")
    array = arrays[name]
    if not isinstance(array, np.ndarray) or array.ndim != 1 or array.dtype != _DTYPES[name]:
        raise _corrupt(f"array {name!r} is not a 1-d {np.dtype(_DTYPES[name]).name} array")
    return np.ascontiguousarray(array)


def _checked_header(header: U64) -> dict[str, int]:
    if header.size != len(_HEADER):
        raise _corrupt(f"header has {header.size} fields, expected {len(_HEADER)}")
    fields = dict(zip(_HEADER, (int(v) for v in header), strict=True))
    if fields["magic"] != MAGIC or fields["version"] != FORMAT_VERSION:
        raise _corrupt(f"header is not a version-{FORMAT_VERSION} compressed table")
    try:
        _check_block_bytes(fields["block_bytes"])
    except ConfigError as error:
        raise _corrupt(f"header has {error}") from None
    return fields


def _checked_arrays(given: Mapping[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]:
    arrays = {name: _array(given, name) for name in ARRAY_NAMES}
    fields = _checked_header(arrays["header"])
    blocks, count = fields["blocks"], fields["count"]
    keys, offsets, words = arrays["keys"], arrays["offsets"], arrays["words"]
    sizes = {"keys": blocks, "offsets": blocks + 1, "words": blocks * fields["block_bytes"] // 8,
             "code_lengths": SYMBOLS}
    for name, size in sizes.items():
        if arrays[name].size != size:
            raise _corrupt(f"array {name!r} has {arrays[name].size} values, the header says "
                           f"{size} (truncated?)")
    if offsets[0] != 0 or offsets[-1] != count or np.any(offsets[1:] <= offsets[:-1]):
        raise _corrupt("block offsets are not increasing from 0 to the count")
    firsts = words[:: fields["block_bytes"] // 8]
    if np.any(keys[1:] < keys[:-1]) or np.any(firsts > keys) or np.any(firsts[1:] < keys[:-1]):
        raise _corrupt("block keys or first values are out of order")
    check_lengths(arrays["code_lengths"])
    return arrays


def modelled_bits_per_fingerprint(count: int, block_bytes: int = DEFAULT_BLOCK_BYTES) -> float:
    """Expected size per value, in bits, of a table of ``count`` uniformly random 64-bit values.

    Successive sorted values are about ``g = 2**64 / count`` apart (exponential gaps), so
    ``P(h < j) = E[max(0, 1 - g / 2**j)] = 1 - (1 - exp(-x)) / x`` with ``x = 2**j / g``; the
    model builds the same Huffman code over that distribution and adds what a block costs: its
    first value whole, about half an entry lost at its end, its key and its offset; and, once
    per table, the header and the code lengths.
    """
    _check_block_bytes(block_bytes)
    if count < 1:
        return 0.0
    x = np.exp2(np.arange(SYMBOLS, dtype=np.float64)) * count / 2.0**64
    below = 1.0 + np.expm1(-x) / x  # P(h < j), j = 0..64; below[0]: equal neighbours
    weights = np.append(np.diff(below), below[0])  # h = 0..63, then EQUAL
    weights /= weights.sum()
    lengths = code_lengths(weights).astype(np.float64)
    extra = np.append(np.arange(64, dtype=np.float64), 0.0)
    entry = float(np.sum(weights * (lengths + extra)))
    per_block = 1.0 + (8 * block_bytes - 64 - entry / 2) / entry
    blocks = math.ceil(count / per_block)
    return (blocks * (8 * block_bytes + 128) + 8 * (_FIXED_BYTES + 8)) / count
