"""Reading loose documents: one ``.html``/``.htm``/``.xhtml`` or ``.txt`` file (optionally ``.gz``)
is one document.

The document id is the path as found (the path given, or joined under the directory given);
``url`` is None — a ``file://`` URL would put every loose file on one pseudo-host in the URL and
host statistics — and ``fetched`` and ``charset`` are None (the text layer reads the charset
from the HTML). An HTML file's host is the one its head declares (``<link rel=canonical>``,
``og:url`` or ``<base href>``, :mod:`neardup.sources.declared`), so that per-host templates
see loose pages; without one it has none (counted in ``pages_without_host``). The declared URL
is not taken as the document's URL: nothing says the file was fetched from it. A gzip
stream that ends early gives no document (``truncated-record``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import BinaryIO, Final

from neardup.document import ContentKind, Document
from neardup.sources.context import ReadContext
from neardup.sources.declared import declared_host
from neardup.sources.location import open_binary

__all__ = ["read_file", "read_stream"]

_CHUNK: Final = 1 << 16


def read_file(
    path: str, source: str, gz: bool, kind: ContentKind, ctx: ReadContext
) -> Iterator[Document]:
    """The document in one file (``source`` is the path as found)."""
    with open_binary(path) as raw:
        yield from read_stream(raw, source, gz, kind, ctx)


def read_stream(
    raw: BinaryIO, source: str, gz: bool, kind: ContentKind, ctx: ReadContext
) -> Iterator[Document]:
    """The document in one byte stream (a file or stdin)."""
    ctx.stats.records += 1
    data = _read_gz(raw, ctx.max_bytes + 1, source, ctx) if gz else raw.read(ctx.max_bytes + 1)
    if data is None:
        return
    if not data:
        ctx.stats.skip("empty-payload")
        return
    data = ctx.cap(data)
    host = declared_host(data) if kind == "html" else None
    yield ctx.document(source, data, kind, url=None, source=source, offset=0, host=host)


def _read_gz(raw: BinaryIO, limit: int, source: str, ctx: ReadContext) -> bytes | None:
    """Decompress (all members) up to ``limit`` bytes; None when the stream is damaged or cut.

    Garbage after a complete member (padding) is ignored.
    """
    out = bytearray()
    engine = zlib.decompressobj(31)
    fed = members = 0
    pending = b""
    while len(out) < limit:
        data = pending or raw.read(_CHUNK)
        if not data:
            break
        try:
            out += engine.decompress(data, limit - len(out))
        except zlib.error as err:
            if members and not fed:
                return bytes(out)
            ctx.stats.skip("bad-record")
            ctx.stats.error(f"{source}: corrupt gzip data ({err})")
            return None
        fed += len(data)
        pending = engine.unconsumed_tail
        if engine.eof:
            pending = engine.unused_data
            engine, fed, members = zlib.decompressobj(31), 0, members + 1
    if len(out) < limit and fed:
        ctx.stats.skip("truncated-record")
        ctx.stats.error(f"{source}: gzip stream cut short")
        return None
    return bytes(out)
