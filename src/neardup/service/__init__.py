"""The HTTP service over a store (``neardup serve``; FastAPI on uvicorn, the ``service``
extra)."""

from neardup.service.app import create_app, openapi_document
from neardup.service.settings import ServiceConfig

__all__ = ["ServiceConfig", "create_app", "openapi_document"]
