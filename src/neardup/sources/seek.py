"""Reading a few documents again, by the ``(source, offset)`` a batch run recorded for them.

A report shows the texts of a bounded number of documents of a run that may hold millions; it
reads them back from the inputs instead of keeping every text. In a WARC or ARC file a recorded
offset is where a record (or the gzip member holding it) starts: reading resumes there and stops
once the reader has passed that member, so the cost is that of the records shown, not of the
file. Other formats (JSONL lines, Parquet rows, loose files) are read from their start, once per
file, keeping the documents at the wanted offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from neardup.document import Document
from neardup.sources.context import Media, ReadContext
from neardup.sources.reader import open_sources
from neardup.sources.sniff import read_head, sniff
from neardup.sources.stats import SourceStats
from neardup.sources.warc import read_archive_from

__all__ = ["documents_at"]

#: Documents read past a wanted offset before giving up on it (a gzip member holding many
#: records reports its own start as every record's offset).
MAX_RECORDS_PER_OFFSET = 10_000


def documents_at(path: str, offsets: Iterable[int], media: Media = "html") -> Iterator[Document]:
    """The documents of ``path`` whose recorded offset is one of ``offsets`` (revisit records
    included, as empty documents). Raises ``OSError`` when the file cannot be read."""
    wanted = sorted(set(offsets))
    with open(path, "rb") as raw:
        found = sniff(read_head(raw), path, explicit=True)
    if found.fmt not in ("warc", "arc"):
        keep = set(wanted)
        with open_sources([path], media=media) as reader:
            yield from (doc for doc in reader if doc.offset in keep)
        return
    ctx = ReadContext(SourceStats(), media=media)
    for offset in wanted:
        records = read_archive_from(path, found.fmt, found.gz, ctx, offset)
        for read, doc in enumerate(records):
            if doc.offset > offset or read >= MAX_RECORDS_PER_OFFSET:
                break
            if doc.offset == offset:
                yield doc
