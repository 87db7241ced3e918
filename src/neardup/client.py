"""A small client of ``neardup serve`` (standard library HTTP only).

>>> client = Client("http://127.0.0.1:8080", token="...")            # doctest: +SKIP
>>> client.add([{"id": "u1", "url": "http://a/", "html": "<p>...</p>"}])  # doctest: +SKIP
>>> client.query(html="<p>...</p>")                                    # doctest: +SKIP

Every failure raises :class:`neardup.errors.ServiceError` (status, message, retry_after). A 503
(the writer's queue is full, or the store cannot write: a full disk) asks the caller to retry
after ``Retry-After`` seconds; :meth:`Client.add` does so ``retries`` times, which is safe
because adds are idempotent (same id and bytes: stored once).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from neardup.errors import ServiceError

__all__ = ["Client"]


class Client:
    """Calls a neardup service at ``url``; ``token`` is sent with every call (a service
    needs it for every route but /healthz, unless it serves reads publicly)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0,
                 retries: int = 3, max_wait: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.max_wait = max_wait

    def add(self, documents: list[dict[str, Any]], sweep: str | None = None) -> dict[str, Any]:
        """Add documents (each: id, url, fetched, and one of text, html, warc_record);
        returns the service's answer: added, already_stored, skipped, documents."""
        body: dict[str, Any] = {"documents": documents}
        if sweep is not None:
            body["sweep"] = sweep
        for attempt in range(self.retries + 1):
            try:
                return self._call("POST", "/v1/documents", body)
            except ServiceError as error:
                if error.status != 503 or attempt == self.retries:
                    raise
                time.sleep(min(self.max_wait, error.retry_after or 1.0))
        raise AssertionError("unreachable")

    def query(self, text: str | None = None, *, html: str | None = None,
              url: str | None = None, k: int | None = None, resemblance: float | None = None,
              containment: float | None = None, explain: bool = False) -> list[dict[str, Any]]:
        """The stored near-copies of a text, an HTML page or a stored URL, nearest first."""
        body = {name: value for name, value in (
            ("text", text), ("html", html), ("url", url), ("k", k),
            ("resemblance", resemblance), ("containment", containment)) if value is not None}
        body["explain"] = explain
        matches: list[dict[str, Any]] = self._call("POST", "/v1/query", body)["matches"]
        return matches

    def document(self, id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/documents/{urllib.parse.quote(id, safe='')}")

    def cluster(self, id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/clusters/{urllib.parse.quote(id, safe='')}")

    def lost_and_found(self, url: str) -> dict[str, Any]:
        return self._call("GET", "/v1/lost-and-found?" + urllib.parse.urlencode({"url": url}))

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/healthz")

    def _call(self, method: str, path: str,
              body: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=data, headers=headers,
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
                return answer
        except urllib.error.HTTPError as error:
            raise _service_error(self.url + path, error) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ServiceError(self.url + path, 0, str(reason)) from error


def _service_error(url: str, error: urllib.error.HTTPError) -> ServiceError:
    try:
        message = str(json.loads(error.read())["error"]["message"])
    except (ValueError, KeyError, TypeError):
        message = error.reason or "error"
    retry = error.headers.get("Retry-After") if error.headers else None
    return ServiceError(url, error.code, message,
                        float(retry) if retry and retry.replace(".", "", 1).isdigit() else None)
