"""A curator's run: deduplicate Parquet shards and keep the surviving rows, every column intact,
one output shard per input shard.

    python examples/curate_shards.py [WORK_FOLDER]

It writes two small shards into WORK_FOLDER/shards (a temporary folder by default), runs
``neardup dedup ... --write kept,annotated`` on them, and prints what was kept. The same command
works on your own shards (add ``--text-field NAME`` when their text is in another column).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from neardup.cli.main import cli

STORIES = [
    "The harbour town woke early; fishing boats slipped out past the breakwater before dawn, "
    "gulls followed them over the grey water, and by noon the market stalls along the quay "
    "sold mackerel, crab and the first oysters of the season to visitors from the city.",
    "Parquet stores a table column by column, so a reader fetches only the columns it needs; "
    "each row group carries statistics of its values, which let a query skip whole groups, "
    "and every column chunk is compressed on its own with a codec such as zstd or snappy.",
    "A near-duplicate differs from its original by a few words: a date, a counter, an "
    "advertisement or a footer; exact hashing misses it, while shingles, min-hash and simhash "
    "see that two documents share most of their word sequences and pair them.",
]


def write_shards(folder: Path) -> list[Path]:
    """Two shards: each story three times, the third copy with a note added."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for copy in range(3):
        for number, story in enumerate(STORIES):
            text = story + (" Reprinted with permission." if copy == 2 else "")
            rows.append({"text": text, "source_site": f"site{copy}.example",
                         "story": number, "tags": ["news", f"copy{copy}"]})
    table = pa.Table.from_pylist(rows)
    shards = [folder / "part-000.parquet", folder / "part-001.parquet"]
    pq.write_table(table.slice(0, 5), shards[0])
    pq.write_table(table.slice(5), shards[1])
    return shards


def main(work: Path) -> None:
    shards = write_shards(work / "shards")
    out = work / "dedup"
    result = CliRunner().invoke(cli, ["dedup", *map(str, shards), "--out", str(out),
                                      "--write", "kept,annotated",
                                      "--workers", "1", "--quiet"])
    if result.exit_code != 0:
        sys.exit(result.output)
    for shard in shards:
        kept = pq.read_table(out / "kept" / shard.name)
        print(f"{shard.name}: {pq.read_metadata(shard).num_rows} rows in, {kept.num_rows} kept:",
              kept.select(["story", "source_site"]).to_pylist())
    annotated = pq.read_table(out / "annotated" / shards[1].name)
    print("why:", annotated.select(["story", "neardup_kept", "neardup_reason"]).to_pylist())


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
