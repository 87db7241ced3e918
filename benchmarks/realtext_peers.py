"""The peers' deduplication pipelines over one JSONL corpus, as one process (for realtext_compare).

    python benchmarks/realtext_peers.py {rensa,datasketch} CORPUS.jsonl REMOVED.txt

Run with the interpreter of a virtualenv that holds ``rensa`` and ``datasketch`` (not neardup's).
Each pipeline is what a user of the library writes from its README, single process, streaming:
read a line, shingle its text in Python (case-folded ``\\w+`` tokens joined into 5-word shingles,
all tokens when fewer: neardup's shingle width), sign it with 128 permutations, query the LSH index
(threshold 0.8, neardup's default); a document with a candidate whose estimated Jaccard is at least
0.8 is removed, any other is inserted (its signature kept for the checks).

- rensa: ``RMinHash(128, seed=42)``, ``update(shingles)``, ``RMinHashLSH(0.8, 128, 16 bands)``;
- datasketch: ``MinHash(128, permutations=...)`` (the permutations made once and shared, the fast
  way), ``update_batch`` of the UTF-8 shingles, ``MinHashLSH(threshold=0.8, num_perm=128)``.

The ids of the removed documents go to REMOVED.txt, one a line.

text-dedup is not a pipeline here: it has a command of its own, built by :func:`textdedup_command`
(for realtext_compare and realtext_textdedup_groups).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

WIDTH = 5
NUM_PERM = 128
THRESHOLD = 0.8
_TOKEN = re.compile(r"\w+")
# text-dedup reads the corpus through Hugging Face datasets, which must not reach the network.
TEXTDEDUP_ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def textdedup_command(python: Path | str, corpus: Path, out: Path, *extra: str) -> list[str]:
    """text-dedup's MinHash command over the JSONL ``corpus`` with the settings above (5-word
    shingles, 128 permutations, 0.8; one process; xxh3, its faster hash), its cache folder and
    what it keeps (``kept``) inside ``out``."""
    return [str(python), "-m", "text_dedup.minhash", "--path", "json", "--data_files", str(corpus),
            "--split", "train", "--column", "text", "--cache_dir", str(out / "cache"),
            "--output", str(out / "kept"), "--num_perm", str(NUM_PERM), "--threshold",
            str(THRESHOLD), "--ngram", str(WIDTH), "--num_proc", "1", "--hash_func", "xxh3",
            *extra]


def textdedup_kept(out: Path) -> set[str]:
    """The ids of the documents text-dedup kept (a ``datasets`` folder of Arrow stream files)."""
    import pyarrow as pa

    kept: set[str] = set()
    for path in sorted((out / "kept").glob("data-*.arrow")):
        with pa.memory_map(str(path)) as source:
            kept.update(pa.ipc.open_stream(source).read_all()["id"].to_pylist())
    return kept


def shingles(text: str) -> list[str]:
    tokens = _TOKEN.findall(text.casefold())
    if len(tokens) <= WIDTH:
        return [" ".join(tokens)] if tokens else []
    return list(map(" ".join, zip(*(tokens[i:] for i in range(WIDTH)), strict=False)))


def _rows(corpus: Path) -> Iterator[tuple[str, str]]:
    with open(corpus, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            yield row["id"], row["text"]


def rensa_pipeline(corpus: Path) -> Iterator[str]:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=16)
    kept: dict[int, Any] = {}
    for key, (doc_id, text) in enumerate(_rows(corpus)):
        signature = RMinHash(num_perm=NUM_PERM, seed=42)
        signature.update(shingles(text))
        if any(signature.jaccard(kept[other]) >= THRESHOLD for other in lsh.query(signature)):
            yield doc_id
            continue
        lsh.insert(key, signature)
        kept[key] = signature


def datasketch_pipeline(corpus: Path) -> Iterator[str]:
    from datasketch import MinHash, MinHashLSH

    first = MinHash(num_perm=NUM_PERM, seed=1)
    permutations, scheme = first.permutations, first.scheme
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    kept: dict[str, Any] = {}
    for doc_id, text in _rows(corpus):
        signature = MinHash(num_perm=NUM_PERM, permutations=permutations, scheme=scheme)
        signature.update_batch([s.encode("utf-8") for s in shingles(text)])
        if any(signature.jaccard(kept[other]) >= THRESHOLD for other in lsh.query(signature)):
            yield doc_id
            continue
        lsh.insert(doc_id, signature)
        kept[doc_id] = signature


PIPELINES: dict[str, Callable[[Path], Iterator[str]]] = {
    "rensa": rensa_pipeline, "datasketch": datasketch_pipeline}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", choices=sorted(PIPELINES))
    parser.add_argument("corpus", type=Path)
    parser.add_argument("removed", type=Path)
    args = parser.parse_args()
    with open(args.removed, "w", encoding="utf-8") as out:
        for doc_id in PIPELINES[args.peer](args.corpus):
            out.write(doc_id + "\n")


if __name__ == "__main__":
    main()
