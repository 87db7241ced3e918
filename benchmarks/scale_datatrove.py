"""datatrove's minhash deduplication over one JSONL.gz corpus, as one process (for scale.py).

The four stages of datatrove's own example (signatures, LSH buckets, clusters, filter), each run
by a LocalPipelineExecutor with one task, so that it compares with ``neardup dedup --workers 1``.
The ids of the documents it removes are written to ``WORK/removed.txt``. datatrove 0.10 hands
``str`` to xxhash, which xxhash 4 (the version neardup uses) refuses: the hash functions are
wrapped to encode first (UTF-8), as xxhash 3 did inside.

    python benchmarks/scale_datatrove.py CORPUS WORK
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import xxhash
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import (
    MinhashConfig,
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashes import xxhash as datatrove_xxhash


def _encoding(function: Any) -> Any:
    def hashed(data: str | bytes) -> int:
        return int(function(data.encode() if isinstance(data, str) else data))
    return hashed


datatrove_xxhash.xxhash32 = _encoding(xxhash.xxh32_intdigest)
datatrove_xxhash.xxhash64 = _encoding(xxhash.xxh64_intdigest)


def run(corpus: Path, work: Path) -> None:
    config = MinhashConfig()
    reader = JsonlReader(str(corpus.parent), glob_pattern=corpus.name)
    stages = [
        [reader, MinhashDedupSignature(output_folder=str(work / "signatures"), config=config)],
        [MinhashDedupBuckets(input_folder=str(work / "signatures"),
                             output_folder=str(work / "buckets"), config=config)],
        [MinhashDedupCluster(input_folder=str(work / "buckets"),
                             output_folder=str(work / "remove_ids"), config=config)],
        [reader, MinhashDedupFilter(input_folder=str(work / "remove_ids"),
                                    exclusion_writer=JsonlWriter(str(work / "removed")))],
    ]
    tasks = [1, config.num_buckets, 1, 1]
    for index, (pipeline, count) in enumerate(zip(stages, tasks, strict=True)):
        LocalPipelineExecutor(pipeline=pipeline, tasks=count, workers=1,
                              logging_dir=str(work / f"logs{index}")).run()
    removed = []
    for path in sorted((work / "removed").glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as rows:
            removed.extend(json.loads(line)["id"] for line in rows)
    (work / "removed.txt").write_text("".join(f"{doc}\n" for doc in removed))


if __name__ == "__main__":
    run(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
