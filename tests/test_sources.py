"""neardup.sources: WARC/ARC/JSONL/Parquet/files/stdin readers, on real and generated inputs."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from neardup.document import Document
from neardup.errors import ConfigError
from neardup.sources import SKIP_REASONS, SourceReader, SourceStats, open_sources
from neardup.sources.fields import clean_url, host_of, normalize_date
from neardup.sources.http import dechunk, decode_body, parse_http_head
from neardup.sources.stats import MAX_ERROR_LINES

ENGINES = ("fastwarc", "python")

# Documents each real file yields, and its skip counts (``non-response`` left out), found by
# inspection: e.g. archive-org-2008 has 94 text/html + 36 text/plain 200 responses, one of them
# empty; iana-revisits has 16 text/html 200 responses and its 123 revisits all repeat CSS, JS,
# SVG or octet-stream captures; the ARC file is the same crawl as the WARC/0.17 file.
EXPECTED: dict[str, tuple[int, dict[str, int]]] = {
    "archive-org-2008-warc017.warc.gz": (129, {"not-200": 47, "not-html": 122, "empty-payload": 1}),
    "archive-org-2008.arc.gz": (129, {"not-200": 47, "not-html": 122, "empty-payload": 1}),
    "clueweb09-lf-only-headers.warc.gz": (23, {}),
    "clueweb12-one-shop-site.warc.gz": (29, {}),
    "commoncrawl-2015-excerpt.warc.gz": (12, {"empty-payload": 2, "not-html": 4}),
    "commoncrawl-2020-excerpt.warc.gz": (16, {}),
    "dupes-revisits.warc.gz": (2, {"not-200": 1, "not-html": 1, "revisit-unresolved": 8}),
    "iana-revisits.warc.gz": (16, {"not-200": 4, "not-html": 28, "revisit-of-skipped": 123}),
    "wayback-mementos.warc.gz": (128, {}),
    "malformed/bad.arc": (0, {"bad-record": 3, "bad-http": 1}),
    "malformed/clipped.warc.gz": (0, {"truncated-record": 1}),
    "malformed/example-bad-non-chunked.warc.gz": (2, {}),
    "malformed/example-bad.warc.gz.bad": (2, {"not-200": 1}),
    "malformed/example-iana.org-chunked.warc": (1, {}),
    "malformed/example-resource.warc.gz": (1, {}),
    "malformed/example-space-in-target-uri.warc.gz": (0, {"not-html": 1}),
    "malformed/example-trunc.warc": (1, {"bad-record": 1}),
    "malformed/example-wget-bad-target-uri.warc.gz": (1, {"not-web-uri": 2}),
    "malformed/example-wrong-chunks.warc.gz": (1, {}),
}


def read(paths: Iterable[str | Path], **options: object) -> tuple[list[Document], SourceStats]:
    reader = open_sources([str(p) for p in paths], **options)  # type: ignore[arg-type]
    docs = list(reader)
    return docs, reader.stats


def record_level_total(docs: list[Document], stats: SourceStats) -> int:
    file_level = {"unreadable-file", "no-match", "unknown-format", "binary", "unsupported-stdin"}
    return len(docs) + sum(n for reason, n in stats.skipped.items() if reason not in file_level)


# -- generated WARC files -----------------------------------------------------------------


def warc_record(
    wtype: str, block: bytes, nl: bytes = b"\r\n", version: str = "WARC/1.0", **fields: str
) -> bytes:
    lines = [version, f"WARC-Type: {wtype}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in fields.items()]
    lines.append(f"Content-Length: {len(block)}")
    return nl.join(line.encode() for line in lines) + nl + nl + block + nl + nl


def http(body: bytes, status: int = 200, nl: bytes = b"\r\n", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return nl.join(line.encode() for line in lines) + nl + nl + body


def response(n: int, body: bytes, status: int = 200, **headers: str) -> bytes:
    return warc_record(
        "response",
        http(body, status, **headers),
        WARC_Record_ID=f"<urn:test:{n}>",
        WARC_Target_URI=f"http://Example.COM:8080/page{n}",
        WARC_Date=f"2020-01-0{n % 9 + 1}T10:00:00Z",
        WARC_Payload_Digest=f"sha1:DIGEST{n}",
        Content_Type="application/http; msgtype=response",
    )


def write_gz_members(path: Path, records: Iterable[bytes]) -> Path:
    path.write_bytes(b"".join(gzip.compress(r) for r in records))
    return path


PAGE = b"<!doctype html><html><body><p>hello world</p></body></html>"


def test_shared_data_table_lists_every_file(shared_data: Path) -> None:
    root = shared_data / "warc"
    found = {
        str(p.relative_to(root))
        for p in [*root.glob("*"), *root.glob("malformed/*")]
        if p.is_file()
    }
    assert found == set(EXPECTED)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file_read_to_the_end(shared_data: Path, name: str, engine: str) -> None:
    docs, stats = read([shared_data / "warc" / name], warc_engine=engine)
    n_docs, reasons = EXPECTED[name]
    assert len(docs) == n_docs
    assert {k: v for k, v in stats.skipped.items() if k != "non-response"} == reasons
    assert stats.documents == n_docs
    assert stats.files == 1
    assert record_level_total(docs, stats) == stats.records
    assert len({d.id for d in docs}) == len(docs)
    for doc in docs:
        assert doc.kind in ("html", "text")
        assert doc.url and doc.url.startswith("http")
        assert doc.source == str(shared_data / "warc" / name)
        assert doc.raw or doc.revisit_of


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fastwarc_and_python_readers_agree(shared_data: Path, name: str) -> None:
    fast, fast_stats = read([shared_data / "warc" / name], warc_engine="fastwarc")
    slow, slow_stats = read([shared_data / "warc" / name], warc_engine="python")
    assert fast == slow
    assert fast_stats.records == slow_stats.records


def test_payloads_match_their_warc_digests(shared_data: Path) -> None:
    """An independent check of payload extraction: sha1(raw) equals WARC-Payload-Digest."""
    for name in ("archive-org-2008-warc017.warc.gz", "commoncrawl-2020-excerpt.warc.gz"):
        path = shared_data / "warc" / name
        digests = {}
        for line in gzip.decompress(path.read_bytes()).split(b"\r\n\r\n"):
            fields = dict(
                part.split(": ", 1) for part in line.decode("latin-1").split("\r\n") if ": " in part
            )
            if "WARC-Payload-Digest" in fields:
                digests[fields["WARC-Record-ID"].strip("<>")] = fields["WARC-Payload-Digest"]
        docs, _ = read([path])
        for doc in docs:
            sha1 = base64.b32encode(hashlib.sha1(doc.raw).digest()).decode()
            assert digests[doc.id] == f"sha1:{sha1}"


def test_offsets_point_at_the_gzip_member_of_the_record(shared_data: Path) -> None:
    path = shared_data / "warc" / "iana-revisits.warc.gz"
    data = path.read_bytes()
    for engine in ENGINES:
        docs, _ = read([path], warc_engine=engine)
        for doc in docs:
            record = zlib.decompressobj(31).decompress(data[doc.offset :])
            assert record.startswith(b"WARC/1.0\r\n")
            assert f"<{doc.id}>".encode() in record[:1000]


def test_iana_revisits_repeat_only_skipped_captures(shared_data: Path) -> None:
    _, stats = read([shared_data / "warc" / "iana-revisits.warc.gz"])
    assert stats.revisits == 123
    assert stats.revisits_linked == 0
    assert stats.skipped["revisit-of-skipped"] == 123


def test_revisits_link_to_yielded_documents_across_files(shared_data: Path) -> None:
    warc = shared_data / "warc"
    docs, stats = read([warc / "iana-revisits.warc.gz", warc / "dupes-revisits.warc.gz"])
    by_id = {d.id: d for d in docs}
    revisits = [d for d in docs if d.is_revisit]
    assert stats.revisits == 123 + 9
    assert len(revisits) == stats.revisits_linked == 2
    for doc in revisits:
        assert doc.raw == b""
        original = by_id[doc.revisit_of]  # type: ignore[index]
        assert not original.is_revisit
        assert original.kind == doc.kind == "html"
    assert {d.url for d in revisits} == {"http://www.iana.org/", "http://example.com"}


def test_revisit_in_the_same_file(shared_data: Path) -> None:
    docs, stats = read([shared_data / "warc" / "dupes-revisits.warc.gz"])
    assert stats.revisits_linked == 1
    original, revisit = docs
    assert revisit.revisit_of == original.id == "urn:uuid:40eec527-440d-4541-8b9c-694d3bf3b5db"
    assert revisit.fetched == "2014-01-27T17:12:51Z"


def test_clueweb09_lf_only_headers(shared_data: Path) -> None:
    docs, _ = read([shared_data / "warc" / "clueweb09-lf-only-headers.warc.gz"])
    assert len(docs) == 23
    for doc in docs:
        assert doc.url is not None and doc.url.startswith("http://")
        assert doc.host is not None and doc.host in doc.url
        assert doc.fetched is not None
        assert doc.fetched.startswith("2009-03-65T08:43:")  # not a date: kept as written
    assert docs[0].raw.startswith(b"<head>")


def test_clueweb12_lf_http_heads_and_false_gzip_claim(shared_data: Path) -> None:
    docs, _ = read([shared_data / "warc" / "clueweb12-one-shop-site.warc.gz"])
    for doc in docs:
        assert doc.raw.startswith(b"<html>")  # Content-Encoding: gzip, body stored plain
        assert doc.charset == "euc-jp"


def test_arc_yields_the_same_pages_as_the_warc_of_the_same_crawl(shared_data: Path) -> None:
    warc = shared_data / "warc"
    arc_docs, _ = read([warc / "archive-org-2008.arc.gz"])
    warc_docs, _ = read([warc / "archive-org-2008-warc017.warc.gz"])
    assert [(d.url, d.raw, d.kind, d.fetched) for d in arc_docs] == [
        (d.url, d.raw, d.kind, d.fetched) for d in warc_docs
    ]
    first = arc_docs[0]
    assert first.id == f"{warc / 'archive-org-2008.arc.gz'}:{first.offset}"
    assert first.url == "http://www.archive.org/robots.txt" and first.kind == "text"


def test_wayback_mementos_are_captures_without_http(shared_data: Path) -> None:
    docs, _ = read([shared_data / "warc" / "wayback-mementos.warc.gz"])
    first = docs[0]
    assert first.host == "web.archive.org"
    assert first.fetched == "2011-01-11T14:58:35Z"  # WARC-Date is "null": Memento-Datetime
    assert first.extra["original-url"] == (
        "http://catalogue.horse21.nl:80/aruba+hotels/oranjestad+hotels"
    )


def test_commoncrawl_truncated_records_are_marked(shared_data: Path) -> None:
    docs, _ = read([shared_data / "warc" / "commoncrawl-2015-excerpt.warc.gz"])
    cut = [d for d in docs if d.extra.get("truncated") == "length"]
    assert cut and all(len(d.raw) <= 1 << 20 for d in cut)


def test_malformed_files_keep_their_good_records(shared_data: Path) -> None:
    bad = shared_data / "warc" / "malformed"
    docs, stats = read([bad / "example-trunc.warc"])
    assert [d.url for d in docs] == ["http://example.com/"]
    assert docs[0].raw.startswith(b"<!doctype html>")  # Content-Encoding: gzip undone
    assert any("FastWARC stopped" in e for e in stats.errors)
    assert stats.records == 5  # 2 warcinfo, response, the damage, request

    docs, _ = read([bad / "example-wget-bad-target-uri.warc.gz"])
    assert docs[0].url == "http://example.com/" and docs[0].host == "example.com"

    docs, _ = read([bad / "example-iana.org-chunked.warc"])
    assert docs[0].raw.startswith(b"<!doctype html>") and docs[0].raw.endswith(b"</html>\n")

    docs, _ = read([bad / "example-resource.warc.gz"])
    assert docs[0].kind == "html" and docs[0].charset == "utf-8"

    docs, stats = read([bad / "clipped.warc.gz"])
    assert docs == [] and "truncated" in stats.errors[0]

    docs, _ = read([bad / "example-bad.warc.gz.bad"])  # a gzipped WARC, whatever its name
    assert [d.revisit_of for d in docs] == [None, docs[0].id]


def test_whole_warc_directory_in_one_pass(shared_data: Path) -> None:
    docs, stats = read([shared_data / "warc"])
    assert len(docs) == sum(n for n, _ in EXPECTED.values())
    assert stats.files == len(EXPECTED)
    assert record_level_total(docs, stats) == stats.records


# -- generated archives -----------------------------------------------------------------


def synthetic_warc() -> list[bytes]:
    chunked = b"5\r\n<html\r\n9\r\n>chunked<\r\n0\r\n\r\n"
    revisit = "application/http; msgtype=response"
    return [
        warc_record("warcinfo", b"software: test\r\n", WARC_Record_ID="<urn:test:0>"),
        response(1, PAGE, Content_Type="text/html; charset=ISO-8859-1"),
        response(2, chunked, Content_Type="text/html", Transfer_Encoding="chunked"),
        response(3, gzip.compress(PAGE), Content_Type="text/html", Content_Encoding="gzip"),
        response(4, PAGE),  # no Content-Type: sniffed
        response(5, b"body { color: red }", Content_Type="text/css"),
        response(6, PAGE, status=404, Content_Type="text/html"),
        response(7, b"", Content_Type="text/html"),
        response(8, b"plain words", Content_Type="text/plain"),
        warc_record(
            "revisit",
            http(b"", Content_Type="text/html"),
            WARC_Record_ID="<urn:test:9>",
            WARC_Target_URI="http://example.com/again",
            WARC_Date="2021-01-01T00:00:00Z",
            WARC_Refers_To="<urn:test:1>",
            Content_Type=revisit,
        ),
        warc_record(  # resolved by target URI + date
            "revisit",
            b"",
            WARC_Record_ID="<urn:test:10>",
            WARC_Target_URI="http://example.com/again",
            WARC_Refers_To_Target_URI="http://Example.COM:8080/page8",
            WARC_Refers_To_Date="2020-01-09T10:00:00Z",
        ),
        warc_record(  # of the CSS capture
            "revisit", b"", WARC_Record_ID="<urn:test:11>", WARC_Payload_Digest="sha1:DIGEST5"
        ),
        warc_record("revisit", b"", WARC_Record_ID="<urn:test:12>", WARC_Refers_To="<urn:x>"),
        warc_record(
            "resource",
            b"<html>res</html>",
            WARC_Record_ID="<urn:test:13>",
            WARC_Target_URI=" <file:///a page.html> ",
            Content_Type="text/html",
        ),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_generated_warc_decisions(tmp_path: Path, engine: str) -> None:
    path = write_gz_members(tmp_path / "s.warc.gz", synthetic_warc())
    docs, stats = read([path], warc_engine=engine, sweep="2020-01")
    by_id = {d.id: d for d in docs}
    assert sorted(by_id) == sorted(f"urn:test:{n}" for n in (1, 2, 3, 4, 8, 9, 10, 13))
    assert by_id["urn:test:1"].charset == "iso-8859-1"
    assert by_id["urn:test:1"].host == "example.com"
    assert by_id["urn:test:1"].url == "http://Example.COM:8080/page1"
    assert by_id["urn:test:2"].raw == b"<html>chunked<"
    assert by_id["urn:test:3"].raw == PAGE
    assert by_id["urn:test:4"].kind == "html"
    assert by_id["urn:test:8"].kind == "text"
    assert by_id["urn:test:9"].revisit_of == "urn:test:1"
    assert by_id["urn:test:10"].revisit_of == "urn:test:8"
    assert by_id["urn:test:10"].kind == "text"
    assert by_id["urn:test:13"].url == "file:///a%20page.html"
    assert all(d.sweep == "2020-01" for d in docs)
    assert dict(stats.skipped) == {
        "non-response": 1,
        "not-html": 1,
        "not-200": 1,
        "empty-payload": 1,
        "revisit-of-skipped": 1,
        "revisit-unresolved": 1,
    }
    assert (stats.revisits, stats.revisits_linked) == (4, 2)
    assert record_level_total(docs, stats) == stats.records == 14


@pytest.mark.parametrize("engine", ENGINES)
def test_corrupt_gzip_member_loses_only_its_record(tmp_path: Path, engine: str) -> None:
    members = [gzip.compress(response(n, PAGE, Content_Type="text/html")) for n in range(1, 6)]
    broken = bytearray(members[2])
    broken[len(broken) // 2 : len(broken) // 2 + 8] = b"\xff" * 8
    members[2] = bytes(broken)
    path = tmp_path / "c.warc.gz"
    path.write_bytes(b"".join(members[:4]) + b"junk between members" + members[4])
    docs, stats = read([path], warc_engine=engine)
    assert [d.id for d in docs] == ["urn:test:1", "urn:test:2", "urn:test:4", "urn:test:5"]
    assert stats.skipped["bad-record"] == 2
    assert record_level_total(docs, stats) == stats.records


@pytest.mark.parametrize("engine", ENGINES)
def test_garbage_and_wrong_lengths_in_plain_warc(tmp_path: Path, engine: str) -> None:
    good = [response(n, PAGE, Content_Type="text/html") for n in range(1, 4)]
    short = response(9, PAGE, Content_Type="text/html")
    length = int(short.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    short = short.replace(b"Content-Length: %d" % length, b"Content-Length: %d" % (length - 2))
    path = tmp_path / "g.warc"
    path.write_bytes(good[0] + b"some garbage\r\nmore\r\n" + good[1] + short + good[2])
    docs, stats = read([path], warc_engine=engine)
    assert [d.id for d in docs] == ["urn:test:1", "urn:test:2", "urn:test:9", "urn:test:3"]
    assert stats.skipped["bad-record"] == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_lf_only_and_old_warc_versions(tmp_path: Path, engine: str) -> None:
    records = [
        warc_record(
            "response",
            http(PAGE, nl=b"\n", Content_Type="text/html"),
            nl=b"\n",
            version="WARC/0.18",
            WARC_Target_URI="http://lf.example/",
            WARC_Record_ID="<urn:lf:1>",
            Content_Type="application/http;msgtype=response",
        )
    ]
    path = write_gz_members(tmp_path / "lf.warc.gz", records * 2)
    docs, _ = read([path], warc_engine=engine)
    assert [d.raw for d in docs] == [PAGE, PAGE]


def test_max_bytes_cuts_payloads_and_counts_them(tmp_path: Path) -> None:
    big = b"<html>" + b"x" * 5000
    path = write_gz_members(tmp_path / "big.warc.gz", [response(1, big, Content_Type="text/html")])
    for engine in ENGINES:
        docs, stats = read([path], warc_engine=engine, max_bytes=1000)
        assert docs[0].raw == big[:1000]
        assert stats.truncated_payloads == 1 and not stats.skipped.get("truncated-record")
    with pytest.raises(ConfigError, match="max_bytes"):
        open_sources([], max_bytes=0)


def test_clipped_gzip_yields_complete_records_only(tmp_path: Path) -> None:
    data = b"".join(gzip.compress(response(n, PAGE, Content_Type="text/html")) for n in (1, 2))
    path = tmp_path / "clip.warc.gz"
    path.write_bytes(data[: len(data) - 40])
    for engine in ENGINES:
        docs, stats = read([path], warc_engine=engine)
        assert [d.id for d in docs] == ["urn:test:1"]
        assert stats.skipped["truncated-record"] == 1


def test_arc_v1_with_bad_headers(tmp_path: Path) -> None:
    body = http(PAGE, Content_Type="text/html")
    desc = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n\n"
    arc = (
        b"filedesc://t.arc 0.0.0.0 20200101000000 text/plain %d\n" % len(desc)
        + desc
        + b"\n"
        + f"http://a.example/ 1.2.3.4 20200102030405 text/html {len(body)}\n".encode()
        + body
        + b"\nhttp://b.example/ 1.2.3.4 20200102030405 text/html nonsense\n\n"
        + f"http://c.example/x 1.2.3.4 20200102030406 text/html {len(body)}\n".encode()
        + body
        + b"\n"
    )
    path = write_gz_members(tmp_path / "t.arc.gz", [arc])
    docs, stats = read([path])
    assert [(d.url, d.fetched) for d in docs] == [
        ("http://a.example/", "2020-01-02T03:04:05Z"),
        ("http://c.example/x", "2020-01-02T03:04:06Z"),
    ]
    assert [d.id for d in docs] == [f"{path}:0:1", f"{path}:0:2"]  # one gzip member
    assert stats.skipped["bad-record"] == 1


def test_arc_v2_headers(tmp_path: Path) -> None:
    body = http(PAGE, Content_Type="text/html")
    desc = b"2 0 Test\nURL IP-address Archive-date Content-type Result-code Checksum Location "
    desc += b"Offset Filename Archive-length\n"
    head = "http://v2.example/ 1.2.3.4 20200102030405 text/html 200 - - 0 t.arc {}\n"
    records = [
        b"filedesc://t.arc 0.0.0.0 20200101000000 text/plain 200 - - 0 t.arc %d\n" % len(desc)
        + desc
        + b"\n",
        head.format(len(body)).encode() + body + b"\n",
    ]
    path = write_gz_members(tmp_path / "v2.arc.gz", records)
    docs, _ = read([path])
    assert [(d.url, d.raw, d.id) for d in docs] == [
        ("http://v2.example/", PAGE, f"{path}:{len(gzip.compress(records[0]))}")
    ]


# -- JSONL, Parquet, loose files, stdin -----------------------------------------------------


JSONL_LINES = [
    {"id": "a", "text": "first text", "url": " <https://X.org/a> ", "date": "2020-05-01", "n": 3},
    {"html": "<p>second</p>", "fetched": 1600000000, "flag": True, "tags": ["x"]},
    {"url": "https://x.org/none"},
    {"id": 7, "text": ""},
    {"id": "b", "text": "\u00e9t\u00e9", "sweep": "s1", "long": "y" * 2000},
]


def write_jsonl(path: Path, rows: list[object], extra_lines: Iterable[str] = ()) -> Path:
    text = "\n".join([json.dumps(r) for r in rows] + list(extra_lines)) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def check_jsonl_docs(docs: list[Document], source: str) -> None:
    assert [d.id for d in docs] == ["a", f"{source}:2", "b"]
    first, second, third = docs
    assert (first.kind, first.raw, first.url, first.host) == (
        "text",
        b"first text",
        "https://X.org/a",
        "x.org",
    )
    assert first.fetched == "2020-05-01T00:00:00Z" and first.extra == {"n": "3"}
    assert (second.kind, second.raw, second.offset) == ("html", b"<p>second</p>", 2)
    assert second.fetched == "2020-09-13T12:26:40Z" and second.extra == {"flag": "true"}
    assert third.raw == "\u00e9t\u00e9".encode() and third.charset == "utf-8"
    assert third.sweep == "s1" and "long" not in third.extra


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz"])
def test_jsonl(tmp_path: Path, name: str) -> None:
    path = write_jsonl(tmp_path / name, JSONL_LINES, ["{broken", "[1, 2]", ""])
    docs, stats = read([path])
    check_jsonl_docs(docs, str(path))
    assert dict(stats.skipped) == {"missing-text": 1, "empty-payload": 1, "json-error": 2}
    assert stats.records == 7
    assert any(f"{path}: line 6:" in e for e in stats.errors)


def test_jsonl_truncated_gzip(tmp_path: Path) -> None:
    rows = [{"text": f"row {n} " * 50} for n in range(50)]
    data = gzip.compress("\n".join(json.dumps(r) for r in rows).encode())
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    docs, stats = read([path])
    assert 0 < len(docs) < 50
    assert stats.skipped["truncated-record"] == 1


def test_parquet_in_batches(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    keys = ("text", "html", "url", "date", "n")
    rows = [
        {"id": None if r.get("id") is None else str(r["id"])} | {k: r.get(k) for k in keys}
        for r in JSONL_LINES
    ]
    table = pa.Table.from_pylist(rows * 300)
    table = table.append_column("tags", pa.array([["a"]] * table.num_rows))
    path = tmp_path / "c.parquet"
    pq.write_table(table, path, row_group_size=500)
    docs, stats = read([path])
    assert len(docs) == 3 * 300 and stats.records == 5 * 300
    assert docs[1].id == f"{path}:1" and docs[1].offset == 1 and docs[1].kind == "html"
    assert docs[0].extra == {"n": "3"}
    assert docs[-1].offset == 5 * 300 - 1
    assert stats.skipped == {"missing-text": 300, "empty-payload": 300}
    binary = tmp_path / "b.parquet"
    pq.write_table(pa.table({"html": pa.array([b"<p>raw</p>"], pa.binary())}), binary)
    docs, _ = read([binary])
    assert docs[0].raw == b"<p>raw</p>" and docs[0].charset is None
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    docs, stats = read([broken])
    assert docs == [] and stats.skipped == {"unreadable-file": 1}


def test_files_and_directories(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    (root / "b" / "deeper").mkdir(parents=True)
    (root / "a.html").write_bytes(PAGE)
    (root / "b" / "c.htm.gz").write_bytes(gzip.compress(PAGE))
    (root / "b" / "deeper" / "d.txt").write_text("plain text file\n")
    (root / "b" / "page-without-extension.gz").write_bytes(gzip.compress(PAGE))
    (root / "b" / "notes.md").write_text("# not a page\n")
    (root / "b" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (root / "b" / "empty.txt").write_bytes(b"")
    (root / ".hidden.html").write_bytes(PAGE)
    docs, stats = read([root])
    assert [Path(d.id).relative_to(root).as_posix() for d in docs] == [
        "a.html",
        "b/c.htm.gz",
        "b/deeper/d.txt",
        "b/page-without-extension.gz",
    ]
    assert [d.kind for d in docs] == ["html", "html", "text", "html"]
    assert docs[1].raw == PAGE and docs[0].url is None and docs[0].id == docs[0].source
    assert dict(stats.skipped) == {"unknown-format": 1, "binary": 1, "empty-payload": 1}
    named = tmp_path / "README"
    named.write_text("named on the command line: read as text\n")
    docs, _ = read([named, str(root / "*.html")])
    assert [d.kind for d in docs] == ["text", "html"]


def test_a_file_named_again_is_read_once(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    root.mkdir()
    (root / "a.html").write_bytes(PAGE)
    (root / "b.html").write_bytes(PAGE.replace(b"<body>", b"<body><p>b</p>"))
    os.link(root / "b.html", tmp_path / "hard.html")
    docs, stats = read([root / "a.html", root, str(root / "*.html"), tmp_path / "hard.html",
                        root / "a.html"])
    assert [Path(d.id).name for d in docs] == ["a.html", "b.html"]
    assert dict(stats.skipped) == {"repeated-input": 5} and stats.files == 2
    assert stats.errors == [f"{root / 'a.html'}: named again, read once",
                            f"{root / 'a.html'}: named again, read once",
                            f"{root / 'b.html'}: named again, read once",
                            f"{tmp_path / 'hard.html'}: the same file as {root / 'b.html'}, "
                            "read once",
                            f"{root / 'a.html'}: named again, read once"]
    same = str(root / "a.html")
    reader = open_sources([same, same])  # one string object twice
    assert len(list(reader)) == 1 and dict(reader.stats.skipped) == {"repeated-input": 1}


def test_missing_paths_are_counted_not_raised(tmp_path: Path) -> None:
    good = tmp_path / "ok.txt"
    good.write_text("ok")
    docs, stats = read([tmp_path / "missing.warc.gz", tmp_path / "nothing*.jsonl", good])
    assert [d.raw for d in docs] == [b"ok"]
    assert dict(stats.skipped) == {"unreadable-file": 1, "no-match": 1}
    assert stats.errors[0].startswith(f"{tmp_path / 'missing.warc.gz'}: cannot read")
    assert stats.files == 1


def stdin_with(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_formats(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    warc = b"".join(gzip.compress(r) for r in synthetic_warc())
    stdin_with(monkeypatch, warc)
    docs, stats = read(["-"])
    assert len(docs) == 8 and docs[0].source == "-" and stats.files == 1
    assert docs[0].offset == len(gzip.compress(synthetic_warc()[0]))

    stdin_with(monkeypatch, write_jsonl(tmp_path / "x.jsonl", JSONL_LINES).read_bytes())
    docs, _ = read(["-"])
    check_jsonl_docs(docs, "-")

    stdin_with(monkeypatch, gzip.compress(PAGE))
    docs, _ = read(["-"])
    assert [(d.id, d.kind, d.raw) for d in docs] == [("-", "html", PAGE)]

    stdin_with(monkeypatch, b"PAR1\x00\x00")
    docs, stats = read(["-"])
    assert docs == [] and stats.skipped == {"unsupported-stdin": 1}
    assert "Parquet cannot be read from stdin" in stats.errors[0]


# -- the reader object and the helpers ------------------------------------------------------


def test_reader_passes_reset_stats_and_close_early(tmp_path: Path) -> None:
    path = write_gz_members(tmp_path / "s.warc.gz", synthetic_warc())
    other = write_gz_members(tmp_path / "t.warc.gz", synthetic_warc())  # one file is read once
    reader = open_sources([str(path), str(other)])
    assert isinstance(reader, SourceReader)
    assert len(list(reader)) == 16 and reader.stats.files == 2
    first = list(reader)  # a second pass starts afresh
    assert len(first) == 16 and reader.stats.documents == 16
    with open_sources([str(path)]) as again:
        next(iter(again))
    summary = reader.stats.as_dict()
    assert json.loads(json.dumps(summary)) == summary
    assert set(reader.stats.skipped) <= set(SKIP_REASONS)


def test_error_lines_are_capped() -> None:
    stats = SourceStats()
    for n in range(MAX_ERROR_LINES + 5):
        stats.error(f"line {n}")
    assert len(stats.errors) == MAX_ERROR_LINES and stats.errors_dropped == 5


def test_field_helpers() -> None:
    assert clean_url(" <http://example.com/> ") == "http://example.com/"
    assert clean_url("file:///example with spaces.png") == "file:///example%20with%20spaces.png"
    assert clean_url("  ") is None
    assert host_of("http://User@WWW.Example.com:8080/x") == "www.example.com"
    assert host_of("dns:www.archive.org") is None and host_of("http://[::1") is None
    assert normalize_date("2014-01-26T20:06:24Z") == "2014-01-26T20:06:24Z"
    assert normalize_date("2009-03-05T08:43:19-0800") == "2009-03-05T16:43:19Z"
    assert normalize_date("20080430204825") == "2008-04-30T20:48:25Z"
    assert normalize_date("Tue, 11 Jan 2011 14:58:35 GMT") == "2011-01-11T14:58:35Z"
    assert normalize_date("2008-10-294T05:21:46-0700") == "2008-10-294T05:21:46-0700"
    assert normalize_date("null") is None


def test_http_helpers_tolerate_false_claims() -> None:
    assert dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n") == b"abcde"
    assert dechunk(b"<!doctype html>") == b"<!doctype html>"
    assert dechunk(b"5\r\nabc") == b"abc"
    head = parse_http_head(b"HTTP/1.1 200 OK\nContent-Type: text/html\n\nbody")
    assert head is not None and head.status == 200 and head.size == 41
    assert head.headers == {"content-type": "text/html"}
    assert parse_http_head(b"GET / HTTP/1.1\r\n\r\n") is None
    gz = {"content-encoding": "gzip"}
    assert decode_body(gzip.compress(b"abc"), gz, 100) == b"abc"
    assert decode_body(b"<html>not gzipped", gz, 100) == b"<html>not gzipped"
    assert decode_body(b"\x1f\x8b\x08garbage", gz, 100) is None
    assert decode_body(zlib.compress(b"abc"), {"content-encoding": "deflate"}, 100) == b"abc"
