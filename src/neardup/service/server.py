"""The service's HTTP server: uvicorn (httptools and uvloop when installed), with each
connection's writes of one event-loop turn sent together.

An ASGI response comes as two messages, its head and its body, and uvicorn writes each to the
socket as it comes: two system calls and, on a loopback or a LAN, two packets per answer, the
first of which wakes the client for half an answer. :class:`TurnWrites` keeps what is written
during one turn of the loop and sends it with one write at the turn's end (or at once when the
connection closes), so that a small answer leaves in one packet. Nothing waits longer than the
turn that wrote it, and no more than :data:`HELD_BYTES` are held (a large answer is written
as it comes)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

__all__ = ["HELD_BYTES", "TurnWrites", "server_options"]

HELD_BYTES = 1 << 16
"""The most a connection holds back within a turn: more is written at once."""


class TurnWrites:
    """A transport that passes on the writes of one loop turn as one write; every other call
    goes to the socket's transport unchanged."""

    __slots__ = ("_held", "_loop", "_pending", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._held = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        chunk = bytes(data)
        self._pending.append(chunk)
        self._held += len(chunk)
        if self._held >= HELD_BYTES:
            self.flush()

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Write what this turn wrote (nothing once the connection is closing)."""
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._held = 0
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending.clear()
        self._held = 0
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._held

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _protocol() -> Any:
    """uvicorn's httptools protocol, its connections' transports wrapped in
    :class:`TurnWrites`; None without httptools (uvicorn then picks its own)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None

    class TurnWritesProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(cast(asyncio.Transport, TurnWrites(transport, self.loop)))

    return TurnWritesProtocol


def server_options() -> dict[str, Any]:
    """The uvicorn options of the service (quiet, no access log, :class:`TurnWrites`), for
    ``uvicorn.Config`` or ``uvicorn.run``."""
    protocol = _protocol()
    return {"log_level": "warning", "access_log": False,
            **({"http": protocol} if protocol is not None else {})}
