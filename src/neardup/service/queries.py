"""``POST /v1/query``, the service's hot route, answered without FastAPI's per-request
machinery (dependency resolution, a second validation of the answer, a thread per request).

:class:`QueryRoute` sits inside the service's guard (which has already refused an oversized or
non-JSON body and times the request for the metrics) and before FastAPI: it checks the token,
validates the body with the same pydantic model as the OpenAPI schema, asks the store, and
writes the answer with the same JSON errors as every other route. Every other request goes on
to FastAPI unchanged.

The queries that arrive together are answered together (:class:`QueryBatches`): a query joins
the open batch, and the batch is answered once the loop has taken in every request that came
with it (at the end of the loop's turn, or, when the last batch was answered less than the
service's ``query_window`` ago, once that window has passed), with one read of the store for
all of its plain queries (:meth:`Store.query_many`; each answer equals its query's alone). A
batch costs a fixed part (a compiled call per index segment, tally and key run, an SQL
statement) and a part per query about as large: under load, waiting a few milliseconds for a
larger batch saves more CPU than it adds latency, and when the service is idle nothing waits.
A read-only store (a reader process, which has no other work) is asked on the event loop, after
taking in the writer's commits; a writable store is asked in the thread pool, since its writer
thread may hold it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool

from neardup.document import Document
from neardup.errors import NeardupError
from neardup.service.asgi import App, Receive, Scope
from neardup.service.compare import seen_fields
from neardup.service.lean import LeanRoute
from neardup.service.problems import Problem, check_token
from neardup.service.readers import header_of, read_body
from neardup.service.schemas import QueryRequest, query_request
from neardup.store import Store
from neardup.store.lookup import StoreMatch

__all__ = ["QUERY_PATH", "QueryBatches", "QueryRoute", "query_answer", "query_answers"]

QUERY_PATH = "/v1/query"



def query_answer(store: Store, body: QueryRequest) -> dict[str, Any]:
    """The answer to a valid query body (the fields of ``QueryAnswer``)."""
    if body.url is not None:
        try:
            doc, matches = store.query_url(body.url, body.k)
        except KeyError:
            raise Problem(404, "unknown_url", f"no stored document has URL {body.url}") from None
        return _answer_of(store, doc, matches)
    document = _document(body)
    if body.resemblance is not None or body.containment is not None:
        matches = store.similar(document, resemblance=body.resemblance or 0.0,
                                containment=body.containment or 0.0, explain=body.explain)
    else:
        matches = store.query(document, body.k, explain=body.explain)
    return _answer_of(store, None, matches)


def _answer_of(store: Store, doc: int | None, matches: list[StoreMatch]) -> dict[str, Any]:
    """The fields of ``QueryAnswer``: the stored document asked about (by URL), its matches,
    and whether it was seen before."""
    return {"doc": doc, "matches": [m.as_dict() for m in matches],
            **seen_fields(store, matches)}


def query_answers(store: Store, bodies: Sequence[QueryRequest]
                  ) -> list[dict[str, Any] | Exception]:
    """The answer to each valid query body, or the error it gets (a :class:`Problem` or a
    :class:`NeardupError`), as :func:`query_answer` gives them one by one: plain text and
    HTML queries asking the same ``k`` and ``explain`` are answered with one
    :meth:`Store.query_many` (one by one again if it fails, so that each query gets its own
    error)."""
    answers: list[dict[str, Any] | Exception | None] = [None] * len(bodies)
    plain: dict[tuple[int | None, bool], list[int]] = {}
    for position, body in enumerate(bodies):
        if body.url is None and body.resemblance is None and body.containment is None:
            plain.setdefault((body.k, body.explain), []).append(position)
    for (k, explain), positions in plain.items():
        if len(positions) < 2:
            continue
        try:
            found = store.query_many([_document(bodies[p]) for p in positions], k, explain)
        except NeardupError:
            continue
        for position, matches in zip(positions, found, strict=True):
            answers[position] = _answer_of(store, None, matches)
    return [_alone(store, body) if answer is None else answer
            for body, answer in zip(bodies, answers, strict=True)]


def _alone(store: Store, body: QueryRequest) -> dict[str, Any] | Exception:
    try:
        return query_answer(store, body)
    except (Problem, NeardupError) as error:
        return error


def _document(body: QueryRequest) -> Document:
    return Document(id="query", raw=(body.text or body.html or "").encode("utf-8"),
                    kind="text" if body.text is not None else "html")


class QueryBatches:
    """The queries to one store that arrive in one turn of the event loop, answered together.

    :meth:`answer` adds a query to the open batch; the first query of a batch schedules its
    answering for the end of the turn (``call_soon``), so that a batch holds every query whose
    request the loop read in the same turn; or, if the last batch was answered less than
    ``window`` seconds ago, for ``window`` after that (``call_at``), so that a busy service
    answers fewer, larger batches. A read-only store is refreshed once per batch and asked on
    the loop; a writable store is asked in the thread pool, while the next batch gathers."""

    def __init__(self, store: Store, observe: Callable[[int], None] = lambda size: None,
                 window: float = 0.0) -> None:
        """``observe``: told the size of each batch as it is answered (the metrics)."""
        self.store = store
        self.observe = observe
        self.window = window
        self._open: list[tuple[QueryRequest, asyncio.Future[dict[str, Any]]]] = []
        self._running: set[asyncio.Future[None]] = set()
        self._answered = float("-inf")
        """The loop's time when the last batch was answered."""

    async def answer(self, body: QueryRequest) -> dict[str, Any]:
        """The answer to ``body``; raises its Problem or NeardupError."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._open.append((body, future))
        if len(self._open) == 1:
            self._schedule(asyncio.get_running_loop())
        return await future

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        """Answer the batch just opened at the end of this turn, or when the window after
        the last answered batch ends."""
        due = self._answered + self.window
        if loop.time() < due:
            loop.call_at(due, self._close)
        else:
            loop.call_soon(self._close)

    def _close(self) -> None:
        batch, self._open = self._open, []
        if not self.store.read_only:
            task = asyncio.ensure_future(self._in_thread(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            return
        try:
            answers = self._answers(batch)
        except Exception as error:        # every query of the batch learns of it
            answers = [error] * len(batch)
        self._settle(batch, answers)
        self._answered = asyncio.get_running_loop().time()

    async def _in_thread(self, batch: list[tuple[QueryRequest, asyncio.Future[Any]]]) -> None:
        try:
            answers = await run_in_threadpool(self._answers, batch)
        except Exception as error:
            answers = [error] * len(batch)
        self._settle(batch, answers)
        self._answered = asyncio.get_running_loop().time()

    def _answers(self, batch: list[tuple[QueryRequest, asyncio.Future[Any]]]
                 ) -> list[dict[str, Any] | Exception]:
        self.observe(len(batch))
        if self.store.read_only:
            self.store.refresh()
        return query_answers(self.store, [body for body, _ in batch])

    @staticmethod
    def _settle(batch: list[tuple[QueryRequest, asyncio.Future[Any]]],
                answers: Sequence[dict[str, Any] | Exception]) -> None:
        for (_, future), answer in zip(batch, answers, strict=True):
            if future.cancelled():
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)


class QueryRoute(LeanRoute):
    """Answers ``POST /v1/query``: the token (unless reads are public), the body validated
    by the schema's model, the answer from the query batches."""

    path = QUERY_PATH

    def __init__(self, app: App, max_k: int) -> None:
        super().__init__(app)
        self.model = query_request(max_k)
        self._batches: QueryBatches | None = None

    async def answer(self, state: Any, scope: Scope, receive: Receive) -> dict[str, Any]:
        store: Store = state.store
        if not state.config.public_reads:
            check_token(state.config.token, header_of(scope, b"authorization"), "a read")
        body = self._parsed(await read_body(receive))
        if self._batches is None or self._batches.store is not store:
            self._batches = QueryBatches(store, state.metrics.observe_batch,
                                         state.config.query_window)
        return await self._batches.answer(body)

    def _parsed(self, body: bytes) -> QueryRequest:
        if not body:
            raise Problem(422, "invalid", "body: Field required")
        return self.model.model_validate_json(body)

