"""Several processes answering one store (``neardup serve --readers N``).

The serving process holds the store's one writer and answers adds only. Each reader process
opens the store read-only and listens on the public address (SO_REUSEPORT: the kernel deals
new connections among the readers; the serving process keeps the address bound but does not
listen, so no connection waits on the writer). A reader answers reads itself, after refreshing
its store to the last commit (one read of the commit record when nothing changed, so a read
sees every add acknowledged before it), and passes adds to the writer over a private Unix
socket as they came (:class:`ForwardAdds`: the writer checks the token and the body),
answering with the writer's answer. The serving process compiles the query kernels before it
forks, so that readers start warm. Readers die with the serving process (the parent-death
signal of the worker pool); a reader that dies stops the service, with an error naming it,
for its supervisor to restart (a service left with fewer readers would answer slower without
saying why)."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import multiprocessing.connection
import os
import socket
import tempfile
import threading
import time
from typing import Any

from neardup.errors import OutputError
from neardup.methods.workers import ignore_interrupts
from neardup.service.asgi import App, Receive, Scope, Send, send_answer
from neardup.service.problems import error_response
from neardup.service.settings import ServiceConfig
from neardup.store import Store

__all__ = ["ADD_PATH", "ForwardAdds", "WriterLink", "bound_socket", "header_of",
           "listening_socket", "read_body", "serve_with_readers"]

BACKLOG = 2048
STOP_SECONDS = 10.0
READY_SECONDS = 600.0
"""How long a reader may take to open the store and listen (a large insert log is read)."""
LOG = logging.getLogger("neardup.service")


ADD_PATH = "/v1/documents"
PASSED_ON = (b"retry-after", b"www-authenticate", b"content-type")
"""Headers of the writer's answer that a reader passes on to its client."""



class WriterLink:
    """The way from a reader process to the writer process: an add's body, passed on over
    connections kept open between adds (opening one per add cost a reader as much as the
    rest of passing it on)."""

    KEPT = 16
    """Idle connections kept at most."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def add(self, body: bytes, authorization: str | None
                  ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """(status, headers worth passing on, body) of the writer's answer to an add. On a
        kept connection that the writer closed meanwhile (nothing came back), the add is sent
        once more on a new one: adds are idempotent."""
        head = (f"POST {ADD_PATH} HTTP/1.1\r\nHost: writer\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" +
                ("" if authorization is None else f"Authorization: {authorization}\r\n") +
                "\r\n").encode("latin-1")
        try:
            async with asyncio.timeout(self.timeout):
                while self._idle:
                    answer = await self._exchange(self._idle.pop(), head + body)
                    if answer is not None:
                        return answer
                answer = await self._exchange(
                    await asyncio.open_unix_connection(self.path), head + body)
                if answer is None:
                    raise ConnectionResetError("the writer closed the connection")
                return answer
        except (OSError, TimeoutError, ValueError) as error:
            raise OutputError(f"the store's writer process ({self.path}): "
                              f"{getattr(error, 'strerror', None) or error or 'no answer'}"
                              ) from error

    def close(self) -> None:
        """Close the kept connections."""
        while self._idle:
            self._idle.pop()[1].close()

    async def _exchange(self, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                        request: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        """The answer to ``request`` on ``connection`` (kept for the next add unless the
        writer closes it); None if the connection ended before any answer."""
        reader, writer = connection
        try:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return None
        except BaseException:
            writer.close()
            raise
        try:
            status, headers, length, closing = _head(head)
            answer = await reader.readexactly(length)
        except BaseException:
            writer.close()
            raise
        if closing or len(self._idle) >= self.KEPT:
            writer.close()
        else:
            self._idle.append(connection)
        return status, headers, answer


def _head(head: bytes) -> tuple[int, list[tuple[bytes, bytes]], int, bool]:
    """Status, the headers passed on, the body's length and whether the writer closes the
    connection, from an HTTP/1.1 answer's head."""
    lines = head.rstrip(b"\r\n").split(b"\r\n")
    status = int(lines[0].split()[1])
    headers, length, closing = [], None, False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name, value = name.strip().lower(), value.strip()
        if name in PASSED_ON:
            headers.append((name, value))
        elif name == b"content-length":
            length = int(value)
        elif name == b"connection":
            closing = value.lower() == b"close"
    if length is None:
        raise ValueError("an answer without Content-Length")
    return status, headers, length, closing


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
        authorization = header_of(scope, b"authorization")
        try:
            status, headers, answer = await self.link.add(body, authorization)
        except OutputError as error:
            refused = error_response(503, "store_unavailable", str(error), {"Retry-After": "5"})
            await refused(scope, receive, send)
            return
        await send_answer(send, status, headers, answer)


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


def header_of(scope: Scope, name: bytes) -> str | None:
    """The value of a request's header ``name`` (lower case), None without one."""
    for key, value in scope["headers"]:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port) that other processes may share."""
    sock = bound_socket(host, port)
    sock.listen(BACKLOG)
    return sock


def bound_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) that other processes may share (SO_REUSEPORT)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise OutputError(f"{host}:{port}: {error.strerror or error}") from error
    return sock


def _unix_socket(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(BACKLOG)
    return sock


def serve_with_readers(app: Any, config: ServiceConfig, store: Store, host: str, port: int,
                       readers: int) -> None:
    """Serve ``app`` (holding ``store``'s writer) with ``readers`` reader processes answering
    on (host, port); returns when the server stops (SIGTERM, Ctrl-C), readers stopped.
    OutputError when a reader did not start or died."""
    import uvicorn

    from neardup.service.server import server_options

    public = bound_socket(host, port)             # the port held; the readers listen on it
    port = public.getsockname()[1]
    store.warm_up()                   # the readers it forks inherit compiled kernels
    with tempfile.TemporaryDirectory(prefix="neardup-writer-") as folder:
        link = os.path.join(folder, "writer.sock")
        private = _unix_socket(link)
        context = multiprocessing.get_context("fork")   # no thread runs yet; ends in _exit
        ready = [context.Event() for _ in range(readers)]
        processes = [context.Process(target=_reader, name=f"neardup-reader-{n}",
                                     args=(str(store.root), config, host, port, link, ready[n]))
                     for n in range(readers)]
        for process in processes:
            process.start()
        server = uvicorn.Server(uvicorn.Config(app, **server_options()))
        lost: list[str] = []
        try:
            _await_readers(processes, ready)
            threading.Thread(target=_watch, args=(processes, server, lost), daemon=True,
                             name="neardup-reader-watch").start()
            server.run(sockets=[private])
        finally:
            _stop(processes)
            public.close()
            private.close()
        if lost:
            raise OutputError(f"{store.root}: {lost[0]}; the service stopped")


def _await_readers(processes: list[Any], ready: list[Any]) -> None:
    """Wait until every reader listens; OutputError naming one that died first."""
    deadline = time.monotonic() + READY_SECONDS
    for process, event in zip(processes, ready, strict=True):
        while not event.wait(0.1):
            if not process.is_alive():
                raise OutputError(f"{process.name} exited while starting (code "
                                  f"{process.exitcode})")
            if time.monotonic() > deadline:
                raise OutputError(f"{process.name} did not start within {READY_SECONDS:.0f} s")


def _watch(processes: list[Any], server: Any, lost: list[str]) -> None:
    """Stop the server when a reader dies (its connections are gone; the port has fewer
    listeners)."""
    gone = multiprocessing.connection.wait([p.sentinel for p in processes])
    if server.should_exit:
        return
    dead = next(p for p in processes if p.sentinel in gone)
    dead.join(1.0)
    lost.append(f"{dead.name} died (exit code {dead.exitcode})")
    LOG.error("neardup: %s; stopping the service", lost[0])
    server.should_exit = True


def _stop(processes: list[Any]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(STOP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()


def _reader(store_dir: str, config: ServiceConfig, host: str, port: int, link: str,
            ready: Any) -> None:
    """A reader process: the store read-only, reads answered here, adds passed to ``link``.
    Forked from the serving process, it never touches that process's store (and leaves by
    ``os._exit``, as every forked multiprocessing child does, closing none of it)."""
    ignore_interrupts()                       # Ctrl-C is the serving process's; die with it
    import uvicorn

    from neardup.service.app import create_app
    from neardup.service.server import server_options
    from neardup.store import open_store

    with open_store(store_dir, read_only=True) as store:
        app = create_app(config, store, WriterLink(link, config.add_timeout + 5))
        server = uvicorn.Server(uvicorn.Config(app, **server_options()))
        sock = listening_socket(host, port)
        ready.set()
        server.run(sockets=[sock])
