"""Several processes answering one store (``neardup serve --readers N``).

The serving process holds the store's one writer. Each reader process opens the store read-only
and listens on the same address (SO_REUSEPORT: the kernel deals new connections among the
processes). A reader answers reads itself, after refreshing its store to the last commit (one
read of the commit record when nothing changed, so a read sees every add acknowledged before
it), and passes adds to the writer over a private Unix socket as they came (:class:`ForwardAdds`:
the writer checks the token and the body), answering with the writer's answer. Readers die
with the serving process (the parent-death signal of the worker pool)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from neardup.errors import OutputError
from neardup.methods.workers import ignore_interrupts
from neardup.service.settings import ServiceConfig

__all__ = ["ForwardAdds", "WriterLink", "listening_socket", "read_body", "serve_with_readers"]

BACKLOG = 2048
STOP_SECONDS = 10.0


ADD_PATH = "/v1/documents"
PASSED_ON = (b"retry-after", b"www-authenticate", b"content-type")
"""Headers of the writer's answer that a reader passes on to its client."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class WriterLink:
    """The way from a reader process to the writer process: an add's body, passed on."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout

    async def add(self, body: bytes, authorization: str | None
                  ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """(status, headers worth passing on, body) of the writer's answer to an add."""
        head = (f"POST {ADD_PATH} HTTP/1.1\r\nHost: writer\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" +
                ("" if authorization is None else f"Authorization: {authorization}\r\n") +
                "\r\n").encode("latin-1")
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_unix_connection(self.path)
                try:
                    writer.write(head + body)
                    answer = await reader.read()
                finally:
                    writer.close()
            return _response(answer)
        except (OSError, TimeoutError, ValueError) as error:
            raise OutputError(f"the store's writer process ({self.path}): "
                              f"{getattr(error, 'strerror', None) or error or 'no answer'}"
                              ) from error


def _response(answer: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, the headers passed on, and body of a whole HTTP/1.1 answer (read to EOF)."""
    head, separator, body = answer.partition(b"\r\n\r\n")
    if not separator:
        raise ValueError(f"a cut answer ({len(answer)} bytes)")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() in PASSED_ON:
            headers.append((name.strip().lower(), value.strip()))
    return status, headers, body


class ForwardAdds:
    """ASGI, in a reader process: ``POST /v1/documents`` goes to the writer process as it came
    (the writer checks the token, the body and its size); every other request to ``app``."""

    def __init__(self, app: App, link: WriterLink) -> None:
        self.app = app
        self.link = link

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != ADD_PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        scope["route"] = _AddRoute
        body = await read_body(receive)
        authorization = next((value.decode("latin-1") for name, value in scope["headers"]
                              if name.lower() == b"authorization"), None)
        try:
            status, headers, answer = await self.link.add(body, authorization)
        except OutputError as error:
            status, headers = 503, [(b"content-type", b"application/json"),
                                    (b"retry-after", b"5")]
            answer = json.dumps({"error": {"code": 503, "type": "store_unavailable",
                                           "message": str(error)}}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [*headers, (b"content-length", str(len(answer)).encode())]})
        await send({"type": "http.response.body", "body": answer})


class _AddRoute:
    """What the guard's metrics read of a matched route."""

    path = ADD_PATH


async def read_body(receive: Receive) -> bytes:
    """The whole body of an ASGI request."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port) that other processes may share."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise OutputError(f"{host}:{port}: {error.strerror or error}") from error
    return sock


def _unix_socket(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(BACKLOG)
    return sock


def serve_with_readers(app: Any, config: ServiceConfig, store_dir: Path, host: str, port: int,
                       readers: int) -> None:
    """Serve ``app`` (holding the store's writer) on (host, port) with ``readers`` reader
    processes beside it; returns when the server stops (SIGTERM, Ctrl-C), readers stopped."""
    import uvicorn

    public = listening_socket(host, port)
    port = public.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="neardup-writer-") as folder:
        link = os.path.join(folder, "writer.sock")
        private = _unix_socket(link)
        context = multiprocessing.get_context("fork")   # no thread runs yet; ends in _exit
        processes = [context.Process(target=_reader, name=f"neardup-reader-{n}",
                                     args=(str(store_dir), config, host, port, link))
                     for n in range(readers)]
        for process in processes:
            process.start()
        try:
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
            server.run(sockets=[public, private])
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.join(STOP_SECONDS)
                if process.is_alive():
                    process.kill()
                    process.join()
            public.close()
            private.close()


def _reader(store_dir: str, config: ServiceConfig, host: str, port: int, link: str) -> None:
    """A reader process: the store read-only, reads answered here, adds passed to ``link``.
    Forked from the serving process, it never touches that process's store (and leaves by
    ``os._exit``, as every forked multiprocessing child does, closing none of it)."""
    ignore_interrupts()                       # Ctrl-C is the serving process's; die with it
    import uvicorn

    from neardup.service.app import create_app
    from neardup.store import open_store

    with open_store(store_dir, read_only=True) as store:
        app = create_app(config, store, WriterLink(link, config.add_timeout + 5))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        server.run(sockets=[listening_socket(host, port)])
