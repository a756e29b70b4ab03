"""Count the project modules one bet passes through, from the HTTP request to the log and back
out on the WebSocket, as a reviewer would: a profile hook over every thread of a real server.

    python tools/trace_bet.py            # the count, then the modules
    python tools/trace_bet.py --json     # {"modules": N, "names": [...]}

The server is `dicetable serve`'s own: a demo floor on a fresh SQLite file, the app as
`serve` builds it (without the electronic table's rolling loop and the clock, whose work is
not the bet's), uvicorn with the project's HTTP protocol, on a loopback port. A player
opens the table's WebSocket, places a Pass Line bet to warm every lazy import and cache, and then a
Field bet is traced: every Python function called in any thread between sending the request
and reading the push is recorded by its module.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

_seen: set[str] = set()
_tracing = threading.Event()


def _profile(frame: FrameType, event: str, arg: Any) -> None:
    if event == "call" and _tracing.is_set():
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.startswith("dicetable"):
            _seen.add(name)


def _serve(db: Path) -> tuple[Any, int, Any]:
    import uvicorn

    from dicetable.cli.serve import HTTP_PROTOCOL
    from dicetable.server.app import create_app
    from dicetable.server.main import admission_from_env, build_floor, impatience_from_env

    floor, _ = build_floor(db)
    # No electronic table's loop and no scheduler: only the bet's own work is in the window
    # (an RNG roll landing in it added six modules under load).
    app = create_app(floor, electronic_loop=False, clock_seconds=None,
                     admission=admission_from_env(), impatience=impatience_from_env())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", http=HTTP_PROTOCOL))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    return server, int(sock.getsockname()[1]), floor


def trace() -> list[str]:
    """The project modules that one warmed-up bet runs through, sorted."""
    import httpx
    from websockets.sync.client import connect
    from websockets.typing import Origin

    from dicetable.server.demo import DEMO_PASSWORD

    threading.setprofile(_profile)  # every thread started from here on (the server's)
    sys.setprofile(_profile)
    with tempfile.TemporaryDirectory() as tmp:
        server, port, floor = _serve(Path(tmp) / "floor.db")
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=120) as http:  # a loaded machine
                token = http.post("/api/login", json={"username": "alice",
                                                      "password": DEMO_PASSWORD}).json()["token"]
                headers = {"authorization": f"Bearer {token}"}
                with connect(f"ws://127.0.0.1:{port}/ws/tables/craps-pa-1?token={token}",
                             origin=Origin(base)) as ws:
                    ws.recv(timeout=30)  # hello
                    for wager, traced in (("pass", False), ("field", True)):
                        if traced:
                            _tracing.set()
                        reply = http.post("/api/tables/craps-pa-1/bets", headers=headers,
                                          json={"wager": wager, "amount": 500})
                        if reply.status_code != 200:
                            raise RuntimeError(f"the bet was refused: {reply.text}")
                        while True:  # the push of the bet's batch
                            pushed = json.loads(ws.recv(timeout=30))
                            if any(e.get("type") == "BetPlaced"
                                   for e in pushed.get("events", [])):
                                break
                        _tracing.clear()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            server.should_exit = True
            time.sleep(0.5)
            floor.close()
    return sorted(_seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = trace()
    if args.json:
        print(json.dumps({"modules": len(names), "names": names}))
    else:
        print(f"one bet, HTTP request to log to WebSocket push: {len(names)} project modules")
        for name in names:
            print(f"  {name}")


if __name__ == "__main__":
    main()
