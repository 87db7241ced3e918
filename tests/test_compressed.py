"""Compressed sorted tables (Manku section 3.2): round trips, range queries, block sizes, format
golden values, Huffman codes, the size model, and detection of corrupted or truncated arrays."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError, CorruptDataError
from neardup.index.blockcodec import EQUAL, lower_bound
from neardup.index.compressed import (
    ARRAY_NAMES,
    CompressedTable,
    leading_bit_histogram,
    modelled_bits_per_fingerprint,
)
from neardup.index.huffman import MAX_CODE_BITS, canonical_codes, code_lengths

TOP = 2**64 - 1
BLOCK_SIZES = st.sampled_from([24, 32, 64, 1024])


@st.composite
def sorted_tables(draw: st.DrawFn, max_size: int = 300) -> np.ndarray:
    """Sorted uint64 values: random, extremes, repeats and runs of close values (small h)."""
    edges = st.sampled_from([0, 1, 2**63 - 1, 2**63, TOP - 1, TOP])
    values = draw(st.lists(st.one_of(st.integers(0, TOP), edges), max_size=max_size))
    for base in draw(st.lists(st.integers(0, TOP), max_size=4)):
        steps = draw(st.lists(st.integers(0, 2**20), max_size=40))
        values += [min(base + step, TOP) for step in steps]
    return np.sort(np.array(values, dtype=np.uint64))


def _reference(values: np.ndarray, low: int, high: int) -> np.ndarray:
    low, high = max(low, 0), min(high, TOP)
    if low > high:
        return values[:0]
    lo = np.searchsorted(values, np.uint64(low), side="left")
    hi = np.searchsorted(values, np.uint64(high), side="right")
    return values[lo:hi]


@given(sorted_tables(), BLOCK_SIZES)
@settings(max_examples=150, deadline=None)
def test_round_trip_through_arrays(values: np.ndarray, block_bytes: int) -> None:
    table = CompressedTable.build(values, block_bytes)
    assert len(table) == values.size
    assert np.array_equal(table.decode_all(), values)
    again = CompressedTable.from_arrays(table.to_arrays())
    assert np.array_equal(again.decode_all(), values)
    assert set(table.to_arrays()) == set(ARRAY_NAMES)


@pytest.mark.slow
@given(sorted_tables(), BLOCK_SIZES, st.data())
@settings(max_examples=150, deadline=None)
def test_range_equals_searchsorted(values: np.ndarray, block_bytes: int,
                                   data: st.DataObject) -> None:
    table = CompressedTable.build(values, block_bytes)
    stored = [int(v) for v in values[:: max(1, values.size // 8)]]
    bound = st.one_of(st.integers(0, TOP), st.sampled_from([0, TOP, *stored]),
                      st.integers(-5, -1), st.integers(TOP + 1, TOP + 5))
    for _ in range(10):
        low, high = data.draw(bound), data.draw(bound)
        if data.draw(st.booleans()):
            low, high = min(low, high), max(low, high)
        assert np.array_equal(table.range(low, high), _reference(values, low, high))


@given(st.lists(st.integers(0, TOP), max_size=200), st.integers(0, TOP))
@settings(max_examples=200, deadline=None)
def test_interpolation_search_is_a_lower_bound(keys: list[int], x: int) -> None:
    array = np.sort(np.array(keys, dtype=np.uint64))
    assert lower_bound(array, np.uint64(x)) == np.searchsorted(array, np.uint64(x), side="left")


def test_skewed_keys_are_searched_correctly() -> None:
    values = np.sort(np.concatenate([
        np.arange(5000, dtype=np.uint64),  # a dense run at 0: interpolation guesses go astray
        np.array([2**k for k in range(13, 64)], dtype=np.uint64),
        np.full(300, TOP, dtype=np.uint64)]))
    table = CompressedTable.build(values, 24)
    for low, high in [(0, 0), (4999, 2**13), (2**40, 2**41), (2**63, TOP), (TOP, TOP), (17, 4000)]:
        assert np.array_equal(table.range(low, high), _reference(values, low, high))


def _entry_bits(values: np.ndarray, lengths: np.ndarray) -> list[int]:
    """Bits of each entry (code + bits below h), computed independently of the codec."""
    bits = []
    for previous, value in zip(values[:-1].tolist(), values[1:].tolist(), strict=True):
        h = (previous ^ value).bit_length() - 1
        bits.append(int(lengths[EQUAL]) if h < 0 else int(lengths[h]) + h)
    return bits


@given(sorted_tables(max_size=600), st.sampled_from([24, 40, 64, 128]))
@settings(max_examples=60, deadline=None)
def test_blocks_are_filled_greedily_within_their_size(values: np.ndarray, block_bytes: int) -> None:
    arrays = CompressedTable.build(values, block_bytes).to_arrays()
    offsets = arrays["offsets"].tolist()
    assert arrays["words"].size == (len(offsets) - 1) * block_bytes // 8
    entries = _entry_bits(values, arrays["code_lengths"])
    for block, (first, end) in enumerate(itertools.pairwise(offsets)):
        used = 64 + sum(entries[first:end - 1])
        assert used <= 8 * block_bytes
        if end < values.size:  # the next value did not fit
            assert used + entries[end - 1] > 8 * block_bytes
        assert arrays["keys"][block] == values[end - 1]
        assert arrays["words"][block * block_bytes // 8] == values[first]


def test_golden_stream() -> None:
    """0x10, 0x11 (h = 0), 0x13 (h = 1, low bit 1), 0x13 (EQUAL). Code: EQUAL '0', h=0 '10',
    h=1 '11'; stream after the first value: 10 11 1 0."""
    arrays = CompressedTable.build(np.array([0x10, 0x11, 0x13, 0x13], dtype=np.uint64),
                                   24).to_arrays()
    assert arrays["words"].tolist() == [0x10, 0b101110 << 58, 0]
    assert arrays["keys"].tolist() == [0x13]
    assert arrays["offsets"].tolist() == [0, 4]
    lengths = arrays["code_lengths"]
    assert (lengths[0], lengths[1], lengths[EQUAL]) == (2, 2, 1)
    assert int(lengths.sum()) == 5


def test_leading_bit_histogram() -> None:
    histogram = leading_bit_histogram([0, 1, 3, 3, 2**63 + 3])
    assert histogram[0] == 1 and histogram[1] == 1 and histogram[63] == 1
    assert histogram[EQUAL] == 1 and histogram.sum() == 4


def test_huffman_golden_and_canonical() -> None:
    lengths = code_lengths([1, 1, 2, 4])
    assert lengths.tolist() == [3, 3, 2, 1]
    assert canonical_codes(lengths).tolist() == [0b110, 0b111, 0b10, 0b0]
    assert code_lengths([0, 5, 0]).tolist() == [0, 1, 0]


def test_huffman_lengths_are_limited_and_prefix_free() -> None:
    fibonacci = [1, 1]
    while len(fibonacci) < 40:
        fibonacci.append(fibonacci[-1] + fibonacci[-2])
    assert int(code_lengths(fibonacci, limit=64).max()) == 39  # plain Huffman: a chain
    lengths = code_lengths(fibonacci)
    assert int(lengths.max()) <= MAX_CODE_BITS
    assert sum(2.0 ** -int(n) for n in lengths) == 1.0  # complete: Kraft equality
    codes = canonical_codes(lengths)
    words = {format(int(c), f"0{int(n)}b") for c, n in zip(codes, lengths, strict=True)}
    assert not any(a != b and b.startswith(a) for a in words for b in words)


def test_model_matches_measured_size_on_random_fingerprints() -> None:
    rng = np.random.default_rng(3)
    for count in (300_000, 1000):
        values = np.sort(rng.integers(0, 2**64, count, dtype=np.uint64))
        measured = CompressedTable.build(values).bits_per_fingerprint
        assert measured == pytest.approx(modelled_bits_per_fingerprint(count), rel=0.06)
    assert CompressedTable.build(np.sort(rng.integers(0, 2**64, 300_000, dtype=np.uint64))
                                 ).bits_per_fingerprint < 52


def test_model_gives_about_half_for_the_papers_8b_fingerprints() -> None:
    ratio = modelled_bits_per_fingerprint(2**34) / 64
    assert 0.5 < ratio < 0.56  # "approximately half" (section 3.2)
    assert modelled_bits_per_fingerprint(0) == 0.0


def test_bad_input_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="position 2"):
        CompressedTable.build(np.array([1, 5, 3], dtype=np.uint64))
    with pytest.raises(ConfigError, match="block_bytes=20"):
        CompressedTable.build(np.zeros(3, dtype=np.uint64), 20)


def _sample() -> CompressedTable:
    values = np.sort(np.random.default_rng(5).integers(0, 2**64, 2000, dtype=np.uint64))
    return CompressedTable.build(values, 128)


@pytest.mark.parametrize(("name", "cut", "message"), [
    ("words", 1, "'words' has"), ("keys", 1, "'keys' has"), ("offsets", 1, "'offsets' has"),
    ("code_lengths", 1, "'code_lengths' has"), ("header", 1, "header has 5 fields")])
def test_truncated_arrays_are_detected(name: str, cut: int, message: str) -> None:
    arrays = _sample().to_arrays()
    arrays[name] = arrays[name][:-cut]
    with pytest.raises(CorruptDataError, match=message):
        CompressedTable.from_arrays(arrays, verify=False)


def test_missing_or_mistyped_arrays_are_detected() -> None:
    arrays = _sample().to_arrays()
    with pytest.raises(CorruptDataError, match="'keys' is missing"):
        CompressedTable.from_arrays({k: v for k, v in arrays.items() if k != "keys"})
    with pytest.raises(CorruptDataError, match="not a 1-d uint64"):
        CompressedTable.from_arrays({**arrays, "words": arrays["words"].view(np.int64)})
    header = arrays["header"].copy()
    header[0] ^= 1
    with pytest.raises(CorruptDataError, match="not a version-1"):
        CompressedTable.from_arrays({**arrays, "header": header})


def test_a_flipped_bit_fails_the_checksum() -> None:
    arrays = _sample().to_arrays()
    words = arrays["words"].copy()
    words[3] ^= np.uint64(1 << 20)
    with pytest.raises(CorruptDataError, match="checksum"):
        CompressedTable.from_arrays({**arrays, "words": words})


def test_a_flipped_bit_without_checksum_fails_decoding() -> None:
    arrays = _sample().to_arrays()
    words = arrays["words"].copy()
    words[1:16] = 0  # the entries of block 0 (a flip that keeps the order may go unnoticed)
    table = CompressedTable.from_arrays({**arrays, "words": words}, verify=False)
    with pytest.raises(CorruptDataError, match="compressed table: corrupt block data"):
        table.decode_all()


@given(st.sampled_from(ARRAY_NAMES), st.integers(0, 2**40), st.integers(0, 63))
@settings(max_examples=150, deadline=None)
def test_every_single_bit_flip_is_detected(name: str, where: int, bit: int) -> None:
    arrays = _sample().to_arrays()
    flipped = arrays[name].copy()
    raw = flipped.view(np.uint8)
    raw[where % raw.size] ^= np.uint8(1 << (bit % 8))
    with pytest.raises(CorruptDataError):
        CompressedTable.from_arrays({**arrays, name: flipped})


@given(st.integers(0, 2**40), st.integers(0, 63))
@settings(max_examples=150, deadline=None)
def test_unverified_corrupt_blocks_never_read_out_of_bounds(where: int, bit: int) -> None:
    table = _sample()
    arrays = table.to_arrays()
    words = arrays["words"].copy()
    words[where % words.size] ^= np.uint64(1 << bit)
    try:
        damaged = CompressedTable.from_arrays({**arrays, "words": words}, verify=False)
        values = damaged.decode_all()
        damaged.range(0, TOP)
    except CorruptDataError:
        return
    # undetected (order kept, every block still ends on its key): still whole and ascending
    assert values.size == len(table)
    assert np.all(values[1:] >= values[:-1])
