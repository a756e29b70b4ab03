"""What one bet that asks for the view back costs the engine's yes/no answers: the calls into
``table/procedure.py``, the ``RulePack.cite`` calls and the exceptions raised, in every thread,
from the request to its answer (the answer carries the view, and the view carries the felt's
controls, each the engine's ``can``).

A demo floor on a fresh SQLite file, the app as ``serve`` builds it (``TestClient``), alice
logged in; a Pass Line bet warms every cache, then one Field bet with ``Prefer:
return=representation`` is traced. Counts, not times: they do not depend on the machine. Run it
for a baseline with that tree's ``src`` first on ``PYTHONPATH``.

    python -m bench.controls_cost [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from argon2 import PasswordHasher

_on = threading.Event()
_counts: Counter[str] = Counter()
_raised: list[BaseException] = []
"""Every exception raised while tracing but a coroutine's or generator's return (held: an id
is only unique while its object lives)."""


def _local(frame: FrameType, event: str, arg: Any) -> Any:
    if event == "exception" and _on.is_set():
        exc = arg[1]
        if isinstance(exc, StopIteration | StopAsyncIteration | GeneratorExit):
            return _local  # how a coroutine or generator returns, not a refusal
        if not any(exc is seen for seen in _raised):
            _raised.append(exc)
    return _local


def _trace(frame: FrameType, event: str, arg: Any) -> Any:
    if not _on.is_set():
        return None
    code = frame.f_code
    path = code.co_filename.replace("\\", "/")
    if path.endswith("dicetable/table/procedure.py"):
        _counts["procedure.py calls"] += 1
    elif code.co_name == "cite" and path.endswith("dicetable/rules/model.py"):
        _counts["RulePack.cite calls"] += 1
    if path.endswith("dicetable/server/controls.py"):
        _counts["controls.py calls"] += 1
    return _local if "/dicetable/" in path else None


def measure(hasher: PasswordHasher | None = None) -> dict[str, int]:
    """The counts of one bet, on a fresh demo floor (``hasher``: its accounts' Argon2 cost,
    which the one login pays)."""
    from fastapi.testclient import TestClient

    from dicetable.server.app import create_app
    from dicetable.server.demo import DEMO_PASSWORD
    from dicetable.server.main import build_floor

    threading.settrace(_trace)
    sys.settrace(_trace)
    with tempfile.TemporaryDirectory() as tmp:
        floor, _ = build_floor(Path(tmp) / "floor.db", hasher=hasher)
        try:
            with TestClient(create_app(floor, electronic_loop=False)) as http:
                token = http.post("/api/login", json={"username": "alice",
                                                      "password": DEMO_PASSWORD}).json()["token"]
                headers = {"authorization": f"Bearer {token}",
                           "prefer": "return=representation"}
                for wager, traced in (("pass", False), ("field", True)):
                    if traced:
                        _on.set()
                    reply = http.post("/api/tables/craps-pa-1/bets", headers=headers,
                                      json={"wager": wager, "amount": 500})
                    _on.clear()
                    if reply.status_code != 200 or "view" not in reply.json():
                        raise RuntimeError(f"the bet was refused: {reply.text}")
        finally:
            sys.settrace(None)
            threading.settrace(None)
            floor.close()
            floor.store.close()
            floor.accounts.close()
    out = {k: _counts[k] for k in ("procedure.py calls", "RulePack.cite calls",
                                   "controls.py calls")}
    out["exceptions raised"] = len(_raised)
    out["refusals raised"] = sum(isinstance(e, ValueError) for e in _raised)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="the same count (it is one bet: already seconds), the demo "
                        "floor's passwords hashed at a test's Argon2 cost")
    args = parser.parse_args()
    hasher = None
    if args.quick:  # what is counted is the bet, never the login's Argon2
        from tests.demo_floor import CHEAP_HASHER
        hasher = CHEAP_HASHER
    counts = measure(hasher)
    if args.json:
        print(json.dumps(counts))
    else:
        print("one bet answered with its view:")
        for name, n in counts.items():
            print(f"  {name:<22} {n:6d}")


if __name__ == "__main__":
    main()
