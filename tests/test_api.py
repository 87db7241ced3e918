"""The public namespace is explicit and stable: adding or removing a name is a decision."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import neardup
from neardup.cli.main import cli

EXPECTED = {
    "ConfigError", "DedupConfig", "HammingIndex", "Store", "StoreConfig", "StoreMatch",
    "open_store", "DedupResult", "Document", "ExactConfig", "HammingDesign",
    "LSHBands", "MinHash", "MinHashConfig", "NeardupError", "OutputError", "ShingleConfig",
    "SimHash", "SimHashConfig", "SourceError", "SourceStats", "TextConfig", "canonical_text",
    "SketchConfig", "Sketcher", "estimate_containment", "estimate_resemblance",
    "estimate_jaccard", "dedup", "find_duplicates", "hamming_pairs", "lsh_pairs", "open_sources",
    "simhash_from_hashes", "PairView", "compare_texts", "RowFields",
}


def test_public_names_are_pinned() -> None:
    assert set(neardup.__all__) == EXPECTED
    assert all(hasattr(neardup, name) for name in neardup.__all__)


def test_dir_shows_the_public_names_and_dunders_only() -> None:
    dunders = [name for name in vars(neardup) if name.startswith("__") and name.endswith("__")]
    assert dir(neardup) == sorted({*neardup.__all__, *dunders})
    assert not {"Any", "TYPE_CHECKING", "importlib"} & set(dir(neardup))


def test_library_round_trip_from_the_readme() -> None:
    docs = [neardup.Document(id=str(i), raw=b"same words " * 50, kind="text") for i in range(3)]
    result = neardup.find_duplicates(docs, neardup.DedupConfig(method="minhash"))
    assert result.duplicates == 2
    assert neardup.simhash_from_hashes([0xABCD, 0xBCDE, 0xCDEF]) == 0xADCF
    view = neardup.compare_texts("one two three four five six", "one two three four five")
    assert view.shared == 1 and view.marked_b == (True,) * 5 and view.marked_a[-1] is False


PAGE = " ".join(f"word{i}" for i in range(200))


def test_find_duplicates_takes_plain_strings() -> None:
    result = neardup.find_duplicates(["a", "b", "a"])
    assert result.kept.tolist() == [True, True, False]
    assert result.table().column("reason").to_pylist() == ["kept:first", "unique",
                                                            "duplicate:identical"]
    pairs = result.pairs_table()
    assert pairs.column("method").to_pylist() == ["exact"]
    assert pairs.column("relation").to_pylist() == ["identical"]


def test_find_duplicates_refuses_other_items_with_a_clear_message() -> None:
    with pytest.raises(neardup.ConfigError, match="row 1 is a int"):
        neardup.find_duplicates(["a", 3])


def test_dedup_a_list_of_strings() -> None:
    rows = neardup.dedup([PAGE, "something else entirely", PAGE + " extra", PAGE])
    assert rows.column_names == ["row", "id", "cluster", "kept", "kept_row", "reason"]
    assert rows.column("kept").to_pylist() == [True, True, False, False]
    assert rows.column("kept_row").to_pylist() == [0, 1, 0, 0]
    assert rows.column("reason").to_pylist() == ["kept:first", "unique", "duplicate:near",
                                                 "duplicate:identical"]


def test_dedup_a_dataframe_with_named_columns() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"key": ["x", "y", "z"], "body": [PAGE, PAGE.upper(), "other"]})
    rows = neardup.dedup(frame, text="body", id="key", method="minhash").to_pandas()
    assert list(rows["id"]) == ["x", "y", "z"]
    assert list(rows["kept"]) == [True, False, True]
    assert list(rows["reason"]) == ["kept:first", "duplicate:lexical", "unique"]


def test_a_dataframe_is_read_by_its_named_columns_alone() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"body": [PAGE, None, float("nan"), PAGE.encode(), PAGE],
                              "mixed": [1, "a", None, [1], {"x": 1}]})  # arrow cannot convert it
    rows = neardup.dedup(frame, text="body").to_pandas()
    assert list(rows["kept_row"]) == [0, 1, 1, 0, 0]  # missing texts are empty ones
    typed = pandas.DataFrame({"body": pandas.array([PAGE, None, PAGE], dtype="string")})
    assert list(neardup.dedup(typed, text="body").to_pandas()["kept_row"]) == [0, 1, 0]
    with pytest.raises(neardup.ConfigError, match=r"no column 'text' .*columns: body, mixed"):
        neardup.dedup(frame)
    with pytest.raises(neardup.ConfigError, match="row 1: field 'body' is int, not text"):
        neardup.dedup(pandas.DataFrame({"body": [PAGE, 7]}), text="body")


def test_dedup_a_pyarrow_table_and_dicts_agree() -> None:
    texts = [PAGE, "other words here", PAGE]
    from_table = neardup.dedup(pa.table({"text": texts}), method="sketch", threshold=1.0)
    from_dicts = neardup.dedup(({"text": t} for t in texts), method="sketch", threshold=1.0)
    assert from_table.equals(from_dicts)
    assert from_table.column("kept_row").to_pylist() == [0, 1, 0]


def test_dedup_threshold_one_is_accepted_by_minhash() -> None:
    rows = neardup.dedup([PAGE, PAGE + " extra", PAGE.upper()], method="minhash", threshold=1.0)
    assert rows.column("kept_row").to_pylist() == [0, 1, 0]


def test_dedup_refuses_what_it_would_ignore_or_cannot_read() -> None:
    with pytest.raises(neardup.ConfigError, match="no effect with method simhash"):
        neardup.dedup([PAGE], method="simhash", threshold=0.9)
    with pytest.raises(neardup.ConfigError, match="k=2 has no effect with method 'minhash'"):
        neardup.dedup([PAGE], k=2)
    with pytest.raises(neardup.ConfigError, match="not both"):
        neardup.dedup([PAGE], method="minhash", config=neardup.DedupConfig())
    with pytest.raises(neardup.ConfigError, match="no column 'text'"):
        neardup.dedup(pa.table({"body": [PAGE]}))
    with pytest.raises(neardup.ConfigError, match="not one text"):
        neardup.dedup(PAGE)


def test_the_library_and_the_command_line_agree_with_their_defaults(tmp_path: Path) -> None:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words) for _ in range(120)) for _ in range(60)]
    for copy in range(20):  # copies with 0 or 1 word changed, and an exact copy
        changed = texts[copy].split()
        for _ in range(copy % 2):
            changed[rng.randrange(len(changed))] = rng.choice(words)
        texts.append(" ".join(changed))
    texts.append(texts[3])
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n"
                              for i, t in enumerate(texts)))
    ran = CliRunner().invoke(cli, ["dedup", str(corpus), "--out", str(tmp_path / "out"),
                                   "--workers", "1", "--quiet"])
    assert ran.exit_code == 0, ran.output
    command_line = pq.read_table(tmp_path / "out" / "clusters.parquet")
    library = neardup.dedup(texts)
    assert library.column("cluster").to_pylist() == command_line.column("cluster").to_pylist()
    assert library.column("reason").to_pylist() == command_line.column("reason").to_pylist()
    assert library.column("kept").to_pylist().count(False) == 21
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"] == neardup.find_duplicates(texts).stats["config"]


def test_a_compact_work_area_changes_no_row() -> None:
    rng = random.Random(8)
    words = [f"w{i}" for i in range(300)]
    texts = [" ".join(rng.choice(words) for _ in range(80)) for _ in range(40)]
    texts += [text + " tail" for text in texts[:10]] + texts[:3]
    compact = neardup.dedup(texts, compact_work=True)
    assert compact.equals(neardup.dedup(texts))
    assert compact.column("kept").to_pylist().count(False) == 13


def test_dedup_returns_the_kept_and_removed_rows_in_the_inputs_own_type() -> None:
    texts = [PAGE, "something else entirely", PAGE + " extra", PAGE]
    assert neardup.dedup(texts, output="kept") == [PAGE, "something else entirely"]
    assert neardup.dedup(texts, output="removed") == [PAGE + " extra", PAGE]
    table = pa.table({"body": texts, "n": pa.array([1, 2, 3, 4], pa.int8())})
    kept = neardup.dedup(table, text="body", output="kept")
    assert kept.schema == table.schema and kept.column("n").to_pylist() == [1, 2]
    annotated = neardup.dedup(table, text="body", output="annotated")
    assert annotated.column_names == ["body", "n", "neardup_doc", "neardup_cluster",
                                      "neardup_kept", "neardup_kept_doc", "neardup_reason"]
    assert annotated.column("neardup_kept").to_pylist() == [True, True, False, False]
    rows = neardup.dedup([{"text": t, "k": i} for i, t in enumerate(texts)], output="annotated")
    assert [(r["k"], r["neardup_kept_doc"]) for r in rows] == [(0, 0), (1, 1), (2, 0), (3, 0)]
    with pytest.raises(neardup.ConfigError, match="must be read twice"):
        neardup.dedup((t for t in texts), output="kept")
    with pytest.raises(neardup.ConfigError, match="use table, kept"):
        neardup.dedup(texts, output="everything")  # type: ignore[arg-type]


def test_dedup_keeps_the_rows_of_a_dataframe_and_of_a_dataset() -> None:
    pandas = pytest.importorskip("pandas")
    datasets = pytest.importorskip("datasets")
    texts = [PAGE, "other words here", PAGE.upper(), "other words here"]
    frame = pandas.DataFrame({"body": texts, "score": [0.5, 0.25, 0.75, 1.0]})
    kept = neardup.dedup(frame, text="body", output="kept")
    assert list(kept["score"]) == [0.5, 0.25] and list(kept.columns) == ["body", "score"]
    dataset = datasets.Dataset.from_dict({"content": texts, "score": [0.5, 0.25, 0.75, 1.0]})
    removed = neardup.dedup(dataset, text="content", output="removed")
    assert isinstance(removed, datasets.Dataset)
    assert removed["score"] == [0.75, 1.0] and removed.features == dataset.features
    selected = dataset.select([3, 1, 0])  # a Dataset with an indices mapping: its rows, in order
    table = neardup.dedup(selected, text="content")
    assert table.column("kept").to_pylist() == [True, False, True]
