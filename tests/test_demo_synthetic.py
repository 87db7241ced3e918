"""The synthetic crawl: a valid WARC, deterministic, with the duplicates it claims to plant."""

from __future__ import annotations

import gzip
import random
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator, WarcRecordType

from neardup.demo.synthetic import KINDS, PlantedTruth, generate_crawl
from neardup.demo.warcwriter import REVISIT_PROFILE, WarcWriter, sha1_digest
from neardup.errors import ConfigError

TAG = re.compile(r"<[^>]+>")
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Rec:
    kind: str
    record_id: str
    url: str
    payload: bytes
    headers: dict[str, str]
    block_ok: bool
    payload_ok: bool


@dataclass(frozen=True)
class Crawl:
    path: Path
    truth: PlantedTruth
    records: list[Rec]

    def payload(self, url: str) -> bytes:
        return next(r.payload for r in self.records if r.url == url and r.kind == "response")


def read_warc(path: Path) -> Iterator[Rec]:
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, parse_http=False):
            block_ok = record.verify_block_digest(consume=False)
            record.parse_http()
            headers = dict(record.headers.items())
            is_response = record.record_type == WarcRecordType.response
            payload_ok = is_response and record.verify_payload_digest(consume=False)
            yield Rec(
                headers["WARC-Type"],
                record.record_id or "",
                headers.get("WARC-Target-URI", ""),
                record.reader.read(),
                headers,
                block_ok,
                payload_ok,
            )


def shingles(html: bytes, w: int = 5) -> set[tuple[str, ...]]:
    words = WORD.findall(TAG.sub(" ", html.decode("utf-8")).lower())
    return {tuple(words[i : i + w]) for i in range(len(words) - w + 1)}


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    return len(a & b) / len(a | b)


def containment(part: set[tuple[str, ...]], whole: set[tuple[str, ...]]) -> float:
    return len(part & whole) / len(part)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    path = tmp_path_factory.mktemp("crawl") / "crawl.warc.gz"
    truth = generate_crawl(path)
    return Crawl(path, truth, list(read_warc(path)))


def test_warc_reads_back_with_valid_digests(crawl: Crawl) -> None:
    assert crawl.records[0].kind == "warcinfo"
    assert all(r.block_ok for r in crawl.records)
    responses = [r for r in crawl.records if r.kind == "response"]
    assert all(r.payload_ok for r in responses)
    assert all(r.url.startswith("http://") for r in responses)
    assert all(r.payload.startswith(b"<!DOCTYPE html>") for r in responses)
    assert all(r.headers["WARC-Payload-Digest"] == sha1_digest(r.payload) for r in responses)
    assert len({r.record_id for r in crawl.records}) == len(crawl.records)


def test_record_counts_match_truth(crawl: Crawl) -> None:
    kinds = [r.kind for r in crawl.records]
    truth = crawl.truth
    assert kinds.count("response") == truth.responses == 400
    assert kinds.count("revisit") == truth.revisits == truth.counts()["revisit"]
    grouped = {u for g in truth.groups for u in g.urls}
    urls = [r.url for r in crawl.records if r.kind == "response"]
    assert len(urls) == len(set(urls))
    assert set(urls) == grouped | set(truth.unrelated)
    assert not grouped & set(truth.unrelated)
    assert len(truth.unrelated) > truth.responses / 2
    assert 9 <= len(truth.hosts) <= 12


def test_every_kind_is_planted_and_ids_match(crawl: Crawl) -> None:
    by_id = {r.record_id: r for r in crawl.records}
    for kind in KINDS:
        assert any(g.kind == kind for g in crawl.truth.groups), kind
    for group in crawl.truth.groups:
        assert group.original == group.urls[0]
        assert [by_id[i].url for i in group.record_ids] == list(group.urls)


def test_revisits_refer_to_their_original(crawl: Crawl) -> None:
    by_id = {r.record_id: r for r in crawl.records}
    for group in (g for g in crawl.truth.groups if g.kind == "revisit"):
        original, revisit = (by_id[i] for i in group.record_ids)
        assert revisit.kind == "revisit" and original.kind == "response"
        assert revisit.headers["WARC-Profile"] == REVISIT_PROFILE
        assert revisit.headers["WARC-Refers-To"] == original.record_id
        assert revisit.headers["WARC-Refers-To-Target-URI"] == original.url
        assert revisit.headers["WARC-Payload-Digest"] == sha1_digest(original.payload)
        assert revisit.payload == b""


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    paths = [tmp_path / name / "crawl.warc.gz" for name in ("a", "b", "c")]
    for path in paths:
        path.parent.mkdir()
    truths = [generate_crawl(p, seed=s, pages=120) for p, s in zip(paths, (3, 3, 4), strict=True)]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
    assert truths[0].expected_pairs() == truths[1].expected_pairs()
    assert truths[0].responses == 120


def test_exact_copies_are_byte_identical(crawl: Crawl) -> None:
    for group in (g for g in crawl.truth.groups if g.kind == "exact"):
        payloads = {crawl.payload(u) for u in group.urls}
        assert len(payloads) == 1, group


@pytest.mark.parametrize("kind", ["mirror", "near", "lexical"])
def test_near_copies_resemble_their_original(crawl: Crawl, kind: str) -> None:
    for group in (g for g in crawl.truth.groups if g.kind == kind):
        original = shingles(crawl.payload(group.original))
        for url in group.urls[1:]:
            copy = crawl.payload(url)
            assert copy != crawl.payload(group.original)
            assert jaccard(original, shingles(copy)) >= 0.8, (group.detail, url)


def test_lexical_copies_have_the_same_words(crawl: Crawl) -> None:
    for group in (g for g in crawl.truth.groups if g.kind == "lexical"):
        a, b = (shingles(crawl.payload(u)) for u in group.urls)
        assert a == b


def test_contained_pages_contain_but_do_not_resemble(crawl: Crawl) -> None:
    for group in (g for g in crawl.truth.groups if g.kind == "contained"):
        part, whole = (shingles(crawl.payload(u)) for u in group.urls)
        assert containment(part, whole) >= 0.8
        assert jaccard(part, whole) < 0.8


def test_unrelated_pages_do_not_resemble_each_other(crawl: Crawl) -> None:
    rng = random.Random(0)
    sets = {u: shingles(crawl.payload(u)) for u in crawl.truth.unrelated}
    urls = sorted(sets)
    for _ in range(200):
        a, b = rng.sample(urls, 2)
        assert jaccard(sets[a], sets[b]) < 0.1, (a, b)


def test_expected_pairs_and_json(crawl: Crawl) -> None:
    truth = crawl.truth
    pairs = truth.expected_pairs()
    assert all(len(p) == 2 for p in pairs)
    assert not truth.expected_pairs(["revisit"])
    assert len(truth.expected_record_pairs(["revisit"])) == truth.revisits
    assert pairs == set().union(*truth.pairs_by_kind().values())
    assert PlantedTruth.from_json(truth.to_json()) == truth


def test_too_few_pages_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pages=10"):
        generate_crawl(tmp_path / "x.warc.gz", pages=10)


def test_writer_one_gzip_member_per_record_with_exact_lengths(tmp_path: Path) -> None:
    path = tmp_path / "w.warc.gz"
    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    with WarcWriter(path, seed=1) as warc:
        warc.write_warcinfo(when)
        rid = warc.write_response("http://a.example/", b"<p>hello</p>", when)
        warc.write_revisit(
            "http://a.example/", rid, "http://a.example/", when, sha1_digest(b"<p>hello</p>"), when
        )
    members, data = [], path.read_bytes()
    while data:
        inflater = zlib.decompressobj(wbits=31)
        members.append(inflater.decompress(data))
        data = inflater.unused_data
    assert len(members) == 3
    assert b"".join(members) == gzip.decompress(path.read_bytes())
    for member in members:
        head, _, rest = member.partition(b"\r\n\r\n")
        assert head.startswith(b"WARC/1.1\r\n") and b"\n" not in head.replace(b"\r\n", b"")
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        assert len(rest) == length + 4 and rest.endswith(b"\r\n\r\n")
    assert (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 12"
        b"\r\n\r\n<p>hello</p>" in members[1]
    )
    assert rid.startswith("<urn:uuid:") and rid.endswith(">")


def test_writer_refuses_header_injection(tmp_path: Path) -> None:
    with WarcWriter(tmp_path / "x.warc.gz") as warc, pytest.raises(ValueError, match="line break"):
        warc.write_response("http://a.example/\r\nX-Evil: 1", b"", datetime(2024, 1, 1, tzinfo=UTC))


def test_sha1_digest_is_base32() -> None:
    assert sha1_digest(b"") == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
