"""Stages 4 and 5 on Spark for the keyed joins; the other join kinds as locally.

For a method whose unit names Hamming tables or signature bands
(:mod:`neardup.methods.joins`), the template stage (per-host counts, out of core) runs on the
driver with the local engine's function; its template set, small, is shipped to the tasks.
Candidates (:mod:`neardup.engine.spark.candidates`) and verification
(:mod:`neardup.engine.spark.verify`) run on Spark. The other kinds (sketch counts, chunk overlap,
SMFA matches, paragraph iterations: out of core; a unit's ``find``: in memory) run through
:func:`neardup.engine.near.run_near` on the driver, exactly as locally. The stage writes what the
local one writes: ``near/pairs.bin`` and its marker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.engine.catalog import Catalog
from neardup.engine.markers import folder_files
from neardup.engine.near import NEAR_RESULTS, run_near, views_record
from neardup.engine.spark.candidates import minhash_candidates, simhash_candidates
from neardup.engine.spark.verify import verify_pairs, write_verified
from neardup.engine.templates import ContentReader, run_templates
from neardup.engine.workdir import WorkDir, drop_scratch, publish_dir
from neardup.methods.joins import HammingTables, SignatureBands
from neardup.methods.registry import join_of

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["spark_near"]

STAGE = "near"
NearStage = Callable[[WorkDir, DedupConfig, Catalog, npt.NDArray[np.bool_], int],
                     tuple[Path, dict[str, Any] | None]]


def _near(context: SparkContext, partitions: int, config: DedupConfig, catalog: Catalog,
          survivors: npt.NDArray[np.bool_], folder: Path, budget: int) -> dict[str, Any]:
    templates = run_templates(config, catalog, survivors, folder / "templates", budget)
    content = ContentReader(config, catalog, templates)
    if isinstance(join_of(config), HammingTables):
        blocks, parameters = simhash_candidates(context, config, catalog, survivors, partitions)
    else:
        blocks, parameters = minhash_candidates(context, config, catalog, survivors, partitions,
                                                content)
    (folder / "verified").mkdir()
    scored = verify_pairs(context, config, catalog, content, blocks, partitions,
                          folder / "verified", budget)
    candidates, verified = write_verified(scored, folder / "verified", folder / "pairs.bin")
    return {"candidates": candidates, "verified": verified, "rejected": candidates - verified,
            "verification": config.verification, **parameters,
            **views_record(config, catalog, survivors, folder / "pairs.bin"),
            "templates": templates.summary(config.templates)}


def spark_near(context: SparkContext, partitions: int) -> NearStage:
    """The near stage with the keyed joins on Spark (a drop-in for ``run_near``)."""
    def run(work: WorkDir, config: DedupConfig, catalog: Catalog,
            survivors: npt.NDArray[np.bool_], budget: int) -> tuple[Path, dict[str, Any] | None]:
        if not isinstance(join_of(config), (HammingTables, SignatureBands)):
            return run_near(work, config, catalog, survivors, budget)
        final = work.root / STAGE
        if (record := work.done(STAGE)) is not None:
            return final, record
        temporary = work.temporary(final)
        record = _near(context, partitions, config, catalog, survivors, temporary, budget)
        drop_scratch(temporary, NEAR_RESULTS)
        publish_dir(temporary, final)
        work.mark(STAGE, record, folder_files(final))
        return final, record
    return run
