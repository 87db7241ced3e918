"""The service's ASGI guard: body size limit (413, delivered after the refused body is read,
so that clients see it), JSON-only POST bodies (415), and the timing of every request for the
metrics."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import suppress

from neardup.service.asgi import App, Message, Receive, Scope, Send, send_answer
from neardup.service.metrics import Metrics

__all__ = ["Guard"]

DRAIN_FACTOR = 16
DRAIN_BYTES = 64 << 20
"""A refused body is read and dropped up to this many times the body limit, or DRAIN_BYTES if
larger..."""
DRAIN_SECONDS = 10.0
"""... and for at most this long."""



class Guard:
    """Reads a POST body whole (refusing it once it passes ``max_body_bytes``), checks its
    content type, then hands it to the application; records status and latency per route."""

    def __init__(self, app: App, max_body_bytes: int, metrics: Metrics) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            if scope["method"] in ("POST", "PUT", "PATCH"):
                replay = await self._checked_body(scope, receive, sending)
                if replay is None:
                    return
                receive = replay
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            self.metrics.observe(path, scope["method"], status[0], time.perf_counter() - start)

    async def _checked_body(self, scope: Scope, receive: Receive,
                            send: Send) -> Receive | None:
        headers = _checked_headers(scope)
        declared = headers.get(b"content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            if headers.get(b"expect", "").lower() != "100-continue":   # else nothing was sent
                await self._drain(receive, int(declared))
            await _refuse(send, 413, "body_too_large",
                          f"{declared} bytes; the limit is {self.max_body_bytes}")
            return None
        media = headers.get(b"content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            await _refuse(send, 415, "unsupported_media_type",
                          f"the body must be application/json, not {media or 'untyped'}")
            return None
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                if more:
                    await self._drain(receive, size + 1)
                await _refuse(send, 413, "body_too_large",
                              f"more than {self.max_body_bytes} bytes")
                return None
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = [False]

        async def replay() -> Message:
            if sent[0]:
                return {"type": "http.disconnect"}
            sent[0] = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay


    async def _drain(self, receive: Receive, declared: int) -> None:
        """Read and drop the rest of a refused body, so that the answer reaches the client
        before the connection closes (closing on unread data resets it, and the client sees a
        reset instead of the 413). At most DRAIN_FACTOR times the limit (or DRAIN_BYTES), for
        DRAIN_SECONDS: beyond that the connection is closed unread."""
        cap = max(DRAIN_FACTOR * self.max_body_bytes, DRAIN_BYTES)
        if declared > cap:
            return
        drained = 0
        with suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_SECONDS):
                while drained <= cap:
                    message = await receive()
                    if message["type"] != "http.request" or not message.get("more_body"):
                        return
                    drained += len(message.get("body", b""))


CHECKED = frozenset({b"content-length", b"content-type", b"expect"})
"""The request headers the guard reads (names in lower case, as ASGI servers give them)."""


def _checked_headers(scope: Scope) -> dict[bytes, str]:
    """The values of the CHECKED headers of a request (the last of repeated ones)."""
    return {name: value.decode("latin-1") for name, value in scope.get("headers", [])
            if name in CHECKED}


async def _refuse(send: Send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"code": status, "type": kind, "message": message}}).encode()
    await send_answer(send, status, [(b"content-type", b"application/json"),
                                     (b"connection", b"close")], body)
