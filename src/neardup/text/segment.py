"""Pereira, Baeza-Yates & Ziviani's sentences: ended by a period, or cut at 150 characters.

"A sentence is a sequence of words ended by a period. If a period is not found until the 150th
character, then the sentence is finished at that point and a new sentence is initialized at the
151th character." Read literally, with three choices the paper leaves open:

- white space is collapsed first (every run of white space, line breaks included, becomes one
  space), so the count of 150 is over the visible characters, not over the layout;
- a sentence starts at its first non-space character (the space after a period does not count
  towards the next sentence's 150);
- only the full stop ``.`` ends a sentence, wherever it is ("3.5" ends one after "3."), as the
  definition says; ``!`` and ``?`` do not.
"""

from __future__ import annotations

__all__ = ["pereira_sentences"]


def pereira_sentences(text: str, cut: int = 150) -> list[str]:
    """The sentences of ``text``: up to and including a period found within the first ``cut``
    characters, else the first ``cut`` characters."""
    flat = " ".join(text.split())
    sentences: list[str] = []
    start, size = 0, len(flat)
    while start < size:
        if flat[start] == " ":
            start += 1
            continue
        period = flat.find(".", start, start + cut)
        end = period + 1 if period >= 0 else min(start + cut, size)
        sentence = flat[start:end].rstrip()
        if sentence:
            sentences.append(sentence)
        start = end
    return sentences
