"""The service's pair view (``POST /v1/compare``), the ``seen`` and ``nearest`` of query
answers, and ``/docs`` and ``/redoc`` rendering offline in a real headless Chromium (no request
leaves the service, no console error)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
pytest.importorskip("fastapi_offline", reason="the service extra (fastapi-offline) is missing")

from neardup.analysis.pairview import compare_texts
from neardup.config import ShingleConfig
from test_report_browser import Browser, chromium  # noqa: F401  (the fixture)
from test_service import TOKEN, Server, call, start_server, stop_server


def _text(seed: int, words: int = 300) -> str:
    """A text of its own: ``seed`` draws its words from 5,000 (two seeds share few shingles)."""
    draw = random.Random(seed)
    return " ".join(f"w{draw.randrange(5000)}" for _ in range(words))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("service-compare")
    token_file = base / "token"
    token_file.write_text(TOKEN + "\n")
    running = start_server(base / "store", token_file=token_file)
    yield running
    stop_server(running)


def test_compare_answers_the_library_pair_view(server: Server) -> None:
    a = "The quick brown fox jumps over the lazy dog near the river bank today"
    b = "A quick brown fox jumps over the lazy dog near the river bank, said Ann"
    status, _, answer = call(server, "POST", "/v1/compare", {"a": {"text": a},
                                                             "b": {"html": f"<p>{b}</p>"}},
                             )
    assert status == 200, answer
    expected = compare_texts(a, b, ShingleConfig(width=10))  # the store's sketch shingles
    assert answer == {**expected.as_dict(), "shared_shingles": expected.shared}
    assert answer["shingle_width"] == 10 and 0 < answer["resemblance"] < 1
    assert answer["a"]["tokens"][:3] == ["the", "quick", "brown"]
    assert answer["a"]["marked"] == list(range(1, 13))
    status, _, error = call(server, "POST", "/v1/compare", {"a": {"text": a}})
    assert status == 422 and error["error"]["type"] == "invalid"


def test_two_stored_documents_compared(server: Server) -> None:
    base = _text(21)
    call(server, "POST", "/v1/documents", {"documents": [
        {"id": "c1", "url": "http://site.example/c1", "text": base},
        {"id": "c2", "url": "http://site.example/c2", "text": base + " and a few more words"},
        {"id": "c3", "url": "http://site.example/c3", "text": _text(22)}]})
    status, _, near = call(server, "GET", "/v1/documents/c1/compare/c2")
    assert status == 200, near
    assert near["a"]["id"] == "c1" and near["b"]["id"] == "c2" and near["same_cluster"]
    assert near["relation"] == "near" and near["distance"] <= 3
    assert 0.8 < near["resemblance"] <= 1.0
    status, _, query = call(server, "POST", "/v1/query", {"text": base})
    by_id = {m["id"]: m for m in query["matches"]}
    assert by_id["c2"]["distance"] == near["distance"]
    status, _, far = call(server, "GET", "/v1/documents/c1/compare/c3")
    assert status == 200 and not far["same_cluster"] and far["distance"] > 3, far
    assert far["resemblance"] < 0.2
    status, _, same = call(server, "GET", "/v1/documents/c1/compare/c1")
    assert same["relation"] == "identical" and same["distance"] == 0
    status, _, missing = call(server, "GET", "/v1/documents/c1/compare/nobody")
    assert status == 404 and "nobody" in missing["error"]["message"]


def test_query_answers_say_seen_and_nearest(server: Server) -> None:
    stored = _text(11)
    call(server, "POST", "/v1/documents", {"documents": [
        {"id": "s1", "url": "http://site.example/s1", "text": stored}]})
    status, _, same = call(server, "POST", "/v1/query", {"text": stored})
    assert status == 200 and same["seen"] is True
    assert same["nearest"]["id"] == "s1" and same["nearest"]["distance"] == 0
    assert same["seen_threshold"] == 0.5
    status, _, other = call(server, "POST", "/v1/query", {"text": _text(12)})
    assert status == 200 and other["seen"] is False and other["nearest"] is None
    near = stored + " and two more words"
    status, _, close = call(server, "POST", "/v1/query", {"text": near})
    assert close["nearest"]["id"] == "s1"
    assert close["seen"] is (close["nearest"]["distance"] == 0
                             or close["nearest"]["resemblance"] >= 0.5)
    assert close["seen"] is True


def test_docs_render_offline(server: Server, chromium: Browser,  # noqa: F811
                             tmp_path: Path) -> None:
    chromium.open(server.url + "/docs")
    chromium.page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
    assert "neardup" in chromium.page.inner_text(".swagger-ui .info .title")
    chromium.page.wait_for_selector("[data-path=\"/v1/compare\"]", timeout=30_000)
    chromium.page.screenshot(path=str(tmp_path / "docs.png"), full_page=False)
    local = (server.url + "/", f"blob:{server.url}/", "data:")
    assert [url for url in chromium.requests if not url.startswith(local)] == []
    assert any(url.endswith("/docs-assets/swagger-ui-bundle.js") for url in chromium.requests)
    assert chromium.problems == []
    status, _, _ = call(server, "GET", "/redoc")
    assert status == 404
