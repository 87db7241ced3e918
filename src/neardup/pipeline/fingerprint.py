"""The per-document stage: payload -> text -> canonical form -> fingerprints.

A pure function of (document, config), run in worker processes. Its output is small and picklable:
the document's metadata, its exact-level hashes, its near-duplicate fingerprint and the sorted set
of shingle hashes used to verify candidate pairs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig, Extractor
from neardup.document import Document
from neardup.features.shingles import shingle_set
from neardup.fingerprints.exact import exact_prints
from neardup.fingerprints.minhash import MinHash
from neardup.fingerprints.simhash import SimHash
from neardup.text.canonical import canonical_bytes
from neardup.text.extract import extract, require_extractor, trafilatura_text
from neardup.text.html import decode_payload, parse_page
from neardup.text.words import segment_thai

__all__ = ["DocumentPrints", "Fingerprinter", "document_text"]

U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True)
class DocumentPrints:
    """What the batch stages need of one document."""

    id: str
    url: str | None
    host: str | None
    source: str
    offset: int
    fetched: str | None
    length: int
    text_chars: int
    tokens: int
    identical: int
    lexical: int
    shingle: int
    simhash: int
    signature: U64 | None
    shingles: U64
    revisit_of: str | None = None
    features: object = None
    links: tuple[str, ...] = ()
    extract_seconds: float = 0.0
    fingerprint_seconds: float = 0.0


def document_text(doc: Document, extractor: Extractor = "full") -> str:
    """The visible text of a document: extracted from HTML (``extractor``: full, main,
    trafilatura), the decoded plain text, or nothing for a binary payload (which only the
    identical level compares)."""
    if doc.kind == "html":
        return extract(doc.raw, extractor, doc.charset)
    if doc.kind == "binary":
        return ""
    return decode_payload(doc.raw, doc.charset)


def _text_and_links(doc: Document, config: DedupConfig) -> tuple[str, tuple[str, ...]]:
    """The document's text (Thai cut into words when the config asks) and, when
    ``config.links`` asks for them, its HTML out-links (one parse for both)."""
    links: tuple[str, ...] = ()
    if not config.links or doc.kind != "html":
        text = document_text(doc, config.text.extract)
    else:
        page = parse_page(doc.raw, charset=doc.charset, base_url=doc.url,
                          main_content=config.text.main_content, want_links=True)
        text, links = page.text, page.links
        if config.text.extract == "trafilatura":
            text = trafilatura_text(doc.raw, doc.charset)
    return (segment_thai(text) if config.text.thai_words else text), links


class Fingerprinter:
    """Computes :class:`DocumentPrints` for one configuration (build once per worker).

    Besides the shared fields, the near-duplicate method of the config may compute its own
    per-document features (``DocumentPrints.features``), see :mod:`neardup.pipeline.methods`;
    ``features`` replaces them with any extractor of (document, text, canonical bytes).
    """

    def __init__(self, config: DedupConfig,
                 features: Callable[[Document, str, bytes], object] | None = None) -> None:
        from neardup.pipeline.methods import near_method

        require_extractor(config.text.extract)
        self.config = config
        self.simhash = SimHash(config.simhash)
        self.minhash = MinHash(config.minhash) if config.method == "minhash" else None
        method = near_method(config.method)
        if features is None and method is not None and method.features is not None:
            features = method.features(config)
        self.features = features

    def _signature(self, canonical: bytes, shingles: U64) -> U64 | None:
        """The min-hash signature; from the verification shingle set when the two shingle
        configs agree (the minimum over a set equals that over its bag: hashed once)."""
        if self.minhash is None:
            return None
        if self.minhash.config.shingles == self.config.verify_shingles:
            return self.minhash.of_shingles(shingles)
        return self.minhash.of_canonical(canonical)

    def __call__(self, doc: Document) -> DocumentPrints:
        if doc.revisit_of is not None:
            return _revisit_prints(doc)
        started = time.perf_counter()
        text, links = _text_and_links(doc, self.config)
        extracted = time.perf_counter()
        canonical = canonical_bytes(text)
        verify = self.config.verify_shingles
        shingles = shingle_set(canonical, verify.width, verify.seed)
        exact = exact_prints(doc.raw, canonical, shingles, self.config.exact)
        simhash = self.simhash.of_canonical(canonical) if self.config.method == "simhash" else 0
        signature = self._signature(canonical, shingles)
        features = self.features(doc, text, canonical) if self.features else None
        return DocumentPrints(
            id=doc.id, url=doc.url, host=doc.host, source=doc.source, offset=doc.offset,
            fetched=doc.fetched, length=len(doc.raw), text_chars=len(text),
            tokens=canonical.count(b" ") + 1 if canonical else 0,
            identical=exact.identical, lexical=exact.lexical, shingle=exact.shingle,
            simhash=simhash, signature=signature, shingles=shingles, features=features, links=links,
            extract_seconds=extracted - started,
            fingerprint_seconds=time.perf_counter() - extracted,
        )


def _revisit_prints(doc: Document) -> DocumentPrints:
    """A revisit carries no payload: its fingerprints are filled in from the record it repeats."""
    return DocumentPrints(
        id=doc.id, url=doc.url, host=doc.host, source=doc.source, offset=doc.offset,
        fetched=doc.fetched, length=0, text_chars=0, tokens=0, identical=0, lexical=0, shingle=0,
        simhash=0, signature=None, shingles=np.empty(0, dtype=np.uint64),
        revisit_of=doc.revisit_of,
    )
