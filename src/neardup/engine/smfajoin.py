"""Method ``smfa`` out of core: equal SMFA fingerprints joined bucket by bucket.

Each survivor's MD5 (with its segment count) is routed by the digest to a bucket; in a bucket,
every member of a group of equal digests is paired with the group's first document (a star, as
:mod:`neardup.methods.smfa` pairs them), ``shared`` = the head's segments. The documents that
are not HTML are counted with their sources; when no survivor is HTML the run stops with the
in-memory path's error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig, SmfaConfig
from neardup.engine.buckets import BucketWriter, bucket_count, spread
from neardup.engine.catalog import Catalog
from neardup.engine.counting import sorted_keys, star_rows
from neardup.engine.keys import KEYED, smfa_rows
from neardup.engine.partition import read_meta
from neardup.engine.scoring import found_rows
from neardup.engine.survivors import survivor_features
from neardup.errors import ConfigError
from neardup.fingerprints.smfa import SmfaPrint
from neardup.methods.smfa import NOT_HTML

__all__ = ["smfa_found"]


class _Tally:
    def __init__(self) -> None:
        self.total = self.fingerprinted = self.not_html = 0
        self.sources: set[str | None] = set()
        self.named: set[str] = set()

    def add(self, features: list[object], sources: list[str | None], ids: list[str]) -> None:
        self.total += len(features)
        for feature, source, name in zip(features, sources, ids, strict=True):
            if feature == NOT_HTML:
                self.not_html += 1
                self.sources.add(source)
                self.named.add(source or name)
            elif isinstance(feature, SmfaPrint):
                self.fingerprinted += 1

    def refuse_if_all_plain(self) -> None:
        if not self.not_html or self.not_html != self.total:
            return
        named = sorted(self.named)
        shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        raise ConfigError(f"method='smfa' needs raw HTML: {shown} gave {self.not_html} "
                          "plain-text documents and no HTML page (SMFA fingerprints HTML block "
                          "segments)")


def _route(catalog: Catalog, survivors: npt.NDArray[np.bool_], writer: BucketWriter) -> _Tally:
    tally = _Tally()
    for chunk in survivor_features(catalog, survivors):
        meta = read_meta(chunk.part.folder, ["source", "id"]).to_pydict()
        raw = chunk.part.kept_rows()[chunk.local].tolist()
        tally.add(chunk.features, [meta["source"][r] for r in raw], [meta["id"][r] for r in raw])
        chosen = [k for k, f in enumerate(chunk.features) if isinstance(f, SmfaPrint)]
        prints = [f for f in chunk.features if isinstance(f, SmfaPrint)]
        rows = smfa_rows(prints, chunk.docs[np.array(chosen, dtype=np.int64)])
        writer.add(rows, spread(rows["key"]))
    writer.close()
    return tally


def smfa_found(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
               folder: Path, budget: int) -> tuple[Path, int, dict[str, object]]:
    """Write the star pairs of equal digests to ``folder/found.bin``; returns the path, the
    number of pairs (candidates) and the method's parameters."""
    count = int(survivors.sum())
    writer = BucketWriter(folder / "digests", bucket_count(count * KEYED.itemsize, budget), KEYED)
    tally = _route(catalog, survivors, writer)
    tally.refuse_if_all_plain()
    found, pairs, groups = folder / "found.bin", 0, 0
    with open(found, "wb") as out:
        for bucket in range(writer.count):
            rows = sorted_keys(writer.folder, bucket)
            heads, members, runs = star_rows(rows)
            out.write(found_rows(rows["doc"][heads], rows["doc"][members],
                                 rows["weight"][heads]).tobytes())
            pairs += int(members.size)
            groups += runs
    parameters: dict[str, object] = {
        "smfa": config.of(SmfaConfig).tag, "fingerprinted": tally.fingerprinted,
        "no_fingerprint": tally.total - tally.fingerprinted - tally.not_html,
        "not_html": tally.not_html, "not_html_sources": sorted(tally.sources)[:20],  # type: ignore[type-var]
        "groups": groups,
    }
    return found, pairs, parameters
