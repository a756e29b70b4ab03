"""Bounded input and one error shape (spec/standards.md RES-5).

- ``BodyLimit``: a request body over ``MAX_BODY`` bytes is refused with 413 before the app
  reads it (declared by Content-Length, or counted as it streams in);
- every error the server gives - refusals, malformed JSON, unknown routes, wrong methods -
  is ``{"error", "message", "rule", "citation"}`` (``ErrorBody``), and every 4xx it can give
  is declared in the OpenAPI schema (``ERROR_RESPONSES``);
- ``MAX_SEQ`` bounds every sequence-number parameter (a larger one cannot exist).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 64 * 1024
"""The largest request body accepted (industry-default; every command fits in a few KB)."""
MAX_SEQ = 2**62
"""Sequence numbers stay below this (the stores' own bound)."""



def replaying(body: bytes, then: Receive) -> Receive:
    """A ``receive`` that hands the app the already-read ``body`` once, then defers to
    ``then`` (the middlewares read a body whole before the app sees it)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


async def read_body(receive: Receive) -> bytes:
    """A request's whole body (the body limit has bounded it before any app reads it)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


class ErrorBody(BaseModel):
    """Every refusal: what was refused, why, the rule and its citation."""

    error: str
    message: str
    rule: str
    citation: str


_WHY = {400: "Bad request", 401: "Not logged in, or wrong credentials",
        403: "The account's role may not do this (names the rule)", 404: "No such resource",
        405: "Method not allowed", 409: "Refused by the table's procedure or state",
        413: "Request body too large", 415: "Unsupported media type",
        422: "Invalid input or a wager the rules refuse", 423: "Locked (account or table)",
        429: "Too many attempts; retry shortly"}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": why} for code, why in _WHY.items()}


def error(status: int, kind: str, message: str, rule: str, citation: str = "") -> JSONResponse:
    return JSONResponse({"error": kind, "message": message, "rule": rule,
                         "citation": citation}, status_code=status)


_NAMES = {400: "BadRequest", 401: "NotAuthenticated", 403: "Forbidden", 404: "NotFound",
          405: "MethodNotAllowed", 413: "TooLarge", 415: "UnsupportedMediaType"}


def install_error_shape(app: FastAPI) -> None:
    """Starlette's own errors (404 route, 405 method) in the one shape."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code if 400 <= exc.status_code < 500 else 400
        return error(status, _NAMES.get(status, "BadRequest"), str(exc.detail), "api.request")


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413 (pure ASGI: nothing buffered past it)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                too_big = True
            if too_big:
                await self._refuse(scope, receive, send)
                return
        # Read the whole (bounded) body first, so an over-long stream is refused before the
        # app has seen any of it; then hand it on.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replaying(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = json.dumps({"error": "TooLarge", "message": f"request bodies are at most "
                           f"{self.limit} bytes", "rule": "api.body_limit",
                           "citation": ""}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Every 4xx is JSON ``ErrorBody``, also on routes whose success is HTML or a PDF."""
    ref = {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
    for item in schema.get("paths", {}).values():
        for op in item.values():
            for code, response in op.get("responses", {}).items():
                if str(code).startswith("4") and int(code) in _WHY:
                    response["content"] = {"application/json": ref}
    return schema
