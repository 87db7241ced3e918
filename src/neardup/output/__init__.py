"""Writing results: the documents, pairs and clusters tables and summary.json."""

from neardup.output.tables import OUTPUT_FORMATS, write_dedup_outputs

__all__ = ["OUTPUT_FORMATS", "write_dedup_outputs"]
