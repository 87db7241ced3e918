"""The ASGI interface's types, as the service's own middleware and routes use them, and the
sending of a whole answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["App", "Message", "Receive", "Scope", "Send", "send_answer"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


async def send_answer(send: Send, status: int, headers: list[tuple[bytes, bytes]],
                      body: bytes) -> None:
    """Send a whole answer: its status, ``headers`` and a Content-Length, then ``body``."""
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})
