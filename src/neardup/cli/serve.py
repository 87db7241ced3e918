"""``neardup serve``: the HTTP service over one store (FastAPI on uvicorn)."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from neardup.errors import ConfigError, OutputError, SourceError
from neardup.store.durable import sync

__all__ = ["serve_command"]

TOKEN_FILE = "service.token"


def _token(store_dir: Path, token_file: Path | None) -> str:
    """The write token: read from ``token_file``, or made once and kept in the store
    directory (mode 0600)."""
    if token_file is not None:
        try:
            token = token_file.read_text().strip()
        except OSError as error:
            raise SourceError(str(token_file), error.strerror or str(error)) from error
        if len(token) < 16:
            raise ConfigError(f"{token_file}: the token has {len(token)} characters; at "
                              "least 16 needed")
        return token
    path = store_dir / TOKEN_FILE
    if path.exists():
        return path.read_text().strip()
    token = secrets.token_urlsafe(32)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(token + "\n")
            sync(out)
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error
    return token


F = TypeVar("F", bound=Callable[..., Any])


def _window_option(name: str, default: float, what: str) -> Callable[[F], F]:
    """A gathering window in milliseconds (0 never waits; an idle service never waits)."""
    return click.option(name, type=click.FloatRange(0, 1000), default=default,
                        show_default=True,
                        help=f"{what}; 0 never waits. An idle service never waits.")


@click.command("serve")
@click.option("--store", "store_dir", type=click.Path(path_type=Path), default=None,
              help="The store directory (created if absent).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind (loopback unless told otherwise).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="TCP port to listen on.")
@click.option("--token-file", type=click.Path(path_type=Path), default=None,
              help="File holding the write token [default: STORE/service.token, made once].")
@click.option("--max-body-bytes", type=click.IntRange(1024), default=8 << 20,
              show_default=True, help="Larger request bodies get 413.")
@click.option("--flush-every", type=click.IntRange(1), default=100_000, show_default=True,
              help="Documents in the insert log before a segment is written.")
@click.option("--queue-limit", type=click.IntRange(1), default=512, show_default=True,
              help="Adds waiting for the writer before further adds get 503.")
@click.option("--public-reads", is_flag=True,
              help="Answer the read routes (/v1/query, /v1/documents/{id}, /v1/clusters/{id}, "
                   "/v1/lost-and-found) and /metrics without the token; writes still need it.")
@_window_option("--query-window-ms", 5.0, "A query arriving this soon after the last batch of "
                "queries was answered waits for the rest of this time, to be answered with the "
                "queries that arrive meanwhile (fewer store reads under load)")
@_window_option("--add-window-ms", 10.0, "An add arriving this soon after the writer's last "
                "commit waits for the rest of this time, to be committed with the adds that "
                "arrive meanwhile (group commit under load)")
@click.option("--readers", type=click.IntRange(0, 64), default=0, show_default=True,
              help="Reader processes answering requests beside this one, on the same port: "
                   "each maps the store read-only and sees every acknowledged add; adds go "
                   "through this process's one writer.")
@click.option("--write-openapi", type=click.Path(path_type=Path), default=None,
              help="Write the OpenAPI schema to this file and exit.")
def serve_command(store_dir: Path | None, host: str, port: int, token_file: Path | None,
                  max_body_bytes: int, flush_every: int, queue_limit: int, public_reads: bool,
                  query_window_ms: float, add_window_ms: float, readers: int,
                  write_openapi: Path | None) -> None:
    """Serve a store over HTTP: POST /v1/documents, POST /v1/query, GET /v1/documents/{id},
    /v1/clusters/{id}, /v1/lost-and-found?url=, /metrics (all with the token: Authorization:
    Bearer TOKEN; reads without it with --public-reads), and /healthz (open)."""
    try:
        import uvicorn

        from neardup.service import ServiceConfig, create_app, openapi_document
    except ImportError as error:
        raise ConfigError(f"neardup serve needs the service extra: pip install "
                          f"'neardup[service]' ({error})") from error
    if write_openapi is not None:
        write_openapi.write_text(json.dumps(openapi_document(), indent=1, sort_keys=True) + "\n")
        return
    if store_dir is None:
        raise click.UsageError("--store is required")
    from neardup.store import open_store

    with open_store(store_dir, flush_every=flush_every) as store:
        config = ServiceConfig(token=_token(store_dir, token_file),
                               max_body_bytes=max_body_bytes, queue_limit=queue_limit,
                               public_reads=public_reads,
                               query_window=query_window_ms / 1000,
                               add_window=add_window_ms / 1000)
        click.echo(f"neardup: serving {store_dir} ({len(store)} documents) on "
                   f"http://{host}:{port}" + (f" with {readers} reader processes" if readers
                                              else "") +
                   f"; token in {token_file or store_dir / TOKEN_FILE}", err=True)
        if readers:
            from neardup.service.readers import serve_with_readers

            serve_with_readers(create_app(config, store), config, store, host, port, readers)
        else:
            from neardup.service.server import server_options

            uvicorn.run(create_app(config, store), host=host, port=port, **server_options())
