"""Verification sets stored as token sequences: the sets rebuilt when read are bit-identical to
those the fingerprint stage computed (real pages, generated text, edge cases), damage is named,
and a work directory of the earlier form (stored sets) still resumes."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup.engine.fingerprint as fingerprint_stage
from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.config import DedupConfig, ShingleConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.engine.partition import (
    Layout,
    layout_for,
    read_layout,
    shingle_slices,
    stored_shingles,
    write_partition,
)
from neardup.engine.sequences import SEQUENCE_FILES, SequenceFile, sequence_sets
from neardup.errors import CorruptDataError
from neardup.features.shingles import shingle_set_of_tokens
from neardup.methods.fingerprinter import Fingerprinter
from neardup.methods.prints import DocumentPrints
from neardup.text.compiled import kernel_mode
from neardup.text.extract import extract
from runs import assert_same_tables


def _prints(config: DedupConfig, texts: list[str]) -> list[DocumentPrints]:
    fingerprinter = Fingerprinter(config)
    return [fingerprinter(Document(id=f"d{i}", raw=text.encode(), kind="text"))
            for i, text in enumerate(texts)]


def _read_all(tmp: Path, config: DedupConfig, prints: list[DocumentPrints]) -> tuple[Path, list]:
    folder = tmp / "partition"
    folder.mkdir()
    write_partition(folder, prints, layout_for(config, features=False))
    rows = np.arange(len(prints), dtype=np.int64)[::-1].copy()  # any order
    flat, offsets = shingle_slices(folder, rows)
    back = [flat[offsets[k]:offsets[k + 1]] for k in range(rows.size)][::-1]
    return folder, back


def _assert_identical(back: list, prints: list[DocumentPrints]) -> None:
    for found, p in zip(back, prints, strict=True):
        assert found.dtype == p.shingles.dtype == np.uint64
        assert found.tobytes() == p.shingles.tobytes(), p.id


def test_sets_rebuilt_from_real_pages_are_bit_identical(shared_data: Path,
                                                        tmp_path: Path) -> None:
    pages = sorted((shared_data / "html" / "trafilatura-eval" / "pages").glob("*.html.gz"))
    assert pages
    texts = [extract(gzip.decompress(path.read_bytes()), "full") for path in pages[::3]]
    config = DedupConfig(method="minhash")
    prints = _prints(config, texts + texts[:5])  # exact copies share a sequence
    folder, back = _read_all(tmp_path, config, prints)
    assert read_layout(folder).sequences
    assert not (folder / "shingles.npy").exists()
    _assert_identical(back, prints)
    assert stored_shingles(folder) == sum(p.shingles.size for p in prints[:-5])
    codes = (folder / "sequences.npy").stat().st_size
    assert codes < sum(8 * p.shingles.size for p in prints) / 3  # what the form is for


@pytest.mark.parametrize("width", [1, 3, 5, 9])
def test_sets_rebuilt_from_generated_text_are_bit_identical(tmp_path: Path, width: int) -> None:
    """Near copies, exact copies and case variants; a vocabulary of 20,000 words, so that ranks
    take one, two and three bytes; another shingle width and seed."""
    texts = planted_texts(300, 7, vocabulary=vocabulary(20_000), lengths=(1, 400), exact=0.1,
                          upper=0.1, near=0.2)
    texts += [" ".join(f"w{i}" for i in range(k, k + 3000)) for k in range(0, 60_000, 3000)]
    config = DedupConfig(method="minhash", verify_shingles=ShingleConfig(width=width, seed=17))
    prints = _prints(config, texts)
    folder, back = _read_all(tmp_path, config, prints)
    _assert_identical(back, prints)
    assert json.loads((folder / "sequences.json").read_text())["vocabulary"] > 1 << 14


_TOKENS = st.lists(st.sampled_from([0, 1, 2, 2**63, 2**64 - 1, 12345, 99]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(sequences=st.lists(_TOKENS, min_size=1, max_size=12), width=st.integers(1, 6),
       seed=st.integers(0, 2**64 - 1))
def test_any_token_sequences_rebuild_their_sets(tmp_path_factory: pytest.TempPathFactory,
                                                sequences: list[list[int]], width: int,
                                                seed: int) -> None:
    """Empty documents, documents shorter than a shingle, repeated tokens, repeated documents,
    the hashes 0 and 2**64 - 1: each set rebuilt equals the fingerprint stage's, interpreted
    and compiled."""
    folder = tmp_path_factory.mktemp("sequences")
    tokens = [np.array(s, dtype=np.uint64) for s in sequences]
    expected = [shingle_set_of_tokens(t, width, seed) for t in tokens]
    writer = SequenceFile(folder)
    for t, found in zip(tokens, expected, strict=True):
        writer.add(t, found.size)
    writer.finish()
    assert not list(folder.glob("*.scratch"))
    rows = np.arange(len(tokens), dtype=np.int64)
    for mode in ("interpret", "compile"):
        with kernel_mode(mode):  # type: ignore[arg-type]
            flat, offsets = sequence_sets(folder, rows, width, seed)
        assert [flat[offsets[k]:offsets[k + 1]].tolist() for k in range(rows.size)] == \
            [e.tolist() for e in expected]
    distinct = {t.tobytes(): e.size for t, e in zip(tokens, expected, strict=True)}
    assert json.loads((folder / "sequences.json").read_text())["shingles"] == \
        sum(distinct.values())


def _damaged(tmp: Path, name: str, damage: bytes) -> Path:
    config = DedupConfig(method="minhash")
    texts = planted_texts(40, 3, vocabulary=vocabulary(400), lengths=(20, 80))
    folder, _ = _read_all(tmp, config, _prints(config, texts))
    path = folder / name
    data = bytearray(path.read_bytes())
    if damage == b"cut":
        del data[-3:]
    else:
        data[-len(damage):] = damage
    path.write_bytes(bytes(data))
    return folder


@pytest.mark.parametrize(("name", "damage", "named"), [
    ("sequences.npy", b"cut", "sequences.npy"),
    ("sequences.npy", b"\xff\xff\xff\xff\x7f", "sequences.npy"),  # a rank beyond the vocabulary
    ("sequences.npy", b"\x80", "sequences.npy"),  # the last code cut short
    ("tokens.npy", b"cut", "tokens.npy"),
    ("sequence_offsets.npy", b"\xff" * 7 + b"\x7f", "sequences.npy"),
])
def test_damaged_sequence_files_are_named(tmp_path: Path, name: str, damage: bytes,
                                          named: str) -> None:
    folder = _damaged(tmp_path, name, damage)
    with pytest.raises(CorruptDataError, match=named.replace(".", r"\.")):
        shingle_slices(folder, np.arange(40, dtype=np.int64))


def _old_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint stage writes partitions of the earlier form (stored sets)."""
    def stored_sets(config: DedupConfig, *, features: bool) -> Layout:
        return dataclasses.replace(layout_for(config, features=features), sequences=False,
                                   shingle_width=0, shingle_seed=0)
    monkeypatch.setattr(fingerprint_stage, "layout_for", stored_sets)


def _forms(work: Path) -> set[str]:
    return {"sequences" if read_layout(folder).sequences else "sets"
            for folder in (work / "fingerprint").iterdir() if (folder / "layout.json").exists()}


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_a_work_directory_of_stored_sets_resumes(tmp_path: Path, method: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A work directory written with stored sets gives the same outputs read again, and when
    some of its partitions are computed again (now as token sequences) beside the others."""
    texts = planted_texts(240, 11, vocabulary=vocabulary(600), lengths=(30, 150), exact=0.1,
                          near=0.3)
    inputs = write_jsonl(tmp_path / "corpus", text_rows(texts))
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    fresh = EngineOptions(work=tmp_path / "fresh", chunk_docs=40)
    new = run_engine(inputs, tmp_path / "new", config, fresh)
    assert _forms(fresh.work) == {"sequences"}
    assert all((folder / name).exists() for folder in (fresh.work / "fingerprint").iterdir()
               if (folder / "layout.json").exists() for name in SEQUENCE_FILES)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=40)
    with monkeypatch.context() as patch:
        _old_form(patch)
        run_engine(inputs, tmp_path / "old", config, options)
    assert _forms(options.work) == {"sets"}
    assert_same_tables(tmp_path / "old", tmp_path / "new")
    again = run_engine(inputs, tmp_path / "again", config, options)
    assert_same_tables(tmp_path / "again", tmp_path / "new")
    partitions = sorted(p for p in (options.work / "fingerprint").iterdir() if p.is_dir())
    (partitions[1] / "shingles.npy").write_bytes(b"damaged")  # its marker no longer holds
    mixed = run_engine(inputs, tmp_path / "mixed", config, options)
    assert _forms(options.work) == {"sets", "sequences"}
    assert read_layout(partitions[1]).sequences
    assert_same_tables(tmp_path / "mixed", tmp_path / "new")
    assert mixed["near"]["verified"] == again["near"]["verified"] == new["near"]["verified"]


def test_prints_without_their_token_hashes_are_refused(tmp_path: Path) -> None:
    """A set the partition could not rebuild is never stored as an empty sequence."""
    config = DedupConfig(method="minhash")
    [p] = _prints(config, ["one two three four five six"])
    folder = tmp_path / "partition"
    folder.mkdir()
    with pytest.raises(ValueError, match="token hashes"):
        write_partition(folder, [dataclasses.replace(p, token_hashes=np.empty(0, np.uint64))],
                        layout_for(config, features=False))
