"""Stages 4 and 5 for every method: candidates then verification, out of core.

The per-host templates are counted first (:mod:`neardup.engine.templates`), then the join
kind the method's unit names (:mod:`neardup.methods.joins`) runs:

- Hamming tables and signature bands: candidate pairs from bucketed keys
  (:mod:`neardup.engine.candidates`), verified by :mod:`neardup.engine.verify`;
- sketch counts (:mod:`neardup.engine.sketchjoin`), chunk overlap
  (:mod:`neardup.engine.chunkjoin`) and SMFA matches (:mod:`neardup.engine.smfajoin`): the
  method's keys bucketed and joined bucket by bucket (shared counts out of core for the
  counting kinds), the found pairs verified with the method's own columns and rule
  (:mod:`neardup.engine.scoring`);
- paragraph iterations (:mod:`neardup.engine.paragraphs`): Pereira et al.'s iterations, each
  sub-collection joined with the rest of the collection through bucketed key files, the pairs
  verified like the joined methods'.

With ``write_relations`` (chunk overlap), S&GM's relation tables are written piece by piece
from the chunk join's bucket files and the partitions (:mod:`neardup.engine.relations`). These
joins never load the run's prints into this process; a method whose unit has a ``find``
instead of a join (``keyword``, or one registered later) runs in memory through it.
The sketch, chunk, SMFA and paragraph joins are imported when their method runs.

Writes ``near/pairs.bin`` (pair records), shingle-paragraphs' growth table as
``near/tables.pkl`` and the relation tables as ``near/tables/<name>.parquet``.
"""

from __future__ import annotations

import pickle
import shutil
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.cluster.relations import RELATIONS
from neardup.config import ChunkMethod, DedupConfig
from neardup.engine.candidates import minhash_candidates, simhash_candidates, survivor_rows
from neardup.engine.catalog import Catalog
from neardup.engine.kernels import has_article
from neardup.engine.keystore import KEPT
from neardup.engine.markers import folder_files
from neardup.engine.outputs import TableSink
from neardup.engine.pairfiles import to_records, view_counts
from neardup.engine.partition import read_prints
from neardup.engine.relations import TABLES as RELATION_TABLES
from neardup.engine.relations import write_relations
from neardup.engine.scoring import resemblance_rule, score_found, sketch_rule
from neardup.engine.templates import (
    ContentReader,
    content_prints,
    run_chunk_templates,
    run_templates,
)
from neardup.engine.verify import verify_candidates
from neardup.engine.workdir import WorkDir, drop_scratch, publish_dir
from neardup.features.templates import TemplateSet
from neardup.methods.joins import (
    ChunkOverlap,
    HammingTables,
    Join,
    ParagraphIterations,
    SignatureBands,
    SketchCounts,
    SmfaMatches,
)
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import join_of, near_method
from neardup.store.durable import sync

__all__ = ["NEAR_RESULTS", "near_tables", "run_near", "runs_out_of_core", "views_record",
           "write_near_tables"]

STAGE = "near"
NEAR_RESULTS = ("pairs.bin", "tables.pkl", "tables", "candidates/pairs.bin",
                *(f"candidates/{name}" for name in KEPT))
"""What the near stage keeps: the verified pairs and the method's extra tables (read by the
cluster and output stages and by later ``--against`` runs), the sorted candidate key buckets
with their record ``keys.json`` (joined by later ``--against`` runs), and the candidate pairs,
16 bytes each, for inspection."""


def _keyed(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
           folder: Path, budget: int, content: ContentReader, join: Join) -> dict[str, Any]:
    """Hamming tables, signature bands: candidates by bucketed keys, then verification."""
    find = simhash_candidates if isinstance(join, HammingTables) else minhash_candidates
    parameters = find(config, catalog, survivors, folder / "candidates", budget, content)
    started = time.perf_counter()
    with open(folder / "pairs.bin", "wb") as out:
        candidates, verified = verify_candidates(config, catalog,
                                                 folder / "candidates" / "pairs.bin", out, budget,
                                                 content)
        sync(out)
    phases = {**cast(dict[str, float], parameters.pop("phases")),
              "verification": round(time.perf_counter() - started, 4)}
    return {"candidates": candidates, "verified": verified, "rejected": candidates - verified,
            **parameters, **views_record(config, catalog, survivors, folder / "pairs.bin"),
            "phases": phases}


def views_record(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                 pairs: Path) -> dict[str, Any]:
    """What a run comparing two views of a page reports: the survivors with an article view
    and the verified pairs standing on each view (nothing for a run of one view)."""
    if not catalog.has_article:
        return {}
    article = catalog.article()
    with_article = sum(int(has_article(article, index, local).sum())
                       for index, _, local in survivor_rows(catalog, survivors))
    return {"views": {"compared": list(config.views), "article_views": with_article,
                      "pairs": view_counts(pairs, config.views)}}


def _joined(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
            folder: Path, budget: int, content: ContentReader, templates: TemplateSet,
            join: Join) -> dict[str, Any]:
    """Sketch counts, chunk overlap, SMFA matches: found pairs by the method's key join,
    verified with its rule."""
    work = folder / "join"
    rule = resemblance_rule
    if isinstance(join, ChunkOverlap):
        from neardup.engine.chunkjoin import chunks_found

        chunk_templates = run_chunk_templates(config, catalog, survivors, work / "templates",
                                              budget)
        templates.chunks = int(sum(values.size for values in chunk_templates.values()))
        found, candidates, parameters = chunks_found(config, catalog, survivors,
                                                     chunk_templates, work, budget)
        method = config.of(ChunkMethod)
        if method.write_relations:
            write_relations(catalog, work / "fprints", method.overlap.drop_common or 0,
                            folder / "tables", budget)
    elif isinstance(join, SmfaMatches):
        from neardup.engine.smfajoin import smfa_found

        found, candidates, parameters = smfa_found(config, catalog, survivors, work, budget)
    else:
        assert isinstance(join, SketchCounts)
        from neardup.engine.sketchjoin import sketch_found

        found, candidates, parameters = sketch_found(config, join, catalog, survivors, work,
                                                     budget)
        rule = resemblance_rule if join.supershingles else sketch_rule
    kept = score_found(config, catalog, content, found, folder / "pairs.bin", budget, rule)
    shutil.rmtree(work)
    equivalent = int(kept[RELATIONS.index("shingle-equivalent")])
    return {"candidates": candidates, "verified": int(kept.sum()),
            "rejected": candidates - (int(kept.sum()) - equivalent), **parameters}


def _paragraphs(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                folder: Path, budget: int, content: ContentReader,
                exact_pairs: Path) -> dict[str, Any]:
    """Shingle paragraphs: the iterations over bucketed keys, then verification."""
    from neardup.engine.paragraphs import paragraphs_near

    record = paragraphs_near(config, catalog, survivors, exact_pairs, folder, budget, content)
    with open(folder / "tables.pkl", "wb") as out:
        pickle.dump({"growth": record["growth"]}, out)
    return record


def _out_of_core(config: DedupConfig, join: Join, catalog: Catalog,
                 survivors: npt.NDArray[np.bool_], folder: Path, budget: int,
                 exact_pairs: Path) -> dict[str, Any]:
    started = time.perf_counter()
    templates = run_templates(config, catalog, survivors, folder / "templates", budget)
    content = ContentReader(config, catalog, templates)
    counted = round(time.perf_counter() - started, 4)
    if isinstance(join, (HammingTables, SignatureBands)):
        record = _keyed(config, catalog, survivors, folder, budget, content, join)
        record["phases"]["templates"] = counted
    elif isinstance(join, ParagraphIterations):
        record = _paragraphs(config, catalog, survivors, folder, budget, content, exact_pairs)
    else:
        record = _joined(config, catalog, survivors, folder, budget, content, templates, join)
    counts = {name: record.pop(name) for name in ("candidates", "verified", "rejected")}
    return {**counts, "verification": config.verification, **record,
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
    assert method is not None and method.find is not None
    prints = _all_prints(catalog, method.features is not None)
    chosen = np.flatnonzero(survivors).astype(np.int64)
    content, templates = content_prints(config, prints, chosen)
    near = method.find(config, content, chosen)
    with open(folder / "pairs.bin", "wb") as out:
        out.write(to_records(near.pairs).tobytes())
        sync(out)
    with open(folder / "tables.pkl", "wb") as out:
        pickle.dump(near.tables, out)
    return {"candidates": near.candidates, "verified": len(near.pairs),
            "rejected": near.rejected, "verification": config.verification, **near.parameters,
            "templates": templates.summary(config.templates)}


def runs_out_of_core(config: DedupConfig) -> bool:
    """Whether the near stage runs out of core for ``config`` (its method names a join)."""
    return join_of(config) is not None


def run_near(work: WorkDir, config: DedupConfig, catalog: Catalog,
             survivors: npt.NDArray[np.bool_], budget: int) -> tuple[Path, dict[str, Any] | None]:
    """The near stage's folder and its counts (None for method ``exact``)."""
    final = work.root / STAGE
    if near_method(config.method) is None:
        return final, None
    if (record := work.done(STAGE)) is not None:
        return final, record
    temporary = work.temporary(final)
    if (join := join_of(config)) is not None:
        record = _out_of_core(config, join, catalog, survivors, temporary, budget,
                              work.root / "exact" / "pairs.bin")
    else:
        record = _in_memory(config, catalog, survivors, temporary)
    drop_scratch(temporary, NEAR_RESULTS)
    publish_dir(temporary, final)
    work.mark(STAGE, record, folder_files(final))
    return final, record


def near_tables(folder: Path) -> dict[str, list[dict[str, object]]]:
    """The method's extra tables as rows (each whole in memory: :func:`write_near_tables`
    streams them instead)."""
    tables = near_tables_small(folder)
    for name in RELATION_TABLES:
        if (folder / "tables" / f"{name}.parquet").exists():
            tables[name] = pq.read_table(folder / "tables" / f"{name}.parquet").to_pylist()
    return tables


def write_near_tables(folder: Path, out: Path, fmt: str) -> None:
    """Write the method's extra tables to ``out`` as ``fmt``, the relation tables a row group
    at a time (the same rows as :func:`near_tables`)."""
    for name, rows in near_tables_small(folder).items():
        table = pa.Table.from_pylist(rows)
        with TableSink(out, name, fmt) as sink:
            sink.write(table)
            sink.close(table.schema)
    for name in RELATION_TABLES:
        path = folder / "tables" / f"{name}.parquet"
        if not path.exists():
            continue
        source = pq.ParquetFile(path)
        with TableSink(out, name, fmt) as sink:
            for group in range(source.num_row_groups):
                sink.write(source.read_row_group(group))
            sink.close(source.schema_arrow)


def near_tables_small(folder: Path) -> dict[str, list[dict[str, object]]]:
    """The method's small extra tables (shingle-paragraphs' growth)."""
    path = folder / "tables.pkl"
    if not path.exists():
        return {}
    with open(path, "rb") as source:
        tables: dict[str, list[dict[str, object]]] = pickle.load(source)
    return tables
