"""The store's fingerprinter reads the simhash and the sketch from the token hashes of its one
canonical pass: the same values as from the canonical text, on real pages and edge cases."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from neardup.config import DedupConfig, ShingleConfig, SimHashConfig, SketchConfig, StoreConfig
from neardup.document import Document
from neardup.features.tokens import canonical_tokens
from neardup.fingerprints.simhash import SimHash
from neardup.fingerprints.sketch import Sketcher
from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter
from neardup.store.printer import SketchOf, StoreFeatures, features_of, store_fingerprinter
from neardup.text.compiled import kernel_mode
from neardup.text.extract import extract

SKETCHES = [SketchConfig(), SketchConfig(kind="min", size=50), SketchConfig(adaptive=50),
            SketchConfig(bits=64, size=4, shingles=ShingleConfig(width=3, seed=5), seed=9)]
SIMHASHES = [SimHashConfig(), SimHashConfig(weighting="tf", shingles=ShingleConfig(width=3)),
             SimHashConfig(shingles=ShingleConfig(width=5, seed=9)),
             SimHashConfig(stop_words="english")]
EDGES = ["", " ", "a", "ä", "one two", "日本語のテキスト", "𠀀𠀁 x", "word " * 700,
         "Ǆ ﬁ \uff21\uff11 ß café cafe\u0301"]


def _pages(shared_data: Path, every: int) -> list[bytes]:
    pages = sorted((shared_data / "html" / "trafilatura-eval" / "pages").glob("*.html.gz"))
    assert pages
    return [gzip.decompress(path.read_bytes()) for path in pages[::every]]


@pytest.fixture(scope="module")
def texts(shared_data: Path) -> list[str]:
    """A third of the real pages' texts (several languages), then the edge cases."""
    return [extract(raw, "full") for raw in _pages(shared_data, every=3)] + EDGES


def _same_features(one: StoreFeatures | None, other: StoreFeatures | None) -> None:
    assert (one is None) == (other is None)
    if one is None or other is None:
        return
    assert one.modulus == other.modulus
    np.testing.assert_array_equal(one.sketch, other.sketch)
    assert (one.shingles is None) == (other.shingles is None)
    if one.shingles is not None:
        np.testing.assert_array_equal(one.shingles, other.shingles)


@pytest.mark.parametrize("config", SKETCHES, ids=lambda c: c.tag)
@pytest.mark.parametrize("keep", [False, True])
def test_sketch_from_tokens_is_the_sketch_of_the_text(texts: list[str], config: SketchConfig,
                                                      keep: bool) -> None:
    sketch_of = SketchOf(Sketcher(config), keep_shingles=keep)
    doc = Document(id="d", raw=b"")
    sampled = 0
    for text in texts:
        canonical, tokens = canonical_tokens(text)
        expected = sketch_of(doc, text, canonical)
        _same_features(sketch_of.of_tokens(doc, text, canonical, tokens), expected)
        sampled += expected is not None and expected.sketch.size > 0
    assert sampled > 100  # most real pages have a sample: the comparison saw values


@pytest.mark.parametrize("config", SIMHASHES, ids=lambda c: c.tag)
def test_simhash_from_tokens_is_the_simhash_of_the_text(texts: list[str],
                                                        config: SimHashConfig) -> None:
    simhash = SimHash(config)
    seen = set()
    for text in texts:
        canonical, tokens = canonical_tokens(text)
        expected = simhash.of_canonical(canonical)
        assert simhash.of_tokens(tokens, canonical) == expected
        seen.add(expected)
    assert len(seen) > 100  # distinct pages, distinct fingerprints


def _old_prints(config: StoreConfig, docs: list[Document]) -> list[DocumentPrints]:
    """The prints as the store computed them before: the sketch from the canonical text (an
    extractor without ``of_tokens``)."""
    assert config.sketch is not None
    sketch_of = SketchOf(Sketcher(config.sketch), config.keep_shingles)

    def from_text(doc: Document, text: str, canonical: bytes) -> StoreFeatures | None:
        return sketch_of(doc, text, canonical)

    printer = store_fingerprinter(config, features=from_text)
    return [printer(doc) for doc in docs]


@pytest.mark.parametrize("config", [StoreConfig(), StoreConfig(keep_shingles=True),
                                    StoreConfig(sketch=SketchConfig(adaptive=50))],
                         ids=["default", "shingles", "adaptive"])
def test_store_prints_are_the_old_ones_on_real_pages(shared_data: Path,
                                                     config: StoreConfig) -> None:
    docs = [Document(id=str(i), raw=raw) for i, raw in enumerate(_pages(shared_data, every=4))]
    docs += [Document(id=f"e{i}", raw=text.encode(), kind="text") for i, text in enumerate(EDGES)]
    simhash = SimHash(config.simhash)
    printer = store_fingerprinter(config)
    for new, old, doc in zip([printer(d) for d in docs], _old_prints(config, docs), docs,
                             strict=True):
        assert (new.simhash, new.identical, new.lexical, new.shingle, new.tokens) == \
               (old.simhash, old.identical, old.lexical, old.shingle, old.tokens), doc.id
        assert new.shingles.size == 0  # a store keeps no verification set
        _same_features(features_of(new), features_of(old))
        canonical, _ = canonical_tokens(_text_of(doc))
        assert new.simhash == simhash.of_canonical(canonical)  # the old path, called as it was


def _text_of(doc: Document) -> str:
    return extract(doc.raw, "full") if doc.kind == "html" else doc.raw.decode()


@pytest.mark.parametrize("config", SKETCHES, ids=lambda c: c.tag)
def test_permuted_shingles_kernel_is_the_same_interpreted(config: SketchConfig) -> None:
    sketcher = Sketcher(config)
    rng = np.random.default_rng(3)
    for size in [0, 1, 4, 11, 300]:
        tokens = rng.integers(0, 2**63, size, dtype=np.int64).view(np.uint64) * np.uint64(3)
        with kernel_mode("interpret"):
            interpreted, modulus_i = sketcher.with_modulus_of_tokens(tokens)
        with kernel_mode("compile"):
            compiled, modulus_c = sketcher.with_modulus_of_tokens(tokens)
        assert modulus_i == modulus_c
        assert interpreted.dtype == compiled.dtype == np.uint64
        np.testing.assert_array_equal(interpreted, compiled)


@pytest.mark.parametrize("config", [StoreConfig(), StoreConfig(keep_shingles=True)],
                         ids=["default", "shingles"])
def test_a_querys_probe_is_made_from_the_token_hashes_as_from_the_text(
        shared_data: Path, config: StoreConfig) -> None:
    """The query fingerprinter's capture (canonical text and sketch) through ``of_tokens``
    equals the one made by re-reading the canonical text."""
    from neardup.store.lookup import _Capture, probe_printer

    capture = _Capture(config)
    old = store_fingerprinter(config, features=lambda d, t, c: capture(d, t, c))
    docs = [Document(id=str(i), raw=raw) for i, raw in enumerate(_pages(shared_data, every=8))]
    docs += [Document(id=f"e{i}", raw=text.encode(), kind="text") for i, text in enumerate(EDGES)]
    for doc in docs:
        new_prints, old_prints = probe_printer(config)(doc), old(doc)
        assert new_prints.simhash == old_prints.simhash
        new, before = new_prints.features, old_prints.features
        assert new.canonical == before.canonical, doc.id
        _same_features(new.features, before.features)


@pytest.mark.parametrize("simhash", SIMHASHES[:2], ids=lambda c: c.tag)
def test_query_prints_equal_add_prints_but_the_shingle_level(texts: list[str],
                                                             simhash: SimHashConfig) -> None:
    """A store's query prints (no shingle-level hash, no shingle set made) carry the same
    simhash, identical and lexical hashes, token count and sketch as its add prints."""
    config = StoreConfig(simhash=simhash)
    adds, queries = store_fingerprinter(config), store_fingerprinter(config, queries=True)
    for number, text in enumerate(texts):
        doc = Document(id=f"d{number}", raw=text.encode(), kind="text")
        added, asked = adds(doc), queries(doc)
        assert (asked.simhash, asked.identical, asked.lexical, asked.tokens) == \
            (added.simhash, added.identical, added.lexical, added.tokens)
        _same_features(features_of(asked), features_of(added))
        assert asked.shingle == 0
        assert added.shingle != 0 or not added.tokens


def test_no_shingle_print_whatever_else_makes_the_set() -> None:
    """Without the shingle print its level is 0 even when the set is kept (``verify_sets``)
    or signed (the min-hash default); the set and the signature are unchanged."""
    doc = Document(id="d", raw=("one two three four five six seven " * 20).encode(),
                   kind="text")
    for verify_sets in (True, False):
        plain = Fingerprinter(DedupConfig(), verify_sets=verify_sets)(doc)
        bare = Fingerprinter(DedupConfig(), verify_sets=verify_sets, shingle_print=False)(doc)
        assert plain.shingle != 0 and bare.shingle == 0
        np.testing.assert_array_equal(bare.shingles, plain.shingles)
        assert bare.signature is not None and plain.signature is not None
        np.testing.assert_array_equal(bare.signature, plain.signature)
        assert (bare.identical, bare.lexical) == (plain.identical, plain.lexical)
