"""The library's doors to the batch engine: ``dedup`` over rows and tables, ``find_duplicates``."""

from neardup.engine.result import DedupResult
from neardup.pipeline.library import dedup, find_duplicates

__all__ = ["DedupResult", "dedup", "find_duplicates"]
