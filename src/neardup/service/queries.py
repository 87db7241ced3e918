"""``POST /v1/query``, the service's hot route, answered without FastAPI's per-request
machinery (dependency resolution, a second validation of the answer, a thread per request).

:class:`QueryRoute` sits inside the service's guard (which has already refused an oversized or
non-JSON body and times the request for the metrics) and before FastAPI: it checks the token,
validates the body with the same pydantic model as the OpenAPI schema, asks the store, and
writes the answer with the same JSON errors as every other route. A read-only store (a reader
process, which has no other work) is asked on the event loop, after taking in the writer's
commits; a writable store is asked in the thread pool, since its writer thread may hold it.
Every other request goes on to FastAPI unchanged."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from neardup.document import Document
from neardup.errors import NeardupError
from neardup.service.compare import seen_fields
from neardup.service.problems import (
    Problem,
    check_token,
    error_response,
    invalid_response,
    neardup_response,
)
from neardup.service.readers import read_body
from neardup.service.schemas import QueryRequest, query_request
from neardup.store import Store

__all__ = ["QUERY_PATH", "QueryRoute", "query_answer"]

QUERY_PATH = "/v1/query"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def query_answer(store: Store, body: QueryRequest) -> dict[str, Any]:
    """The answer to a valid query body (the fields of ``QueryAnswer``)."""
    if body.url is not None:
        try:
            doc, matches = store.query_url(body.url, body.k)
        except KeyError:
            raise Problem(404, "unknown_url", f"no stored document has URL {body.url}") from None
        return {"doc": doc, "matches": [m.as_dict() for m in matches],
                **seen_fields(store, matches)}
    document = Document(id="query", raw=(body.text or body.html or "").encode("utf-8"),
                        kind="text" if body.text is not None else "html")
    if body.resemblance is not None or body.containment is not None:
        matches = store.similar(document, resemblance=body.resemblance or 0.0,
                                containment=body.containment or 0.0, explain=body.explain)
    else:
        matches = store.query(document, body.k, explain=body.explain)
    return {"doc": None, "matches": [m.as_dict() for m in matches],
            **seen_fields(store, matches)}


def fresh_answer(store: Store, body: QueryRequest) -> dict[str, Any]:
    """:func:`query_answer` of a read-only store after taking in the writer's commits (a
    query sees every add acknowledged before it)."""
    store.refresh()
    return query_answer(store, body)


class _Route:
    """What the guard's metrics read of a matched route."""

    path = QUERY_PATH


class QueryRoute:
    """ASGI: answers ``POST /v1/query`` itself and passes every other request to ``app``."""

    def __init__(self, app: App, max_k: int) -> None:
        self.app = app
        self.model = query_request(max_k)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = getattr(scope["app"].state, "neardup", None) if "app" in scope else None
        if scope["type"] != "http" or scope["path"] != QUERY_PATH or \
                scope["method"] != "POST" or state is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = _Route
        response = await self._answer(state, scope, receive)
        await response(scope, receive, send)

    async def _answer(self, state: Any, scope: Scope, receive: Receive) -> Response:
        store: Store = state.store
        try:
            if not state.config.public_reads:
                check_token(state.config.token, _header(scope, b"authorization"), "a read")
            body = self._parsed(await read_body(receive))
            if store.read_only:
                answer = fresh_answer(store, body)
            else:
                answer = await run_in_threadpool(query_answer, store, body)
        except Problem as problem:
            return error_response(problem.status_code, problem.kind, str(problem.detail),
                                  dict(problem.headers or {}))
        except ValidationError as error:
            return invalid_response([{**p, "loc": ("body", *p["loc"])} for p in error.errors()])
        except NeardupError as error:
            return neardup_response(error, store.root)
        return JSONResponse(answer)

    def _parsed(self, body: bytes) -> QueryRequest:
        if not body:
            raise Problem(422, "invalid", "body: Field required")
        return self.model.model_validate_json(body)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


