"""The API documentation works without internet: ``/docs`` and ``/redoc`` load their scripts
and styles from this server (an installed package's files), never from a CDN."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dicetable.server.app import create_app
from dicetable.server.main import build_floor
from tests.demo_floor import CHEAP_HASHER


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    floor, _ = build_floor(tmp_path / "floor.db", hasher=CHEAP_HASHER)
    try:
        with TestClient(create_app(floor, electronic_loop=False)) as c:
            yield c
    finally:
        floor.close()


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_docs_load_every_asset_from_this_server(client: TestClient, page: str) -> None:
    html = client.get(page)
    assert html.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url:\s*['"]([^'"]+)['"]""", html.text)
    assets = [u for pair in urls for u in pair if u]
    assert assets, "the page names no scripts or styles"
    for url in assets:
        assert url.startswith("/"), f"{page} loads {url} from elsewhere"
        assert client.get(url).status_code == 200, url
    assert "cdn" not in html.text.lower()
    assert "fonts.googleapis" not in html.text
