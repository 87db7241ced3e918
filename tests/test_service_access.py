"""``neardup serve`` guards and answers honestly, against a real uvicorn server: the token on
every /v1 route and /metrics (one scheme, Bearer) unless reads are public; no server path in an
answer; ids of any characters read back; a 413 that reaches a standard-library client; the
query schema bounded by the store's own max_k."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

from neardup.client import Client
from test_service import (
    ROOT,
    TOKEN,
    Server,
    _doc,
    _text,
    _token_file,
    call,
    start_server,
    stop_server,
)

READS = [("POST", "/v1/query", {"text": "anything at all"}),
         ("GET", "/v1/documents/r1", None),
         ("GET", "/v1/clusters/r1", None),
         ("GET", "/v1/lost-and-found?url=http%3A%2F%2Fsite.example%2Fr1", None),
         ("GET", "/metrics", None)]
ODD_IDS = ["a/b", "a/b/", "/lead", "x?y#z", "../up", "100%", "sp ace", "%2F", "é/ü", "a//b"]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("guarded")
    running = start_server(base / "store", "--max-body-bytes", "65536",
                           token_file=_token_file(base))
    assert call(running, "POST", "/v1/documents",
                {"documents": [_doc("r1", 1)], "sweep": "s1"})[0] == 200
    yield running
    stop_server(running)


def _with_header(server: Server, method: str, path: str, body: Any,
                 authorization: str | None) -> int:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if authorization is not None:
        headers["Authorization"] = authorization
    request = urllib.request.Request(server.url + path, data=data, headers=headers,
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.read()
        return int(error.code)


@pytest.mark.parametrize(("method", "path", "body"), READS)
def test_every_read_route_and_the_metrics_need_the_bearer_token(
        guarded: Server, method: str, path: str, body: Any) -> None:
    for authorization in (None, "", TOKEN, f"Token {TOKEN}", f"Basic {TOKEN}", "Bearer ",
                          "Bearer wrong-token-wrong-token", f"Bearer{TOKEN}"):
        status = _with_header(guarded, method, path, body, authorization)
        assert status == 401, (authorization, status)
    assert _with_header(guarded, method, path, body, f"Bearer {TOKEN}") == 200
    status, head, answer = call(guarded, method, path, body, token=None)
    assert status == 401 and answer["error"]["type"] == "unauthorized"
    assert head.get("www-authenticate") == "Bearer"


def test_health_stays_open(guarded: Server) -> None:
    assert call(guarded, "GET", "/healthz", token=None)[0] == 200


def test_a_write_needs_the_bearer_scheme_too(guarded: Server) -> None:
    body = {"documents": [_doc("w-raw", 5)]}
    assert _with_header(guarded, "POST", "/v1/documents", body, TOKEN) == 401
    assert call(guarded, "GET", "/v1/documents/w-raw")[0] == 404


def test_ids_of_any_characters_read_back(guarded: Server) -> None:
    docs = [_doc(id_, 200 + n) for n, id_ in enumerate(ODD_IDS)]
    status, _, added = call(guarded, "POST", "/v1/documents", {"documents": docs})
    assert status == 200 and added["added"] == len(ODD_IDS), added
    client = Client(guarded.url, TOKEN)
    for id_ in ODD_IDS:
        encoded = urllib.parse.quote(id_, safe="")
        status, _, row = call(guarded, "GET", f"/v1/documents/{encoded}")
        assert status == 200 and row["id"] == id_, (id_, row)
        status, _, cluster = call(guarded, "GET", f"/v1/clusters/{encoded}")
        assert status == 200 and id_ in [d["id"] for d in cluster["documents"]], (id_, cluster)
        assert client.document(id_)["id"] == id_
    status, _, row = call(guarded, "GET", "/v1/documents/a/b")     # a slash left unencoded
    assert status == 200 and row["id"] == "a/b"


def test_a_body_over_the_limit_gets_its_413_not_a_reset(guarded: Server) -> None:
    for size in (70_000, 1 << 20, 4 << 20):
        raw = json.dumps({"text": "word " * (size // 5)}).encode()
        request = urllib.request.Request(guarded.url + "/v1/query", data=raw, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Bearer {TOKEN}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 413, size
        answer = json.loads(refused.value.read())
        assert answer["error"]["type"] == "body_too_large"
    assert call(guarded, "GET", "/healthz")[0] == 200


def test_k_is_bounded_by_the_stores_max_k(guarded: Server) -> None:
    assert call(guarded, "POST", "/v1/query", {"text": _text(1), "k": 3})[0] == 200
    status, _, answer = call(guarded, "POST", "/v1/query", {"text": _text(1), "k": 4})
    assert status == 422 and answer["error"]["type"] == "invalid"
    assert "3" in answer["error"]["message"]
    schema = call(guarded, "GET", "/openapi.json")[2]
    k = schema["components"]["schemas"]["QueryRequest"]["properties"]["k"]
    bounds = next(part for part in k.get("anyOf", [k]) if part.get("type") == "integer")
    assert (bounds["minimum"], bounds["maximum"]) == (0, 3)


def _index(tmp_path: Path) -> tuple[Path, Path]:
    """A store indexed from a file in a folder of the server: the document rows keep its path."""
    corpus = tmp_path / "private" / "folder" / "docs.jsonl"
    corpus.parent.mkdir(parents=True)
    corpus.write_text("".join(json.dumps({"id": f"p{i}", "url": f"http://p.example/{i}",
                                          "text": _text(300 + i)}) + "\n" for i in range(5)))
    store = tmp_path / "store"
    result = subprocess.run([sys.executable, "-c", "from neardup.cli.main import cli; cli()",
                             "index", str(corpus), "--store", str(store)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert result.returncode == 0, result.stderr
    return store, corpus


def test_public_reads_and_no_server_path_in_answers(tmp_path: Path) -> None:
    store, corpus = _index(tmp_path)
    running = start_server(store, "--public-reads", token_file=_token_file(tmp_path))
    try:
        status, _, row = call(running, "GET", "/v1/documents/p1", token=None)
        assert status == 200 and row["id"] == "p1"
        assert row["source"] == corpus.name                 # the file's name, not its path
        answers = [call(running, "GET", "/v1/documents/p2", token=None),
                   call(running, "GET", "/v1/clusters/p2", token=None),
                   call(running, "POST", "/v1/query", {"text": _text(302), "explain": True},
                        token=None),
                   call(running, "GET", "/metrics", token=None)]
        assert [status for status, _, _ in answers] == [200] * 4
        for _, _, answer in answers:
            text = answer if isinstance(answer, str) else json.dumps(answer)
            assert str(tmp_path) not in text and "private" not in text
        status, _, _ = call(running, "POST", "/v1/documents", {"documents": [_doc("n", 9)]},
                            token=None)
        assert status == 401                                 # writes still need the token
    finally:
        stop_server(running)
