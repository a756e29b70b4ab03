"""Several server processes on PostgreSQL split the tables between them: each table is owned
by one process (advisory locks), and a command that reaches another process is forwarded to
the owner, which decides it in its pipeline."""

from __future__ import annotations

import time

import httpx

from dicetable.server.owners import DECIDED_BY
from tests.server.processes import TIMEOUT, login, running
from tests.server.test_multiprocess import _serve


def _owners(port: int, token: str) -> dict[str, object]:
    reply = httpx.get(f"http://127.0.0.1:{port}/api/floor/owners",
                      headers={"authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    reply.raise_for_status()
    data: dict[str, object] = reply.json()
    return data


def _a_bet(port: int, token: str, table: str) -> dict[str, object]:
    view = httpx.get(f"http://127.0.0.1:{port}/api/tables/{table}",
                     headers={"authorization": f"Bearer {token}"}, timeout=TIMEOUT).json()
    held = {b["wager"] for b in view["me"]["bets"]}
    code = next(c for c in view["me"]["placeable"] if c not in held)
    return {"wager": code, "amount": view["limits"][code]["minimum"]}


def test_two_processes_split_the_tables_and_forward_commands_to_the_owner(
        postgres_floor: tuple[str, str]) -> None:
    url, schema = postgres_floor
    servers = [_serve(url, schema, DICETABLE_WORKERS="2") for _ in range(2)]
    with running(servers):
        ports = [server.port for server in servers]
        tokens = [login(port, "alice") for port in ports]
        pit = [login(port, "pat") for port in ports]  # the floor's internals: staff only
        owned: list[set[str]] = [set(), set()]
        pids: list[str] = ["", ""]
        guard = time.monotonic() + 120  # against a hang: claims are retried every 2 s
        while time.monotonic() < guard:  # until each process has claimed its share
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
        # interleaved by place: the sorted names' every other table to each process
        names = sorted(owned[0] | owned[1])
        assert sorted(map(sorted, owned)) == sorted([names[0::2], names[1::2]]), owned
        for here in (0, 1):
            there = 1 - here
            table = sorted(owned[there])[0]
            body = _a_bet(ports[here], tokens[here], table)
            reply = httpx.post(f"http://127.0.0.1:{ports[here]}/api/tables/{table}/bets",
                               json=body, headers={"authorization": f"Bearer {tokens[here]}"},
                               timeout=TIMEOUT)
            assert reply.status_code == 200, reply.text
            assert reply.headers[DECIDED_BY] == pids[there]  # forwarded to the owner
            assert [e["type"] for e in reply.json()["events"]] == ["BetPlaced"]
            own_table = sorted(owned[here])[0]
            body = _a_bet(ports[here], tokens[here], own_table)
            mine = httpx.post(f"http://127.0.0.1:{ports[here]}/api/tables/{own_table}/bets",
                              json=body, headers={"authorization": f"Bearer {tokens[here]}"},
                              timeout=TIMEOUT)
            assert mine.status_code == 200, mine.text
            assert mine.headers[DECIDED_BY] == pids[here]  # its own table: decided here
