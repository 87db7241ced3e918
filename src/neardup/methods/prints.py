"""What the batch stages and the store need of one document: :class:`Prints`.

Generic in the near method's per-document features (``F``): each method declares the type its
extractor returns (a chunk set, an SMFA print, a sketch...), so its ``find`` reads ``Prints[F]``
with ``features: F | None`` (None for a revisit, or for a method without features), never an
``object`` to narrow. :data:`DocumentPrints` is ``Prints[Any]``: the prints of code that carries
documents of any method (the stages, the partitions, the store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from neardup._types import U64
from neardup.document import Document

__all__ = ["DocumentPrints", "F", "Prints", "revisit_prints"]

F = TypeVar("F")
"""The per-document features of a near method."""
NO_TOKENS: U64 = np.empty(0, dtype=np.uint64)
NO_TOKENS.flags.writeable = False


@dataclass(slots=True)
class Prints(Generic[F]):
    """One document's metadata, exact-level hashes, fingerprints, verification shingle set, its
    near method's features and, for a page compared on two views, the prints of its article.
    Treated as immutable once made (not frozen: a frozen dataclass's constructor sets each of
    its 22 fields through ``object.__setattr__``, about 5 us a document's prints)."""

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
    features: F | None = None
    links: tuple[str, ...] = ()
    extract_seconds: float = 0.0
    fingerprint_seconds: float = 0.0
    article: Prints[Any] | None = None
    """The prints of the page's article view (``DedupConfig.views``): its text, canonical
    form, exact levels, shingle set and signature; None for one view."""
    token_hashes: U64 = field(default_factory=lambda: NO_TOKENS)
    """The canonical text's token hashes, which ``shingles`` is made of (a compact work
    directory stores these instead of the set: :mod:`neardup.engine.sequences`); empty unless
    the fingerprinter was asked for them."""


if TYPE_CHECKING:
    DocumentPrints = Prints[Any]
    """The prints of a document of any method."""
else:  # at run time the class itself: calling ``Prints[Any](...)`` would set ``__orig_class__``
    DocumentPrints = Prints  # on a slotted instance, which raises



def revisit_prints(doc: Document) -> DocumentPrints:
    """A revisit carries no payload: its fingerprints are filled in from the record it repeats."""
    return Prints(
        id=doc.id, url=doc.url, host=doc.host, source=doc.source, offset=doc.offset,
        fetched=doc.fetched, length=0, text_chars=0, tokens=0, identical=0, lexical=0, shingle=0,
        simhash=0, signature=None, shingles=np.empty(0, dtype=np.uint64),
        revisit_of=doc.revisit_of,
    )
