"""The persistent store: segments of permuted Hamming tables plus SQLite metadata.

Its names are imported when first used, so that a module of the package (``durable``, which
the batch engine shares) loads without the store itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neardup.store.collection import Store
    from neardup.store.lookup import StoreMatch
    from neardup.store.opening import open_store
    from neardup.store.records import AddReport

_HOME = {"Store": "neardup.store.collection", "open_store": "neardup.store.opening",
         "StoreMatch": "neardup.store.lookup", "AddReport": "neardup.store.records"}

__all__ = ["AddReport", "Store", "StoreMatch", "open_store"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'neardup.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value
