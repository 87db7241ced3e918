"""Snowball stemming (the PyStemmer package, Snowball's C stemmers), per language.

Manku, Jain and Das Sarma compute simhash features "using standard IR techniques like
tokenization, case folding, stop-word removal, stemming": :func:`filter_terms` applies the last
two to a canonical token sequence (:mod:`neardup.text.canonical`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from neardup.errors import ConfigError
from neardup.text.stopwords import stop_words

__all__ = ["filter_terms", "stemmer"]


@cache
def stemmer(language: str) -> Any:
    """PyStemmer's Snowball stemmer for ``language`` (``english``, ``porter``, ``french``...)."""
    import Stemmer

    if language not in Stemmer.algorithms():
        raise ConfigError(f"stemming={language!r}: no Snowball stemmer; known: "
                          + ", ".join(Stemmer.algorithms()))
    return Stemmer.Stemmer(language)


def filter_terms(canonical: bytes, stop_language: str | None,
                 stem_language: str | None) -> bytes:
    """The canonical tokens without the stop words of ``stop_language`` and stemmed with the
    Snowball stemmer of ``stem_language`` (either None: that step is skipped), joined by single
    spaces as the canonical form is."""
    if not canonical or (stop_language is None and stem_language is None):
        return canonical
    tokens = canonical.decode("utf-8", "surrogatepass").split(" ")
    if stop_language is not None:
        stops = stop_words(stop_language)
        tokens = [token for token in tokens if token not in stops]
    if stem_language is not None:
        tokens = stemmer(stem_language).stemWords(tokens)
    return " ".join(tokens).encode("utf-8", "surrogatepass")
