"""The texts of a few documents of a run, read again from its inputs.

A ``dedup`` run keeps no text, only where each document came from (the ``source`` and
``offset`` columns of its documents table). The report and the cluster browser show a bounded
number of documents; their texts are read back with :func:`neardup.sources.seek.documents_at`
and turned into text and canonical form as the run did (the ``text`` and ``verify`` tags of
``summary.json``; the defaults when a run has none). A revisit shows the text of the record it
repeats. A document whose input is gone or changed is reported, never invented.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from neardup.analysis.dedupdir import DedupRun
from neardup.config import ShingleConfig
from neardup.config.text import EXTRACTORS, Extractor
from neardup.errors import SourceError
from neardup.methods.fingerprinter import document_text
from neardup.sources.context import MEDIA, Media
from neardup.sources.seek import documents_at
from neardup.text.canonical import canonical_text
from neardup.text.words import segment_thai

__all__ = ["DocText", "TextSettings", "read_texts", "text_settings"]

_SHINGLE_TAG = re.compile(r"^shingles:w(\d+)s(\d+)$")


@dataclass(frozen=True, slots=True)
class TextSettings:
    """How the run made text (extractor, Thai words, media) and its verification shingles."""

    extract: Extractor = "full"
    thai_words: bool = False
    media: Media = "html"
    shingles: ShingleConfig = field(default_factory=ShingleConfig)


@dataclass(frozen=True, slots=True)
class DocText:
    """One document's text as extracted, and its canonical form (the one compared)."""

    text: str
    canonical: str


def text_settings(summary: dict[str, Any]) -> TextSettings:
    """The settings a run's ``summary.json`` names (defaults for what it does not name)."""
    tags = summary.get("config") if isinstance(summary.get("config"), dict) else {}
    assert isinstance(tags, dict)
    text_tag = str(tags.get("text", "text:full")).split(":")
    extract = text_tag[1] if len(text_tag) > 1 and text_tag[1] in EXTRACTORS else "full"
    found = _SHINGLE_TAG.match(str(tags.get("verify", "")))
    shingles = ShingleConfig(int(found[1]), int(found[2])) if found else ShingleConfig()
    media = str(summary.get("media", "html"))
    return TextSettings(extract, "thai-words" in text_tag,
                        media if media in MEDIA else "html", shingles)


def _wanted(run: DedupRun, docs: Sequence[int]) -> dict[int, int]:
    """Each wanted document -> the document whose payload holds its text (revisits: the
    original)."""
    names = run.documents.column_names
    revisit = run.documents.column("revisit_of") if "revisit_of" in names else None
    out: dict[int, int] = {}
    for doc in docs:
        original = revisit[doc].as_py() if revisit is not None else None
        out[doc] = int(original) if original is not None and original >= 0 else doc
    return out


def _text(doc: Any, settings: TextSettings) -> DocText:
    text = document_text(doc, settings.extract)
    if settings.thai_words:
        text = segment_thai(text)
    return DocText(text, canonical_text(text))


def read_texts(run: DedupRun, docs: Sequence[int],
               settings: TextSettings) -> tuple[dict[int, DocText], list[str]]:
    """The texts of ``docs`` (document numbers) and one line per input that could not give
    them (the file and the cause)."""
    wanted = _wanted(run, docs)
    holders = sorted(set(wanted.values()))
    rows = run.documents.select(["source", "offset", "id"]).take(pa.array(holders, pa.int64()))
    by_file: dict[str, dict[tuple[int, str], int]] = defaultdict(dict)
    for holder, source, offset, doc_id in zip(holders, *(rows.column(c).to_pylist() for c in (
            "source", "offset", "id")), strict=True):
        by_file[str(source)][(int(offset), str(doc_id))] = holder
    texts: dict[int, DocText] = {}
    problems: list[str] = []
    for path, keys in sorted(by_file.items()):
        found = _read_file(path, keys, settings, problems)
        texts.update(found)
    return {doc: texts[holder] for doc, holder in wanted.items() if holder in texts}, problems


def _read_file(path: str, keys: dict[tuple[int, str], int], settings: TextSettings,
               problems: list[str]) -> dict[int, DocText]:
    if not Path(path).is_file():
        problems.append(f"{path}: input not found; its documents are shown without text")
        return {}
    found: dict[int, DocText] = {}
    try:
        for doc in documents_at(path, [offset for offset, _ in keys], settings.media):
            holder = keys.get((doc.offset, doc.id))
            if holder is not None and holder not in found:
                found[holder] = _text(doc, settings)
    except (OSError, SourceError) as error:
        problems.append(f"{path}: cannot read it again ({error})")
    missing = len(keys) - len(found)
    if missing:
        problems.append(f"{path}: {missing} document(s) not found at their recorded offset "
                        "(the file changed since the run?)")
    return found
