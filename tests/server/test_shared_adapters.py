"""The tests' shared route adapters (``tests.shared_adapters``) change nothing an app does:
the OpenAPI document is the same byte for byte, and so are the answers to good and bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from tests import shared_adapters


@contextmanager
def plain_fastapi() -> Iterator[None]:
    """FastAPI's own path: every field builds its own adapter."""
    shared_adapters.uninstall()
    try:
        yield
    finally:
        shared_adapters.install()


def document(app: FastAPI) -> bytes:
    return json.dumps(app.openapi()).encode()


def answers(app: FastAPI) -> list[tuple[int, str]]:
    """A login, a refused login (a field too long), a query out of range, a bet body of the
    wrong type, and a good read: what each route's adapters decide."""
    with TestClient(app) as http:
        token = http.post("/api/login", json={"username": "alice",
                                              "password": DEMO_PASSWORD}).json()["token"]
        auth = {"authorization": f"Bearer {token}"}
        table = http.get("/api/tables", headers=auth).json()[0]["table"]
        replies = [http.post("/api/login", json={"username": "a" * 65, "password": "x"}),
                   http.get(f"/api/tables/{table}/events", params={"after": -1}, headers=auth),
                   http.get(f"/api/tables/{table}/recall", params={"rounds": 0}, headers=auth),
                   http.post(f"/api/tables/{table}/bets", json={"wager": 7, "amount": "x"},
                             headers=auth),
                   http.get("/api/me", headers=auth)]
        return [(r.status_code, r.text) for r in replies]


def test_an_app_on_shared_adapters_documents_and_answers_as_fastapis_own(floor: Floor) -> None:
    with plain_fastapi():
        own = create_app(floor, electronic_loop=False, clock_seconds=None, verify_seconds=0)
        built = shared_adapters.counts["built"]
        own_document, own_answers = document(own), answers(own)
    assert shared_adapters.counts["built"] == built  # nothing was shared or kept meanwhile
    shared = create_app(floor, electronic_loop=False, clock_seconds=None, verify_seconds=0)
    again = create_app(floor, electronic_loop=False, clock_seconds=None, verify_seconds=0)
    assert document(shared) == own_document
    assert document(again) == own_document
    assert answers(again) == own_answers
    assert [status for status, _ in own_answers] == [422, 422, 422, 422, 200]


def test_the_second_app_builds_no_adapter(floor: Floor) -> None:
    create_app(floor, electronic_loop=False, clock_seconds=None, verify_seconds=0)
    before = dict(shared_adapters.counts)
    create_app(floor, electronic_loop=False, clock_seconds=None, verify_seconds=0)
    assert shared_adapters.counts["built"] == before["built"]
    assert shared_adapters.counts["shared"] > before["shared"] + 150  # its ~230 fields


@pytest.mark.parametrize(("a", "b"), [(0, False), (1, 1.0), ((1,), [1]),
                                      ({"a": 0}, {"a": False})])
def test_values_equal_in_python_but_not_in_type_key_apart(a: object, b: object) -> None:
    assert a == b or (isinstance(a, tuple) and list(a) == b)
    assert shared_adapters.typed(a) != shared_adapters.typed(b)


def test_an_unhashable_part_builds_its_own_adapter() -> None:
    with pytest.raises(TypeError):
        shared_adapters.typed({"a": {1, 2}})
