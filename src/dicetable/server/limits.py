"""Bounded input and one error shape (spec/standards.md RES-5).

- a request body over ``MAX_BODY`` bytes is refused with 413 before the app reads it
  (declared by Content-Length, or counted as it streams in: ``server.door``);
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
from starlette.types import Message, Receive

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
"""Every 4xx the server can give (``document_errors`` declares them on each operation)."""


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


def too_large_body(limit: int = MAX_BODY) -> bytes:
    """The 413's body for a request body over ``limit`` bytes (``server.door`` refuses it,
    declared by Content-Length or counted as it streams in, before the app reads any)."""
    return json.dumps({"error": "TooLarge", "message": f"request bodies are at most "
                       f"{limit} bytes", "rule": "api.body_limit", "citation": ""}).encode()


def document_errors(document: dict[str, Any]) -> dict[str, Any]:
    """Declare ``ERROR_RESPONSES`` on every operation of FastAPI's OpenAPI ``document``,
    each a JSON ``ErrorBody`` (also on routes whose success is HTML or a PDF), after the
    operation's own answer and in place of the validation error FastAPI declares where no
    422 is; ``ErrorBody`` among the schemas and FastAPI's validation error no longer.

    The same document ``FastAPI(responses=ERROR_RESPONSES)`` gives, without what that costs:
    a response field built per code per route at start-up (727 of the app's 879 fields),
    which only the document reads."""
    ref = "#/components/schemas/ErrorBody"
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            answers = operation.setdefault("responses", {})
            if answers.get("422", {}).get("description") == "Validation Error":
                del answers["422"]  # FastAPI's own, declared only where no 422 is
            for code, why in _WHY.items():
                answer = answers.setdefault(str(code), {"description": why})
                answer["content"] = {"application/json": {"schema": {"$ref": ref}}}
                answer["description"] = why
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for plain in ("HTTPValidationError", "ValidationError"):
        schemas.pop(plain, None)
    schemas["ErrorBody"] = ErrorBody.model_json_schema(
        ref_template="#/components/schemas/{model}", mode="serialization")
    document["components"]["schemas"] = dict(sorted(schemas.items()))
    return document
