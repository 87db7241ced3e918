"""Moved to :mod:`neardup.methods.registry`: a re-export kept while branches written against
the old path are merged (remove it afterwards)."""

from __future__ import annotations

from neardup.methods.registry import NearMethod, near_method
from neardup.methods.unit import FeatureExtractor

__all__ = ["FeatureExtractor", "NearMethod", "near_method"]
