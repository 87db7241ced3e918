"""Stop words per language: function words that carry no content.

English is the project's own list, the 127 words of the NLTK English list (articles, pronouns,
auxiliaries, prepositions, conjunctions, a few adverbs) without contractions; SMFA and Manku's
simhash features use it. Every other language comes from the ``stop-words`` package (its lists
are longer and vary by source; its English list, 1,333 words, is not used). Words are compared
after ``str.casefold``.
"""

from __future__ import annotations

from functools import cache

from neardup.errors import ConfigError

__all__ = ["ENGLISH_STOP_WORDS", "is_stop_word", "stop_words"]

_WORDS = """
a about above after again against all am an and any are as at be because been before being below
between both but by can did do does doing don down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own s same she
should so some such t than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
you your yours yourself yourselves
"""
ENGLISH_STOP_WORDS = frozenset(_WORDS.split())


def is_stop_word(word: str) -> bool:
    return word.casefold() in ENGLISH_STOP_WORDS


@cache
def stop_words(language: str) -> frozenset[str]:
    """The case-folded stop words of ``language`` (``english``, ``french``, ``german``...)."""
    if language == "english":
        return ENGLISH_STOP_WORDS
    from stop_words import AVAILABLE_LANGUAGES, get_stop_words

    if language not in AVAILABLE_LANGUAGES:
        raise ConfigError(f"stop_words={language!r}: no stop-word list; known: english, "
                          + ", ".join(sorted(set(AVAILABLE_LANGUAGES) - {"english"})))
    return frozenset(word.casefold() for word in get_stop_words(language))
