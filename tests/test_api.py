"""The public namespace is explicit and stable: adding or removing a name is a decision."""

from __future__ import annotations

import neardup

EXPECTED = {
    "ConfigError", "DedupConfig", "HammingIndex", "Store", "StoreConfig", "StoreMatch",
    "open_store", "DedupResult", "Document", "ExactConfig", "HammingDesign",
    "LSHBands", "MinHash", "MinHashConfig", "NeardupError", "OutputError", "ShingleConfig",
    "SimHash", "SimHashConfig", "SourceError", "SourceStats", "TextConfig", "canonical_text",
    "SketchConfig", "Sketcher", "estimate_containment", "estimate_resemblance",
    "estimate_jaccard", "find_duplicates", "hamming_pairs", "lsh_pairs", "open_sources",
    "simhash_from_hashes",
}


def test_public_names_are_pinned() -> None:
    assert set(neardup.__all__) == EXPECTED
    assert all(hasattr(neardup, name) for name in neardup.__all__)


def test_library_round_trip_from_the_readme() -> None:
    docs = [neardup.Document(id=str(i), raw=b"same words " * 50, kind="text") for i in range(3)]
    result = neardup.find_duplicates(docs, neardup.DedupConfig(method="minhash"))
    assert result.duplicates == 2
    assert neardup.simhash_from_hashes([0xABCD, 0xBCDE, 0xCDEF]) == 0xADCF
