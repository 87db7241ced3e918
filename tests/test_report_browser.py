"""The report, the cluster browser and the service's /docs in a real headless Chromium
(Debian's /usr/bin/chromium driven by Playwright; never a downloaded browser). Every request
the pages make is recorded: none may leave the report's folder (or the local service), and no
page may log a console error. Screenshots go to each test's tmp folder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from neardup.analysis import read_dedup_dir
from neardup.analysis.pairview import compare_texts
from neardup.analysis.texts import read_texts, text_settings
from neardup.cli.dedup import run_dedup
from neardup.cli.main import cli
from neardup.config import DedupConfig
from neardup.demo.synthetic import generate_crawl

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@dataclass
class Browser:
    """One Chromium page with every request and console problem recorded."""

    page: Any
    requests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_load_state("load")


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Browser]:
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium); CI installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    profile = tmp_path / "profile"
    profile.mkdir()
    with sync_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        browser = Browser(context.new_page())
        browser.page.on("request", lambda request: browser.requests.append(request.url))
        browser.page.on("console", lambda message: browser.problems.append(
            f"{message.type}: {message.text}") if message.type in ("error", "warning") else None)
        browser.page.on("pageerror", lambda error: browser.problems.append(f"page: {error}"))
        try:
            yield browser
        finally:
            context.close()


@pytest.fixture(scope="module")
def warc_report(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared WARC files deduplicated (min-hash) and reported, browser included."""
    root = tmp_path_factory.mktemp("warc-report")
    result = CliRunner().invoke(cli, ["dedup", str(shared_data / "warc"), "--out",
                                      str(root / "run"), "--quiet", "--workers", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    site = root / "site"
    result = CliRunner().invoke(cli, ["report", "--from", str(root / "run"), "-o",
                                      str(site / "report.html"), "--browser-pages", "40"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "cluster browser: 40 cluster pages" in result.output
    return site


def _inside(requests: list[str], folder: Path) -> list[str]:
    """The requests that left ``folder`` (inline data: URLs stay inside the page)."""
    return [url for url in requests
            if not (url.startswith(f"file://{folder}/") or url.startswith("data:"))]


@pytest.mark.slow
def test_report_lists_the_largest_clusters_with_urls(warc_report: Path, chromium: Browser,
                                                     tmp_path: Path) -> None:
    chromium.open((warc_report / "report.html").as_uri())
    page = chromium.page
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    rows = page.locator("section#largest tbody tr")
    assert rows.count() >= 3
    first = rows.nth(0).locator("td")
    assert first.nth(3).inner_text().startswith("http")
    assert first.nth(7).inner_text() not in ("", "(text not available)")
    robots = page.locator("section#noncontent tbody tr", has_text="robots.txt")
    assert robots.count() >= 1
    assert "robots.txt" not in page.locator("section#largest").inner_text()
    per_line = page.eval_on_selector_all("td.text, td.url", """cells => cells
        .filter(c => c.innerText.length >= 30)
        .map(c => { const r = document.createRange(); r.selectNodeContents(c);
                    return c.innerText.length / r.getClientRects().length; })""")
    assert per_line and min(per_line) >= 10  # no column squeezed to a few letters per line
    first.nth(0).locator("a").click()
    page.wait_for_load_state("load")
    assert page.url.startswith((warc_report / "report-clusters").as_uri() + "/c")
    assert _inside(chromium.requests, warc_report) == []
    assert chromium.problems == []


@pytest.mark.slow
def test_browser_shows_a_pair_side_by_side(warc_report: Path, chromium: Browser,
                                           tmp_path: Path) -> None:
    folder = warc_report / "report-clusters"
    chromium.open((folder / "index.html").as_uri())
    page = chromium.page
    page.fill("#search", "robots.txt")
    assert "match" in page.inner_text("#count")
    assert all("robots" in row for row in page.locator("#rows tr").all_inner_texts())
    page.fill("#search", "")
    link = page.locator("#rows tr", has_text="content").first.locator("a")
    link.click()
    page.wait_for_load_state("load")
    page.screenshot(path=str(tmp_path / "cluster.png"), full_page=True)
    left, right = page.inner_text("#side-a .text"), page.inner_text("#side-b .text")
    assert left.strip() and right.strip()
    assert page.locator("#side-a mark").count() >= 1 and page.locator("#side-b mark").count() >= 1
    assert page.inner_text("#rule")
    options = page.locator("#b option").all()
    if len(options) > 2:
        page.select_option("#b", options[2].get_attribute("value"))
        assert page.url.endswith(f"&b={options[2].get_attribute('value')}")
    a, b = int(page.input_value("#a")), int(page.input_value("#b"))
    run = read_dedup_dir(warc_report.parent / "run")
    texts, problems = read_texts(run, [a, b], text_settings(run.summary))
    assert problems == []
    expected = compare_texts(texts[a].canonical, texts[b].canonical,
                             text_settings(run.summary).shingles)
    assert page.inner_text("#resemblance") == f"{100 * expected.resemblance:.1f}%"
    assert page.inner_text("#contain-ab") == f"{100 * expected.containment_ab:.1f}%"
    marked = page.locator("#side-a mark").all_inner_texts()
    shown_marked = sum(len(text.split()) for text in marked)
    assert shown_marked == sum(expected.marked_a[:3000])
    page.screenshot(path=str(tmp_path / "pair.png"), full_page=True)
    page.goto(page.url.split("#")[0] + "#a=999999&b=x")  # members not on the page
    page.reload()
    page.wait_for_load_state("load")
    assert page.input_value("#a") == page.locator("#a option").first.get_attribute("value")
    assert page.inner_text("#side-a .text").strip()
    assert _inside(chromium.requests, folder) == []
    assert chromium.problems == []


def test_chromium_fixture_sees_console_errors(chromium: Browser, tmp_path: Path) -> None:
    """The recording works: a page with a script error and an outside request is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><html><head><meta charset="utf-8"><link rel="icon" '
                    'href="data:,"><title>x</title></head><body>'
                    '<img src="http://192.0.2.1/x.png"><script>undefinedCall()</script>'
                    "</body></html>")
    chromium.open(page.as_uri())
    assert any("undefinedCall" in p for p in chromium.problems)
    assert _inside(chromium.requests, tmp_path) == ["http://192.0.2.1/x.png"]



def test_pages_without_texts_load_cleanly(chromium: Browser, tmp_path: Path) -> None:
    """Inputs gone since the run: the report says so, the pages load with no error."""
    warc = tmp_path / "crawl.warc.gz"
    generate_crawl(warc, seed=2, pages=60)
    run_dedup((str(warc),), tmp_path / "run", DedupConfig(method="minhash"), workers=1)
    warc.unlink()
    result = CliRunner().invoke(cli, ["report", "--from", str(tmp_path / "run"), "-o",
                                      str(tmp_path / "site" / "r.html"), "--browser-pages", "2"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"note: {warc}: input not found" in result.output
    chromium.open((tmp_path / "site" / "r.html").as_uri())
    chromium.page.locator("section#largest tbody tr a").first.click()
    chromium.page.wait_for_load_state("load")
    assert "No member text could be read" in chromium.page.inner_text("body")
    assert _inside(chromium.requests, tmp_path / "site") == []
    assert chromium.problems == []
