"""Verification sets stored as token sequences (``EngineOptions.compact_sets``): the sets rebuilt
when read are bit-identical to those the fingerprint stage computed (real pages, generated text,
edge cases), damage is named, the option changes no output, and a work directory of either form
resumes with the other option."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.config import DedupConfig, ShingleConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.engine.partition import (
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
from runs import assert_same_tables, summary_facts


def _prints(config: DedupConfig, texts: list[str]) -> list[DocumentPrints]:
    fingerprinter = Fingerprinter(config, token_hashes=True)
    return [fingerprinter(Document(id=f"d{i}", raw=text.encode(), kind="text"))
            for i, text in enumerate(texts)]


def _read_all(tmp: Path, config: DedupConfig, prints: list[DocumentPrints]) -> tuple[Path, list]:
    folder = tmp / "partition"
    folder.mkdir()
    write_partition(folder, prints, layout_for(config, features=False, sequences=True))
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


def _forms(work: Path) -> set[str]:
    return {"sequences" if read_layout(folder).sequences else "sets"
            for folder in (work / "fingerprint").iterdir() if (folder / "layout.json").exists()}


def _partitions(work: Path) -> list[Path]:
    return sorted(p for p in (work / "fingerprint").iterdir() if (p / "layout.json").exists())


def _run(inputs: list[str], out: Path, config: DedupConfig, work: Path,
         compact: bool) -> dict[str, Any]:
    options = EngineOptions(work=work, chunk_docs=40, compact_sets=compact)
    return run_engine(inputs, out, config, options)


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_compact_sets_change_no_output_and_either_form_resumes(tmp_path: Path,
                                                               method: str) -> None:
    """``compact_sets`` changes the partitions' form only: the same run with and without it
    gives the same tables and summary, each form's partitions holding its own files only; a
    work directory of either form resumes with the other option (its partitions read
    in their own form), and a partition computed again takes the option's form beside them."""
    texts = planted_texts(240, 11, vocabulary=vocabulary(600), lengths=(30, 150), exact=0.1,
                          near=0.3)
    inputs = write_jsonl(tmp_path / "corpus", text_rows(texts))
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    verified = {}
    for compact, form, damaged in ((False, "sets", "shingles.npy"),
                                   (True, "sequences", "sequences.npy")):
        work = tmp_path / f"work-{form}"
        verified[form] = _run(inputs, tmp_path / form, config, work, compact)["near"]["verified"]
        assert _forms(work) == {form}
        for folder in _partitions(work):
            names = {path.name for path in folder.iterdir()}
            assert names >= set(SEQUENCE_FILES) if compact else not names & set(SEQUENCE_FILES)
            assert ("shingles.npy" in names) == (not compact)
        again = _run(inputs, tmp_path / f"{form}-again", config, work, not compact)
        assert _forms(work) == {form}  # resumed: nothing computed again
        assert_same_tables(tmp_path / f"{form}-again", tmp_path / "sets")
        assert summary_facts(tmp_path / f"{form}-again") == summary_facts(tmp_path / "sets")
        (_partitions(work)[1] / damaged).write_bytes(b"damaged")  # its marker no longer holds
        mixed = _run(inputs, tmp_path / f"{form}-mixed", config, work, not compact)
        assert _forms(work) == {"sets", "sequences"}
        assert read_layout(_partitions(work)[1]).sequences == (not compact)
        assert_same_tables(tmp_path / f"{form}-mixed", tmp_path / "sets")
        assert mixed["near"]["verified"] == again["near"]["verified"] == verified["sets"]
    assert verified["sequences"] == verified["sets"] > 0
    assert_same_tables(tmp_path / "sequences", tmp_path / "sets")
    assert summary_facts(tmp_path / "sequences") == summary_facts(tmp_path / "sets")


def test_stored_sets_are_written_as_before_the_option(tmp_path: Path) -> None:
    """Without ``compact_sets`` a partition holds the stored sets' files and a ``layout.json``
    without the token sequences' fields (what the writers before the option wrote)."""
    texts = planted_texts(60, 4, vocabulary=vocabulary(300), lengths=(20, 80), exact=0.2)
    inputs = write_jsonl(tmp_path / "corpus", text_rows(texts))
    _run(inputs, tmp_path / "out", DedupConfig(method="minhash"), tmp_path / "work", False)
    for folder in _partitions(tmp_path / "work"):
        names = {path.name for path in folder.iterdir()}
        assert {"shingles.npy", "shingle_offsets.npy", "shingle_index.npy"} <= names
        assert not names & set(SEQUENCE_FILES)
        record = json.loads((folder / "layout.json").read_text())
        assert set(record) == {"links", "features", "signatures", "derived", "seed", "bands",
                               "rows", "article"}
        assert read_layout(folder) == layout_for(DedupConfig(method="minhash"), features=False)


def test_prints_without_their_token_hashes_are_refused(tmp_path: Path) -> None:
    """A set the partition could not rebuild is never stored as an empty sequence."""
    config = DedupConfig(method="minhash")
    [p] = _prints(config, ["one two three four five six"])
    folder = tmp_path / "partition"
    folder.mkdir()
    with pytest.raises(ValueError, match="token hashes"):
        write_partition(folder, [dataclasses.replace(p, token_hashes=np.empty(0, np.uint64))],
                        layout_for(config, features=False, sequences=True))
