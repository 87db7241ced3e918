"""Stages 4 and 5 for every method: candidates then verification, out of core where written so.

``simhash`` and ``minhash`` run fully out of core (:mod:`neardup.engine.candidates`,
:mod:`neardup.engine.verify`). The other methods (sketch, supershingle, chunks, smfa,
shingle-paragraphs) still find their pairs in memory: their survivors' prints are loaded from the
partitions and handed to the method's own ``find``, which gives exactly the in-memory result but
holds those prints in this process (see the README's "Large corpora").

Writes ``near/pairs.bin`` (pair records), and the method's extra tables as ``near/tables.pkl``.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.engine.candidates import minhash_candidates, simhash_candidates
from neardup.engine.catalog import Catalog
from neardup.engine.pairfiles import to_records
from neardup.engine.partition import read_prints
from neardup.engine.templates import ContentReader, run_templates
from neardup.engine.verify import verify_candidates
from neardup.engine.workdir import WorkDir, publish_dir
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import near_method
from neardup.pipeline.templates import content_prints

__all__ = ["OUT_OF_CORE", "run_near"]

STAGE = "near"
OUT_OF_CORE = ("simhash", "minhash")


def _out_of_core(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                 folder: Path, budget: int) -> dict[str, Any]:
    templates = run_templates(config, catalog, survivors, folder / "templates", budget)
    content = ContentReader(config, catalog, templates)
    if config.method == "simhash":
        parameters = simhash_candidates(config, catalog, survivors, folder / "candidates", budget)
    else:
        parameters = minhash_candidates(config, catalog, survivors, folder / "candidates", budget,
                                        content)
    with open(folder / "pairs.bin", "wb") as out:
        candidates, verified = verify_candidates(config, catalog,
                                                 folder / "candidates" / "pairs.bin", out, budget,
                                                 content)
        out.flush()
        os.fsync(out.fileno())
    return {"candidates": candidates, "verified": verified, "rejected": candidates - verified,
            "verification": config.verification, **parameters,
            "templates": templates.summary(config.templates)}


def _all_prints(catalog: Catalog, features: bool) -> list[DocumentPrints]:
    prints: list[DocumentPrints] = []
    for part in catalog.parts:
        rows = read_prints(part.folder, features)
        prints.extend(rows[row] for row in part.kept_rows().tolist())
    return prints


def _in_memory(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
               folder: Path) -> dict[str, Any]:
    method = near_method(config.method)
    assert method is not None
    prints = _all_prints(catalog, method.features is not None)
    chosen = np.flatnonzero(survivors).astype(np.int64)
    content, templates = content_prints(config, prints, chosen)
    near = method.find(config, content, chosen)
    with open(folder / "pairs.bin", "wb") as out:
        out.write(to_records(near.pairs).tobytes())
        out.flush()
        os.fsync(out.fileno())
    with open(folder / "tables.pkl", "wb") as out:
        pickle.dump(near.tables, out)
    return {"candidates": near.candidates, "verified": len(near.pairs),
            "rejected": near.rejected, "verification": config.verification, **near.parameters,
            "templates": templates.summary(config.templates)}


def run_near(work: WorkDir, config: DedupConfig, catalog: Catalog,
             survivors: npt.NDArray[np.bool_], budget: int) -> tuple[Path, dict[str, Any] | None]:
    """The near stage's folder and its counts (None for method ``exact``)."""
    final = work.root / STAGE
    if near_method(config.method) is None:
        return final, None
    if (record := work.done(STAGE)) is not None:
        return final, record
    temporary = work.temporary(final)
    if config.method in OUT_OF_CORE:
        record = _out_of_core(config, catalog, survivors, temporary, budget)
    else:
        record = _in_memory(config, catalog, survivors, temporary)
    publish_dir(temporary, final)
    work.mark(STAGE, record)
    return final, record


def near_tables(folder: Path) -> dict[str, list[dict[str, object]]]:
    path = folder / "tables.pkl"
    if not path.exists():
        return {}
    with open(path, "rb") as source:
        tables: dict[str, list[dict[str, object]]] = pickle.load(source)
    return tables
