"""``POST /v1/documents`` in the serving process, the one that holds the store's writer: the
documents of a request (text, HTML or a base64 WARC record) queued for the group writer, and
each one's outcome. The route is answered without FastAPI's per-request machinery, as
:mod:`neardup.service.queries` answers queries (:class:`AddRoute`); FastAPI keeps the same
route for its schema, and a reader process passes adds on to this one
(:class:`neardup.service.readers.ForwardAdds`)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from neardup.document import Document
from neardup.service.asgi import Receive, Scope
from neardup.service.lean import LeanRoute
from neardup.service.problems import Problem, check_token
from neardup.service.readers import ADD_PATH, header_of, read_body
from neardup.service.schemas import AddAnswer, AddedDocument, AddRequest, DocumentIn
from neardup.service.settings import ServiceConfig
from neardup.service.writer import GroupWriter
from neardup.sources import open_sources
from neardup.sources.fields import host_of
from neardup.store import Store

__all__ = ["AddRoute", "add_answer"]



async def add_answer(store: Store, writer: GroupWriter | None, config: ServiceConfig,
                     body: AddRequest) -> AddAnswer:
    """The answer to a valid add body, once the writer has committed its documents."""
    if len(body.documents) > config.max_documents:
        raise Problem(413, "too_many_documents", f"{len(body.documents)} documents; at "
                      f"most {config.max_documents} per request")
    if writer is None:
        raise Problem(503, "read_only", "this service's store is open read-only")
    docs, slots = _documents(body.documents)
    outcomes: list[tuple[str, int, bool]] = []
    if docs:
        committed = asyncio.wrap_future(writer.submit(docs, body.sweep))
        try:   # awaited on the event loop; shielded: a timeout never cancels the add
            outcomes = await asyncio.wait_for(asyncio.shield(committed), config.add_timeout)
        except TimeoutError:
            raise Problem(503, "timeout", "the add is still queued; retry it (adds are "
                          "idempotent)", {"Retry-After": "5"}) from None
    answers, results = [], iter(outcomes)
    for slot in slots:
        if slot is None:
            id_, doc, stored = next(results)
            slot = AddedDocument(id=id_, doc=doc, status="already-stored" if stored else "added")
        answers.append(slot)
    return AddAnswer(added=sum(a.status == "added" for a in answers),
                     already_stored=sum(a.status == "already-stored" for a in answers),
                     skipped=sum(a.status.startswith("skipped") for a in answers),
                     documents=answers)


def _documents(items: list[DocumentIn]) -> tuple[list[Document], list[AddedDocument | None]]:
    """The store documents of an add, and per document a ready answer (a skipped record) or
    None (its outcome comes from the writer)."""
    docs: list[Document] = []
    slots: list[AddedDocument | None] = []
    for position, item in enumerate(items):
        if item.warc_record is None:
            payload = item.text if item.text is not None else item.html or ""
            docs.append(Document(id=item.id or "", raw=payload.encode("utf-8"),
                                 kind="text" if item.text is not None else "html",
                                 url=item.url, host=host_of(item.url), fetched=item.fetched))
            slots.append(None)
            continue
        doc = _from_warc(item.warc_record, position)
        if isinstance(doc, str):
            slots.append(AddedDocument(id=item.id or f"record-{position}", doc=None,
                                       status=f"skipped:{doc}"))
        else:
            docs.append(dataclasses.replace(doc, id=item.id or doc.id,
                                            url=item.url or doc.url, source=""))
            slots.append(None)
    return docs, slots


def _from_warc(encoded: str, position: int) -> Document | str:
    """The document of one base64 WARC record, or the reason it gives none."""
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as error:
        raise Problem(400, "bad_request", f"documents[{position}].warc_record: not base64 "
                      f"({error})") from error
    with tempfile.TemporaryDirectory(prefix="neardup-record-") as directory:
        path = Path(directory) / "record.warc"
        path.write_bytes(data)
        reader = open_sources([str(path)], media="any")
        found = [doc for doc in reader]
        skipped = reader.stats.as_dict().get("skipped", {})
    if found and found[0].revisit_of is None:
        return found[0]
    if found:
        return "revisit"
    reasons = [k for k, v in skipped.items() if v] if isinstance(skipped, dict) else []
    return reasons[0] if reasons else "no-document"



class AddRoute(LeanRoute):
    """Answers ``POST /v1/documents`` of a service holding its store's writer (the token, the
    body validated by the schema's model, the writer's answer)."""

    path = ADD_PATH

    def takes(self, state: Any) -> bool:
        return state.writer is not None

    async def answer(self, state: Any, scope: Scope, receive: Receive) -> dict[str, Any]:
        check_token(state.config.token, header_of(scope, b"authorization"), "a write")
        data = await read_body(receive)
        if not data:
            raise Problem(422, "invalid", "body: Field required")
        answer = await add_answer(state.store, state.writer, state.config,
                                  AddRequest.model_validate_json(data))
        return answer.model_dump(mode="json")

