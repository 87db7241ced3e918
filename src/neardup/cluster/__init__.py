"""Clusters from pairs: union-find, graded relations, and which copy survives."""

from neardup.cluster.keep import survivors
from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.cluster.unionfind import components

__all__ = ["RELATIONS", "components", "overlap_scores", "survivors"]
