"""datatrove's minhash deduplication over one JSONL.gz corpus, as one process (for scale.py).

The four stages of datatrove's own example (signatures, LSH buckets, clusters, filter), each run
by a LocalPipelineExecutor with ``WORKERS`` processes (default 1): the signature and filter stages
take one task per corpus file (datatrove shards its inputs by file), the bucket stage one task per
bucket, the cluster stage one task; so it compares with ``neardup dedup --workers WORKERS`` over
the same files.
The ids of the documents it removes are written to ``WORK/removed.txt``. datatrove 0.10 hands
``str`` to xxhash, which xxhash 4 (the version neardup uses) refuses: the hash functions are
wrapped to encode first (UTF-8), as xxhash 3 did inside.

    python benchmarks/scale_datatrove.py WORK CORPUS... [--workers N]
"""

from __future__ import annotations

import argparse
import gzip
import json
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


def run(corpus: list[Path], work: Path, workers: int) -> None:
    config = MinhashConfig()
    [folder] = {path.parent for path in corpus}
    names = sorted(path.name for path in corpus)
    pattern = names[0] if len(names) == 1 else "*.jsonl.gz"
    assert sorted(p.name for p in folder.glob(pattern)) == names, "the corpus files alone"
    reader = JsonlReader(str(folder), glob_pattern=pattern)
    stages = [
        [reader, MinhashDedupSignature(output_folder=str(work / "signatures"), config=config)],
        [MinhashDedupBuckets(input_folder=str(work / "signatures"),
                             output_folder=str(work / "buckets"), config=config)],
        [MinhashDedupCluster(input_folder=str(work / "buckets"),
                             output_folder=str(work / "remove_ids"), config=config)],
        [reader, MinhashDedupFilter(input_folder=str(work / "remove_ids"),
                                    exclusion_writer=JsonlWriter(str(work / "removed")))],
    ]
    tasks = [len(corpus), config.num_buckets, 1, len(corpus)]
    for index, (pipeline, count) in enumerate(zip(stages, tasks, strict=True)):
        LocalPipelineExecutor(pipeline=pipeline, tasks=count, workers=min(workers, count),
                              logging_dir=str(work / f"logs{index}")).run()
    removed = []
    for path in sorted((work / "removed").glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as rows:
            removed.extend(json.loads(line)["id"] for line in rows)
    (work / "removed.txt").write_text("".join(f"{doc}\n" for doc in removed))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("corpus", type=Path, nargs="+")
    parser.add_argument("--workers", type=int, default=1)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = _arguments()
    run([path.resolve() for path in arguments.corpus], arguments.work.resolve(),
        arguments.workers)
