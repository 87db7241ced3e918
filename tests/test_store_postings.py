"""The store's sketch postings (sorted runs in segments plus the insert log's delta): the same
answers however the documents were flushed, merged, compacted or reopened, and exactly what a
scan of every stored sketch finds."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest

from corpora import edited_documents
from neardup.document import Document
from neardup.errors import CorruptDataError
from neardup.store import Store, open_store
from neardup.store.postings import PostingDelta, docs_holding, sorted_run


def _stored_sketches(store: Store) -> dict[int, set[int]]:
    rows = store.db.execute("SELECT doc, data FROM sketches").fetchall()
    return {int(doc): set(np.frombuffer(data, dtype="<i8").tolist()) for doc, data in rows}


def _brute_force(sketches: dict[int, set[int]], values: list[int]) -> list[int]:
    wanted = set(values)
    return sorted(doc for doc, held in sketches.items() if held & wanted)


def _answers(store: Store, docs: list[Document]) -> list[list[tuple[int, float | None]]]:
    return [[(m.doc, m.resemblance) for m in store.similar(doc)] for doc in docs]


def test_postings_equal_a_scan_of_every_sketch_through_flushes_merges_and_reopening(
        tmp_path: Path) -> None:
    docs = edited_documents(400, seed=3)
    probes = docs[::13]
    with open_store(tmp_path / "one", flush_every=10**9) as whole:
        whole.add(docs)
        assert not whole.segments
        expected = _answers(whole, probes)
    assert any(len(found) > 1 for found in expected)     # near-copies share values
    with open_store(tmp_path / "many", flush_every=30) as store:
        for start in range(0, 300, 23):                  # many flushes, merges along the way
            store.add(docs[start:start + 23])
        first = store.segments[0]
        assert first.first == 0 and int(first.name) > 1    # rewritten by a merge
        store.compact()
        store.add(docs[300:380])                         # a new segment after the compaction
        store.add(docs[380:])                            # 20 stay in the insert log
        assert store.segments and len(store.postings) > 0
        sketches = _stored_sketches(store)
        for doc in range(0, len(store), 17):
            values = sorted(sketches[doc])
            found = store.sharing(values)
            assert doc in found and found == _brute_force(sketches, values)
        mixed = sorted({v for doc in (0, 57, 199, 350) for v in sketches[doc]})
        assert store.sharing(mixed) == _brute_force(sketches, mixed)
        assert store.sharing([]) == []
        assert _answers(store, probes) == expected
    with open_store(tmp_path / "many", read_only=True) as reopened:   # log rebuilt from rows
        assert len(reopened.postings) > 0
        assert _answers(reopened, probes) == expected


def test_a_damaged_postings_file_is_refused_naming_it(tmp_path: Path) -> None:
    with open_store(tmp_path / "s", flush_every=20) as store:
        store.add(edited_documents(60, seed=4))
        name = store.segments[0].name
    target = tmp_path / "s" / "segments" / name / "postings.values.npy"
    data = bytearray(target.read_bytes())
    data[-3] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(CorruptDataError, match=r"postings\.values\.npy"):
        open_store(tmp_path / "s", read_only=True)
    shutil.rmtree(tmp_path / "s")


def test_the_delta_folds_recent_additions_and_finds_them_before_and_after() -> None:
    rng = np.random.default_rng(5)
    delta = PostingDelta()
    values = rng.integers(-2**63, 2**63 - 1, size=20_000, dtype=np.int64)
    docs = np.repeat(np.arange(2_000, dtype=np.int64), 10)
    values[::7] = 42                                      # one value many documents hold
    start = 0
    for size in itertools.cycle([300, 1, 1, 5_000, 25, 4_096]):   # one-page adds and batches
        if start >= values.size:
            break
        end = start + size
        delta.add(values[start:end], docs[start:end])
        wanted = np.unique(np.concatenate([values[:end:97], [42, 7]]))
        found = np.unique(delta.docs_holding(wanted))
        expected = np.unique(docs[:end][np.isin(values[:end], wanted)])
        assert np.array_equal(found, expected)
        assert len(delta) == min(end, values.size)
        start = end
    run = delta.freeze()
    assert len(delta) == 0 and run[0].size == values.size
    assert np.all(np.diff(run[0]) >= 0)
    reference = sorted_run(values, docs)
    assert np.array_equal(run[0], reference[0]) and np.array_equal(run[1], reference[1])
    assert np.array_equal(np.unique(docs_holding(run, np.array([42]))), np.unique(docs[::7]))
