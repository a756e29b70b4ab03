"""Several server processes on PostgreSQL split the tables between them: each table is owned
by one process (advisory locks), and a command that reaches another process is forwarded to
the owner, which decides it in its pipeline."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from dicetable.server.owners import DECIDED_BY
from tests.server.test_multiprocess import _free_port, _login, _wait, postgres_floor

__all__ = ["postgres_floor"]  # the fixture, shared with the multi-process test


def _serve_split(url: str, schema: str, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DICETABLE_DB=url, DICETABLE_SCHEMA=schema,
               DICETABLE_ELECTRONIC="0", DICETABLE_WORKERS="2")
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "dicetable.server.main:app_from_env",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _owners(port: int, token: str) -> dict[str, object]:
    reply = httpx.get(f"http://127.0.0.1:{port}/api/floor/owners",
                      headers={"authorization": f"Bearer {token}"})
    reply.raise_for_status()
    data: dict[str, object] = reply.json()
    return data


def _a_bet(port: int, token: str, table: str) -> dict[str, object]:
    view = httpx.get(f"http://127.0.0.1:{port}/api/tables/{table}",
                     headers={"authorization": f"Bearer {token}"}).json()
    held = {b["wager"] for b in view["me"]["bets"]}
    code = next(c for c in view["me"]["placeable"] if c not in held)
    return {"wager": code, "amount": view["limits"][code]["minimum"]}


def test_two_processes_split_the_tables_and_forward_commands_to_the_owner(
        postgres_floor: tuple[str, str]) -> None:
    url, schema = postgres_floor
    ports = [_free_port(), _free_port()]
    procs = [_serve_split(url, schema, port) for port in ports]
    try:
        for port, proc in zip(ports, procs, strict=True):
            _wait(port, proc)
        tokens = [_login(port, "alice") for port in ports]
        pit = [_login(port, "pat") for port in ports]  # the floor's internals: staff only
        owned: list[set[str]] = [set(), set()]
        pids: list[str] = ["", ""]
        for _ in range(300):  # until the second process has claimed its share (counted)
            views = [_owners(port, token) for port, token in zip(ports, pit, strict=True)]
            owned = [set(v["owns"]) for v in views]  # type: ignore[call-overload]
            pids = [str(v["pid"]) for v in views]
            if len(owned[0] | owned[1]) == 5 and owned[0] and owned[1]:
                break
            time.sleep(0.1)
        assert not owned[0] & owned[1], owned  # no table is decided in two processes
        assert len(owned[0] | owned[1]) == 5, owned
        assert owned[0], owned
        assert owned[1], owned
        for here in (0, 1):
            there = 1 - here
            table = sorted(owned[there])[0]
            body = _a_bet(ports[here], tokens[here], table)
            reply = httpx.post(f"http://127.0.0.1:{ports[here]}/api/tables/{table}/bets",
                               json=body, headers={"authorization": f"Bearer {tokens[here]}"})
            assert reply.status_code == 200, reply.text
            assert reply.headers[DECIDED_BY] == pids[there]  # forwarded to the owner
            assert [e["type"] for e in reply.json()["events"]] == ["BetPlaced"]
            own_table = sorted(owned[here])[0]
            body = _a_bet(ports[here], tokens[here], own_table)
            mine = httpx.post(f"http://127.0.0.1:{ports[here]}/api/tables/{own_table}/bets",
                              json=body, headers={"authorization": f"Bearer {tokens[here]}"})
            assert mine.status_code == 200, mine.text
            assert mine.headers[DECIDED_BY] == pids[here]  # its own table: decided here
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(20)
