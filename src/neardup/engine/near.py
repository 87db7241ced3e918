"""Stages 4 and 5 for every method: candidates then verification, out of core.

The per-host templates are counted first (:mod:`neardup.engine.templates`), then:

- ``simhash`` and ``minhash``: candidate pairs from bucketed keys
  (:mod:`neardup.engine.candidates`), verified by :mod:`neardup.engine.verify`;
- ``sketch``, ``supershingle`` (:mod:`neardup.engine.sketchjoin`), ``chunks``
  (:mod:`neardup.engine.chunkjoin`) and ``smfa`` (:mod:`neardup.engine.smfajoin`): the method's
  keys bucketed and joined bucket by bucket (shared counts out of core for the counting
  methods), the found pairs verified with the method's own columns and rule
  (:mod:`neardup.engine.scoring`).

``shingle-paragraphs`` (its iterations draw sub-collections over the whole run) and ``chunks``
with ``write_relations`` (whose tables list every document) still load the survivors' prints
into this process and call the method's own ``find`` (see the README's "Large corpora").

Writes ``near/pairs.bin`` (pair records), and the method's extra tables as ``near/tables.pkl``.
"""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.cluster.relations import RELATIONS
from neardup.config import DedupConfig
from neardup.engine.candidates import minhash_candidates, simhash_candidates
from neardup.engine.catalog import Catalog
from neardup.engine.chunkjoin import chunks_found
from neardup.engine.pairfiles import to_records
from neardup.engine.partition import read_prints
from neardup.engine.scoring import resemblance_rule, score_found, sketch_rule
from neardup.engine.sketchjoin import sketch_found
from neardup.engine.smfajoin import smfa_found
from neardup.engine.templates import ContentReader, run_chunk_templates, run_templates
from neardup.engine.verify import verify_candidates
from neardup.engine.workdir import WorkDir, publish_dir
from neardup.features.templates import TemplateSet
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import near_method
from neardup.pipeline.templates import content_prints

__all__ = ["OUT_OF_CORE", "near_tables", "run_near", "runs_out_of_core"]

STAGE = "near"
OUT_OF_CORE = ("simhash", "minhash", "sketch", "supershingle", "chunks", "smfa")


def _fingerprints(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                  folder: Path, budget: int, content: ContentReader) -> dict[str, Any]:
    """simhash, minhash: candidates by bucketed keys, then verification."""
    if config.method == "simhash":
        parameters = simhash_candidates(config, catalog, survivors, folder / "candidates", budget,
                                        content)
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
            **parameters}


def _joined(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
            folder: Path, budget: int, content: ContentReader,
            templates: TemplateSet) -> dict[str, Any]:
    """sketch, supershingle, chunks, smfa: found pairs by the method's key join, verified."""
    work = folder / "join"
    rule = resemblance_rule
    if config.method == "chunks":
        chunk_templates = run_chunk_templates(config, catalog, survivors, work / "templates",
                                              budget)
        templates.chunks = int(sum(values.size for values in chunk_templates.values()))
        found, candidates, parameters = chunks_found(config, catalog, survivors,
                                                     chunk_templates, work, budget)
    elif config.method == "smfa":
        found, candidates, parameters = smfa_found(config, catalog, survivors, work, budget)
    else:
        found, candidates, parameters = sketch_found(config, catalog, survivors, work, budget)
        rule = sketch_rule
    with open(folder / "pairs.bin", "wb") as out:
        kept = score_found(config, catalog, content, found, out, budget, rule)
        out.flush()
        os.fsync(out.fileno())
    shutil.rmtree(work)
    equivalent = int(kept[RELATIONS.index("shingle-equivalent")])
    return {"candidates": candidates, "verified": int(kept.sum()),
            "rejected": candidates - (int(kept.sum()) - equivalent), **parameters}


def _out_of_core(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                 folder: Path, budget: int) -> dict[str, Any]:
    templates = run_templates(config, catalog, survivors, folder / "templates", budget)
    content = ContentReader(config, catalog, templates)
    if config.method in ("simhash", "minhash"):
        record = _fingerprints(config, catalog, survivors, folder, budget, content)
    else:
        record = _joined(config, catalog, survivors, folder, budget, content, templates)
    return {**record, "verification": config.verification,
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


def runs_out_of_core(config: DedupConfig) -> bool:
    """Whether the near stage runs out of core for ``config``."""
    return config.method in OUT_OF_CORE and not config.write_relations


def run_near(work: WorkDir, config: DedupConfig, catalog: Catalog,
             survivors: npt.NDArray[np.bool_], budget: int) -> tuple[Path, dict[str, Any] | None]:
    """The near stage's folder and its counts (None for method ``exact``)."""
    final = work.root / STAGE
    if near_method(config.method) is None:
        return final, None
    if (record := work.done(STAGE)) is not None:
        return final, record
    temporary = work.temporary(final)
    if runs_out_of_core(config):
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
