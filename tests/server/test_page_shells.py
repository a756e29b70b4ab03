"""The console pages are one declared shell each (``dicetable.server.pages``): served as HTML
at their path, with their own title, style sheets and module scripts, every script and sheet
they name shipped, and the log-in page still its own file."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from fastapi.testclient import TestClient

from dicetable.server.pages import PAGES

STATIC = Path(str(resources.files("dicetable.server") / "static"))


def test_every_console_page_is_served_from_its_declaration(http: TestClient) -> None:
    for page in PAGES:
        reply = http.get(f"/{page.path}")
        assert reply.status_code == 200, page.path
        assert reply.headers["content-type"].startswith("text/html")
        html = reply.text
        assert f"<title>{page.title} — dicetable</title>" in html
        assert f'<body class="{page.body or page.path}">' in html
        scripts = re.findall(r'<script type="module" src="/static/js/([\w-]+)\.js">', html)
        assert scripts == list(page.scripts)
        sheets = re.findall(r'href="/static/css/([\w-]+)\.css"', html)
        assert sheets == ["dicetable", *page.styles]


def test_every_script_and_sheet_a_page_names_is_shipped(http: TestClient) -> None:
    for page in PAGES:
        for script in page.scripts:
            assert (STATIC / "js" / f"{script}.js").is_file(), script
            assert http.get(f"/static/js/{script}.js").status_code == 200
        for sheet in ("dicetable", *page.styles):
            assert (STATIC / "css" / f"{sheet}.css").is_file(), sheet


def test_the_login_page_is_its_own_file(http: TestClient) -> None:
    reply = http.get("/")
    assert reply.status_code == 200
    assert "Log in" in reply.text
    assert not {p.path for p in PAGES} & {f.stem for f in STATIC.glob("*.html")}
