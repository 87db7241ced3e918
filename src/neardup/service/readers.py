"""Several processes answering one store (``neardup serve --readers N``).

The serving process holds the store's one writer. Each reader process opens the store read-only
and listens on the same address (SO_REUSEPORT: the kernel deals new connections among the
processes). A reader answers reads itself, after refreshing its store to the last commit (one
read of the commit record when nothing changed, so a read sees every add acknowledged before
it), and passes adds to the writer over a private Unix socket, answering with the writer's
answer. Readers die with the serving process (the parent-death signal of the worker pool)."""

from __future__ import annotations

import http.client
import multiprocessing
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

from neardup.errors import OutputError
from neardup.methods.workers import ignore_interrupts
from neardup.service.settings import ServiceConfig

__all__ = ["WriterLink", "listening_socket", "serve_with_readers"]

BACKLOG = 2048
STOP_SECONDS = 10.0


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("writer", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class WriterLink:
    """The way from a reader process to the writer process: an add's body, passed on."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout

    def add(self, body: bytes, authorization: str) -> tuple[int, dict[str, str], bytes]:
        """(status, headers worth passing on, body) of the writer's answer to an add."""
        connection = _UnixConnection(self.path, self.timeout)
        try:
            connection.request("POST", "/v1/documents", body,
                               {"Content-Type": "application/json",
                                "Authorization": authorization})
            response = connection.getresponse()
            headers = {name: value for name, value in response.getheaders()
                       if name.lower() in ("retry-after", "www-authenticate")}
            return response.status, headers, response.read()
        except OSError as error:
            raise OutputError(f"the store's writer process ({self.path}): "
                              f"{getattr(error, 'strerror', None) or error}") from error
        finally:
            connection.close()


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
