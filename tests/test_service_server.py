"""The service's server: the writes of one loop turn leave as one (``TurnWrites``), on a
recording transport and on a real connection to ``neardup serve``."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from neardup.service.server import HELD_BYTES, TurnWrites, server_options
from test_service import TOKEN, Server, call
from test_service import server as server  # the live service fixture, shared


class Recording:
    """A transport that records what reaches the socket."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.sent.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def _turns(steps: list[Any]) -> Recording:
    """Run each step (a function of the wrapped transport) in its own loop turn; the socket's
    record after the last turn."""
    async def run() -> Recording:
        recording = Recording()
        wrapped = TurnWrites(recording, asyncio.get_running_loop())  # type: ignore[arg-type]
        for step in steps:
            step(wrapped, recording)
            await asyncio.sleep(0)
        await asyncio.sleep(0)
        return recording
    return asyncio.run(run())


def test_writes_of_one_turn_leave_as_one() -> None:
    seen: list[list[bytes]] = []

    def head_and_body(t: TurnWrites, r: Recording) -> None:
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        t.write(b"")
        t.write(memoryview(b"{}"))
        seen.append(list(r.sent))          # nothing reached the socket within the turn

    recording = _turns([head_and_body, lambda t, r: t.write(b"next")])
    assert seen == [[]]
    assert recording.sent == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"next"]


def test_a_large_answer_is_not_held() -> None:
    seen: list[list[int]] = []

    def large(t: TurnWrites, r: Recording) -> None:
        t.write(b"head")
        t.write(b"x" * HELD_BYTES)         # passes the bound: written at once, head first
        seen.append([len(data) for data in r.sent])
        t.write(b"tail")
        seen.append([len(data) for data in r.sent])

    recording = _turns([large])
    assert seen == [[HELD_BYTES + 4], [HELD_BYTES + 4]]
    assert recording.sent[-1] == b"tail" and len(recording.sent) == 2


def test_close_sends_first_abort_drops() -> None:
    def close(t: TurnWrites, r: Recording) -> None:
        t.write(b"last answer")
        assert t.get_write_buffer_size() == len(b"last answer")
        t.close()

    closed = _turns([close])
    assert closed.sent == [b"last answer"] and closed.closed

    def abort(t: TurnWrites, r: Recording) -> None:
        t.write(b"never sent")
        t.abort()

    aborted = _turns([abort])
    assert aborted.sent == [] and aborted.aborted


def test_other_calls_reach_the_transport() -> None:
    recording = _turns([lambda t, r: t.writelines([b"a", b"b"])])
    assert recording.sent == [b"ab"]
    loop = asyncio.new_event_loop()
    try:
        wrapped = TurnWrites(Recording(), loop)  # type: ignore[arg-type]
        assert wrapped.get_extra_info("peername") == ("127.0.0.1", 1)
    finally:
        loop.close()
    assert "http" in server_options()


def test_an_answer_arrives_in_one_piece(server: Server) -> None:
    """Over a real connection, the head and the body of a query's answer come in one read
    (one write on the server: the head alone would come first otherwise)."""
    assert call(server, "POST", "/v1/documents",
                {"documents": [{"id": "whole", "text": "one piece " * 50}]})[0] == 200
    host, port = server.url.rsplit("/", 1)[-1].split(":")
    body = json.dumps({"text": "one piece " * 50}).encode()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for _ in range(3):     # keep-alive: each answer of the connection in one piece
            sock.sendall(f"POST /v1/query HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
                         f"application/json\r\nContent-Length: {len(body)}\r\n"
                         f"Authorization: Bearer {TOKEN}\r\n\r\n".encode() + body)
            first = sock.recv(65536)
            head, _, answer = first.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            assert len(answer) == length, first
            assert json.loads(answer)["matches"][0]["id"] == "whole"


def test_a_reader_answers_503_when_the_writer_is_gone(tmp_path: Any) -> None:
    """An add passed on to a writer process that does not answer gets the service's JSON
    error, 503 with Retry-After, naming the writer's socket."""
    from neardup.service.readers import ADD_PATH, ForwardAdds, WriterLink

    link = WriterLink(str(tmp_path / "gone.sock"), timeout=5.0)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b'{"documents": []}', "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "path": ADD_PATH, "method": "POST", "headers": []}
    asyncio.run(ForwardAdds(None, link)(scope, receive, send))  # type: ignore[arg-type]
    start, body = sent
    assert start["status"] == 503
    assert (b"retry-after", b"5") in start["headers"]
    error = json.loads(body["body"])["error"]
    assert error["type"] == "store_unavailable" and "gone.sock" in error["message"]
