"""An insider's rewrites of a table log, and whether the audit finds each (issue 12, break 4).

A keyed SQLite store is played, checkpointed, and played on (so some history lies behind the
last checkpoint and some after it). Each case rewrites a copy of the file the way someone
with write access to the database would: raise a chip purchase, forge a payout, erase a
cash-out, drop the last events - and then repairs the chain as well as they can:

- ``edit``: the rows are changed, no hash fixed;
- ``no-key``: every hash after the change recomputed - with plain SHA-256, not having the key;
- ``key``: recomputed with the chain key itself (the insider has it too).

``detect`` runs what ``dicetable audit verify --checkpoints FILE --adjudicate`` runs and says
which check caught the rewrite.

``run_live`` plays the insider against a running server instead (``dicetable serve`` on the
demo floor, with checkpoints): commands acknowledged, a verification (which checkpoints
them), more commands, and then the newest events - those no checkpoint covers yet - dropped
with the head moved back (no key needed), or replaced by forged ones. A case is detected when
the server's next verification faults the table and its next read is refused (423); the
offline audit's verdict on the same file is kept beside it (it cannot see a truncation that
no checkpoint covers).

    .venv/bin/python -m bench.tamper_cases     # the figures alone (bench.reliability_bench
                                               # prints them among the others)
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dicetable.core.roles import Role
from dicetable.games.commands import CashOut
from dicetable.store.adjudicate import adjudicate_store
from dicetable.store.audit import verify_store
from dicetable.store.chain import GENESIS, canonical, link_hash
from dicetable.store.checkpoints import heads_of, verify_checkpoints, write_checkpoint
from dicetable.store.durable import DurableTable
from dicetable.store.sqlite import SqliteStore

TABLE = "t1"
KEY = bytes(range(32))
ATTACKERS = ("edit", "no-key", "key")


@dataclass(frozen=True)
class Outcome:
    case: str
    attacker: str
    detected: bool
    by: str


def build(directory: Path, *, seed: int = 7) -> tuple[Path, Path]:
    """The played store and its checkpoint file."""
    db, cps = directory / "floor.db", directory / "cp.jsonl"
    with SqliteStore(db, key=KEY) as store:
        t = DurableTable.open(store, "pa-craps", TABLE).table
        for p in ("alice", "bob"):
            t.join(p)
            t.buy_in(p, 500_00)
        rng = random.Random(seed)

        def play(rolls: int) -> None:
            for _ in range(rolls):
                for p in ("alice", "bob"):
                    if t.point is None:
                        t.bet(p, "pass", 10_00)
                t.roll(rng.choice(["3-4", "2-2", "5-6", "1-1", "3-3", "4-5", "6-6"]))
                t.settle()

        play(12)
        t.execute(CashOut(actor="floor", role=Role.DEALER, player="bob", amount=50_00))
        play(6)
        write_checkpoint(cps, KEY, heads_of([store]), at="2026-01-01T00:00:00+00:00")
        play(12)  # after the checkpoint: only the adjudication can judge these payouts
    return db, cps


def _rows(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    return [(int(s), str(k), str(b)) for s, k, b in conn.execute(
        "SELECT seq, kind, body FROM event_log WHERE table_id = ? ORDER BY seq", (TABLE,))]


def _rewrite(db: Path, change: Callable[[list[tuple[int, str, str]]],
                                         list[tuple[int, str, str]]], attacker: str) -> None:
    conn = sqlite3.connect(db)
    links = {int(s): (str(p), str(h)) for s, p, h in conn.execute(
        "SELECT seq, prev_hash, hash FROM event_log WHERE table_id = ?", (TABLE,))}
    rows = change(_rows(conn))
    conn.execute("DELETE FROM event_log WHERE table_id = ?", (TABLE,))
    prev = GENESIS
    for seq, kind, body in rows:
        if attacker == "edit":  # only the rows: each keeps the links it had
            prev_hash, h = links[seq]
        else:
            prev_hash, h = prev, link_hash(prev, body, KEY if attacker == "key" else None)
        conn.execute("INSERT INTO event_log VALUES (?, ?, ?, ?, ?, ?)",
                     (TABLE, seq, kind, body, prev_hash, h))
        prev = h
    if attacker != "edit":  # the repaired chain's end becomes the recorded head
        conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                     (rows[-1][0] if rows else 0, prev, TABLE))
    conn.execute("DELETE FROM snapshots WHERE table_id = ?", (TABLE,))
    conn.commit()
    conn.close()


def _edit_first(kind: str, field: str, factor: int, *, after_checkpoint: bool = False
                ) -> Callable[[list[tuple[int, str, str]]], list[tuple[int, str, str]]]:
    def change(rows: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
        out = list(rows)
        candidates = [i for i, (_, k, b) in enumerate(out) if k == kind and (
            field != "items" or json.loads(b)["items"])]
        i = candidates[-1] if after_checkpoint else candidates[0]
        seq, k, body = out[i]
        data = json.loads(body)
        if field == "items":
            data["items"][0]["win"] = data["items"][0]["win"] * factor
        else:
            data[field] = data[field] * factor
        out[i] = (seq, k, canonical(data))
        return out

    return change


def _erase(kind: str) -> Callable[[list[tuple[int, str, str]]], list[tuple[int, str, str]]]:
    def change(rows: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
        i = next(i for i, (_, k, _b) in enumerate(rows) if k == kind)
        out = rows[:i]
        for seq, k, body in rows[i + 1:]:  # renumber what follows, as an insider would
            data = json.loads(body)
            data["seq"] = seq - 1
            out.append((seq - 1, k, canonical(data)))
        return out

    return change


def _drop_after(seq: int) -> Callable[[list[tuple[int, str, str]]], list[tuple[int, str, str]]]:
    return lambda rows: [r for r in rows if r[0] <= seq]


CASES: dict[str, Callable[[list[tuple[int, str, str]]], list[tuple[int, str, str]]]] = {
    "raise a chip purchase": _edit_first("ChipsBought", "amount", 10),
    "forge a payout before the checkpoint": _edit_first("WinnersPaid", "items", 3),
    "forge a payout after the checkpoint": _edit_first("WinnersPaid", "items", 3,
                                                       after_checkpoint=True),
    "erase a cash-out": _erase("ChipsCashedOut"),
}


def detect(db: Path, cps: Path) -> tuple[bool, str]:
    """Whether the audit (chain, checkpoints, adjudication) finds a problem, and which."""
    with SqliteStore(db, key=KEY, create=False) as store:
        if not all(r.ok for r in verify_store(store, replay=False)):
            return True, "keyed chain"
        if verify_checkpoints(cps, KEY, [store]):
            return True, "checkpoint"
        if adjudicate_store(store):
            return True, "adjudication"
        if not all(r.ok for r in verify_store(store, replay=True)):
            return True, "replay"
    return False, "-"


def run_all(directory: Path) -> list[Outcome]:
    db, cps = build(directory)
    assert detect(db, cps) == (False, "-"), "the untouched log must verify"
    checkpointed = json.loads(cps.read_text().splitlines()[-1])["heads"][TABLE][0]
    cases = {**CASES, "drop the last events, behind the checkpoint":
             _drop_after(int(checkpointed) - 3)}
    out = []
    for name, change in cases.items():
        for attacker in ATTACKERS:
            copy = directory / "copy.db"
            shutil.copyfile(db, copy)
            _rewrite(copy, change, attacker)
            found, by = detect(copy, cps)
            out.append(Outcome(name, attacker, found, by))
            copy.unlink()
    return out


LIVE_TABLE = "craps-pa-1"
LIVE_DROP = 3
"""How many of the newest events each live case drops or replaces (all after the last
checkpoint)."""


@dataclass(frozen=True)
class LiveOutcome:
    case: str
    attacker: str
    detected: bool
    """The server's next verification faulted the table and refused to serve it."""
    by: str
    offline: str
    """What the offline audit (chain, checkpoints, adjudication) says of the file: which
    check caught it, or ``-``."""


def _live_rows(conn: sqlite3.Connection, table: str, after: int
               ) -> list[tuple[int, str, str, str, str]]:
    return [(int(s), str(k), str(b), str(p), str(h)) for s, k, b, p, h in conn.execute(
        "SELECT seq, kind, body, prev_hash, hash FROM event_log WHERE table_id = ? AND seq > ? "
        "ORDER BY seq", (table, after))]


def cut_newest(db: Path, key: bytes, attacker: str, *, table: str = LIVE_TABLE,
               drop: int = LIVE_DROP) -> None:
    """Drop the newest ``drop`` events. ``edit``: the rows only (the recorded head still
    names the lost end); ``no-key`` and ``key``: the head moved back to the event before -
    no hash to compute, so the key makes no difference."""
    conn = sqlite3.connect(db)
    head = int(conn.execute("SELECT seq FROM table_heads WHERE table_id = ?",
                            (table,)).fetchone()[0])
    keep = head - drop
    conn.execute("DELETE FROM event_log WHERE table_id = ? AND seq > ?", (table, keep))
    conn.execute("DELETE FROM snapshots WHERE table_id = ? AND seq > ?", (table, keep))
    if attacker != "edit":
        prev = conn.execute("SELECT hash FROM event_log WHERE table_id = ? AND seq = ?",
                            (table, keep)).fetchone()[0]
        conn.execute("UPDATE table_heads SET seq = ?, hash = ? WHERE table_id = ?",
                     (keep, prev, table))
    conn.commit()
    conn.close()


def replace_newest(db: Path, key: bytes, attacker: str, *, table: str = LIVE_TABLE,
                   drop: int = LIVE_DROP) -> None:
    """Replace the newest ``drop`` events with forged ones (every chip purchase a hundred
    times larger), the head left at its seq. ``edit``: bodies only; ``no-key``: rechained
    with plain SHA-256; ``key``: rechained with the chain key (the chain verifies)."""
    conn = sqlite3.connect(db)
    head = int(conn.execute("SELECT seq FROM table_heads WHERE table_id = ?",
                            (table,)).fetchone()[0])
    rows = _live_rows(conn, table, head - drop)
    prev = rows[0][3]
    for seq, kind, body, old_prev, old_hash in rows:
        data = json.loads(body)
        if kind == "ChipsBought":
            data["amount"] = data["amount"] * 100
        forged = canonical(data)
        if attacker == "edit":
            link, digest = old_prev, old_hash
        else:
            link, digest = prev, link_hash(prev, forged, key if attacker == "key" else None)
        conn.execute("UPDATE event_log SET body = ?, prev_hash = ?, hash = ? WHERE "
                     "table_id = ? AND seq = ?", (forged, link, digest, table, seq))
        prev = digest
    if attacker != "edit":
        conn.execute("UPDATE table_heads SET hash = ? WHERE table_id = ?", (prev, table))
    conn.execute("DELETE FROM snapshots WHERE table_id = ?", (table,))
    conn.commit()
    conn.close()


LIVE_CASES: dict[str, Callable[[Path, bytes, str], None]] = {
    "truncation: drop the newest events, after the last checkpoint": cut_newest,
    "replace the newest events, after the last checkpoint": replace_newest,
}


def detect_offline(db: Path, cps: Path, key: bytes) -> str:
    """Which check of ``dicetable audit verify --checkpoints --adjudicate`` catches a
    rewrite of a served store (every stream, the account streams too), or ``-``."""
    with SqliteStore(db, key=key, create=False) as store:
        if not all(r.ok for r in verify_store(store, replay=False)):
            return "keyed chain"
        if verify_checkpoints(cps, key, [store]):
            return "checkpoint"
        if adjudicate_store(store):
            return "adjudication"
    return "-"


def run_live(demo_db: Path, directory: Path) -> list[LiveOutcome]:
    """Each live case, by each attacker, against a running server on a copy of ``demo_db``
    (the demo floor, its key beside it as ``DB.key``)."""
    out = []
    for n, (name, tamper) in enumerate(LIVE_CASES.items()):
        for attacker in ATTACKERS:
            where = directory / f"live-{n}-{attacker}"
            where.mkdir()
            out.append(_live_case(demo_db, where, name, tamper, attacker))
    return out


def _live_case(demo_db: Path, where: Path, name: str,
               tamper: Callable[[Path, bytes, str], None], attacker: str) -> LiveOutcome:
    from fastapi.testclient import TestClient

    from dicetable.server.app import create_app
    from dicetable.server.demo import DEMO_PASSWORD
    from dicetable.server.main import build_floor
    from dicetable.store.keys import read_key

    path = f"/api/tables/{LIVE_TABLE}"
    db, cps = where / "floor.db", where / "cp.jsonl"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")
    key = read_key(f"{db}.key")
    floor, _ = build_floor(db, checkpoints=cps)
    try:
        with TestClient(create_app(floor, electronic_loop=False, verify_seconds=0)) as http:
            tokens = {user: http.post("/api/login", json={
                "username": user, "password": DEMO_PASSWORD}).json()["token"]
                for user in ("dee", "alice")}
            dee = {"authorization": f"Bearer {tokens['dee']}"}
            alice = {"authorization": f"Bearer {tokens['alice']}"}
            for amount in (1, 2, 3, 4, 5, 6):
                reply = http.post(f"{path}/chips", headers=dee,
                                  json={"player": "alice", "amount": amount})
                assert reply.status_code == 200, reply.text
                if amount == 3:  # a verification, which checkpoints the first three
                    assert floor.verify_all() == [], "the untouched floor must verify"
            tamper(db, key, attacker)  # the newest three: acknowledged, not checkpointed
            faulted = floor.verify_all()  # the next periodic verification
            served = http.get(path, headers=alice).status_code
            fault = floor.faults.open.get(LIVE_TABLE, {})
            return LiveOutcome(name, attacker, LIVE_TABLE in faulted and served == 423,
                               f"running server ({fault.get('what', '-')})",
                               detect_offline(db, cps, key))
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()


def report(offline: list[Outcome], live: list[LiveOutcome]) -> list[str]:
    """The figures, as ``bench.reliability_bench`` prints them."""
    outcomes: list[Outcome | LiveOutcome] = [*offline, *live]
    lines = []
    for attacker in ATTACKERS:
        mine = [o for o in outcomes if o.attacker == attacker]
        found = sum(o.detected for o in mine)
        by = sorted({o.by for o in mine if o.detected})
        lines.append(f"tampering ({attacker:6}):               tried {len(mine)}, detected "
                     f"{found} (by {', '.join(by)})")
    cut = [o for o in outcomes if "truncation" in o.case or "drop" in o.case]
    lines.append(f"  of which truncation:             tried {len(cut)}, detected "
                 f"{sum(o.detected for o in cut)}")
    lines.append(f"  after the last checkpoint:       {len(live)} cases against a running "
                 f"server: it missed {sum(not o.detected for o in live)}; the offline audit "
                 f"alone misses {sum(o.offline == '-' for o in live)}")
    lines += [f"  NOT DETECTED: {o.case} ({o.attacker})" for o in outcomes if not o.detected]
    found = sum(o.detected for o in outcomes)
    lines.append(f"tampering, every case:             {found} of {len(outcomes)} detected "
                 f"({100 * found // max(1, len(outcomes))}%), including truncation")
    return lines


def main() -> None:
    import argparse
    import os
    import sys
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="the same cases, the demo floor's passwords hashed at a test's "
                        "Argon2 cost (a smoke run)")
    args = parser.parse_args()

    from dicetable.server.main import build_floor

    hasher = None
    if args.quick:  # each live case logs in twice: 0.4 CPU-s a login at full cost
        from tests.demo_floor import CHEAP_HASHER
        hasher = CHEAP_HASHER

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "store").mkdir()
        (root / "live").mkdir()
        demo = root / "live" / "demo.db"
        floor, _ = build_floor(demo, hasher=hasher)
        floor.close()
        floor.store.close()
        floor.accounts.close()
        for line in report(run_all(root / "store"), run_live(demo, root / "live")):
            print(line)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; reproduce: python -m "
          f"bench.tamper_cases {' '.join(sys.argv[1:])}")


if __name__ == "__main__":
    main()
