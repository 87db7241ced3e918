"""Arrow columns built from their buffers equal those of ``pa.array``, and read back as
``to_numpy`` reads them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from neardup.sources.columns import numbers_of, numeric_array, string_array, string_lists


@pytest.mark.parametrize("dtype, kind", [(np.int64, pa.int64()), (np.uint64, pa.uint64()),
                                         (np.int32, pa.int32()), (np.float64, pa.float64()),
                                         (np.int32, pa.int64()), (np.bool_, pa.bool_())])
def test_numeric_columns_equal_pa_array(dtype: type, kind: pa.DataType) -> None:
    values = np.array([3, 0, 1, 7, 1, 0, 2, 5, 9, 4, 1], dtype=dtype)
    mask = np.arange(values.size) % 3 == 1
    built = numeric_array(values, kind, mask=mask)
    built.validate(full=True)
    assert built.equals(pa.array(values, kind, mask=mask))
    assert numeric_array(values, kind).equals(pa.array(values, kind))
    assert numeric_array(values[::2], kind).equals(pa.array(values[::2], kind))


def test_nan_stays_a_value_unless_masked() -> None:
    values = np.array([1.5, np.nan])
    kept = numeric_array(values)
    assert kept.null_count == pa.array(values, pa.float64()).null_count == 0
    assert np.isnan(kept[1].as_py())
    assert numeric_array(values, mask=np.isnan(values)).to_pylist() == [1.5, None]


def test_string_columns_equal_pa_array() -> None:
    values = ["a", None, "", "Über", "日本語", None, "x" * 300]
    built = string_array(values)
    built.validate(full=True)
    assert built.equals(pa.array(values, pa.string()))
    assert string_array([]).equals(pa.array([], pa.string()))


def test_string_lists_equal_pa_array() -> None:
    rows = [("http://a/", "http://b/"), (), ("ü",)]
    built = string_lists(rows)
    built.validate(full=True)
    assert built.equals(pa.array([list(row) for row in rows], pa.list_(pa.string())))


def test_numbers_of_reads_chunks_and_slices_as_to_numpy() -> None:
    chunked = pa.chunked_array([pa.array([1, 2, 3], pa.uint64())[1:], pa.array([4], pa.uint64())])
    np.testing.assert_array_equal(numbers_of(chunked), chunked.to_numpy())
    assert numbers_of(chunked).dtype == np.uint64
    single = pa.chunked_array([pa.array([5, 6, 7], pa.int64()).slice(1, 2)])
    np.testing.assert_array_equal(numbers_of(single), [6, 7])
    assert numbers_of(pa.chunked_array([], pa.int64())).size == 0
    with_nulls = pa.chunked_array([pa.array([1, None], pa.int64())])
    np.testing.assert_array_equal(numbers_of(with_nulls), with_nulls.to_numpy())


def test_a_column_of_another_type_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="int8"):
        numeric_array(np.zeros(2, dtype=np.int8))


def test_numbers_of_unpacks_booleans() -> None:
    values = pa.array([True, False, True, True, False, False, True, False, True, True])
    chunked = pa.chunked_array([values.slice(3, 6), values.slice(1, 2)])
    np.testing.assert_array_equal(numbers_of(chunked), chunked.to_numpy())
    assert numbers_of(chunked).dtype == np.bool_
