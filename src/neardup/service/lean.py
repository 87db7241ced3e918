"""The service's lean routes: a hot ``POST`` route answered without FastAPI's per-request
machinery (dependency resolution, a second validation of the answer, a thread per request),
inside the service's guard (which has already refused an oversized or non-JSON body and times
the request for the metrics), with the same JSON errors as every other route. Every other
request goes on to the next application unchanged."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json
from starlette.responses import JSONResponse

from neardup.errors import NeardupError
from neardup.service.asgi import App, Receive, Scope, Send, send_answer
from neardup.service.problems import (
    Problem,
    error_response,
    invalid_response,
    neardup_response,
)

__all__ = ["LeanRoute"]



class LeanRoute:
    """ASGI: answers ``POST`` to :attr:`path` itself (:meth:`answer`, once the service has a
    store and :meth:`takes` agrees) and passes every other request to ``app``. The route is
    what the guard's metrics read (its ``path``)."""

    path = ""

    def __init__(self, app: App) -> None:
        self.app = app

    def takes(self, state: Any) -> bool:
        """Whether this service answers the route here (its state is attached)."""
        return True

    async def answer(self, state: Any, scope: Scope, receive: Receive) -> Any:
        """The JSON answer of a request; raises a Problem, a ValidationError of its body or a
        library error."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = getattr(scope["app"].state, "neardup", None) if "app" in scope else None
        if scope["type"] != "http" or scope["path"] != self.path or \
                scope["method"] != "POST" or state is None or not self.takes(state):
            await self.app(scope, receive, send)
            return
        scope["route"] = self
        error = await _sent(self.answer(state, scope, receive), send, state.store.root)
        if error is not None:
            await error(scope, receive, send)


async def _sent(answer: Awaitable[Any], send: Send, root: Any) -> JSONResponse | None:
    """Send the JSON of ``answer`` (pydantic's serialiser, without a response object), or
    return the error response of what it raises (``root``: the store's folder, never shown
    to clients)."""
    try:
        body = to_json(await answer)
    except Problem as problem:
        return error_response(problem.status_code, problem.kind, str(problem.detail),
                              dict(problem.headers or {}))
    except ValidationError as error:
        return invalid_response([{**p, "loc": ("body", *p["loc"])} for p in error.errors()])
    except NeardupError as error:
        return neardup_response(error, root)
    await send_answer(send, 200, [(b"content-type", b"application/json")], body)
    return None
