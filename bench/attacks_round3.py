"""The attacks of "integrity under attack, round 3", against a real ``dicetable serve``; each
figure is printed with what qualifies it and the command that reproduces it. Counts only:
nothing here asserts a speed. Run through ``bench.reliability_bench`` (``--only flood``,
``lock``, ``keyless``, ``clear``, ``cli``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from dicetable.server.demo import DEMO_PASSWORD

T = "craps-pa-1"
AT = "2026-12-01T12:00:00+00:00"
REPRODUCE = "python -m bench.reliability_bench --only {}"
Serve = Callable[..., subprocess.Popen[bytes]]


def _client(url: str, address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (127.0.0.N: its own client)."""
    return httpx.Client(base_url=url, timeout=120,
                        transport=httpx.HTTPTransport(local_address=address))


def _login(url: str, user: str, password: str = DEMO_PASSWORD,
           address: str = "127.0.0.1") -> httpx.Response:
    with _client(url, address) as c:
        return c.post("/api/login", json={"username": user, "password": password})


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


# -- the wrong-password flood ------------------------------------------------------------------
def flood(db: Path, port: int, serve: Serve, addresses: int = 40, each: int = 5,
          logins: int = 10) -> dict[str, Any]:
    """Wrong passwords for unknown names from ``addresses`` addresses (``each`` apiece) while
    alice logs in ``logins`` times with the right one from her own address."""
    proc = serve(db, port)
    url = f"http://127.0.0.1:{port}"
    flood_codes: Counter[int] = Counter()
    lock = threading.Lock()

    def attacker(n: int) -> None:
        with _client(url, f"127.0.1.{n + 1}") as c:
            for i in range(each):
                code = c.post("/api/login", json={"username": f"nobody{n}-{i}",
                                                  "password": "wrong"}).status_code
                with lock:
                    flood_codes[code] += 1

    try:
        threads = [threading.Thread(target=attacker, args=(n,)) for n in range(addresses)]
        for t in threads:
            t.start()
        mine = Counter(_login(url, "alice", address="127.0.2.1").status_code
                       for _ in range(logins))
        for t in threads:
            t.join()
        pit = _bearer(_login(url, "pat", address="127.0.2.2").json()["token"])
        accounts = httpx.get(f"{url}/api/pit", headers=pit, timeout=60).json()["accounts"]
        alice = next(a for a in accounts if a["username"] == "alice")
    finally:
        proc.terminate()
        proc.wait(30)
    return {"addresses": addresses, "wrong": addresses * each, "flood": dict(flood_codes),
            "logins": logins, "succeeded": mine[200], "refused_429": mine[429],
            "other": logins - mine[200] - mine[429],
            "locked": int(alice["locked_until"] is not None)}


def print_flood(r: dict[str, Any]) -> None:
    print(f"wrong-password flood:              {r['wrong']} wrong logins for unknown names "
          f"from {r['addresses']} addresses (answered {r['flood']}); meanwhile alice's right "
          f"password: {r['succeeded']} of {r['logins']} logins succeeded, {r['refused_429']} "
          f"refused 429, {r['other']} other; alice locked: {r['locked']} (must be 0)  "
          f"[{REPRODUCE.format('flood')}]")


# -- a lock ends every session -------------------------------------------------------------------
def lock_ends_sessions(db: Path, port: int, serve: Serve) -> dict[str, Any]:
    """Alice holds two sessions, each with an open WebSocket; three wrong passwords lock her:
    her HTTP requests, her sockets and a reconnection with an old token are counted."""
    proc = serve(db, port)
    url = f"http://127.0.0.1:{port}"
    ws_url = f"ws://127.0.0.1:{port}/ws/tables"
    opened = contextlib.ExitStack()
    try:
        tokens = [_login(url, "alice", address=f"127.0.3.{i + 1}").json()["token"]
                  for i in range(2)]
        before = [httpx.get(f"{url}/api/me", headers=_bearer(t)).status_code for t in tokens]
        sockets = [opened.enter_context(connect(f"{ws_url}/{table}?token={t}",
                                                open_timeout=60))
                   for t, table in zip(tokens, (T, "craps-in-1"), strict=True)]
        hellos = sum(json.loads(s.recv(timeout=60))["type"] == "hello" for s in sockets)
        codes = [_login(url, "alice", f"wrong-{i}", address=f"127.0.4.{i + 1}").status_code
                 for i in range(3)]
        http_after = []
        for t in tokens:
            me = _bearer(t)
            http_after += [httpx.get(f"{url}/api/me", headers=me).status_code,
                           httpx.post(f"{url}/api/tables/{T}/bets", headers=me,
                                      json={"wager": "pass", "amount": 500}).status_code]
        closed: list[int | None] = []
        for s in sockets:
            code: int | None = None
            for _ in range(100):  # read until the server closes it (a bound, not a timing)
                try:
                    s.recv(timeout=30)
                except ConnectionClosed as gone:
                    code = gone.rcvd.code if gone.rcvd is not None else None
                    break
                except TimeoutError:
                    break
            closed.append(code)
            s.close()
        reconnect: list[int] = []
        for t in tokens:
            try:
                with connect(f"{ws_url}/{T}?token={t}", open_timeout=60) as again:
                    again.recv(timeout=30)
                    reconnect.append(101)
            except InvalidStatus as refused:
                reconnect.append(refused.response.status_code)
            except ConnectionClosed as gone:
                reconnect.append(gone.rcvd.code if gone.rcvd is not None else 0)
    finally:
        opened.close()
        proc.terminate()
        proc.wait(30)
    return {"sessions": len(tokens), "before": before, "hellos": hellos, "lock": codes,
            "http_after": len(http_after), "http_refused": http_after.count(401),
            "ws": len(closed), "ws_closed_4401": closed.count(4401), "ws_codes": closed,
            "reconnects": len(reconnect),
            "reconnect_refused": sum(c != 101 for c in reconnect)}


def print_lock(r: dict[str, Any]) -> None:
    q = f"[{REPRODUCE.format('lock')}]"
    print(f"a lock ends every session:         {r['sessions']} sessions of alice "
          f"(answered {r['before']} before), {r['ws']} open WebSockets ({r['hellos']} hellos); "
          f"3 wrong passwords answered {r['lock']}  {q}")
    print(f"  HTTP after the lock:             {r['http_refused']} of {r['http_after']} "
          f"requests refused 401 (/api/me and a bet, each session)")
    print(f"  WebSockets after the lock:       {r['ws_closed_4401']} of {r['ws']} closed by "
          f"the server with 4401 (codes {r['ws_codes']}); in another process within the "
          f"session cache's 5 s (its sweep)")
    print(f"  reconnect with an old token:     {r['reconnect_refused']} of {r['reconnects']} "
          "refused")


# -- rows written without the key ----------------------------------------------------------------
def keyless(db: Path, port: int, serve: Serve, polls: int = 120) -> dict[str, Any]:
    """Each forged row (an insider with the database but not the key: the plain chain, the
    head moved) tried against the running server, which verifies every second."""
    from argon2 import PasswordHasher
    from tests.server.test_rows_without_the_key import forge, rewrite

    from dicetable.application.accounts import token_digest
    from dicetable.core.roles import Role
    from dicetable.store import account_stream as acct
    from dicetable.store.staff_stream import StaffRoleGranted
    from dicetable.table.events import StaffAssigned

    proc = serve(db, port, "--verify-every", "1")
    url = f"http://127.0.0.1:{port}"
    granted: dict[str, int] = {}
    streams = {"session row (fran, floorperson)": "account:fran",
               "account kind (alice -> staff)": "account:alice",
               "password hash (dee)": "account:dee",
               f"staff role (staff:{T} only)": f"staff:{T}",
               f"staff role (table log {T})": T}
    try:
        pit = _bearer(_login(url, "pat").json()["token"])  # the floor's one supervisor
        bo = _bearer(_login(url, "bo").json()["token"])
        alice = _bearer(_login(url, "alice").json()["token"])
        # a session for a member of staff who opens tables and assigns their staff
        token = "forged-" + "x" * 40 + ".fran"
        forge(str(db), "account:fran", acct.SessionOpened, account="fran", at=AT,
              session=token_digest(token), expires="2099-01-01T00:00:00+00:00")
        tries = [httpx.get(f"{url}/api/me", headers=_bearer(token)).status_code,
                 httpx.post(f"{url}/api/tables/{T}/staff", headers=_bearer(token),
                            json={"person": "sam", "role": "dealer"}).status_code]
        granted["session row (fran, floorperson)"] = tries.count(200)
        # an account's kind
        rewrite(str(db), "account:alice", 1, account_kind="staff")
        tries = [httpx.get(f"{url}/api/pit", headers=alice).status_code,
                 _login(url, "alice", address="127.0.5.1").status_code]
        granted["account kind (alice -> staff)"] = tries.count(200)
        # a password hash
        rewrite(str(db), "account:dee", 1,
                password_hash=PasswordHasher().hash("the-insiders-password"))
        granted["password hash (dee)"] = int(
            _login(url, "dee", "the-insiders-password", address="127.0.5.2").status_code == 200)
        # a staff role: in the staff stream only, and in the table's own log
        forge(str(db), f"staff:{T}", StaffRoleGranted, table_id=T, actor="pat", at=AT,
              person="bo", staff_role="pit-boss", table_seq=1)
        granted[f"staff role (staff:{T} only)"] = int(httpx.post(
            f"{url}/api/tables/{T}/staff", headers=bo,
            json={"person": "sam", "role": "dealer"}).status_code == 200)
        forge(str(db), T, StaffAssigned, table=T, actor="pat", role=Role.PIT_BOSS, at=AT,
              person="bo", staff_role=Role.PIT_BOSS)
        granted[f"staff role (table log {T})"] = int(httpx.post(
            f"{url}/api/tables/{T}/staff", headers=bo,
            json={"person": "sam", "role": "dealer"}).status_code == 200)
        listed: set[str] = set()
        for _ in range(polls):  # the server verifies every second; asked until all listed
            listed = {f["table"] for f in httpx.get(f"{url}/api/faults", headers=pit,
                                                    timeout=60).json()}
            if set(streams.values()) <= listed:
                break
            threading.Event().wait(0.5)
        # once reported, still nothing granted
        after = [httpx.get(f"{url}/api/me", headers=_bearer(token)).status_code,
                 _login(url, "alice", address="127.0.5.3").status_code,
                 _login(url, "dee", "the-insiders-password", address="127.0.5.4").status_code]
    finally:
        proc.terminate()
        proc.wait(30)
    return {"cases": {what: {"granted": granted[what], "reported": s in listed}
                      for what, s in streams.items()},
            "granted_after_report": after.count(200)}


def print_keyless(r: dict[str, Any]) -> None:
    cases = r["cases"]
    reported = sum(c["reported"] for c in cases.values())
    granted = sum(c["granted"] for c in cases.values())
    print(f"rows written without the key:      {len(cases)} forged (plain chain, head moved); "
          f"granted {granted} (must be 0), reported by the running server (--verify-every 1, "
          f"/api/faults) {reported} of {len(cases)}; granted once reported "
          f"{r['granted_after_report']}  [{REPRODUCE.format('keyless')}]")
    for what, c in cases.items():
        print(f"  {what + ':':36}granted {c['granted']}, reported "
              f"{'yes' if c['reported'] else 'NO'}")


# -- a fault is cleared only when the whole log verifies ------------------------------------------
def clear_refused(db: Path, port: int, serve: Serve, polls: int = 120) -> dict[str, Any]:
    """A table's event rewritten without the key: the server faults it; the pit boss's clear
    and the CLI's break-glass clear are tried while it still fails, then after the rows are
    put back."""
    from tests.server.test_rows_without_the_key import rewrite

    proc = serve(db, port, "--verify-every", "1")
    url = f"http://127.0.0.1:{port}"
    conn = sqlite3.connect(db)
    saved = conn.execute("SELECT seq, body, prev_hash, hash FROM event_log WHERE table_id = ? "
                         "AND seq >= 2", (T,)).fetchall()
    head = conn.execute("SELECT seq, hash FROM table_heads WHERE table_id = ?",
                        (T,)).fetchone()
    conn.close()
    out: dict[str, Any] = {}
    try:
        pat = _bearer(_login(url, "pat").json()["token"])
        rewrite(str(db), T, 2, at="2020-01-01T00:00:00+00:00")  # without the key
        faulted = False
        for _ in range(polls):
            faulted = T in {f["table"] for f in httpx.get(f"{url}/api/faults", headers=pat,
                                                            timeout=60).json()}
            if faulted:
                break
            threading.Event().wait(0.5)
        api = [httpx.post(f"{url}/api/tables/{T}/fault/clear", headers=pat, timeout=120,
                          json={"reason": "looks fine"}).status_code for _ in range(3)]
        cli = subprocess.run([sys.executable, "-m", "dicetable.cli.main", "audit",
                              "clear-fault", T, "--db", str(db), "--operator", "ann",
                              "--reason", "break glass"], capture_output=True, timeout=300)
        conn = sqlite3.connect(db)
        for seq, b, prev, h in saved:
            conn.execute("UPDATE event_log SET body = ?, prev_hash = ?, hash = ? WHERE "
                         "table_id = ? AND seq = ?", (b, prev, h, T, seq))
        conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                     (head[0], head[1], T))
        conn.commit()
        conn.close()
        restored = httpx.post(f"{url}/api/tables/{T}/fault/clear", headers=pat, timeout=120,
                              json={"reason": "rows restored from the backup"}).status_code
        said = (cli.stdout + cli.stderr).decode(errors="replace").split()
        out = {"faulted": faulted, "api": api, "cli_exit": cli.returncode,
               "cli_said": " ".join(said)[:160],
               "restored": restored}
    finally:
        proc.terminate()
        proc.wait(30)
    return out


def print_clear(r: dict[str, Any]) -> None:
    print(f"fault clear while the log fails:   table faulted by the running server: "
          f"{'yes' if r['faulted'] else 'NO'}; pit boss's clears {len(r['api'])} tried, "
          f"{r['api'].count(409)} refused 409 (must be all); CLI break-glass clear exit "
          f"{r['cli_exit']} (non-zero: refused); after the rows were restored the clear "
          f"answered {r['restored']}  [{REPRODUCE.format('clear')}]")
    print(f"  the CLI said:                    {r['cli_said']}")


# -- the CLI fuzz ----------------------------------------------------------------------------------
def cli_fuzz() -> dict[str, Any]:
    """Every generated bad input of the CLI fuzz tests (``tests/test_cli_bad_input.py``)."""
    from tests import test_cli_bad_input as fuzz

    exits: Counter[int] = Counter()
    tracebacks = 0
    unclean = []
    for case in fuzz._CASES:
        ok, why, code = fuzz.run_case(case)
        exits[code] += 1
        tracebacks += why.startswith("traceback")
        if not ok:
            unclean.append(f"{case.id}: {why[:120]}")
    shutil.rmtree(fuzz._SETUP.work, ignore_errors=True)
    return {"inputs": len(fuzz._CASES), "commands": len({c.command for c in fuzz._CASES}),
            "tracebacks": tracebacks, "exits": dict(sorted(exits.items())),
            "unclean": unclean}


def print_cli(r: dict[str, Any]) -> None:
    print(f"CLI fuzz:                          {r['inputs']} generated bad inputs over "
          f"{r['commands']} commands (hostile bytes, huge numbers, deep nesting, unusable "
          f"--out and store URLs): {r['tracebacks']} tracebacks (must be 0), exit codes "
          f"{r['exits']}  [{REPRODUCE.format('cli')}]")
    for line in r["unclean"]:
        print(f"  NOT CLEAN: {line}")
