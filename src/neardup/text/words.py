"""Word segmentation for a script written without spaces beyond CJK: Thai.

The canonical form splits Han and Kana into one token per character, but a Thai sentence has no
spaces between words and would be one token. With ``TextConfig.thai_words`` every run of Thai
letters is cut into words by PyThaiNLP's dictionary-based ``newmm`` segmenter (maximal matching
over its Thai word list; the ``thai`` extra) before the canonical form, so Thai text shingles by
word. Lao, Khmer and Burmese, also written without spaces, have no segmenter here: PyThaiNLP
covers Thai only, and ICU's word breaker (PyICU) needs the ICU C library to build against.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from neardup.errors import ConfigError

__all__ = ["segment_thai"]

_THAI_RUN = re.compile(r"[\u0e01-\u0e4e]+")


@cache
def _tokenizer() -> Any:
    try:
        from pythainlp.tokenize import word_tokenize
    except ImportError:
        raise ConfigError("thai_words=True needs PyThaiNLP: pip install 'neardup[thai]'") from None
    return word_tokenize


def _words(match: re.Match[str]) -> str:
    words = _tokenizer()(match.group(0), engine="newmm", keep_whitespace=False)
    return " ".join(str(word) for word in words)


def segment_thai(text: str) -> str:
    """``text`` with a space between the words of each run of Thai letters."""
    if not _THAI_RUN.search(text):
        return text
    return _THAI_RUN.sub(_words, text)
