"""Batch stages and their executors."""

from neardup.pipeline.dedup import DedupResult, find_duplicates
from neardup.pipeline.fingerprint import DocumentPrints, Fingerprinter

__all__ = ["DedupResult", "DocumentPrints", "Fingerprinter", "find_duplicates"]
