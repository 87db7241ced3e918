"""A list of English stop words: function words that carry no content.

The 127 words of the NLTK English list (articles, pronouns, auxiliaries, prepositions,
conjunctions, a few adverbs), without contractions; compared after ``str.casefold``.
"""

from __future__ import annotations

__all__ = ["ENGLISH_STOP_WORDS", "is_stop_word"]

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
