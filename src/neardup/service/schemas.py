"""The JSON bodies of the service's requests and answers (they make its OpenAPI schema)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

__all__ = [
    "AddAnswer",
    "AddRequest",
    "AddedDocument",
    "DocumentIn",
    "ErrorAnswer",
    "Health",
    "QueryAnswer",
    "QueryRequest",
    "query_request",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIn(_Strict):
    """One document to add: exactly one of ``text``, ``html`` or ``warc_record`` (one WARC
    record, base64). ``id`` is the crawler's key: adding the same id with the same bytes again
    stores nothing (``already_stored``)."""

    id: str | None = Field(None, max_length=2048, description="Required unless warc_record.")
    url: str | None = Field(None, max_length=8192)
    fetched: str | None = Field(None, max_length=64, description="ISO-8601 fetch time.")
    text: str | None = None
    html: str | None = None
    warc_record: str | None = Field(None, description="One WARC record, base64-encoded.")

    @model_validator(mode="after")
    def _one_payload(self) -> DocumentIn:
        names = ("text", "html", "warc_record")
        given = [name for name in names if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, html, warc_record")
        if self.warc_record is None and not self.id:
            raise ValueError("id is required for text and html documents")
        return self


class AddRequest(_Strict):
    documents: list[DocumentIn] = Field(min_length=1)
    sweep: str | None = Field(None, max_length=256, description="Crawl sweep label.")


class AddedDocument(BaseModel):
    id: str
    doc: int | None = Field(description="Its number in the store (None: skipped).")
    status: str = Field(description="added, already-stored, or skipped:<reason>")


class AddAnswer(BaseModel):
    added: int
    already_stored: int
    skipped: int
    documents: list[AddedDocument]


class QueryRequest(_Strict):
    """A query: exactly one of ``text``, ``html`` or ``url`` (a stored URL). By default the
    stored documents within ``k`` bits of its simhash; with ``resemblance`` or ``containment``
    the sketch search (text or html only)."""

    text: str | None = None
    html: str | None = None
    url: str | None = Field(None, max_length=8192)
    k: int | None = Field(None, ge=0, le=16, description="At most the store's max_k.")
    resemblance: float | None = Field(None, ge=0.0, le=1.0)
    containment: float | None = Field(None, ge=0.0, le=1.0)
    explain: bool = False

    @model_validator(mode="after")
    def _one_query(self) -> QueryRequest:
        given = [name for name in ("text", "html", "url") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, html, url")
        sketch = self.resemblance is not None or self.containment is not None
        if sketch and self.url is not None:
            raise ValueError("resemblance and containment take text or html")
        return self


def query_request(max_k: int) -> type[QueryRequest]:
    """The query body of a store whose ``max_k`` bounds ``k`` (its schema says that bound)."""
    return create_model(
        "QueryRequest", __base__=QueryRequest, __doc__=QueryRequest.__doc__,
        k=(int | None, Field(None, ge=0, le=max_k,
                             description=f"At most the store's max_k ({max_k}).")))


class QueryAnswer(BaseModel):
    doc: int | None = Field(None, description="For a url query: the stored document queried.")
    matches: list[dict[str, object]]
    seen: bool = Field(False, description="A stored document is at distance 0 or resembles "
                       "the query at least seen_threshold.")
    seen_threshold: float | None = Field(None, description="The store's resemblance threshold.")
    nearest: dict[str, object] | None = Field(None, description="The nearest match, if any.")


class Health(BaseModel):
    status: str
    documents: int
    segments: int
    delta: int


class ErrorAnswer(BaseModel):
    error: dict[str, object] = Field(description="code, type and message")
