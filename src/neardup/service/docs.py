"""The service's API page, ``/docs`` (Swagger UI), served offline.

FastAPI's own pages load their viewers from a CDN and stay blank on a machine without the
internet. This one loads Swagger UI from the ``fastapi-offline`` package (installed with the
``service`` extra), served under ``/docs-assets/``: no request leaves the service. There is no
``/redoc``: ReDoc fetches its logo from its vendor's site even when its script is local.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

from neardup.errors import ConfigError

__all__ = ["ASSETS", "add_offline_docs", "asset_folder"]

ASSETS = "/docs-assets"


def asset_folder() -> Path:
    """The folder of the installed viewer files (Swagger UI)."""
    try:
        import fastapi_offline
    except ImportError as error:
        raise ConfigError("the API pages need fastapi-offline: pip install "
                          "'neardup[service]'") from error
    folder = Path(fastapi_offline.__file__).parent / "static"
    if not (folder / "swagger-ui-bundle.js").is_file():
        raise ConfigError(f"{folder}: no swagger-ui-bundle.js (a broken fastapi-offline "
                          "install?)")
    return folder


def add_offline_docs(app: FastAPI, title: str) -> None:
    """Serve ``/docs`` from local assets (create the app with ``docs_url=None,
    redoc_url=None``)."""
    app.mount(ASSETS, StaticFiles(directory=asset_folder()), name="docs-assets")
    favicon = f"{ASSETS}/favicon.png"

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title=f"{title}: API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css", swagger_favicon_url=favicon,
            swagger_ui_parameters={"validatorUrl": None})
