"""The bucket stages (exact levels, candidate joins, verification) give byte-identical outputs
whatever the number of workers, and the same pair records whatever the number of buckets; and
``--against`` reuses the earlier run's near pairs instead of verifying old pairs again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.config import DedupConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.engine.candidates import CANDIDATE
from neardup.engine.pairfiles import PAIR
from neardup.features import shingles
from neardup.fingerprints import minhash
from neardup.methods.fingerprinter import Fingerprinter
from test_engine import TABLES, tables, write_corpus

PAIR_FILES = {"exact/pairs.bin": PAIR, "near/pairs.bin": PAIR,
              "near/candidates/pairs.bin": CANDIDATE}
"""Pair files, in bucket order: the same records whatever the buckets (sorted to compare)."""
ARRAYS = ("exact/survivors.npy", "cluster/labels.npy", "cluster/kept.npy")


def _files(out: Path, work: Path) -> dict[str, bytes]:
    found = {name: (out / f"{name}.parquet").read_bytes() for name in TABLES}
    found.update({name: (work / name).read_bytes() for name in ARRAYS})
    found.update({name: np.sort(np.fromfile(work / name, dtype=dtype)).tobytes()
                  for name, dtype in PAIR_FILES.items()})
    return found


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["simhash", "minhash"]),
       bucket_bytes=st.sampled_from([128, 1024, 1 << 22]), workers=st.sampled_from([2, 3]),
       seed=st.integers(0, 1000))
def test_bucket_stages_give_the_same_files_for_any_workers_and_buckets(
        tmp_path_factory: pytest.TempPathFactory, method: str, bucket_bytes: int, workers: int,
        seed: int) -> None:
    tmp = tmp_path_factory.mktemp("workers")
    inputs = write_corpus(tmp / "corpus", 160, 2, seed)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    runs = [("large", 1, 1 << 22), ("one", 1, bucket_bytes), ("many", workers, bucket_bytes)]
    found = {}
    for name, count, size in runs:
        options = EngineOptions(work=tmp / f"work-{name}", chunk_docs=40, bucket_bytes=size,
                                workers=count)
        summary = run_engine(inputs, tmp / name, config, options)
        assert summary["near"]["verified"] > 0
        found[name] = _files(tmp / name, options.work)
    assert found["many"] == found["one"]  # byte for byte, whatever the workers
    for name in (*ARRAYS, *PAIR_FILES):  # the same records, whatever the buckets
        assert found["one"][name] == found["large"][name], name
    for name in TABLES:  # (the Parquet row groups follow the buckets; the rows do not)
        assert tables(tmp / "one")[name] == tables(tmp / "large")[name]


def test_five_word_shingles_are_hashed_once_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = shingles.shingle_hashes

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(int(args[1]) if len(args) > 1 else -1)  # type: ignore[call-overload]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    for module in (shingles, minhash):  # every module that hashes shingles by this name
        monkeypatch.setattr(module, "shingle_hashes", counted)
    fingerprinter = Fingerprinter(DedupConfig(method="minhash"))
    prints = fingerprinter(Document(id="d", raw=b"one two three four five six seven eight",
                                    kind="text"))
    assert prints.signature is not None and prints.shingles.size == 4
    assert calls.count(5) == 1


def _near_pairs(work: Path) -> np.ndarray:
    return np.fromfile(work / "near" / "pairs.bin", dtype=PAIR)


@pytest.mark.parametrize("method", ["simhash", "minhash"])
def test_against_reuses_the_old_near_pairs_along_a_chain(tmp_path: Path, method: str) -> None:
    """A run against B against A: each verifies only pairs touching its new documents, reads
    the earlier pairs, and equals a one-shot run restricted to its new documents."""
    paths = write_corpus(tmp_path / "corpus", 300, 3, seed=5)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    works = [tmp_path / f"work{index}" for index in range(3)]
    summaries = []
    for index, path in enumerate(paths):
        summaries.append(run_engine([path], tmp_path / f"out{index}", config, EngineOptions(
            work=works[index], chunk_docs=30, bucket_bytes=1024, workers=1 + index % 2),
            against=works[index - 1] if index else None))
    run_engine(paths, tmp_path / "all", config, EngineOptions(work=tmp_path / "all-work"))
    everything = tables(tmp_path / "all")
    old = 0
    for index in (1, 2):
        old += summaries[index - 1]["documents"] if index == 1 else \
            summaries[index - 1]["against"]["new_documents"]
        assert summaries[index]["against"]["old_documents"] == old
        mine = tables(tmp_path / f"out{index}")
        end = old + summaries[index]["against"]["new_documents"]  # later files add no pair here
        assert mine["pairs"] == [p for p in everything["pairs"]
                                 if old <= max(p["a"], p["b"]) < end]
        assert any(c["cluster"] < old for c in mine["clusters"])  # duplicates of old docs
    assert mine["clusters"] == [c for c in everything["clusters"] if c["doc"] >= old]
    for index in (1, 2):
        old = summaries[index]["against"]["old_documents"]
        verified = _near_pairs(works[index])
        assert verified.size and (verified["b"] >= old).all()  # no old pair verified again
        listed = json.loads((works[index] / "near-pairs.json").read_text())
        assert listed[:-1] == json.loads((works[index - 1] / "near-pairs.json").read_text())
