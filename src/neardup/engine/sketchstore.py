"""The sketches of a run's documents on disk, for the pair estimates of the sketch methods.

Written once per partition (values, CSR offsets and moduli of every kept row, in the near
stage's folder) while the survivors' features are read, then gathered for the documents of one
bucket of pairs at a time through memory maps (so the sketches of the run are never all held).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neardup._types import I64, U64
from neardup.engine.catalog import Catalog, Part
from neardup.engine.workdir import read_array, write_array
from neardup.methods.sketch import SketchFeatures

__all__ = ["SketchStore"]



class SketchStore:
    """Per-partition sketch files under ``folder``."""

    def __init__(self, folder: Path, catalog: Catalog) -> None:
        self.folder = folder
        self.catalog = catalog
        self.entries = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, part: Part, kept: list[object]) -> None:
        """The sketches of a partition's kept rows (rows without sketch features: empty)."""
        empty = np.empty(0, dtype=np.uint64)
        sketches = [f.sketch if isinstance(f, SketchFeatures) else empty for f in kept]
        offsets = np.zeros(len(kept) + 1, dtype=np.int64)
        np.cumsum([s.size for s in sketches], out=offsets[1:])
        flat = np.concatenate(sketches).astype(np.uint64) if sketches else empty
        moduli = np.array([f.modulus if isinstance(f, SketchFeatures) else 1 for f in kept],
                          dtype=np.int64)
        write_array(self.folder / f"{part.name}.values.npy", flat)
        write_array(self.folder / f"{part.name}.offsets.npy", offsets)
        write_array(self.folder / f"{part.name}.moduli.npy", moduli)
        self.entries += int(flat.size)

    def gather(self, docs: I64) -> tuple[U64, I64, I64]:
        """The sketches of sorted ``docs``: (flat, CSR offsets, moduli)."""
        which, rows = self.catalog.locate(docs)
        flats, sizes, moduli = [np.empty(0, np.uint64)], [np.empty(0, np.int64)], []
        for index in np.unique(which).tolist():
            name = self.catalog.parts[index].name
            chosen = rows[which == index]
            offsets = read_array(self.folder / f"{name}.offsets.npy")
            starts, counts = offsets[chosen], np.diff(offsets)[chosen]
            within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
                np.cumsum(counts) - counts, counts)
            mapped = np.load(self.folder / f"{name}.values.npy", mmap_mode="r")
            flats.append(np.array(mapped[np.repeat(starts, counts) + within]))
            del mapped
            sizes.append(counts)
            moduli.append(read_array(self.folder / f"{name}.moduli.npy")[chosen])
        offsets = np.zeros(docs.size + 1, dtype=np.int64)
        np.cumsum(np.concatenate(sizes), out=offsets[1:])
        return (np.concatenate(flats), offsets,
                np.concatenate(moduli) if moduli else np.empty(0, np.int64))
