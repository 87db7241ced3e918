"""``--against``: deduplicate new documents against an earlier run, reusing its partitions.

The earlier run's work directory keeps its fingerprint partitions. A run against it numbers the
old documents first (0 .. old - 1, the old run's numbering) and the new ones after them, links
and compares them all through the usual stages, but fingerprints only the new inputs: the old
partitions are read where they lie. Its outputs hold what touches a new document: the pairs with
at least one new document, the new documents and their clusters, and ``against``: one row per
new document saying whether to drop it and why:

- ``duplicate-of-old``: its cluster holds an old document (``old_doc``, the cluster's smallest),
  so the earlier run already has a copy; ``pair_doc`` and the scores are those of its strongest
  pair (an old partner first, then the highest resemblance, then the smallest doc);
- ``duplicate-of-new``: its cluster holds new documents only and the keep policy kept another;
- ``keep``: unique, or the survivor of a cluster of new documents.

The result equals a one-shot run over the old inputs followed by the new ones, restricted to what
touches new documents (the test checks it).

With simhash and minhash, the near pairs among old documents are not verified again: they are
read from the earlier run (:func:`old_near_pairs`), so verification is proportional to the new
documents. That holds when the old documents keep their numbers and their content (no site
template removed, in the earlier run or in this one); otherwise every pair is verified as in a
one-shot run. Each run records the files holding all its near pairs (``near-pairs.json``), so a
chain of runs, each against the previous, reuses them all.

What is read from an earlier run is verified first against what it sealed: its identity, its
markers, its partitions (this run cannot compute them again: a damaged one stops it with an
error naming the file, :class:`neardup.errors.CorruptDataError`), its kept keys and the pair
files ``near-pairs.json`` lists with their sizes and checksums (a damaged one is said in one line
and what it held is computed again, as when it is gone).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.config import DedupConfig
from neardup.engine.catalog import Catalog
from neardup.engine.fingerprint import partition_marker
from neardup.engine.keystore import KeyRecord, read_keys
from neardup.engine.markers import (
    checked_marker,
    file_digest,
    first_damage,
    marked,
    open_sealed,
    say,
    sealed_bytes,
)
from neardup.engine.outputs import TableSink
from neardup.engine.partition import read_meta
from neardup.engine.workdir import FORMAT, identity_differences, read_identity, write_atomic
from neardup.errors import ConfigError, CorruptDataError
from neardup.methods.registry import join_of

__all__ = ["config_identity", "near_pair_files", "old_keys", "old_near_pairs", "old_partitions",
           "record_near_pairs", "write_decisions"]

"""The methods whose old near pairs are read from the earlier run instead of verified again."""
NEAR_PAIRS = "near-pairs.json"

_SCORES = ("method", "relation", "resemblance", "containment_ab", "containment_ba", "hamming")


def config_identity(config: DedupConfig) -> dict[str, Any]:
    """The config as a work directory records it: every field but those that change speed
    only (the chunk overlap's memory limit)."""
    described: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(config), default=str))
    params = described.get("params")
    if isinstance(params, dict) and isinstance(params.get("overlap"), dict):
        params["overlap"].pop("memory_limit", None)
    return described


def old_partitions(root: Path, config: DedupConfig) -> tuple[list[tuple[str, Path, int]],
                                                             dict[str, Any]]:
    """The fingerprint partitions of the run whose work directory is ``root`` (named ``old-*``),
    and its identity; refused when that run used another configuration or did not get past
    numbering its documents, and stopped naming the file when one of them is damaged."""
    identity, link = read_identity(root), marked(root, "link")
    if identity is None or link is None:
        raise ConfigError(f"{root}: not the work directory of a finished run (no "
                          f"{'identity' if identity is None else 'numbering'} recorded); "
                          "--against needs the --work of an earlier dedup")
    if identity.get("format") != FORMAT:
        raise ConfigError(f"{root}: written by another version of neardup (work directory "
                          f"format {identity.get('format')}, this one reads {FORMAT}); run "
                          "that dedup again")
    differences = identity_differences(identity["config"],
                                       config_identity(config))
    if differences:
        raise ConfigError(f"{root}: the earlier run used another configuration "
                          f"({'; '.join(differences)})")
    parts = [(f"old-{name}", Path(folder), int(rows)) for name, folder, rows, _ in
             link[0]["parts"]]
    for _, folder, _ in parts:
        _check_partition(folder)
    return parts, identity


def _check_partition(folder: Path) -> None:
    """Raise naming the file when a partition of an earlier run (in the work directory that
    holds ``folder``) is not intact as its marker seals it."""
    file, block = (int(number[1:]) for number in folder.name.split("-"))
    if checked_marker(folder.parents[1], partition_marker(file, block)) is None:
        raise CorruptDataError(f"{folder}: an earlier run's partition without its marker "
                               "(it cannot be verified)")


def old_near_pairs(root: Path, config: DedupConfig,
                   dropped: list[tuple[int, ...]]) -> tuple[Path, ...] | None:
    """The files of every near pair among the documents of the run in ``root``, when they can
    stand for this run's pairs among those documents: same method, whose join keeps its keys
    for reuse, no template removed in that run, the old revisits dropped as they were
    (``dropped``: this run's dropped rows of the old partitions), so that the old documents keep
    their numbers, and every pair file intact (a damaged one is said in one line: the pairs
    are then verified again)."""
    join = join_of(config)
    if join is None or not join.reuses_keys:
        return None
    link, near = marked(root, "link"), marked(root, "near")
    if link is None or near is None:
        return None
    if near[0]["templates"].get("hosts_with_templates", 1) or \
            [tuple(part[3]) for part in link[0]["parts"]] != dropped:
        return None
    return near_pair_files(root)


def near_pair_files(root: Path) -> tuple[Path, ...] | None:
    """The files holding every near pair among the documents of the run in ``root``, each
    verified against the size and checksum recorded with it (None when they are not recorded
    or one is damaged, said in one line)."""
    path = root / NEAR_PAIRS
    payload = open_sealed(path)
    listed = None if payload is None else payload.get("files")
    if not isinstance(listed, list):
        return None
    damage = first_damage(Path("/"), {name: [size, digest] for name, size, digest in listed})
    if damage is not None:
        say(f"--against: {damage.path} is damaged ({damage.cause}); verifying the earlier "
            "run's near pairs again")
        return None
    return tuple(Path(name) for name, _, _ in listed)


def record_near_pairs(root: Path, files: list[Path]) -> None:
    """Record the files of every near pair of this run (in order; method ``exact`` has none),
    with their sizes and checksums."""
    listed = [[str(path.absolute()), *file_digest(path)] for path in files if path.exists()]
    write_atomic(root / NEAR_PAIRS, sealed_bytes({"files": listed}))


def old_keys(root: Path) -> KeyRecord | None:
    """The candidate keys the run in ``root`` kept (None when it kept none, or a folder they
    list is gone or damaged: then this run emits every key again). Each folder is verified
    against the seals of the near stage that wrote it (a damaged file is said in one line)."""
    record = read_keys(root / "near" / "candidates")
    if record is None or not record.complete():
        return None
    return record if all(_intact_keys(folder) for folder in record.folders) else None


def _intact_keys(folder: Path) -> bool:
    """Whether the kept keys in ``folder`` (``<work>/near/candidates``) are as sealed."""
    owner = folder.parents[1]
    near = marked(owner, "near") if folder.parent.name == "near" else None
    if near is None:
        say(f"--against: {folder} is not sealed by a near stage; emitting its keys again")
        return False
    mine = {name: seal for name, seal in near[1].items()
            if (owner / name).is_relative_to(folder)}
    damage = first_damage(owner, mine)
    if damage is not None:
        say(f"--against: {damage.path} is damaged ({damage.cause}); emitting its keys again")
    return damage is None


_EMPTY = {"documents": pa.schema([("doc", pa.int64()), ("id", pa.string())]),
          "clusters": pa.schema([("doc", pa.int64()), ("cluster", pa.int64()),
                                 ("kept", pa.bool_())]),
          "pairs": pa.schema([("a", pa.int64()), ("b", pa.int64())])}
"""The columns read back, for a JSONL table without rows (an empty file)."""


def _read(out: Path, name: str, fmt: str) -> pa.Table:
    if fmt == "parquet":
        return pq.read_table(out / f"{name}.parquet")
    import pyarrow.json as pj

    path = out / f"{name}.jsonl"
    return pj.read_json(path) if path.stat().st_size else _EMPTY[name].empty_table()


def _best_pairs(pairs: pa.Table, old: int) -> dict[int, dict[str, Any]]:
    """For each new doc, its strongest pair (old partner first, then resemblance, then doc)."""
    best: dict[int, tuple[tuple[int, float, int], dict[str, Any]]] = {}
    for row in pairs.to_pylist():
        for doc, other in ((row["a"], row["b"]), (row["b"], row["a"])):
            if doc < old:
                continue
            rank = (int(other >= old), -(row.get("resemblance") or 0.0), other)
            if doc not in best or rank < best[doc][0]:
                best[doc] = (rank, {"pair_doc": other,
                                    **{key: row.get(key) for key in _SCORES}})
    return {doc: found for doc, (_, found) in best.items()}


_DECISIONS = pa.schema([("doc", pa.int64()), ("id", pa.string()), ("drop", pa.bool_()),
                        ("reason", pa.string()), ("old_doc", pa.int64()),
                        ("old_id", pa.string()), ("pair_doc", pa.int64()),
                        ("method", pa.string()), ("relation", pa.string()),
                        ("resemblance", pa.float64()), ("containment_ab", pa.float64()),
                        ("containment_ba", pa.float64()), ("hamming", pa.int64()),
                        ("pair_id", pa.string())])


def _decisions(clusters: pa.Table, pairs: pa.Table, old: int,
               ids: dict[int, str]) -> pa.Table:
    best = _best_pairs(pairs, old)
    rows = []
    for row in clusters.to_pylist():
        doc, label = row["doc"], row["cluster"]
        reason = ("duplicate-of-old" if label < old else
                  "keep" if row["kept"] else "duplicate-of-new")
        pair = best.get(doc, {"pair_doc": None, **dict.fromkeys(_SCORES)})
        rows.append({"doc": doc, "id": ids[doc], "drop": reason != "keep", "reason": reason,
                     "old_doc": label if label < old else None,
                     "old_id": ids.get(label) if label < old else None,
                     **pair, "pair_id": ids.get(pair["pair_doc"])})
    return pa.Table.from_pylist(rows, schema=_DECISIONS)


def _old_ids(catalog: Catalog, docs: list[int]) -> dict[int, str]:
    """The ids of old docs, read from their partitions (each partition once)."""
    if not docs:
        return {}
    wanted = np.array(sorted(docs), dtype=np.int64)
    which, rows = catalog.locate(wanted)
    found: dict[int, str] = {}
    for index in np.unique(which).tolist():
        part = catalog.parts[index]
        chosen = which == index
        ids = read_meta(part.folder, ["id"]).column("id").take(
            pa.array(part.kept_rows()[rows[chosen]])).to_pylist()
        found.update(zip(wanted[chosen].tolist(), ids, strict=True))
    return found


def write_decisions(out: Path, fmt: str, catalog: Catalog, old: int) -> dict[str, int]:
    """Write the ``against`` table beside the outputs in ``out`` (which hold the new documents
    and the pairs touching them, :func:`neardup.engine.outputs.write_outputs` with ``first``);
    returns its counts by reason."""
    documents, clusters, pairs = (_read(out, name, fmt)
                                  for name in ("documents", "clusters", "pairs"))
    ids = dict(zip(documents["doc"].to_pylist(), documents["id"].to_pylist(), strict=True))
    partners = set(pairs["a"].to_pylist()) | set(pairs["b"].to_pylist())
    labels = set(clusters["cluster"].to_pylist())
    ids.update(_old_ids(catalog, [doc for doc in partners | labels if doc < old]))
    decisions = _decisions(clusters, pairs, old, ids)
    with TableSink(out, "against", fmt) as sink:
        sink.write(decisions)
        sink.close(decisions.schema)
    reasons = decisions["reason"].to_pylist()
    return {reason: reasons.count(reason)
            for reason in ("duplicate-of-old", "duplicate-of-new", "keep")}
