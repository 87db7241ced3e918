"""Writing results: the formats of the output tables (the engine writes them)."""

from neardup.engine.outputs import OUTPUT_FORMATS

__all__ = ["OUTPUT_FORMATS"]
