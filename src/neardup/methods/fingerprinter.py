"""The per-document stage: payload -> text -> canonical form -> fingerprints.

A pure function of (document, config), run in worker processes. Its output is small and picklable:
the document's metadata, its exact-level hashes, its near-duplicate fingerprint and the sorted set
of shingle hashes used to verify candidate pairs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Generic, overload

import numpy as np

from neardup._types import U64
from neardup.config import DedupConfig, Extractor, MinHashConfig, SimHashMethod
from neardup.document import Document
from neardup.features.shingles import shingle_set_of_tokens
from neardup.features.tokens import canonical_tokens
from neardup.fingerprints.exact import exact_prints
from neardup.fingerprints.simhash import SimHash
from neardup.methods.joins import HammingTables
from neardup.methods.prints import DocumentPrints, F, Prints, revisit_prints
from neardup.methods.registry import join_of, near_method, signer_of
from neardup.methods.unit import FeatureExtractor
from neardup.text.extract import extract, require_extractor, views
from neardup.text.html import decode_payload, decode_utf8, parse_page
from neardup.text.words import segment_thai

__all__ = ["ARTICLE_TOKENS", "NO_SHINGLES", "DocumentPrints", "Fingerprinter", "document_text"]

NO_SHINGLES: U64 = np.empty(0, dtype=np.uint64)
NO_SHINGLES.flags.writeable = False
"""The verification set of prints made without one (``verify_sets=False``)."""

ARTICLE_TOKENS = 50
"""The fewest tokens of article text that make a page's article view: below it, a page is
compared on its full text alone (a short extract is more often a caption or a notice than an
article, and two pages sharing one would pair on it)."""


def document_text(doc: Document, extractor: Extractor = "full") -> str:
    """The visible text of a document: extracted from HTML (``extractor``: full, main,
    trafilatura), the decoded plain text, or nothing for a binary payload (which only the
    identical level compares)."""
    if doc.kind == "html":
        return extract(doc.raw, extractor, doc.charset)
    if doc.kind == "binary":
        return ""
    return decode_payload(doc.raw, doc.charset)


def _page_texts(doc: Document, config: DedupConfig, two_views: bool
                ) -> tuple[str, bytes | None, str | None, tuple[str, ...]]:
    """The document's text, its UTF-8 form when that is the payload itself (a plain text read
    as UTF-8: not encoded again), its article text (``two_views``, for a web page: None when
    the page has none) and, when ``config.links`` asks for them, its HTML out-links; Thai cut
    into words when the config asks. A page is parsed once, except for trafilatura's text, the
    article text beside the links, and the article view beside the links."""
    if doc.kind == "text" and not config.text.thai_words:
        plain = decode_utf8(doc.raw, doc.charset)
        if plain is not None:
            return plain, doc.raw, None, ()
    article: str | None = None
    links: tuple[str, ...] = ()
    extractor = config.text.extract
    if doc.kind != "html":
        text = document_text(doc, extractor)
    elif config.links:
        page = parse_page(doc.raw, charset=doc.charset, base_url=doc.url,
                          main_content=extractor == "main", want_links=True)
        text, links = page.text, page.links
        if extractor in ("article", "trafilatura"):
            text = extract(doc.raw, extractor, doc.charset)
        if two_views:
            article = extract(doc.raw, "article", doc.charset) or None
    elif two_views:
        text, article = views(doc.raw, doc.charset)
    else:
        text = extract(doc.raw, extractor, doc.charset)
    if config.text.thai_words:
        text = segment_thai(text)
        article = segment_thai(article) if article is not None else None
    return text, None, article, links


def _method_features(config: DedupConfig) -> FeatureExtractor[Any] | None:
    """The extractor of the config's near method (None: it has none, or ``exact``)."""
    method = near_method(config.method)
    return None if method is None or method.features is None else method.features(config)


class Fingerprinter(Generic[F]):
    """Computes :class:`DocumentPrints` for one configuration (build once per worker).

    Besides the shared fields, the near-duplicate method of the config may compute its own
    per-document features (``DocumentPrints.features``, of the type its unit declares, see
    :mod:`neardup.methods.registry`); ``features`` replaces them with any extractor of
    (document, text, canonical bytes). An extractor with an ``of_tokens`` method (the same
    arguments and the text's token hashes, as ``canonical_tokens`` gives them) is called
    through it, so that it need not scan the canonical text again.
    """

    @overload
    def __init__(self: Fingerprinter[Any], config: DedupConfig, features: None = None, *,
                 verify_sets: bool = True, token_hashes: bool = False,
                 shingle_print: bool = True) -> None: ...
    @overload
    def __init__(self, config: DedupConfig, features: FeatureExtractor[F], *,
                 verify_sets: bool = True, token_hashes: bool = False,
                 shingle_print: bool = True) -> None: ...

    def __init__(self, config: DedupConfig, features: FeatureExtractor[F] | None = None, *,
                 verify_sets: bool = True, token_hashes: bool = False,
                 shingle_print: bool = True) -> None:
        """``verify_sets``: the prints keep the verification shingle set (the batch engine
        verifies pairs on it; a store, which keeps only the exact-level hash made from it,
        leaves it out, its batches holding and its workers pickling a tenth of the bytes).
        ``token_hashes``: with ``verify_sets``, they keep the canonical token hashes the set
        is made of too (what a compact work directory stores instead of the set).
        ``shingle_print``: the prints carry the shingle-level exact hash; without it (a
        store's queries, which look up the identical and lexical levels only) their
        ``shingle`` is 0, and no shingle set is made unless it is kept or signed."""
        require_extractor(config.text.extract)
        self.config = config
        self.verify_sets = verify_sets
        self.token_hashes = verify_sets and token_hashes
        self.simhash = SimHash(config.of(SimHashMethod).simhash) \
            if isinstance(join_of(config), HammingTables) else None
        self.signer = signer_of(config)
        self.features = features if features is not None else _method_features(config)
        of_tokens = getattr(self.features, "of_tokens", None)
        self._token_features: Callable[[Document, str, bytes, U64], F] | None = \
            of_tokens if callable(of_tokens) else None
        self.two_views = len(config.views) > 1
        self.signs_verify_sets = self.signer is not None and \
            config.of(MinHashConfig).shingles == config.verify_shingles
        self.shingle_print = shingle_print
        self.makes_sets = verify_sets or shingle_print or self.signs_verify_sets

    def _signature(self, canonical: bytes, shingles: U64 | None) -> U64 | None:
        """The min-hash signature; from the verification shingle set when the two shingle
        configs agree (the minimum over a set equals that over its bag: hashed once)."""
        if self.signer is None:
            return None
        if self.signs_verify_sets:
            assert shingles is not None
            return self.signer.of_shingles(shingles)
        return self.signer.of_canonical(canonical)

    def _features(self, doc: Document, text: str, canonical: bytes, tokens: U64) -> F | None:
        """The extractor's features of one view (None without an extractor)."""
        if self._token_features is not None:
            return self._token_features(doc, text, canonical, tokens)
        return self.features(doc, text, canonical) if self.features else None

    def __call__(self, doc: Document) -> Prints[F]:
        if doc.revisit_of is not None:
            revisit: Prints[F] = revisit_prints(doc)
            return revisit
        started = time.perf_counter()
        text, utf8, article, links = _page_texts(doc, self.config, self.two_views)
        extracted = time.perf_counter()
        view = self._article(doc, article) if article is not None else None
        return self._prints(doc, text, links, features=True, article=view,
                            timed=(started, extracted), utf8=utf8)

    def _article(self, doc: Document, text: str) -> Prints[F] | None:
        """The prints of the article view; None when the page has no article (fewer than
        :data:`ARTICLE_TOKENS` tokens of article text)."""
        article = self._prints(doc, text, (), features=False)
        return article if article.tokens >= ARTICLE_TOKENS else None

    def _prints(self, doc: Document, text: str, links: tuple[str, ...], *, features: bool,
                article: Prints[Any] | None = None,
                timed: tuple[float, float] = (0.0, 0.0), utf8: bytes | None = None) -> Prints[F]:
        """The prints of one view (``article``: the page's article view; ``utf8``: the text's
        UTF-8 form when at hand); ``timed``: when the extraction began and ended, to record
        with the fingerprinting's end (one dataclass built per view: replacing fields costs
        more than the canonical form of a page)."""
        canonical, tokens = canonical_tokens(text, utf8)
        verify = self.config.verify_shingles
        shingles = (shingle_set_of_tokens(tokens, verify.width, verify.seed)
                    if self.makes_sets else None)
        exact = exact_prints(doc.raw, canonical, shingles if self.shingle_print else None,
                             self.config.exact)
        simhash = self.simhash.of_tokens(tokens, canonical) if self.simhash is not None else 0
        signature = self._signature(canonical, shingles)
        found = self._features(doc, text, canonical, tokens) if features else None
        started, extracted = timed
        return Prints(
            id=doc.id, url=doc.url, host=doc.host, source=doc.source, offset=doc.offset,
            fetched=doc.fetched, length=len(doc.raw), text_chars=len(text), tokens=tokens.size,
            identical=exact.identical, lexical=exact.lexical, shingle=exact.shingle,
            simhash=simhash, signature=signature, features=found, links=links,
            shingles=shingles if self.verify_sets and shingles is not None else NO_SHINGLES,
            token_hashes=tokens.copy() if self.token_hashes else NO_SHINGLES,  # a view of a
            # buffer of 3 hashes per byte of text: not kept alive with the prints
            extract_seconds=extracted - started, article=article,
            fingerprint_seconds=time.perf_counter() - extracted if timed[1] else 0.0,
        )
