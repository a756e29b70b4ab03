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
