"""The console pages: each is one shell (its title, the icon, the style sheets, its module
scripts) around an empty body its script fills, declared once here. The log-in page
(``static/index.html``), which has content of its own, is the one page kept as a file.

>>> print(shell(PAGES[0]))  # doctest: +ELLIPSIS
<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Player — dicetable</title>
  ...
  <script type="module" src="/static/js/play.js"></script>
</head>
<body class="play">
  <noscript>This page needs JavaScript.</noscript>
</body>
</html>
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from html import escape

from fastapi import FastAPI
from fastapi.responses import HTMLResponse


@dataclass(frozen=True)
class Page:
    path: str
    """Served at ``/{path}``; also the body's class unless ``body`` says otherwise."""
    title: str
    scripts: tuple[str, ...]
    """Module scripts under ``/static/js/``, by name."""
    styles: tuple[str, ...] = ()
    """Style sheets under ``/static/css/`` beside ``dicetable.css``."""
    body: str = ""


PAGES = (
    Page("play", "Player", ("play",)),
    Page("dealer", "Dealer console", ("dealer",)),
    Page("pit", "Pit console", ("pit", "pit-bank")),
    Page("rules", "Rules and payouts", ("rules",), body="rules-page"),
    Page("dice-room", "Dice room", ("dice-room",), styles=("dice-room",)),
)


@cache
def shell(page: Page) -> str:
    links = "".join(f'\n  <link rel="stylesheet" href="/static/css/{s}.css">'
                    for s in ("dicetable", *page.styles))
    scripts = "".join(f'\n  <script type="module" src="/static/js/{s}.js"></script>'
                      for s in page.scripts)
    return (f'<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n'
            f'  <meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"  <title>{escape(page.title)} — dicetable</title>\n"
            f'  <link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
            f"{links}{scripts}\n</head>\n"
            f'<body class="{escape(page.body or page.path)}">\n'
            f"  <noscript>This page needs JavaScript.</noscript>\n</body>\n</html>\n")


def install(app: FastAPI) -> None:
    """Serve every page at its path."""
    for page in PAGES:
        _serve(app, page)


def _serve(app: FastAPI, page: Page) -> None:
    @app.get(f"/{page.path}", include_in_schema=False,
             name=f"page_{page.path.replace('-', '_')}")
    def serve_page() -> HTMLResponse:
        return HTMLResponse(shell(page))
