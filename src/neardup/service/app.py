"""The HTTP API over one store (FastAPI): add, query, documents, clusters, lost and found,
health, metrics. Thin: it parses, calls the store, renders.

Every ``/v1`` route and ``/metrics`` needs ``Authorization: Bearer <token>`` (reads can be
opened with ``public_reads``); ``/healthz`` is open. POST bodies must be JSON and at most
``max_body_bytes``; every error is JSON ``{"error": {"code", "type", "message"}}``. Route
handlers are plain functions, run in the server's thread pool, off the event loop; adds go to
the one writer thread, which commits queued adds together (group commit)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import PurePath
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from neardup.cluster.sweeps import most_recent_url
from neardup.config import StoreConfig
from neardup.errors import NeardupError
from neardup.service.adds import AddRoute, add_answer
from neardup.service.compare import add_compare_route
from neardup.service.docs import add_offline_docs
from neardup.service.guard import Guard
from neardup.service.metrics import Metrics
from neardup.service.problems import (
    Problem,
    check_token,
    error_response,
    invalid_response,
    neardup_response,
)
from neardup.service.queries import QUERY_PATH, QueryRoute, query_answer
from neardup.service.readers import ADD_PATH, ForwardAdds, WriterLink
from neardup.service.schemas import (
    AddAnswer,
    AddRequest,
    ErrorAnswer,
    Health,
    QueryAnswer,
    QueryRequest,
    query_request,
)
from neardup.service.settings import ServiceConfig
from neardup.service.writer import GroupWriter
from neardup.store import Store

__all__ = ["create_app", "openapi_document"]

VERSION = "1"
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorAnswer, "description": text} for code, text in (
        (400, "Malformed request"), (401, "Missing or wrong token"),
        (404, "Unknown id or URL"), (413, "Body too large"), (415, "Not JSON"),
        (422, "Invalid fields"), (503, "Busy or out of space: retry after Retry-After"))}


@dataclass(slots=True)
class _State:
    store: Store
    config: ServiceConfig
    writer: GroupWriter | None
    metrics: Metrics


async def _state(request: Request) -> _State:
    """The service's state (a coroutine: FastAPI would run a plain function in a thread)."""
    return _attached(request)


def _attached(request: Request) -> _State:
    state = getattr(request.app.state, "neardup", None)
    if state is None:
        raise Problem(503, "not_ready", "the service has no store attached")
    assert isinstance(state, _State)
    return state


async def _writer_token(request: Request,
                        authorization: Annotated[str | None, Header()] = None) -> None:
    """Writes need ``Authorization: Bearer <token>``."""
    check_token(_attached(request).config.token, authorization, "a write")


async def _reader_token(request: Request) -> None:
    """Every ``/v1`` route and ``/metrics`` needs the token too, unless the service was
    started with public reads; ``/healthz`` stays open (liveness)."""
    path = request.scope.get("path", "")
    if not (path.startswith("/v1/") or path == "/metrics"):
        return
    if not _attached(request).config.public_reads:
        check_token(_attached(request).config.token, request.headers.get("authorization"),
                    "a read")


async def _fresh(request: Request) -> None:
    """A read-only store (a reader process) takes in the writer's commits first (in the
    thread pool: it may wait for the store's lock)."""
    state = getattr(request.app.state, "neardup", None)
    if state is not None and state.store.read_only and state.store.stale():
        await run_in_threadpool(state.store.refresh)


StateDep = Annotated[_State, Depends(_state)]


class _Service(FastAPI):
    """FastAPI, with its hot routes taken before FastAPI's per-request middleware (error
    pages, telemetry checks, its body limit) once a store is attached: ``POST /v1/query``
    through the service's guard to :class:`QueryRoute`, and ``POST /v1/documents`` of the
    process holding the writer to :class:`AddRoute`, each of which answers its route alone."""

    hot: Any = None
    forwards = False
    """A reader process: adds go to the writer process (:class:`ForwardAdds`, hot too)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.hot is not None and scope["type"] == "http" and scope["method"] == "POST":
            state = getattr(self.state, "neardup", None)
            if state is not None and (scope["path"] == QUERY_PATH or (
                    scope["path"] == ADD_PATH and (state.writer is not None or
                                                   self.forwards))):
                scope["app"] = self
                await self.hot(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(config: ServiceConfig, store: Store | None = None,
               link: WriterLink | None = None) -> FastAPI:
    """The FastAPI application; with a ``store`` it serves it (a writer thread is started when
    the application starts and stopped when it stops). A read-only store (a reader process)
    is refreshed before each request, and its adds go to the writer process through ``link``."""
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        writer = None
        if store is not None:
            if not store.read_only:
                writer = GroupWriter(store, config.group_max, config.queue_limit,
                                     config.add_window)
            app.state.neardup = _State(store, config, writer, metrics)
        try:
            yield
        finally:
            if writer is not None:
                writer.close()

    app = _Service(title="neardup", version=VERSION, lifespan=lifespan,
                  description="Near-duplicate detection over a persistent neardup store.",
                  dependencies=[Depends(_reader_token), Depends(_fresh)],
                  docs_url=None, redoc_url=None)
    add_offline_docs(app, "neardup")
    add_compare_route(app, ERRORS)
    max_k = (store.config if store is not None else StoreConfig()).max_k
    rest: Any = functools.partial(FastAPI.__call__, app)
    if link is not None:                              # a reader: adds go to the writer
        app.forwards, rest = True, ForwardAdds(rest, link)
    app.hot = Guard(QueryRoute(AddRoute(rest), max_k=max_k),
                    max_body_bytes=config.max_body_bytes, metrics=metrics)
    app.add_middleware(Guard, max_body_bytes=config.max_body_bytes, metrics=metrics)
    _handlers(app)
    _write_routes(app)
    _read_routes(app, max_k)
    return app


def openapi_document() -> dict[str, Any]:
    """The service's OpenAPI schema (as served at /openapi.json)."""
    schema: dict[str, Any] = create_app(ServiceConfig(token="x" * 16)).openapi()
    return schema


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        kind = getattr(error, "kind", {404: "not_found", 405: "method_not_allowed"}.get(
            error.status_code, "http_error"))
        return error_response(error.status_code, kind, str(error.detail), dict(error.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return invalid_response(error.errors())

    @app.exception_handler(NeardupError)
    async def neardup_error(request: Request, error: NeardupError) -> JSONResponse:
        state = getattr(request.app.state, "neardup", None)
        return neardup_response(error, None if state is None else state.store.root)


def _without_paths(row: dict[str, object]) -> dict[str, object]:
    """A stored row as a client sees it: its source file by name, never the server's path."""
    source = row.get("source")
    return {**row, "source": None if source is None else PurePath(str(source)).name}


def _write_routes(app: FastAPI) -> None:
    @app.post("/v1/documents", response_model=AddAnswer, responses=ERRORS,
              dependencies=[Depends(_writer_token)], summary="Add documents (token required)")
    async def add_documents(body: AddRequest, request: Request, state: StateDep) -> Any:
        return await add_answer(state.store, state.writer, state.config, body)


def _read_routes(app: FastAPI, max_k: int) -> None:
    # the schema of the route QueryRoute answers (which leaves this one the 503 of a service
    # with no store attached yet)
    def query(body: QueryRequest, state: StateDep) -> dict[str, Any]:
        return query_answer(state.store, body)

    query.__annotations__["body"] = query_request(max_k)   # k bounded as the store bounds it
    app.post("/v1/query", response_model=QueryAnswer, responses=ERRORS,
             summary="Stored near-copies of a text, an HTML page or a stored URL")(query)

    @app.get("/v1/documents/{id:path}", responses=ERRORS,
             summary="A stored document by its id (any characters, percent-encoded)")
    def document(id: str, state: StateDep) -> dict[str, object]:
        found = state.store.document(id)
        if found is None:
            raise Problem(404, "unknown_id", f"no stored document has id {id}")
        return _without_paths(found)

    @app.get("/v1/clusters/{id:path}", responses=ERRORS,
             summary="The cluster of a stored document and every URL in it")
    def cluster(id: str, state: StateDep) -> dict[str, object]:
        found = state.store.document(id)
        if found is None:
            raise Problem(404, "unknown_id", f"no stored document has id {id}")
        members = state.store.cluster(int(str(found["doc"])))
        return {"cluster": found["cluster"], "documents": [
            {k: m[k] for k in ("doc", "id", "url", "sweep", "fetched")} for m in members],
            "urls": sorted({str(m["url"]) for m in members if m["url"] is not None})}

    @app.get("/v1/lost-and-found", responses=ERRORS,
             summary="The most recent other URL of a URL's cluster (Broder et al.)")
    def lost_and_found(url: Annotated[str, Query(max_length=8192)],
                       state: StateDep) -> dict[str, object]:
        sightings, order = state.store.sightings()
        if not any(s.url == url for s in sightings):
            raise Problem(404, "unknown_url", f"{url} was not seen in any sweep of the store")
        found = most_recent_url(sightings, url, order)
        return {"url": url, "found": None if found is None else dataclasses.asdict(found)}

    @app.get("/healthz", response_model=Health, summary="Liveness and store size")
    def health(state: StateDep) -> Health:
        store = state.store
        return Health(status="ok", documents=len(store), segments=len(store.segments),
                      delta=store.index.delta_size)

    @app.get("/metrics", response_class=PlainTextResponse,
             summary="Prometheus metrics (text format 0.0.4)")
    def metrics(state: StateDep) -> PlainTextResponse:
        store = state.store
        gauges = {
            "neardup_store_documents": ("Documents in the store.", float(len(store))),
            "neardup_store_segments": ("Segments in the store.", float(len(store.segments))),
            "neardup_store_delta": ("Documents in the insert log.",
                                    float(store.index.delta_size))}
        writer = state.writer
        if writer is not None:              # the serving process (a reader has none)
            gauges.update({
                "neardup_writer_queue": ("Adds waiting for the writer.",
                                         float(writer.pending.qsize())),
                "neardup_writer_groups": ("Group commits so far.", float(writer.groups)),
                "neardup_writer_grouped_adds": ("Adds committed in those groups.",
                                                float(writer.grouped_adds))})
        return PlainTextResponse(state.metrics.render(gauges),
                                 media_type="text/plain; version=0.0.4")
