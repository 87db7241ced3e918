"""``neardup serve`` against a real uvicorn server on a loopback port, called over HTTP with the
standard library and with :class:`neardup.client.Client`."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

from neardup.client import Client
from neardup.document import Document
from neardup.errors import ServiceError

TOKEN = "test-token-0123456789abcdef"
WORDS = [f"w{i}" for i in range(2000)]
ROOT = Path(__file__).resolve().parents[1]


def _text(seed: int, words: int = 300) -> str:
    return " ".join(WORDS[(seed * 7919 + i * 104729) % len(WORDS)] for i in range(words))


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    store: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def start_server(store: Path, *extra: str, token_file: Path | None = None) -> Server:
    """``neardup serve`` in a subprocess on a free loopback port, once /healthz answers."""
    port = _free_port()
    args = ["serve", "--store", str(store), "--port", str(port), *extra]
    if token_file is not None:
        args += ["--token-file", str(token_file)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-c", "from neardup.cli.main import cli; cli()",
                                *args], env=env, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "died")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return Server(url, process, store)
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not start")


def stop_server(server: Server) -> None:
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    if server.process.stderr is not None:
        server.process.stderr.close()


def call(server: Server, method: str, path: str, body: Any = None, *, token: str | None = TOKEN,
         content_type: str = "application/json", raw: bytes | None = None
         ) -> tuple[int, dict[str, str], Any]:
    """(status, headers, decoded JSON or text) of one request."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": content_type} if data is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(server.url + path, data=data, headers=headers,
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, answer, head = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, answer, head = error.code, error.read(), dict(error.headers)
    text = answer.decode()
    is_json = head.get("content-type", "").startswith("application/json")
    return status, head, json.loads(text) if is_json else text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("service")
    token_file = base / "token"
    token_file.write_text(TOKEN + "\n")
    running = start_server(base / "store", "--max-body-bytes", "65536", token_file=token_file)
    yield running
    stop_server(running)


def _doc(id_: str, seed: int, **fields: Any) -> dict[str, Any]:
    return {"id": id_, "url": f"http://site.example/{id_}", "text": _text(seed), **fields}


def test_add_then_query_document_cluster(server: Server) -> None:
    first = call(server, "POST", "/v1/documents", {"documents": [_doc("a1", 1), _doc("a2", 2)],
                                                   "sweep": "s1"})
    assert first[0] == 200 and first[2]["added"] == 2, first
    again = call(server, "POST", "/v1/documents", {"documents": [_doc("a1", 1)], "sweep": "s1"})
    assert again[2]["already_stored"] == 1 and again[2]["documents"][0]["status"] == \
        "already-stored"
    near = _doc("a1-copy", 1, text=_text(1) + " one more")
    call(server, "POST", "/v1/documents", {"documents": [near], "sweep": "s2"})
    status, _, answer = call(server, "POST", "/v1/query", {"text": _text(1)})
    assert status == 200
    by_id = {m["id"]: m for m in answer["matches"]}
    assert by_id["a1"]["relation"] == "identical" and by_id["a1"]["distance"] == 0
    assert by_id["a1-copy"]["relation"] == "near" and by_id["a1-copy"]["distance"] <= 3
    assert "a2" not in by_id
    status, _, row = call(server, "GET", "/v1/documents/a1")
    assert status == 200 and row["url"] == "http://site.example/a1" and row["sweep"] == "s1"
    status, _, cluster = call(server, "GET", "/v1/clusters/a1-copy")
    assert status == 200
    assert cluster["urls"] == ["http://site.example/a1", "http://site.example/a1-copy"]
    status, _, by_url = call(server, "POST", "/v1/query", {"url": "http://site.example/a1"})
    assert status == 200 and by_url["doc"] == row["doc"]
    assert [m["id"] for m in by_url["matches"]] == ["a1-copy"]
    status, _, found = call(server, "GET", "/v1/lost-and-found?url=http%3A%2F%2Fsite.example%2Fa1")
    assert status == 200 and found["found"]["url"] == "http://site.example/a1-copy"


def metric(page: str, name: str) -> float:
    """The value of an unlabelled metric of a /metrics page."""
    return next(float(line.split()[1]) for line in page.splitlines()
                if line.startswith(name + " "))


def burst(server: Server, path: str, bodies: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    """(status, decoded JSON) of each body POSTed at once: a connection each, every request
    written before any answer is read (so that the server reads them in one go)."""
    host, port = server.url.rsplit("/", 1)[-1].split(":")
    sockets = [socket.create_connection((host, int(port)), timeout=30) for _ in bodies]
    try:
        for sock, body in zip(sockets, bodies, strict=True):
            data = json.dumps(body).encode()
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
                         f"application/json\r\nContent-Length: {len(data)}\r\n"
                         f"Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
                         .encode() + data)
        return [_answer_of(sock) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _answer_of(sock: socket.socket) -> tuple[int, Any]:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def answered_together_as_alone(server: Server, prefix: str) -> None:
    """Queries sent at once (plain, HTML, by URL, sketch searches, another ``k``, an empty
    text, an invalid body) get the answers each gets alone, and some were answered in one
    batch (the service's metrics say so)."""
    docs = [_doc(f"{prefix}/{n}", 900 + n) for n in range(8)]
    status, _, added = call(server, "POST", "/v1/documents", {"documents": docs})
    assert status == 200 and added["added"] == 8, added
    bodies: list[dict[str, Any]] = [{"text": _text(900 + n % 8)} for n in range(20)]
    bodies += [{"text": _text(901) + " and more"}, {"html": f"<p>{_text(902)}</p>"},
               {"url": f"http://site.example/{prefix}/3"}, {"url": "http://nowhere.example/"},
               {"text": _text(903), "k": 1}, {"text": _text(904), "resemblance": 0.5},
               {"text": ""}, {"text": _text(905), "k": 99}, {"text": _text(906), "explain": True}]
    alone = [call(server, "POST", "/v1/query", body) for body in bodies]
    assert {answer[0] for answer in alone} == {200, 404, 422}
    largest = 0.0
    for _ in range(5):
        together = burst(server, "/v1/query", bodies)
        assert together == [(a[0], a[2]) for a in alone]
        largest = max(largest, *(metric(call(server, "GET", "/metrics")[2],
                                        "neardup_largest_query_batch") for _ in range(6)))
        if largest > 1:
            break
    assert largest > 1, "no two queries were answered together"


def test_queries_sent_at_once_are_answered_together_as_each_alone(server: Server) -> None:
    answered_together_as_alone(server, "together")


def test_sketch_search_and_explain(server: Server) -> None:
    long = _text(40, 600)
    call(server, "POST", "/v1/documents", {"documents": [_doc("long", 40, text=long)]})
    quoted = " ".join(long.split()[100:250])
    status, _, answer = call(server, "POST", "/v1/query",
                             {"text": quoted, "containment": 0.6, "explain": True})
    assert status == 200
    match = next(m for m in answer["matches"] if m["id"] == "long")
    assert match["containment"] >= 0.6 and match["shared_shingles"]


def test_html_and_warc_record_documents(server: Server) -> None:
    html = f"<html><body><p>{_text(60)}</p></body></html>"
    payload = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html.encode())
    record = (b"WARC/1.0\r\nWARC-Type: response\r\n"
              b"WARC-Record-ID: <urn:uuid:11111111-2222-3333-4444-555555555555>\r\n"
              b"WARC-Target-URI: http://warc.example/page\r\n"
              b"WARC-Date: 2024-05-01T10:00:00Z\r\n"
              b"Content-Type: application/http; msgtype=response\r\n"
              + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload + b"\r\n\r\n")
    status, _, added = call(server, "POST", "/v1/documents", {"documents": [
        {"warc_record": base64.b64encode(record).decode()},
        {"warc_record": base64.b64encode(b"not a warc record").decode()}]})
    assert status == 200, added
    assert added["added"] == 1 and added["skipped"] == 1, added
    assert added["documents"][1]["status"].startswith("skipped:")
    status, _, answer = call(server, "POST", "/v1/query", {"html": html})
    assert status == 200
    urls = [m["url"] for m in answer["matches"]]
    assert "http://warc.example/page" in urls


def test_writes_need_the_token(server: Server) -> None:
    body = {"documents": [_doc("t1", 70)]}
    for token in (None, "wrong-token-wrong-token"):
        status, head, answer = call(server, "POST", "/v1/documents", body, token=token)
        assert status == 401 and answer["error"]["type"] == "unauthorized"
        assert head.get("www-authenticate") == "Bearer"
    assert call(server, "GET", "/v1/documents/t1")[0] == 404


@pytest.mark.parametrize(("method", "path", "body", "kwargs", "status", "kind"), [
    ("POST", "/v1/query", None, {"raw": b'{"text": "x"'}, 400, "malformed_json"),
    ("POST", "/v1/documents", None, {"raw": b"{nope"}, 400, "malformed_json"),
    ("POST", "/v1/query", {"text": "x"}, {"content_type": "text/plain"}, 415,
     "unsupported_media_type"),
    ("POST", "/v1/query", {"text": "x"}, {"content_type": "application/x-www-form-urlencoded"},
     415, "unsupported_media_type"),
    ("POST", "/v1/query", {"text": "x", "url": "http://a/"}, {}, 422, "invalid"),
    ("POST", "/v1/query", {"text": "x", "k": 99}, {}, 422, "invalid"),
    ("POST", "/v1/query", {"text": "x", "surprise": 1}, {}, 422, "invalid"),
    ("POST", "/v1/query", {"text": "x", "k": 3, "resemblance": 2}, {}, 422, "invalid"),
    ("POST", "/v1/documents", {"documents": []}, {}, 422, "invalid"),
    ("POST", "/v1/documents", {"documents": [{"text": "no id"}]}, {}, 422, "invalid"),
    ("POST", "/v1/documents", {"documents": [{"id": "b", "warc_record": "@@"}]}, {}, 400,
     "bad_request"),
    ("POST", "/v1/query", {"url": "http://never.example/"}, {}, 404, "unknown_url"),
    ("GET", "/v1/documents/never-stored", None, {}, 404, "unknown_id"),
    ("GET", "/v1/clusters/never-stored", None, {}, 404, "unknown_id"),
    ("GET", "/v1/lost-and-found?url=http%3A%2F%2Fnever%2F", None, {}, 404, "unknown_url"),
    ("GET", "/v1/lost-and-found", None, {}, 422, "invalid"),
    ("GET", "/v1/nothing-here", None, {}, 404, "not_found"),
    ("DELETE", "/v1/query", None, {}, 405, "method_not_allowed"),
])
def test_bad_requests_get_a_json_error(server: Server, method: str, path: str, body: Any,
                                       kwargs: dict[str, Any], status: int, kind: str) -> None:
    got, _, answer = call(server, method, path, body, **kwargs)
    assert got == status, answer
    assert answer["error"]["code"] == status and answer["error"]["type"] == kind
    assert answer["error"]["message"]


def test_bodies_over_the_limit_get_413(server: Server) -> None:
    big = {"documents": [_doc("big", 80, text="word " * 20_000)]}
    status, _, answer = call(server, "POST", "/v1/documents", big)
    assert status == 413 and answer["error"]["type"] == "body_too_large"
    status, _, answer = call(server, "POST", "/v1/query", {"text": "word " * 20_000})
    assert status == 413
    assert call(server, "GET", "/v1/documents/big")[0] == 404


def test_health_metrics_and_openapi(server: Server) -> None:
    call(server, "POST", "/v1/query", {"text": "warm up"})
    status, _, health = call(server, "GET", "/healthz")
    assert status == 200 and health["status"] == "ok" and health["documents"] >= 0
    status, head, text = call(server, "GET", "/metrics")
    assert status == 200 and head["content-type"].startswith("text/plain")
    lines = text.splitlines()
    assert "# TYPE neardup_requests_total counter" in lines
    assert "# TYPE neardup_request_duration_seconds histogram" in lines
    assert any(line.startswith('neardup_requests_total{route="/v1/query",method="POST",'
                               'code="200"}') for line in lines)
    assert any(line.startswith('neardup_request_duration_seconds_bucket{route="/v1/query",'
                               'le="+Inf"}') for line in lines)
    documents = next(line for line in lines if line.startswith("neardup_store_documents "))
    assert float(documents.split()[1]) == health["documents"]
    status, _, served = call(server, "GET", "/openapi.json")
    committed = json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert status == 200 and served == committed, \
        "docs/openapi.json is stale: neardup serve --write-openapi docs/openapi.json"
    assert {"/v1/documents", "/v1/query", "/v1/documents/{id}", "/v1/clusters/{id}",
            "/v1/lost-and-found", "/healthz", "/metrics"} <= set(served["paths"])


def test_the_client_and_group_commit(server: Server) -> None:
    client = Client(server.url, TOKEN)
    before = client.health()["documents"]

    def add(n: int) -> dict[str, Any]:
        return client.add([_doc(f"g{n}-{i}", 1000 + 3 * n + i) for i in range(3)])

    with ThreadPoolExecutor(max_workers=24) as pool:
        answers = list(pool.map(add, range(48)))
    assert all(a["added"] == 3 for a in answers)
    assert client.health()["documents"] == before + 144
    numbers = [d["doc"] for a in answers for d in a["documents"]]
    assert len(set(numbers)) == 144
    metrics = call(server, "GET", "/metrics")[2].splitlines()
    gauge = {line.split()[0]: float(line.split()[1]) for line in metrics
             if line.startswith("neardup_writer_")}
    assert gauge["neardup_writer_groups"] < gauge["neardup_writer_grouped_adds"]
    assert client.document("g3-1")["id"] == "g3-1"
    assert client.query(_text(1009))[0]["id"] == "g3-0"
    with pytest.raises(ServiceError) as missing:
        client.document("never")
    assert missing.value.status == 404
    with pytest.raises(ServiceError) as denied:
        Client(server.url, "x" * 20).add([_doc("z", 1)])
    assert denied.value.status == 401


@pytest.mark.slow
def test_a_full_queue_answers_503_and_the_client_retries(tmp_path: Path) -> None:
    running = start_server(tmp_path / "store", "--queue-limit", "1",
                           token_file=_token_file(tmp_path))
    try:
        def add(n: int) -> tuple[int, str | None]:
            docs = [_doc(f"q{n}-{i}", 5000 + 50 * n + i) for i in range(40)]
            status, head, _ = call(running, "POST", "/v1/documents", {"documents": docs})
            return status, head.get("retry-after")

        with ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(add, range(32)))
        assert {status for status, _ in results} <= {200, 503}
        refused = [retry for status, retry in results if status == 503]
        assert refused and all(retry == "1" for retry in refused)
        client = Client(running.url, TOKEN, retries=50, max_wait=0.2)
        with ThreadPoolExecutor(max_workers=16) as pool:
            answers = list(pool.map(lambda n: client.add(
                [_doc(f"q{n}-{i}", 5000 + 50 * n + i) for i in range(40)]), range(32)))
        assert sum(a["added"] + a["already_stored"] for a in answers) == 32 * 40
        assert client.health()["documents"] == 32 * 40
    finally:
        stop_server(running)


def _token_file(directory: Path) -> Path:
    path = directory / "token"
    path.write_text(TOKEN)
    return path


@pytest.mark.slow
def test_serve_refuses_a_short_token_and_binds_loopback_by_default(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("abc")
    result = subprocess.run([sys.executable, "-c", "from neardup.cli.main import cli; cli()",
                             "serve", "--store", str(tmp_path / "s"), "--token-file", str(short)],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert result.returncode == 1 and "at least 16" in result.stderr
    assert result.stderr.count("\n") == 1
    running = start_server(tmp_path / "s2")
    try:
        token = (tmp_path / "s2" / "service.token").read_text().strip()
        assert oct((tmp_path / "s2" / "service.token").stat().st_mode & 0o777) == "0o600"
        assert Client(running.url, token).add([_doc("x", 1)])["added"] == 1
        assert _listening_addresses(int(running.url.rsplit(":", 1)[1])) == {"0100007F"}
    finally:
        stop_server(running)


def _listening_addresses(port: int) -> set[str]:
    """The local IPv4 addresses (hex, as /proc/net/tcp writes them) listening on ``port``."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        pytest.skip("no /proc/net/tcp to read the listening address from")
    found = set()
    for line in table.read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            found.add(address)
    return found


def test_an_add_past_its_timeout_is_answered_503_and_still_lands(tmp_path: Path) -> None:
    """The add route awaits the writer on the event loop: past ``add_timeout`` the client is
    told to retry (503, Retry-After), and the add itself is not cancelled: it lands once the
    writer gets to it. A real uvicorn server in a thread, whose store the test holds."""
    import threading

    import uvicorn

    from neardup.service.app import create_app
    from neardup.service.settings import ServiceConfig
    from neardup.store import open_store

    port = _free_port()
    with open_store(tmp_path / "s") as store:
        app = create_app(ServiceConfig(token=TOKEN, add_timeout=0.5), store)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        running = Server(f"http://127.0.0.1:{port}", None, tmp_path / "s")  # type: ignore[arg-type]
        try:
            with store._mutex:                                # the writer cannot commit
                status, head, answer = call(running, "POST", "/v1/documents",
                                            {"documents": [_doc("late", 5)]})
                assert status == 503 and answer["error"]["type"] == "timeout", answer
                assert head["retry-after"] == "5"
            deadline = time.monotonic() + 20
            while store.document("late") is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert store.document("late") is not None        # the add went on
            again = call(running, "POST", "/v1/documents", {"documents": [_doc("late", 5)]})
            assert again[2]["documents"][0]["status"] == "already-stored"
        finally:
            server.should_exit = True
            thread.join(20)


def test_queries_of_one_loop_turn_make_one_batch_answered_as_each_alone(tmp_path: Path) -> None:
    """In process: queries asked in one turn of the event loop are answered in one batch
    (writable store, in the thread pool; read-only, on the loop), each as it is alone, errors
    included."""
    import asyncio

    from neardup.service.problems import Problem
    from neardup.service.queries import QueryBatches, query_answer
    from neardup.service.schemas import query_request
    from neardup.store import open_store

    with open_store(tmp_path / "s") as store:
        store.add([Document(id=f"d{n}", raw=_text(700 + n).encode(), kind="text",
                            url=f"http://b.example/{n}") for n in range(6)])
    model = query_request(3)
    bodies = [model.model_validate(body) for body in (
        *({"text": _text(700 + n)} for n in range(6)), {"text": _text(701), "k": 0},
        {"url": "http://b.example/2"}, {"url": "http://nowhere.example/"},
        {"html": f"<p>{_text(703)}</p>", "explain": True})]

    def outcome(answer: Any) -> Any:
        return (answer.status_code, answer.detail) if isinstance(answer, Problem) else answer

    for read_only in (False, True):
        with open_store(tmp_path / "s", read_only=read_only) as store:
            alone = []
            for body in bodies:
                try:
                    alone.append(query_answer(store, body))
                except Problem as problem:
                    alone.append(problem)
            sizes: list[int] = []
            batches = QueryBatches(store, sizes.append)

            async def ask(batches: QueryBatches = batches) -> list[Any]:
                return await asyncio.gather(*(batches.answer(body) for body in bodies),
                                            return_exceptions=True)

            together = asyncio.run(ask())
            assert sizes == [len(bodies)]
            assert [outcome(a) for a in together] == [outcome(a) for a in alone]
            assert sum(isinstance(a, Problem) for a in together) == 1


def test_a_busy_service_gathers_queries_for_its_window_and_an_idle_one_answers_at_once(
        tmp_path: Path) -> None:
    """In process, read-only store: a query asked when no batch was answered within the
    window is answered in a batch of its own at once; queries asked in later turns of the
    loop within the window after it are answered together, no sooner than the window's end,
    each as it is alone; with no window each is answered alone."""
    import asyncio

    from neardup.service.queries import QueryBatches, query_answer
    from neardup.service.schemas import query_request
    from neardup.store import open_store

    with open_store(tmp_path / "s") as store:
        store.add([Document(id=f"d{n}", raw=_text(800 + n).encode(), kind="text")
                   for n in range(3)])
    model = query_request(3)
    bodies = [model.model_validate({"text": _text(800 + n)}) for n in range(3)]

    async def ask(batches: QueryBatches) -> tuple[list[Any], float, float]:
        loop = asyncio.get_running_loop()
        first = await asyncio.wait_for(batches.answer(bodies[0]), 10)  # idle: no wait
        answered = loop.time()
        later = [asyncio.ensure_future(batches.answer(bodies[1]))]
        await asyncio.sleep(0.01)                                       # a later turn
        later.append(asyncio.ensure_future(batches.answer(bodies[2])))
        rest = await asyncio.gather(*later)
        return [first, *rest], answered, loop.time()

    with open_store(tmp_path / "s", read_only=True) as store:
        alone = [query_answer(store, body) for body in bodies]
        for window, expected in ((0.5, [1, 2]), (0.0, [1, 1, 1])):
            sizes: list[int] = []
            answers, answered, done = asyncio.run(ask(QueryBatches(store, sizes.append,
                                                                   window)))
            assert sizes == expected and answers == alone
            if window:
                assert done - answered >= window * 0.99


def test_serve_takes_its_query_and_add_windows(tmp_path: Path) -> None:
    """``neardup serve --query-window-ms / --add-window-ms``: a query (an add) sent right
    after another was answered (committed) waits for its window (1 s here)."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    running = start_server(tmp_path / "store", "--query-window-ms", "1000",
                           "--add-window-ms", "1000", token_file=token_file)
    try:
        for path, body in (("/v1/query", {"text": _text(5)}),
                           ("/v1/documents", {"documents": [_doc("w1", 5)]})):
            assert call(running, "POST", path, body)[0] == 200
            started = time.monotonic()
            assert call(running, "POST", path, body)[0] == 200
            assert time.monotonic() - started >= 0.9, path
    finally:
        stop_server(running)


def test_adds_within_the_window_share_one_commit(tmp_path: Path) -> None:
    """In process: an add to an idle writer commits alone; adds queued within the window
    after that commit wait for the window's end and commit together."""
    from neardup.service.writer import GroupWriter
    from neardup.store import open_store

    def docs(n: int) -> list[Document]:
        return [Document(id=f"g{n}", raw=_text(900 + n).encode(), kind="text")]

    with open_store(tmp_path / "s") as store:
        writer = GroupWriter(store, group_max=100, queue_limit=10, window=0.5)
        try:
            writer.submit(docs(0), None).result(10)
            committed = time.monotonic()
            later = [writer.submit(docs(n), None) for n in (1, 2)]
            outcomes = [future.result(10) for future in later]
            assert time.monotonic() - committed >= 0.45
        finally:
            writer.close()
        assert writer.groups == 2 and writer.grouped_adds == 3
        assert [o[0][0] for o in outcomes] == ["g1", "g2"]
        assert len(store) == 3
