"""A real server app on a fresh SQLite file with the demo floor, and logged-in clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor
from tests.demo_floor import copy_demo_db


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


@pytest.fixture
def floor(demo_db: Path, tmp_path: Path) -> Iterator[Floor]:
    built, credentials = build_floor(copy_demo_db(demo_db, tmp_path / "floor.db"))
    assert not credentials
    yield built
    built.close()
    built.store.close()
    built.accounts.close()


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
