"""What an archivist asks first: which pages are copies of which, how many per file, host and
date, and which "copies" are only robots.txt files, error pages or empty pages.

:func:`gather_copies` picks the largest clusters of a run (bounded), labels every page's kind
(:mod:`.pages`) and reads the texts of the chosen clusters' members again from the inputs
(:mod:`.texts`); the three report sections and the cluster browser (:mod:`.browser`) are built
from what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup._types import I8
from neardup.analysis.dedupdir import DedupRun, column_array, column_or_nulls
from neardup.analysis.largest import ClusterEntry, largest_clusters
from neardup.analysis.pages import EMPTY_TOKENS, KINDS, PageKind, page_kinds, text_kind
from neardup.analysis.texts import DocText, TextSettings, read_texts, text_settings

__all__ = ["Copies", "gather_copies", "kind_counts", "snippet"]

SNIPPET_CHARS = 160


@dataclass(frozen=True, slots=True)
class Copies:
    """The largest clusters of one run, every page's kind, the texts read and what failed."""

    run: DedupRun
    label: str
    kinds: I8
    """Each document's kind of page, an index into :data:`~.pages.KINDS`."""
    clusters: list[ClusterEntry]
    texts: dict[int, DocText]
    problems: list[str]
    settings: TextSettings

    def content_mask(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.kinds == KINDS.index("content"))

    def kind(self, doc: int) -> PageKind:
        return KINDS[int(self.kinds[doc])]


def snippet(text: str, width: int = SNIPPET_CHARS) -> str:
    """The start of a text on one line, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return flat[:width].rsplit(" ", 1)[0] + " ..."


def gather_copies(run: DedupRun, label: str, clusters: int, members: int,
                  text_clusters: int | None = None, text_members: int | None = None,
                  snippets: int = 0) -> Copies:
    """The ``clusters`` largest clusters of ``run`` (their first ``members`` documents, the
    kept one first), with the texts of the first ``text_members`` members (all when None) of
    the first ``text_clusters`` clusters (all when None), and of the kept copies of the first
    ``snippets`` clusters of each kind of page, read again from the inputs."""
    tokens = column_or_nulls(run.documents, "tokens", pa.int64())
    kinds = page_kinds(run.documents.column("url"),
                       pc.fill_null(tokens, EMPTY_TOKENS).to_numpy().astype(np.int64))
    entries = largest_clusters(run, kinds, clusters, members)
    settings = text_settings(run.summary)
    wanted = {doc for entry in entries[:text_clusters] for doc in entry.members[:text_members]}
    for kind in KINDS:
        wanted.update([e.kept for e in entries if e.kind == kind][: 2 * snippets])
    located = {"source", "offset", "id"} <= set(run.documents.column_names)
    texts, problems = (read_texts(run, sorted(wanted), settings) if located else
                       ({}, [f"{run.path}: no source, offset or id column: texts cannot be "
                             "shown"]))
    for doc, text in texts.items():
        kinds[doc] = KINDS.index(text_kind(KINDS[int(kinds[doc])], text.text))
    entries = [replace(entry, kind=KINDS[int(kinds[entry.kept])]) for entry in entries]
    return Copies(run, label, kinds, entries, texts, problems, settings)


def kind_counts(copies: Copies) -> dict[PageKind, tuple[int, int]]:
    """Per page kind: documents, and duplicates among them."""
    duplicate = ~column_array(copies.run.clusters, "kept").astype(bool)
    codes = copies.kinds.astype(np.int64)
    docs = np.bincount(codes, minlength=len(KINDS))
    dups = np.bincount(codes, weights=duplicate, minlength=len(KINDS))
    return {kind: (int(docs[i]), int(dups[i])) for i, kind in enumerate(KINDS)}
