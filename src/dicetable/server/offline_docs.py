"""The API documentation pages (Swagger UI at ``/docs``, ReDoc at ``/redoc``) served with their
scripts and styles from an installed package (``fastapi-offline``), not from a CDN: a floor
without internet still reads its API."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"


def assets_dir() -> Path:
    """Where the installed package keeps Swagger UI's and ReDoc's files."""
    return Path(str(resources.files("fastapi_offline") / "static"))


def install(app: FastAPI) -> None:
    """Serve ``/docs`` and ``/redoc`` from the package's files (``app`` is made with
    ``docs_url=None, redoc_url=None``)."""
    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=openapi_url, title=f"{app.title} — API",
                                   swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS}/swagger-ui.css",
                                   swagger_favicon_url="/static/favicon.svg")

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url=openapi_url, title=f"{app.title} — API",
                              redoc_js_url=f"{ASSETS}/redoc.standalone.js",
                              redoc_favicon_url="/static/favicon.svg", with_google_fonts=False)


__all__ = ["ASSETS", "assets_dir", "install"]
