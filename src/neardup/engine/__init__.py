"""The batch engine: ``dedup`` as stages over partitioned files in a work directory.

fingerprint (per input split, in worker processes) -> link (document numbers, revisits) ->
exact (three levels, bucketed by hash) -> near (the method's candidate keys bucketed and joined,
then verification on the shingle sets) -> cluster (union-find over a memory-mapped array, keep
policy) -> outputs. Memory is bounded by ``--memory-limit`` through the number of buckets; each
stage marks what it finished, so a killed run resumes. See :func:`neardup.engine.run.run_engine`.
"""

from neardup.engine.run import EngineOptions, run_engine

__all__ = ["EngineOptions", "run_engine"]
