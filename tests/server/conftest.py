"""A real server app on a fresh SQLite file with the demo floor, and logged-in clients."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor
from dicetable.server.main import build_floor


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
    copy = tmp_path / "floor.db"
    shutil.copyfile(db, copy)
    shutil.copyfile(f"{db}.key", f"{copy}.key")
    return copy


def close_floor(floor: Floor) -> None:
    floor.close()
    floor.store.close()
    floor.accounts.close()


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo floor, built once; each test gets its own copy of the file."""
    path = tmp_path_factory.mktemp("demo") / "floor.db"
    built, credentials = build_floor(path)
    assert credentials
    close_floor(built)
    return path


@pytest.fixture
def floor(demo_db: Path, tmp_path: Path) -> Iterator[Floor]:
    built, credentials = build_floor(copy_floor_db(demo_db, tmp_path))
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
