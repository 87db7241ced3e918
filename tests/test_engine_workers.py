"""The bucket stages (exact levels, templates, candidate joins, verification) give
byte-identical outputs whatever the number of workers, with several files or one gzip file whose
line blocks are dealt to the workers, and the same pair records whatever the number of buckets;
the dealer cuts a stream into the lines a line-by-line reader sees; and ``--against`` reuses
the earlier run's near pairs instead of verifying old pairs again."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import write_corpus, write_sites
from neardup.config import DedupConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.engine.against import near_pair_files
from neardup.engine.candidates import CANDIDATE
from neardup.engine.pairfiles import PAIR
from neardup.features import shingles
from neardup.methods.fingerprinter import Fingerprinter
from neardup.sources import lineblocks
from neardup.sources.gunzip import GZIP_ERRORS, gunzip
from neardup.sources.lineblocks import deal_lines
from runs import TABLES, assert_same_tables, output_tables

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


@pytest.mark.slow
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["simhash", "minhash"]),
       bucket_bytes=st.sampled_from([128, 1024, 1 << 22]), workers=st.sampled_from([2, 3]),
       one_gzip=st.booleans(), seed=st.integers(0, 1000))
def test_bucket_stages_give_the_same_files_for_any_workers_and_buckets(
        tmp_path_factory: pytest.TempPathFactory, method: str, bucket_bytes: int, workers: int,
        one_gzip: bool, seed: int) -> None:
    tmp = tmp_path_factory.mktemp("workers")
    inputs = write_sites(tmp / "corpus", 160, seed)  # hosts, one with a template frame
    if one_gzip:  # one stream, dealt to the workers in blocks of 40 lines through spool files
        packed = tmp / "one.jsonl.gz"
        packed.write_bytes(gzip.compress(b"".join(Path(p).read_bytes() for p in inputs)))
        inputs = [str(packed)]
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    runs = [("large", 1, 1 << 22), ("one", 1, bucket_bytes), ("many", workers, bucket_bytes)]
    found = {}
    for name, count, size in runs:
        options = EngineOptions(work=tmp / f"work-{name}", chunk_docs=40, bucket_bytes=size,
                                workers=count, shared_bytes=0 if one_gzip else 1 << 30)
        summary = run_engine(inputs, tmp / name, config, options)
        assert summary["near"]["verified"] > 0
        assert summary["templates"]["hosts_with_templates"] >= 1
        found[name] = _files(tmp / name, options.work)
    blocks = list((tmp / "work-many" / "done" / "fingerprint").glob("f000000-b*.json"))
    assert len(blocks) == (4 if one_gzip else 0)  # 160 lines in blocks of 40, each marked
    spools = tmp / "work-many" / "fingerprint" / "lines"
    assert not spools.exists() or not any(spools.iterdir())  # each removed once fingerprinted
    assert found["many"] == found["one"]  # byte for byte, whatever the workers
    for name in (*ARRAYS, *PAIR_FILES):  # the same records, whatever the buckets
        assert found["one"][name] == found["large"][name], name
    # (the Parquet row groups follow the buckets; the rows do not)
    assert_same_tables(tmp / "one", tmp / "large")


def _lines_of(data: bytes) -> list[bytes]:
    """``data`` cut after each newline (and only there)."""
    pieces = data.split(b"\n")
    return [piece + b"\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=40),
       last_newline=st.booleans(), chunk=st.integers(1, 64), size=st.integers(1, 9),
       cut=st.integers(0, 30))
def test_dealt_blocks_hold_the_lines_a_line_reader_sees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[bytes], last_newline: bool,
        chunk: int, size: int, cut: int) -> None:
    """Read in pieces of ``chunk`` bytes, the dealer's blocks are the lines of ``size`` (a
    gzip stream cut short: the whole lines before the break, and the error in the last block)."""
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    packed = gzip.compress(data)
    path = tmp_path / "lines.jsonl.gz"
    cut = min(cut, len(packed) - 11)  # the 10-byte header stays
    path.write_bytes(packed[:len(packed) - cut] if cut else packed)
    expected: list[bytes] = []
    try:
        with gzip.open(path, "rb") as stream:
            expected.extend(stream)
        broken = False
    except (EOFError, zlib.error):
        broken = True
    monkeypatch.setattr(lineblocks, "_CHUNK", chunk)
    blocks = list(deal_lines(str(path), True, size))
    got = [line for block in blocks for line in _lines_of(block.data)]
    assert [block.index for block in blocks] == list(range(len(blocks)))
    assert all(block.data.count(b"\n") == size for block in blocks[:-1])
    assert (blocks[-1].failure is not None) == broken
    if not broken:
        assert got == expected
    else:  # whole lines, a prefix of the data
        assert all(line.endswith(b"\n") for line in got)
        assert b"".join(got) == data[:len(b"".join(got))]
        assert got[:len(expected)] == expected  # at least what zlib's line reader salvages


def test_gunzip_reads_members_and_padding_as_zlib_does(tmp_path: Path) -> None:
    first, second = b"one\ntwo\n" * 5000, bytes(range(256)) * 3000
    stream = gzip.compress(first) + b"\0" * 7 + gzip.compress(second)
    with gunzip(io.BytesIO(stream)) as unzipped:
        assert unzipped.read() == gzip.decompress(stream) == first + second
    with gunzip(io.BytesIO(stream + b"junk")) as unzipped, pytest.raises(gzip.BadGzipFile):
        unzipped.read()
    damaged = bytearray(gzip.compress(first))
    damaged[-6] ^= 0xFF  # the CRC no longer matches
    with gunzip(io.BytesIO(bytes(damaged))) as unzipped, pytest.raises(GZIP_ERRORS):
        unzipped.read()


def test_five_word_shingles_are_hashed_once_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = shingles._shingles  # the kernel every path to shingle hashes runs

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(int(args[1]) if len(args) > 1 else -1)  # type: ignore[call-overload]
        return real(*args, **kwargs)

    monkeypatch.setattr(shingles, "_shingles", counted)
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
    everything = output_tables(tmp_path / "all")
    old = 0
    for index in (1, 2):
        old += summaries[index - 1]["documents"] if index == 1 else \
            summaries[index - 1]["against"]["new_documents"]
        assert summaries[index]["against"]["old_documents"] == old
        mine = output_tables(tmp_path / f"out{index}")
        end = old + summaries[index]["against"]["new_documents"]  # later files add no pair here
        assert mine["pairs"] == [p for p in everything["pairs"]
                                 if old <= max(p["a"], p["b"]) < end]
        assert any(c["cluster"] < old for c in mine["clusters"])  # duplicates of old docs
    assert mine["clusters"] == [c for c in everything["clusters"] if c["doc"] >= old]
    for index in (1, 2):
        old = summaries[index]["against"]["old_documents"]
        verified = _near_pairs(works[index])
        assert verified.size and (verified["b"] >= old).all()  # no old pair verified again
        listed = near_pair_files(works[index])
        assert listed[:-1] == near_pair_files(works[index - 1])
