"""The service's errors as clients see them: JSON ``{"error": {"code", "type", "message"}}``
with a 4xx or 5xx status, one answer per kind of failure (a refused token, an invalid body, a
store error), shared by the FastAPI routes and the lean query route."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from neardup.errors import (
    ConfigError,
    CorruptDataError,
    NeardupError,
    OutputError,
    SourceError,
)
from neardup.service.writer import Busy

__all__ = ["Problem", "check_token", "error_response", "invalid_response",
           "neardup_response", "public_message"]


class Problem(HTTPException):
    """An error answered as JSON."""

    def __init__(self, status: int, kind: str, message: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers)
        self.kind = kind


def error_response(status: int, kind: str, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"code": status, "type": kind, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def check_token(token: str, authorization: str | None, what: str) -> None:
    """``Authorization: Bearer <token>`` with the service token, or 401 (one scheme only)."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip() or \
            not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Problem(401, "unauthorized", f"{what} needs the service token "
                      "(Authorization: Bearer <token>)", {"WWW-Authenticate": "Bearer"})


def invalid_response(problems: Sequence[Any]) -> JSONResponse:
    """400 for a body that is not JSON, else 422 naming up to ten invalid fields."""
    if any(p.get("type") == "json_invalid" for p in problems):
        return error_response(400, "malformed_json", "the body is not valid JSON")
    text = "; ".join(f"{'.'.join(str(x) for x in p.get('loc', ()))}: {p.get('msg')}"
                     for p in problems[:10])
    return error_response(422, "invalid", text)


def public_message(message: str, root: Path | None) -> str:
    """An error message with the store's folder on the server written ``STORE``."""
    return message if root is None else message.replace(str(root), "STORE")


def neardup_response(error: NeardupError, root: Path | None) -> JSONResponse:
    """The answer to a library error: 503 busy or out of space, 500 for a damaged store,
    400 for a refused request."""
    message = public_message(str(error), root)
    if isinstance(error, Busy):
        return error_response(503, "busy", message, {"Retry-After": "1"})
    if isinstance(error, OutputError):
        return error_response(503, "store_unavailable", message, {"Retry-After": "30"})
    if isinstance(error, CorruptDataError):
        return error_response(500, "corrupt_store", message)
    if isinstance(error, ConfigError | SourceError):
        return error_response(400, "bad_request", message)
    return error_response(500, "error", message)
