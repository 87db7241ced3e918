"""The pair view over HTTP, and the plain "seen before" of a query answer.

``GET /v1/documents/{a}/compare/{b}`` scores two stored documents against each other as a query
of ``a`` would score ``b`` (Hamming distance, relation, sketch estimates, exact scores when the
store keeps shingles). ``POST /v1/compare`` takes two documents (text or HTML) and answers
the library's pair view (:func:`neardup.analysis.pairview.compare_texts`) with the store's text
extraction and shingles:
canonical tokens of both, the indices of the tokens inside a shared shingle, resemblance and
both containments. The store keeps no text, so the texts come with the request.

A query answer's ``seen`` is true when a stored document is at Hamming distance 0 or resembles
the query at least the store's threshold (``sketch_clusters`` when the store clusters by
sketches, else the resemblance that confirms a simhash pair, 0.5); ``nearest`` is the first
(nearest) match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Body, FastAPI, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException

from neardup.analysis.pairview import compare_texts
from neardup.config import DEFAULT_MIN_RESEMBLANCE, Extractor, ShingleConfig
from neardup.document import Document
from neardup.methods.fingerprinter import document_text
from neardup.store import Store
from neardup.store.lookup import StoreMatch

__all__ = ["CompareRequest", "add_compare_route", "seen_fields", "seen_threshold"]


class CompareSide(BaseModel):
    """One side of a comparison: exactly one of ``text`` or ``html``."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    html: str | None = None

    @model_validator(mode="after")
    def _one(self) -> CompareSide:
        if (self.text is None) == (self.html is None):
            raise ValueError("give exactly one of text, html")
        return self


class CompareRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: CompareSide
    b: CompareSide


class CompareAnswer(BaseModel):
    resemblance: float
    containment_ab: float = Field(description="Share of a's shingles that b holds.")
    containment_ba: float = Field(description="Share of b's shingles that a holds.")
    shared_shingles: int
    shingles_a: int
    shingles_b: int
    shingle_width: int
    a: dict[str, Any] = Field(description="tokens (canonical form) and marked token indices")
    b: dict[str, Any]


def seen_threshold(store: Store) -> float:
    """The resemblance from which a stored document counts as the query seen before."""
    clusters = store.config.sketch_clusters
    return clusters if clusters is not None else DEFAULT_MIN_RESEMBLANCE


def _resemblance(match: StoreMatch) -> float | None:
    return match.exact_resemblance if match.exact_resemblance is not None else match.resemblance


def seen_fields(store: Store, matches: Sequence[StoreMatch]) -> dict[str, Any]:
    """``seen``, ``seen_threshold`` and ``nearest`` of a query answer."""
    threshold = seen_threshold(store)
    seen = any(m.distance == 0 or ((_resemblance(m) or 0.0) >= threshold) for m in matches)
    return {"seen": seen, "seen_threshold": threshold,
            "nearest": matches[0].as_dict() if matches else None}


def _side_text(side: CompareSide, extract: Extractor) -> str:
    if side.text is not None:
        return side.text
    doc = Document(id="compare", raw=(side.html or "").encode("utf-8"), kind="html")
    return document_text(doc, extract)


def _stored(store: Store, key: str) -> dict[str, object]:
    found = store.document(key)
    if found is None:
        raise HTTPException(404, f"no stored document has id {key}")
    return found


def add_compare_route(app: FastAPI, errors: dict[int | str, dict[str, Any]]) -> None:
    """``POST /v1/compare``: the pair view of two documents; ``GET
    /v1/documents/{a}/compare/{b}``: two stored documents scored against each other."""

    @app.get("/v1/documents/{a}/compare/{b}", responses=errors,
             summary="Two stored documents compared: distance, relation, resemblance and "
                     "containment (the store keeps no text: POST /v1/compare shows texts)")
    def compare_stored(a: str, b: str, request: Request) -> dict[str, object]:
        store = getattr(getattr(request.app.state, "neardup", None), "store", None)
        if not isinstance(store, Store):
            raise HTTPException(503, "the service has no store attached")
        first, second = _stored(store, a), _stored(store, b)
        match = store.compare(int(str(first["doc"])), int(str(second["doc"])))
        if match is None:
            raise HTTPException(404, f"{a} or {b} is no longer stored")
        scores = match.as_dict()
        return {"a": first, "b": second, "same_cluster": first["cluster"] == second["cluster"],
                **{k: scores[k] for k in (
                    "distance", "relation", "resemblance", "containment",
                    "containment_reverse", "exact_resemblance", "exact_containment",
                    "exact_containment_reverse", "template_values", "template_shingles")}}

    @app.post("/v1/compare", response_model=CompareAnswer, responses=errors,
              summary="Two documents side by side: shared shingles, resemblance, containment")
    def compare(body: Annotated[CompareRequest, Body()], request: Request) -> CompareAnswer:
        store = getattr(getattr(request.app.state, "neardup", None), "store", None)
        config = store.config if isinstance(store, Store) else None
        sketch = config.sketch if config is not None else None
        extract: Extractor = config.text.extract if config is not None else "full"
        view = compare_texts(_side_text(body.a, extract), _side_text(body.b, extract),
                             sketch.shingles if sketch is not None else ShingleConfig())
        return CompareAnswer.model_validate(view.as_dict())
