"""Opening a store: an existing one with its recorded config, or a new one created empty."""

from __future__ import annotations

import os
from pathlib import Path

from neardup.config import StoreConfig
from neardup.errors import ConfigError, CorruptDataError, OutputError, StoreError
from neardup.store import formats
from neardup.store.collection import Store
from neardup.store.settings import config_from_dict, config_to_dict, differences
from neardup.store.upgrade import upgrade_if_previous

__all__ = ["open_store"]


def open_store(path: str | os.PathLike[str], config: StoreConfig | None = None, *,
               read_only: bool = False, flush_every: int = 100_000, verify: bool = True,
               create: bool = True) -> Store:
    """Open the store at ``path``, creating it (with ``config`` or the default) if absent and
    ``create`` allows.

    An existing store keeps its config: passing a different one raises ConfigError naming
    every difference. ``verify`` checks each segment file's checksum when the store first maps
    it (on by default; it costs a read of the segment files), not only its size.

    A writer opening a store of the previous format (version 3) upgrades it first
    (:mod:`neardup.store.upgrade`: crash-safe, one-way); a reader refuses it, naming the fix.
    """
    root = Path(path)
    manifest = root / formats.MANIFEST
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root}: not a directory (a store is a directory)")
    if not manifest.exists():
        if not root.exists() and (read_only or not create):
            raise StoreError(f"{root}: no such store ({formats.MANIFEST} missing)")
        if read_only or not create or (root.exists() and any(root.iterdir())):
            raise CorruptDataError(f"{manifest}: missing (not a neardup store)")
        _create(root, config or StoreConfig())
    if not read_only:
        upgrade_if_previous(root)               # format version 3: see neardup.store.upgrade
    stored, _, _ = formats.read_manifest(root)
    if config is not None:
        found = differences(stored, config_to_dict(config))
        if found:
            raise ConfigError(f"{root}: the store was created with another config: "
                              + "; ".join(found))
    try:
        recorded = config_from_dict(stored)
    except (KeyError, TypeError, ValueError) as error:
        raise CorruptDataError(f"{manifest}: unreadable config ({error})") from error
    return Store(root, recorded, read_only, flush_every, verify)


def _create(root: Path, config: StoreConfig) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"{root}: {error.strerror or error}") from error
    record = formats.open_record(root)
    try:
        formats.write_record(record, root, formats.CommitRecord(0, 0))
        formats.sync_record(record, root)
    finally:
        os.close(record)
    formats.write_manifest(root, config_to_dict(config), [], 0)
