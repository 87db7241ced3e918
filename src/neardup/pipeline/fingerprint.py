"""Moved to :mod:`neardup.methods.fingerprinter` and :mod:`neardup.methods.prints`: a re-export
kept while branches written against the old path are merged (remove it afterwards)."""

from __future__ import annotations

from neardup.methods.fingerprinter import Fingerprinter, document_text
from neardup.methods.prints import DocumentPrints

__all__ = ["DocumentPrints", "Fingerprinter", "document_text"]
