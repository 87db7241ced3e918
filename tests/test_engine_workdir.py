"""The work directory's partitions: what they store reads back as what was fingerprinted, a kept
work directory gives the same outputs again, and exact copies share one shingle set."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path

import numpy as np
import pytest

from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.cli.dedup import run_dedup
from neardup.config import DedupConfig, MinHashConfig, ShingleConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.engine import partition as partition_module
from neardup.engine.near import NEAR_RESULTS
from neardup.engine.partition import (
    band_key_rows,
    layout_for,
    read_layout,
    read_prints,
    shingle_slices,
    signature_rows,
    stored_shingles,
    write_partition,
)
from neardup.engine.workdir import read_array
from neardup.errors import CorruptDataError
from neardup.index.lsh import LSHBands, band_keys
from neardup.methods.fingerprinter import Fingerprinter
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import signer_of
from runs import assert_same_tables

_FIELDS = ("id", "url", "host", "source", "offset", "fetched", "length", "text_chars", "tokens",
           "identical", "lexical", "shingle", "simhash", "revisit_of", "links")


def _texts(count: int, seed: int) -> list[str]:
    """Random texts, a share of them exact copies, case variants or near copies of others."""
    return planted_texts(count, seed, vocabulary=vocabulary(300), lengths=(60, 160), exact=0.2,
                         upper=0.1, near=0.2)


def _prints(config: DedupConfig, texts: list[str], *,
            token_hashes: bool = False) -> list[DocumentPrints]:
    fingerprinter = Fingerprinter(config, token_hashes=token_hashes)
    found = [fingerprinter(Document(id=f"d{i}", raw=text.encode(), kind="text"))
             for i, text in enumerate(texts)]
    found.append(fingerprinter(Document(id="r0", raw=b"", kind="revisit", revisit_of="d0")))
    return found


def _written(tmp: Path, config: DedupConfig, prints: list[DocumentPrints]) -> Path:
    folder = tmp / "partition"
    folder.mkdir()
    write_partition(folder, prints, layout_for(config, features=False))
    return folder


@pytest.mark.parametrize("config", [
    DedupConfig(method="minhash"),
    DedupConfig(method="minhash", params=MinHashConfig(num_perm=64,
                                                        shingles=ShingleConfig(width=3))),
    DedupConfig(method="simhash"),
])
def test_a_partition_reads_back_what_was_fingerprinted(tmp_path: Path,
                                                       config: DedupConfig) -> None:
    prints = _prints(config, _texts(80, seed=5))
    folder = _written(tmp_path, config, prints)
    layout = read_layout(folder)
    derived = config.method == "minhash" and \
        config.of(MinHashConfig).shingles == config.verify_shingles
    assert layout.derived == derived
    assert (folder / "signatures.npy").exists() == (config.method == "minhash")
    assert (folder / "bands.npy").exists() == derived
    back = read_prints(folder, features=False)
    assert len(back) == len(prints)
    for before, after in zip(prints, back, strict=True):
        assert [getattr(after, f) for f in _FIELDS] == [getattr(before, f) for f in _FIELDS]
        assert np.array_equal(after.shingles, before.shingles)
        assert after.signature is None  # read through signature_rows, with the run's signer
    rows = np.array([3, 0, 41, 7, 3], dtype=np.int64)
    flat, offsets = shingle_slices(folder, rows)
    for k, row in enumerate(rows.tolist()):
        assert np.array_equal(flat[offsets[k]:offsets[k + 1]], prints[row].shingles)
    signer = signer_of(config)
    if signer is not None:
        signatures = np.stack([prints[row].signature for row in rows.tolist()])
        assert np.array_equal(signature_rows(folder, rows, signer), signatures)
        if derived:  # a partition written before signatures were stored: recomputed from sets
            stored = folder / "signatures.npy"
            kept = stored.read_bytes()
            stored.unlink()
            assert np.array_equal(signature_rows(folder, rows, signer), signatures)
            stored.write_bytes(kept)
        banding = layout.banding if derived else LSHBands(4, 8)
        expected = np.stack([band_keys(signatures, b, banding.rows)
                             for b in range(banding.bands)], axis=1)
        assert np.array_equal(band_key_rows(folder, rows, banding, signer), expected)
        assert np.array_equal(band_key_rows(folder, rows, banding, signer, lambda s: s), expected)


@pytest.mark.parametrize("sets", ["shingles.npy", "sequences.npy"])
def test_sets_are_read_in_any_order_and_a_cut_file_is_named(tmp_path: Path, sets: str) -> None:
    """In either form: stored sets (the default), token sequences (``compact_sets``)."""
    config = DedupConfig(method="minhash")
    prints = _prints(config, _texts(30, seed=8), token_hashes=True)
    folder = tmp_path / "partition"
    folder.mkdir()
    write_partition(folder, prints, layout_for(config, features=False,
                                               sequences=sets == "sequences.npy"))
    rows = np.array([29, 0, 5, 5, 17, 2, 28, 0, 11], dtype=np.int64)
    flat, offsets = shingle_slices(folder, rows)
    assert [flat[offsets[k]:offsets[k + 1]].tolist() for k in range(rows.size)] == \
        [prints[row].shingles.tolist() for row in rows.tolist()]
    assert shingle_slices(folder, np.empty(0, np.int64))[0].size == 0
    path = folder / sets
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(CorruptDataError, match=sets.replace(".", r"\.")):
        shingle_slices(folder, rows)


def _corpus(folder: Path, texts: list[str], host: str | None = None) -> list[str]:
    return write_jsonl(folder, text_rows(texts, url=(lambda i: f"http://{host}/p{i}") if host
                                         else None))


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_a_kept_work_directory_gives_the_same_outputs_again(tmp_path: Path,
                                                            method: str) -> None:
    """What a finished run keeps (partitions, numbering, exact and near pairs, clusters) is
    enough to write the same outputs again; of the near stage's files, only its results and
    the sorted key buckets (for ``--against``) are kept."""
    inputs = _corpus(tmp_path / "corpus", _texts(300, seed=3))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=40, bucket_bytes=2048)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    first = run_engine(inputs, tmp_path / "first", config, options)
    kept = sorted(str(path.relative_to(options.work / "near"))
                  for path in (options.work / "near").rglob("*") if path.is_file())
    assert kept and all(any(fnmatch.fnmatchcase(path, name)
                            or fnmatch.fnmatchcase(path, f"{name}/*") for name in NEAR_RESULTS)
                        for path in kept), kept
    assert "candidates/keys.json" in kept  # the sorted key buckets, for --against
    for partition in (options.work / "fingerprint").iterdir():
        assert (partition / "bands.npy").exists() == (method == "minhash")
        assert (partition / "signatures.npy").exists() == (method == "minhash")
    second = run_engine(inputs, tmp_path / "second", config, options)
    assert_same_tables(tmp_path / "second", tmp_path / "first", same_bytes=True)
    measured = ("seconds", "cpu_seconds")
    assert {k: v for k, v in second.items() if k not in measured} == \
        {k: v for k, v in first.items() if k not in measured}


def test_minhash_with_templates_recomputes_the_pruned_signatures(tmp_path: Path) -> None:
    """Pages of one host sharing a frame: their signatures are recomputed from their content
    sets (not read from the stored band keys); the outputs equal the in-memory path's."""
    rng = random.Random(9)
    frame = " ".join(f"nav{i}" for i in range(40))
    texts = [frame + " " + text for text in _texts(60, seed=4)]
    texts = [text if rng.random() < 0.9 else " ".join(text.split()[40:]) for text in texts]
    inputs = _corpus(tmp_path / "corpus", texts, host="example.org")
    config = DedupConfig(method="minhash")
    _, memory = run_dedup(tuple(inputs), tmp_path / "memory", config, show_progress=False)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=16, bucket_bytes=2048)
    engine = run_engine(inputs, tmp_path / "engine", config, options)
    assert engine["templates"]["hosts_with_templates"] == 1
    assert_same_tables(tmp_path / "engine", tmp_path / "memory")
    assert engine["near"]["candidates"] == memory["near"]["candidates"]
    assert engine["near"]["verified"] == memory["near"]["verified"] > 0


def _fingerprint_bytes(work: Path) -> int:
    return sum(path.stat().st_size for path in (work / "fingerprint").rglob("*")
               if path.is_file())


@pytest.mark.parametrize("compact", [False, True])
def test_exact_copies_share_one_shingle_set(tmp_path: Path, compact: bool) -> None:
    """Adding exact copies to a partition grows it by less than their shingle sets would take;
    the partition stores each distinct set (or token sequence: ``compact``) once."""
    unique = [text for text in dict.fromkeys(_texts(200, seed=8))]
    rng = random.Random(2)
    copies = [rng.choice(unique) for _ in range(60)]
    config = DedupConfig(method="simhash")
    runs = {}
    for name, texts in (("unique", unique), ("copies", unique + copies)):
        options = EngineOptions(work=tmp_path / f"work-{name}", chunk_docs=10_000,
                                compact_sets=compact)
        run_engine(_corpus(tmp_path / name, texts), tmp_path / f"out-{name}", config, options)
        runs[name] = options.work
    fingerprinter = Fingerprinter(config)
    sets = [fingerprinter(Document(id="c", raw=t.encode(), kind="text")).shingles
            for t in copies]
    copy_set_bytes = 8 * sum(s.size for s in sets)
    growth = _fingerprint_bytes(runs["copies"]) - _fingerprint_bytes(runs["unique"])
    assert 0 < growth < copy_set_bytes
    [partition] = (runs["copies"] / "fingerprint").iterdir()
    distinct = {fingerprinter(Document(id="u", raw=t.encode(), kind="text")).shingles.tobytes()
                for t in unique}
    assert stored_shingles(partition) == sum(len(s) // 8 for s in distinct)


@pytest.mark.parametrize("buffer_bytes", [64, 4096, 1 << 20])
def test_shared_sets_are_found_in_the_write_buffer_or_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffer_bytes: int) -> None:
    """Sets smaller and larger than the write buffer, exact copies of sets still in the buffer
    and of sets already written, and article views without one: each document reads back its
    own set, and each distinct set is stored once."""
    monkeypatch.setattr(partition_module, "_SET_BUFFER", buffer_bytes)
    texts = _texts(60, seed=11)
    rng = random.Random(4)
    texts += [rng.choice(texts) for _ in range(40)] + [texts[-1]] * 3
    config = DedupConfig(method="minhash")
    prints = _prints(config, texts)
    folder = _written(tmp_path, config, prints)
    rows = np.arange(len(prints), dtype=np.int64)
    flat, offsets = shingle_slices(folder, rows)
    for row, p in enumerate(prints):
        assert flat[offsets[row]:offsets[row + 1]].tobytes() == p.shingles.tobytes(), p.id
    distinct = {p.shingles.tobytes() for p in prints}
    assert stored_shingles(folder) == sum(len(s) // 8 for s in distinct)
    article = layout_for(config, features=False).article
    if article:
        empty, ends = shingle_slices(folder / "article", rows)
        assert empty.size == 0 and not ends.any()
        assert np.unique(read_array(folder / "article" / "shingle_index.npy")).size == 1
