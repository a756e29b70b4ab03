"""Reliability under attack (issue 12): prints what was tried and what held.

- kills survived: ``dicetable serve`` SIGKILLed with commands in flight, restarted each time;
  the client retries every unknown outcome with the same ``Idempotency-Key``;
- commands acknowledged and lost (must be 0), retried commands applied twice (must be 0);
- tampering cases tried and detected, by an insider without the key and with it: rewrites
  found by the offline audit, and truncations and replacements of the newest events (which
  no checkpoint covers yet) found by the running server's next verification;
- escalation attempts tried and refused (self-promotion, assigning above one's rank, staff
  playing at their own table, unlocking and clearing faults without the authority);
- 5xx under fuzz (must be 0): schemathesis over every operation.

    .venv/bin/python -m bench.reliability_bench [--kills 10] [--commands 60] [--fuzz 20]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from bench.tamper_cases import report, run_all, run_live
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.main import build_floor

T = "/api/tables/craps-pa-1"
IN_FLIGHT = 4


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(db: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "dicetable.cli.main", "serve", "--db",
                             str(db), "--port", str(port), "--verify-every", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200):
        if proc.poll() is not None:
            raise RuntimeError("the server died on start-up")
        try:
            httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=5)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def demo_store(directory: Path) -> Path:
    db = directory / "floor.db"
    floor, _ = build_floor(db)
    floor.close()
    floor.store.close()
    floor.accounts.close()
    return db


def kill_and_retry(db: Path, commands: int, kills: int, seed: int = 12) -> dict[str, int]:
    rng = random.Random(seed)
    port = _port()
    intended = {f"cmd-{i}": 20_000 + i for i in range(commands)}
    acknowledged: set[str] = set()
    stats = {"kills": 0, "unknown": 0, "replayed": 0}
    proc = _serve(db, port)
    try:
        token = httpx.post(f"http://127.0.0.1:{port}/api/login",
                           json={"username": "dee", "password": DEMO_PASSWORD}).json()["token"]
        pending = list(intended)
        rounds, last_round, kill_round = 0, 0.1, rng.randint(1, 3)
        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            while pending or stats["kills"] < kills:
                if not pending:  # more work until every planned kill has happened
                    for i in range(len(intended), len(intended) + IN_FLIGHT):
                        intended[f"cmd-{i}"] = 20_000 + i
                        pending.append(f"cmd-{i}")
                futures = {key: pool.submit(
                    httpx.post, f"http://127.0.0.1:{port}{T}/chips",
                    json={"player": "alice", "amount": intended[key]},
                    headers={"authorization": f"Bearer {token}", "idempotency-key": key},
                    timeout=30) for key in pending[:IN_FLIGHT]}
                rounds += 1
                began = time.monotonic()
                if rounds == kill_round and stats["kills"] < kills:
                    time.sleep(rng.uniform(0.2, 1.1) * last_round)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    stats["kills"] += 1
                for key, future in futures.items():
                    try:
                        reply = future.result()
                    except httpx.HTTPError:
                        stats["unknown"] += 1
                        continue
                    if reply.headers.get("idempotent-replayed"):
                        stats["replayed"] += 1
                    if reply.status_code == 200:
                        acknowledged.add(key)
                        pending.remove(key)
                if proc.poll() is None:
                    last_round = time.monotonic() - began
                else:
                    proc = _serve(db, port)
                    kill_round = rounds + rng.randint(1, 3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    conn = sqlite3.connect(db)
    amounts = [json.loads(b)["amount"] for (b,) in conn.execute(
        "SELECT body FROM event_log WHERE table_id = 'craps-pa-1' AND kind = 'ChipsBought'")]
    conn.close()
    stats["acknowledged"] = len(acknowledged)
    stats["lost"] = sum(1 for k in acknowledged if amounts.count(intended[k]) == 0)
    stats["twice"] = sum(1 for k in intended if amounts.count(intended[k]) > 1)
    return stats


def escalations(db: Path) -> tuple[int, int, list[str]]:
    """Escalation attempts through the API: (tried, refused, the ones that got through)."""
    from fastapi.testclient import TestClient

    from dicetable.server.app import create_app

    floor, _ = build_floor(db)
    tried = refused = 0
    through: list[str] = []
    staff = {"fran": "floorperson", "sam": "stickperson", "bo": "boxperson", "dee": "dealer",
             "pat": "pit-boss"}
    ranks = ["dealer", "stickperson", "boxperson", "floorperson", "pit-boss", "shift-manager"]
    try:
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            tokens = {u: http.post("/api/login", json={"username": u, "password":
                                                       DEMO_PASSWORD}).json()["token"]
                      for u in staff}

            def attempt(who: str, method: str, path: str, body: Any = None) -> None:
                nonlocal tried, refused
                tried += 1
                reply = http.request(method, path, json=body,
                                     headers={"authorization": f"Bearer {tokens[who]}"})
                if 400 <= reply.status_code < 500:
                    refused += 1
                else:
                    through.append(f"{who} {method} {path} {body} -> {reply.status_code}")

            for table in ("craps-pa-1", "craps-in-1", "minicraps-pa-1", "props-pa-1"):
                base = f"/api/tables/{table}"
                for who, own in staff.items():
                    for role in ranks:  # oneself, into any role
                        attempt(who, "POST", f"{base}/staff", {"person": who, "role": role})
                    for role in ranks[ranks.index(own):]:  # someone else, at or above own
                        attempt(who, "POST", f"{base}/staff", {"person": "carol", "role": role})
                    attempt(who, "POST", f"{base}/join", {"seat": 7})  # play where one works
                    attempt(who, "POST", f"{base}/chips", {"player": who, "amount": 100_00})
            for who in ("fran", "sam", "bo", "dee"):  # unlocks and fault clears: pit only
                attempt(who, "POST", "/api/accounts/carol/unlock")
                attempt(who, "POST", "/api/tables/craps-pa-1/fault/clear", {"reason": "x"})
            attempt("pat", "POST", "/api/accounts/pat/unlock")  # never one's own
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()
    return tried, refused, through


def fuzz(db: Path, examples: int) -> tuple[int, int, int]:
    """(operations, responses, 5xx) of schemathesis over every operation."""
    import schemathesis
    from fastapi.testclient import TestClient
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from dicetable.server.app import create_app

    floor, _ = build_floor(db)
    counts = {"ops": 0, "responses": 0, "5xx": 0}
    try:
        app = create_app(floor, electronic_loop=False, verify_seconds=0)
        with TestClient(app) as http:
            tokens = [http.post("/api/login", json={"username": u, "password": DEMO_PASSWORD}
                                ).json()["token"] for u in ("pat", "dee", "sam", "alice")]
            api = schemathesis.openapi.from_asgi("/openapi.json", app)
            for result in api.get_all_operations():
                op = result.ok()  # type: ignore[union-attr]
                if op.path == "/api/logout":
                    continue
                counts["ops"] += 1

                @given(case=op.as_strategy(), token=st.sampled_from(tokens),
                       table=st.sampled_from(("craps-pa-1", "props-pa-1", "craps-in-1", "x")))
                @settings(max_examples=examples, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))
                def call(case: Any, token: str, table: str) -> None:
                    if case.path_parameters and "table_id" in case.path_parameters:
                        case.path_parameters["table_id"] = table
                    case.headers = {**(case.headers or {}), "authorization": f"Bearer {token}"}
                    response = case.call()
                    counts["responses"] += 1
                    if response.status_code >= 500:
                        counts["5xx"] += 1

                call()
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()
    return counts["ops"], counts["responses"], counts["5xx"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--commands", type=int, default=60)
    parser.add_argument("--fuzz", type=int, default=20, help="examples per operation")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = demo_store(root)
        for name in ("esc", "fuzz", "live"):
            (root / name).mkdir()
            shutil.copyfile(db, root / name / "floor.db")
            shutil.copyfile(f"{db}.key", root / name / "floor.db.key")
        started = time.monotonic()
        kr = kill_and_retry(db, args.commands, args.kills)
        print(f"kills survived:                    {kr['kills']} (SIGKILL with {IN_FLIGHT} "
              f"commands in flight, {kr['unknown']} unknown outcomes retried, "
              f"{kr['replayed']} answered from the record of a command already applied)")
        print(f"commands acknowledged:             {kr['acknowledged']}")
        print(f"acknowledged and lost:             {kr['lost']}")
        print(f"retried and applied twice:         {kr['twice']}")
        (root / "tamper").mkdir()
        for line in report(run_all(root / "tamper"),
                           run_live(root / "live" / "floor.db", root / "live")):
            print(line)
        tried, refused, through = escalations(root / "esc" / "floor.db")
        print(f"escalation attempts:               tried {tried}, refused {refused}")
        for line in through:
            print(f"  GOT THROUGH: {line}")
        ops, responses, errors = fuzz(root / "fuzz" / "floor.db", args.fuzz)
        print(f"fuzz:                              {ops} operations, {responses} requests, "
              f"{errors} 5xx")
        print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
