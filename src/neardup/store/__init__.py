"""The persistent store: segments of permuted Hamming tables plus SQLite metadata."""

from neardup.store.collection import Store
from neardup.store.lookup import StoreMatch
from neardup.store.opening import open_store
from neardup.store.records import AddReport

__all__ = ["AddReport", "Store", "StoreMatch", "open_store"]
