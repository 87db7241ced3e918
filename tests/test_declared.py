"""Hosts for loose HTML files: the URL a page declares (canonical, og:url, base), read from real
files, counted when absent, and seen by per-host template removal."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.sources import open_sources
from neardup.sources.declared import HEAD_BYTES, declared_host, declared_url
from neardup.sources.fields import host_of


def page(head: str, body: str = "<p>text</p>") -> bytes:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>".encode()


def test_canonical_wins_over_og_url_over_base() -> None:
    canonical = '<link href="https://News.Example.org/a?x=1&amp;y=2" rel="canonical">'
    og = "<meta content='https://og.example.net/b' property='og:url'>"
    base = "<base href=https://base.example.com/>"
    assert declared_url(page(base + og + canonical)) == "https://News.Example.org/a?x=1&y=2"
    assert declared_host(page(base + og + canonical)) == "news.example.org"
    assert declared_url(page(base + og)) == "https://og.example.net/b"
    assert declared_url(page(base)) == "https://base.example.com/"
    assert declared_url(page('<META NAME="og:url" CONTENT="http://n.example/c" />')) == \
        "http://n.example/c"
    assert declared_url(page('<link rel="alternate canonical" href="https://r.example/">')) == \
        "https://r.example/"


def test_what_is_not_a_declaration() -> None:
    assert declared_url(page("<title>none</title>")) is None
    assert declared_url(b"plain text, no markup at all") is None
    assert declared_url(b"") is None
    # relative and non-web URLs name no host: the next declaration is taken
    assert declared_url(page('<link rel="canonical" href="/story/1">'
                             '<meta property="og:url" content="https://ok.example/1">')) == \
        "https://ok.example/1"
    assert declared_url(page('<link rel="canonical" href="ftp://files.example/x">')) is None
    assert declared_url(page('<link rel="stylesheet" href="https://cdn.example/s.css">')) is None
    assert declared_url(page('<!-- <link rel="canonical" href="https://old.example/"> -->')) is None
    # after the head, a canonical link is some other page's (an embedded snippet, a quote)
    assert declared_url(page("", '<link rel="canonical" href="https://body.example/">')) is None
    late = b"<html><head>" + b" " * HEAD_BYTES + b'<link rel="canonical" href="https://x.example/">'
    assert declared_url(late) is None


def test_real_pages_declare_their_own_host(shared_data: Path) -> None:
    """On the trafilatura evaluation pages, the declared host is the host each page was saved
    from (its URL in evaldata.json), except on pages whose canonical link names the original of a
    syndicated story: those must stay rare."""
    root = shared_data / "html" / "trafilatura-eval"
    urls = {entry["file"]: url for url, entry in
            json.loads((root / "evaldata.json").read_text()).items()}
    found = agree = 0
    paths = sorted((root / "pages").glob("*.html.gz"))[:200]
    for path in paths:
        true_host = host_of(urls.get(path.name.removesuffix(".gz")))
        host = declared_host(gzip.decompress(path.read_bytes()))
        if host is None or true_host is None:
            continue
        found += 1
        agree += host.removeprefix("www.") == true_host.removeprefix("www.")
    assert found >= 0.8 * len(paths)
    assert agree >= 0.95 * found


FRAME = ("<nav>Home | World | Sports | Business | Culture | Opinion | Weather | Contact us</nav>"
         "<p>{story}</p><footer>Copyright The Daily Example, all rights reserved, subscribe "
         "to our newsletter for the latest news</footer>")


def write_site(folder: Path, pages: int) -> list[Path]:
    folder.mkdir()
    paths = []
    for number in range(pages):
        head = f'<link rel="canonical" href="https://daily.example/story/{number}">'
        story = " ".join(f"word{number}x{i}" for i in range(60))
        path = folder / f"story{number}.html"
        path.write_bytes(page(head, FRAME.format(story=story)))
        paths.append(path)
    (folder / "bare.html").write_bytes(page("<title>no address</title>", "<p>alone</p>"))
    (folder / "notes.txt").write_text("a text file has no host and is not a page\n")
    return paths


def test_loose_files_get_the_declared_host_and_hostless_pages_are_counted(tmp_path: Path) -> None:
    write_site(tmp_path / "site", 3)
    reader = open_sources([str(tmp_path / "site")])
    docs = list(reader)
    hosts = {Path(doc.id).name: doc.host for doc in docs}
    assert hosts == {"story0.html": "daily.example", "story1.html": "daily.example",
                     "story2.html": "daily.example", "bare.html": None, "notes.txt": None}
    assert all(doc.url is None for doc in docs)
    assert reader.stats.pages_without_host == 1
    assert reader.stats.as_dict()["pages_without_host"] == 1


def test_dedup_learns_templates_of_loose_files_and_says_which_pages_have_no_host(
        tmp_path: Path) -> None:
    write_site(tmp_path / "site", 12)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["dedup", str(tmp_path / "site"), "--out", str(out),
                                      "--workers", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sources"]["pages_without_host"] == 1
    assert summary["templates"]["hosts"] == 1
    assert summary["templates"]["hosts_with_enough_pages"] == 1
    assert summary["templates"]["template_shingles"] > 0
    assert "templates: not removed from 1 page without a host" in result.output
    quiet = CliRunner().invoke(cli, ["dedup", str(tmp_path / "site"), "--out", str(out / "n"),
                                     "--workers", "1", "--no-templates"],
                               catch_exceptions=False)
    assert "without a host" not in quiet.output
