"""Reliability under attack (issue 12): prints what was tried and what held.

- kills survived: ``dicetable serve`` SIGKILLed with commands in flight, restarted each time;
  the client retries every unknown outcome with the same ``Idempotency-Key``;
- commands acknowledged and lost (must be 0), retried commands applied twice (must be 0);
- tampering cases tried and detected, by an insider without the key and with it: rewrites
  found by the offline audit, and truncations and replacements of the newest events (which
  no checkpoint covers yet) found by the running server's next verification;
- escalation attempts tried and refused (self-promotion, assigning above one's rank, staff
  playing at their own table, unlocking and clearing faults without the authority);
- 5xx under fuzz (must be 0): schemathesis over every operation;
- attacks on the network, against a real ``dicetable serve``: 500 half-open bets without a
  session while another player bets, one address opening more than its share of
  connections, headers and bodies that never finish, a 40,000-digit dice serial,
  cross-origin WebSocket upgrades, invented ``X-Forwarded-For``, assigning someone without
  a staff account, a player reading the floor's internals;
- a wrong-password flood from 40 addresses while a user logs in with the right password, a
  lock ending every session (HTTP and WebSockets), rows written without the key (session,
  account kind, password hash, staff role), fault clears while the log still fails, and the
  CLI fuzz (``bench/attacks_round3.py``).

    .venv/bin/python -m bench.reliability_bench [--kills 10] [--commands 60] [--fuzz 20]
        [--only network|flood|lock|keyless|clear|cli] [--half-open 500] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
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
from argon2 import PasswordHasher

from bench import attacks_round3 as round3
from bench.tamper_cases import report, run_all, run_live
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.main import build_floor

T = "/api/tables/craps-pa-1"
IN_FLIGHT = 4


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(db: Path, port: int, *more: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "dicetable.cli.main", "serve", "--db",
                             str(db), "--port", str(port), "--verify-every", "0", *more],
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


def demo_store(directory: Path, hasher: PasswordHasher | None = None) -> Path:
    """The demo floor's file in ``directory`` (``hasher``: its accounts' Argon2 cost, which
    every later login on a copy pays)."""
    db = directory / "floor.db"
    floor, _ = build_floor(db, hasher=hasher)
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


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _status(sock: socket.socket) -> int:
    """The status of the answer the server wrote on ``sock`` (0: closed without one)."""
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0


def _half_open(body_sent: int = 5) -> bytes:
    body = json.dumps({"wager": "field", "amount": 1000}).encode()
    return (f"POST {T}/bets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body[:body_sent]


DEADLINE_S = 30
"""The read deadlines the network attacks' server runs with (``--header-timeout``,
``--body-timeout``): long enough that the half-open connections are held all the while the
other player bets on a slow machine, short enough that their 408s come in the bench's time."""
QUICK_DEADLINE_S = 2
"""The same deadlines in a ``--quick`` run (fewer connections held, fewer bets meanwhile): the
408s are waited for."""
QUICK_HALF_OPEN = 100
"""Half-open bets held in a ``--quick`` run (500 otherwise)."""


def network_attacks(db: Path, half_open: int = 500, bets: int = 40,
                    deadline: float = DEADLINE_S) -> dict[str, Any]:
    """Each attack on the network against a real ``dicetable serve``: what it got."""
    port = _port()
    proc = _serve(db, port, "--header-timeout", str(deadline), "--body-timeout",
                  str(deadline))
    url = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {}
    held: list[socket.socket] = []

    def login(user: str, password: str = DEMO_PASSWORD) -> str:
        token: str = httpx.post(f"{url}/api/login", json={"username": user,
                                                           "password": password}).json()["token"]
        return token

    try:
        alice, pat, ann = login("alice"), login("pat"), login("ann")
        me = {"authorization": f"Bearer {alice}"}
        ref = httpx.post(f"{url}{T}/bets", json={"wager": "field", "amount": 1000},
                         headers=me).json()["events"][0]["bet"]
        pit = {"authorization": f"Bearer {pat}"}

        def open_now() -> int:
            count: int = httpx.get(f"{url}/api/floor/load", headers=pit).json()[
                "connections"]["open"]
            return count

        # 1. half-open bets, no session, from ten addresses, and headers never finished;
        # another player bets meanwhile
        for i in range(half_open):
            sock = _connect(port, f"127.0.0.{2 + i % 10}")
            sock.sendall(_half_open())
            held.append(sock)
        slow_heads = []
        for _ in range(20):
            sock = _connect(port, "127.0.0.13")
            sock.sendall(b"POST /api/tables/craps-pa-1/bets HTTP/1.1\r\nHost: x\r\n")
            slow_heads.append(sock)
        open_before = open_now()
        with httpx.Client(base_url=url, headers=me) as player:
            answers = [player.patch(f"{T}/bets/{ref}", json={"amount": 1100 + 100 * (i % 2)}
                                    ).status_code for i in range(bets)]
        out["half_open"] = {"held": half_open, "bets": bets,
                            "accepted": answers.count(200), "refused_503": answers.count(503),
                            "open_before": open_before, "open_after": open_now()}
        # 2. the slow clients, past their deadlines
        statuses = [_status(s) for s in held]
        out["slow_body"] = {"tried": len(held), "answered_408": statuses.count(408)}
        statuses = [_status(s) for s in slow_heads]
        out["slow_headers"] = {"tried": 20, "answered_408": statuses.count(408)}
        out["deadline"] = deadline
        for sock in held + slow_heads:
            sock.close()
        held.clear()
        # 3. one address opening more than its share (256): the refused are answered 503
        # and closed as they are accepted, before they send anything
        before = httpx.get(f"{url}/api/floor/load", headers=pit).json()["connections"]
        for _ in range(300):
            held.append(_connect(port, "127.0.0.12"))
        refused = sum(_status(sock) == 503 for sock in held[256:])
        after = httpx.get(f"{url}/api/floor/load", headers=pit).json()["connections"]
        for sock in held:
            sock.close()
        held.clear()
        out["one_address"] = {"tried": 300, "refused_at_once": refused,
                              "counted_refused": after["refused"] - before["refused"]}
        # 4. a 40,000-digit dice serial to a dice-room step (after one short one: the
        # route's first answer builds what it needs once)
        httpx.post(f"{url}/api/dice-room/demo-pa/receive", json={"present": []},
                   headers={"authorization": f"Bearer {ann}"})
        started = time.perf_counter()
        reply = httpx.post(f"{url}/api/dice-room/demo-pa/receive", json={
            "present": ["sid"], "shipment": "S1", "manufacturer": "Acme",
            "boxes": [{"box": "B1", "serials": ["1" * 40_000]}]},
            headers={"authorization": f"Bearer {ann}"}, timeout=120)
        out["huge_serial"] = {"status": reply.status_code,
                              "ms": round((time.perf_counter() - started) * 1000, 1)}
        # 5. cross-origin WebSocket upgrades, with and without a token in the query
        queries = ["", "?token=", "?token=x", f"?token={alice}", "?x=1&token=", "?after=0&token="]
        ws = [_upgrade(port, q, {"Origin": "https://evil.example",
                                 "Cookie": f"dicetable_session={alice}"}) for q in queries]
        out["cross_origin_ws"] = {"tried": len(ws), "refused": sum(s == 403 for s in ws)}
        # 6. wrong logins from one client inventing an address each time
        codes = [httpx.post(f"{url}/api/login", json={"username": f"nobody{i}",
                                                       "password": "wrong"},
                            headers={"x-forwarded-for": f"203.0.113.{i}"}).status_code
                 for i in range(12)]
        out["invented_xff"] = {"tried": 12, "answered_429": codes.count(429)}
        # 7. assigning someone without a staff account; a player reading the internals
        assign = httpx.post(f"{url}{T}/staff", json={"person": "mallory", "role": "dealer"},
                            headers={"authorization": f"Bearer {pat}"})
        owners = httpx.get(f"{url}/api/floor/owners", headers=me)
        out["assign_non_staff"] = assign.status_code
        out["owners_as_player"] = owners.status_code
    finally:
        for sock in held:
            sock.close()
        proc.terminate()
        proc.wait(30)
    return out


def _upgrade(port: int, query: str, headers: dict[str, str]) -> int:
    """The status a WebSocket upgrade is answered (101: opened)."""
    lines = [f"GET /ws/tables/craps-pa-1{query} HTTP/1.1", f"Host: 127.0.0.1:{port}",
             "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
             *[f"{k}: {v}" for k, v in headers.items()]]
    with _connect(port) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return _status(sock)


def print_network(result: dict[str, Any]) -> None:
    h = result["half_open"]
    print(f"half-open bets, no session:        {h['held']} held, with 20 unfinished headers "
          f"({h['open_before']} open at the server before the bets, {h['open_after']} after); "
          f"another player's bets meanwhile: {h['accepted']} of {h['bets']} accepted, "
          f"{h['refused_503']} refused 503")
    for key, what in (("slow_body", "bodies never finished"),
                      ("slow_headers", "headers never finished")):
        r = result[key]
        print(f"{what + ':':35}{r['tried']} tried, {r['answered_408']} answered 408 and closed "
              f"(deadline {result['deadline']:g} s)")
    r = result["one_address"]
    print(f"one address, 300 connections:     {r['refused_at_once']} refused 503 at once "
          f"(share 256; the server counted {r['counted_refused']})")
    r = result["huge_serial"]
    print(f"40,000-digit dice serial:          answered {r['status']} in {r['ms']} ms")
    r = result["cross_origin_ws"]
    print(f"cross-origin WebSocket upgrades:   {r['tried']} tried, {r['refused']} refused")
    r = result["invented_xff"]
    print(f"wrong logins, invented XFF:        {r['tried']} tried, {r['answered_429']} answered "
          "429 (one client: limit 10)")
    print(f"assign a non-account as dealer:    answered {result['assign_non_staff']}")
    print(f"player reads /api/floor/owners:    answered {result['owners_as_player']}")


ROUND3: dict[str, Any] = {
    "flood": lambda db: round3.print_flood(round3.flood(db, _port(), _serve)),
    "lock": lambda db: round3.print_lock(round3.lock_ends_sessions(db, _port(), _serve)),
    "keyless": lambda db: round3.print_keyless(round3.keyless(db, _port(), _serve)),
    "clear": lambda db: round3.print_clear(round3.clear_refused(db, _port(), _serve)),
    "cli": lambda db: round3.print_cli(round3.cli_fuzz()),
}
"""The sections of round 3's attacks, each run on its own copy of the demo floor."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--commands", type=int, default=60)
    parser.add_argument("--fuzz", type=int, default=20, help="examples per operation")
    parser.add_argument("--only", choices=["network", *ROUND3],
                        help="run only these attacks")
    parser.add_argument("--bets", type=int, default=40,
                        help="another player's bets while the half-open connections are held")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S,
                        help="the server's header and body read deadlines, seconds")
    parser.add_argument("--half-open", type=int, default=500,
                        help="half-open bets without a session held at once")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 kill, 8 commands, 2 fuzz examples, one "
                        f"section of round 3, no tampering (bench.tamper_cases has it), "
                        f"{QUICK_HALF_OPEN} half-open connections with 10 bets among them, "
                        f"{QUICK_DEADLINE_S} s read deadlines, passwords hashed at a test's "
                        "Argon2 cost")
    args = parser.parse_args()
    hasher: PasswordHasher | None = None
    if args.quick:
        args.kills, args.commands, args.fuzz = 1, 8, 2
        args.bets, args.deadline, args.half_open = 10, QUICK_DEADLINE_S, QUICK_HALF_OPEN
        # Each login pays its stored hash's cost (0.4 CPU-s at full cost); here they are
        # set-up, and the lockout and the flood count what is decided, not how long.
        from tests.demo_floor import CHEAP_HASHER
        hasher = CHEAP_HASHER
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: "
          f"python -m bench.reliability_bench {' '.join(sys.argv[1:])}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = demo_store(root, hasher)
        for name in ("esc", "fuzz", "live", "net", *ROUND3):
            (root / name).mkdir()
            shutil.copyfile(db, root / name / "floor.db")
            shutil.copyfile(f"{db}.key", root / name / "floor.db.key")
        started = time.monotonic()
        if args.only in ROUND3:
            ROUND3[args.only](root / args.only / "floor.db")
            print(f"({time.monotonic() - started:.0f} s)")
            return
        print_network(network_attacks(root / "net" / "floor.db", half_open=args.half_open,
                                      bets=args.bets, deadline=args.deadline))
        if args.only == "network":
            print(f"({time.monotonic() - started:.0f} s)")
            return
        for name, section in ROUND3.items():
            if args.quick and name != "lock":  # a smoke run: one of round 3's sections
                continue
            section(root / name / "floor.db")
        kr = kill_and_retry(db, args.commands, args.kills)
        print(f"kills survived:                    {kr['kills']} (SIGKILL with {IN_FLIGHT} "
              f"commands in flight, {kr['unknown']} unknown outcomes retried, "
              f"{kr['replayed']} answered from the record of a command already applied)")
        print(f"commands acknowledged:             {kr['acknowledged']}")
        print(f"acknowledged and lost:             {kr['lost']}")
        print(f"retried and applied twice:         {kr['twice']}")
        (root / "tamper").mkdir()
        if not args.quick:  # bench.tamper_cases --quick runs these on its own
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
