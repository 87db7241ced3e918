"""The in-memory batch `dedup` (the small-input path) and the library's `dedup` over tables."""

from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter
from neardup.pipeline.dedup import DedupResult, find_duplicates

__all__ = ["DedupResult", "DocumentPrints", "Fingerprinter", "find_duplicates"]
