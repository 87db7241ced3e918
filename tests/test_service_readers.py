"""``neardup serve --readers N``: reader processes on the same port answer reads that see every
acknowledged add, pass adds to the one writer, and stop (or die) with the serving process."""

from __future__ import annotations

import os
import signal
import time
import urllib.parse
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

from test_service import (
    _doc,
    _text,
    _token_file,
    answered_together_as_alone,
    call,
    start_server,
    stop_server,
)
from test_worker_death import _session


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def _wait_for_readers(pid: int, count: int) -> set[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        readers = _children(pid)
        if len(readers) >= count:
            return readers
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} reader processes started")


def _metrics_answered(page: str) -> int:
    """How many /metrics requests the answering process had answered before this one (each
    process counts its own)."""
    for line in page.splitlines():
        if line.startswith('neardup_requests_total{route="/metrics",method="GET",status="200"}'):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_readers_see_every_acknowledged_add_and_stop_with_the_server(tmp_path: Path) -> None:
    running = start_server(tmp_path / "store", "--readers", "2",
                           token_file=_token_file(tmp_path))
    try:
        readers = _wait_for_readers(running.process.pid, 2)
        time.sleep(2)                                      # the readers have started serving
        numbers = set()
        for n in range(60):                                # each call a new connection
            doc = _doc(f"r/{n}", 400 + n)
            status, _, added = call(running, "POST", "/v1/documents", {"documents": [doc]})
            assert status == 200 and added["added"] == 1, added
            numbers.add(added["documents"][0]["doc"])
            status, _, answer = call(running, "POST", "/v1/query", {"text": _text(400 + n)})
            assert status == 200 and (f"r/{n}", 0) in \
                [(m["id"], m["distance"]) for m in answer["matches"]], (n, answer)
            status, _, row = call(running, "GET",
                                  f"/v1/documents/{urllib.parse.quote(f'r/{n}', safe='')}")
            assert status == 200 and row["doc"] == added["documents"][0]["doc"]
        assert len(numbers) == 60
        pages = [call(running, "GET", "/metrics")[2] for _ in range(40)]
        assert not any("neardup_writer_groups" in page for page in pages), \
            "the writer process answered a request on the public port"
        seen = [_metrics_answered(page) for page in pages]
        assert len(set(seen)) < len(seen), f"every answer came from one process: {seen}"
    finally:
        stop_server(running)
    time.sleep(1)
    assert not [pid for pid in readers if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_readers_die_when_the_server_is_killed(tmp_path: Path) -> None:
    running = start_server(tmp_path / "store", "--readers", "2",
                           token_file=_token_file(tmp_path))
    readers = _wait_for_readers(running.process.pid, 2)
    os.kill(running.process.pid, signal.SIGKILL)
    running.process.wait()
    if running.process.stderr is not None:
        running.process.stderr.close()
    time.sleep(5)
    alive = {pid: state for pid, state in _session(os.getsid(0)).items()
             if pid in readers and state != "Z"}
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == {}, f"reader processes alive 5 s after the server was killed: {alive}"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_refused_adds_answer_the_same_through_any_process(tmp_path: Path) -> None:
    """A reader passes an add on as it came: the writer's refusal (no token, an invalid body,
    too many documents) reaches the client whichever process took the connection."""
    running = start_server(tmp_path / "store", "--readers", "2",
                           token_file=_token_file(tmp_path))
    try:
        _wait_for_readers(running.process.pid, 2)
        time.sleep(2)                                      # the readers have started serving
        for _ in range(12):                                # each call a new connection
            status, head, answer = call(running, "POST", "/v1/documents",
                                        {"documents": [_doc("x", 1)]}, token=None)
            assert status == 401 and answer["error"]["type"] == "unauthorized"
            assert head.get("www-authenticate") == "Bearer"
            status, _, answer = call(running, "POST", "/v1/documents",
                                     {"documents": [{"id": "y", "text": "a", "html": "b"}]})
            assert status == 422 and answer["error"]["type"] == "invalid", answer
            status, _, answer = call(running, "POST", "/v1/documents",
                                     {"documents": [_doc(f"z{n}", n) for n in range(1001)]})
            assert status == 413 and answer["error"]["type"] == "too_many_documents"
        assert call(running, "GET", "/v1/documents/x")[0] == 404
    finally:
        stop_server(running)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_dead_reader_stops_the_service_naming_it(tmp_path: Path) -> None:
    """A reader killed (say by the OOM killer) stops the service with an error naming it, for
    its supervisor to restart: never a service quietly left with fewer readers."""
    running = start_server(tmp_path / "store", "--readers", "2",
                           token_file=_token_file(tmp_path))
    try:
        readers = sorted(_wait_for_readers(running.process.pid, 2))
        os.kill(readers[0], signal.SIGKILL)
        code = running.process.wait(timeout=60)
        message = running.process.stderr.read().decode() if running.process.stderr else ""
    finally:
        stop_server(running)
    assert code != 0
    assert "neardup-reader-" in message and "died (exit code -9)" in message, message


def test_a_readers_link_keeps_its_connection_and_resends_on_one_the_writer_closed(
        tmp_path: Path) -> None:
    """WriterLink against a real Unix-socket server: consecutive adds share one connection;
    when the server drops a kept connection (its keep-alive timeout), the next add is sent
    again on a new one and answered; an answer without Content-Length is an error naming
    the writer's socket."""
    import asyncio

    from neardup.errors import OutputError
    from neardup.service.readers import WriterLink

    path = str(tmp_path / "writer.sock")
    opened: list[int] = []
    bodies: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            bodies.append(await reader.readexactly(length))
            reply = b'{"ok": %d}' % len(bodies)
            if bodies[-1] == b"no-length":
                writer.write(b"HTTP/1.1 200 OK\r\n\r\n" + reply)
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\n\r\n" % len(reply) + reply)
            await writer.drain()
            if bodies[-1] == b"then-close":           # as a keep-alive timeout would
                break
        writer.close()

    async def scenario() -> list[object]:
        server = await asyncio.start_unix_server(answer, path)
        link = WriterLink(path, timeout=10)
        found: list[object] = []
        for body in (b"one", b"two", b"then-close", b"three"):
            found.append(await link.add(body, "Bearer t"))
        found.append(len(opened))
        try:
            await link.add(b"no-length", None)
        except OutputError as error:
            found.append(str(error))
        link.close()
        server.close()
        await asyncio.sleep(0.1)                     # the server's handlers see the ends
        return found

    *answers, connections, error = asyncio.run(scenario())
    assert [a[2] for a in answers] == [b'{"ok": 1}', b'{"ok": 2}', b'{"ok": 3}', b'{"ok": 4}']
    assert answers[0][:2] == (200, [(b"content-type", b"application/json")])
    assert bodies[:4] == [b"one", b"two", b"then-close", b"three"]
    assert connections == 2          # one until the server closed it, one after
    assert path in str(error) and "Content-Length" in str(error)


@pytest.mark.slow
def test_reader_processes_answer_queries_sent_at_once_as_each_alone(tmp_path: Path) -> None:
    running = start_server(tmp_path / "store", "--readers", "2",
                           token_file=_token_file(tmp_path))
    try:
        _wait_for_readers(running.process.pid, 2)
        answered_together_as_alone(running, "together")
    finally:
        stop_server(running)
