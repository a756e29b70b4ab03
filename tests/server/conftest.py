"""A real server app on a fresh SQLite file with the demo floor, and logged-in clients."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.demo_floor import CHEAP_HASHER, copy_demo_db
from tests.store.conftest import pg_url_or_skip
from tests.store.helpers import copy_schema


class Client:
    """A logged-in account's HTTP client."""

    def __init__(self, http: TestClient, username: str) -> None:
        self.http = http
        self.username = username
        reply = http.post("/api/login", json={"username": username,
                                              "password": DEMO_PASSWORD})
        assert reply.status_code == 200, reply.text
        self.token = reply.json()["token"]
        self.headers = {"authorization": f"Bearer {self.token}"}

    def get(self, path: str, params: dict[str, int] | None = None) -> httpx.Response:
        reply: httpx.Response = self.http.get(path, headers=self.headers, params=params)
        return reply

    def post(self, path: str, body: object = None) -> httpx.Response:
        reply: httpx.Response = self.http.post(path, json=body, headers=self.headers)
        return reply

    def patch(self, path: str, body: object) -> httpx.Response:
        reply: httpx.Response = self.http.patch(path, json=body, headers=self.headers)
        return reply

    def delete(self, path: str) -> httpx.Response:
        reply: httpx.Response = self.http.delete(path, headers=self.headers)
        return reply


def copy_floor_db(db: Path, tmp_path: Path) -> Path:
    """A copy of a floor's file with its chain key, which lives beside it."""
    return copy_demo_db(db, tmp_path / "floor.db")


def close_floor(floor: Floor) -> None:
    floor.close()
    floor.store.close()
    floor.accounts.close()


@pytest.fixture
def floor(demo_db: Path, tmp_path: Path) -> Iterator[Floor]:
    built, credentials = build_floor(copy_floor_db(demo_db, tmp_path), hasher=CHEAP_HASHER)
    assert not credentials
    yield built
    close_floor(built)


@pytest.fixture
def http(floor: Floor) -> Iterator[TestClient]:
    with TestClient(create_app(floor, electronic_loop=False)) as client:
        yield client


Login = Callable[[str], Client]


@pytest.fixture
def login(http: TestClient) -> Login:
    def make(username: str) -> Client:
        return Client(http, username)

    return make


@pytest.fixture(scope="session")
def postgres_demo() -> Iterator[tuple[str, str]]:
    """The demo floor in a PostgreSQL schema of its own, built once per test process (the
    tests work on copies: ``postgres_floor``)."""
    url = pg_url_or_skip()
    schema = f"mpt_{uuid.uuid4().hex[:10]}"
    floor, credentials = build_floor(url, schema=schema, hasher=CHEAP_HASHER)
    assert credentials
    floor.close()
    floor.store.close()
    floor.accounts.close()
    yield url, schema
    _drop_schema(url, schema)


@pytest.fixture
def postgres_floor(postgres_demo: tuple[str, str]) -> Iterator[tuple[str, str]]:
    """A copy of the demo floor in a fresh PostgreSQL schema, dropped afterwards."""
    url, template = postgres_demo
    schema = f"mp_{uuid.uuid4().hex[:10]}"
    copy_schema(url, template, schema)  # one transaction: whole or absent
    yield url, schema
    _drop_schema(url, schema)


def _drop_schema(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
