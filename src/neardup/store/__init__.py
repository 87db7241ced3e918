"""The persistent store: segments of permuted Hamming tables plus SQLite metadata."""

from neardup.store.collection import Store, open_store
from neardup.store.lookup import StoreMatch
from neardup.store.records import AddReport

__all__ = ["AddReport", "Store", "StoreMatch", "open_store"]
