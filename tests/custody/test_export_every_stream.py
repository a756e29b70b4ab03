"""``dicetable script export --all``: every stored stream of a played demo floor written as a
script, loaded into a fresh store with ``dicetable script load``, gives back the same events
(every field, seq and time included) and the same state - custody ledgers included, and a
Props & Hops round where a die fell out of the shaker and the dealer returned the wagers."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from dicetable.cli.main import app as cli
from dicetable.core.clock import FixedClock
from dicetable.core.events import event_to_dict
from dicetable.server.app import create_app
from dicetable.server.main import build_floor
from dicetable.store import base as kinds
from dicetable.store.open import open_store
from dicetable.table.script_export import SCRIPTED_KINDS
from tests.demo_floor import CHEAP_HASHER
from tests.server.conftest import Client

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
PH, ROOM = "/api/tables/props-pa-1", "/api/dice-room/demo-pa"


def _play(db: Path) -> None:
    """The demo floor, then custody steps in the dice room and a Props & Hops no roll."""
    clock = FixedClock(START)
    floor, _ = build_floor(db, clock=clock, hasher=CHEAP_HASHER)
    try:
        with TestClient(create_app(floor, electronic_loop=False, clock_seconds=None)) as http:
            dee, amy, bob = Client(http, "dee"), Client(http, "alice"), Client(http, "bob")
            pat, ann = Client(http, "pat"), Client(http, "ann")
            assert amy.post(f"{PH}/bets", {"wager": "double4", "amount": 500}).status_code == 200
            assert bob.post(f"{PH}/bets", {"wager": "field", "amount": 300}).status_code == 200
            clock.advance(seconds=30)
            for who, path, body in [(dee, "no-more-bets", None),
                                    (dee, "offer-shaker", {"player": "alice"}),
                                    (amy, "player-shake", {"times": 3}),
                                    (amy, "return-shaker", None), (dee, "uncover", None),
                                    (dee, "roll", {"faces": "2-2", "facts": ["die-fell-out"]})]:
                reply = who.post(f"{PH}/{path}", body)
                assert reply.status_code == 200, reply.text
            clock.advance(seconds=5)
            returned = dee.post(f"{PH}/return-wagers")
            assert [e["type"] for e in returned.json()["events"]] == ["WagersReturned",
                                                                      "RoundCompleted"]
            # Custody: spare dice out of play, through the cancellation room, a count.
            clock.advance(minutes=10)
            sid = Client(http, "sid")
            steps: list[tuple[Client, str, dict[str, object]]] = [
                (pat, "remove", {"dice": ["PA1-S1"], "reason": "defective",
                                 "detail": "chipped corner"}),
                (pat, "transfer", {"dice": ["PA1-S1"], "accepted_by": "sid"}),
                (sid, "cancel", {"dice": ["PA1-S1"], "method": "drill", "hole_in": "1/4",
                                 "present": ["val"]}),
                (ann, "inventory", {"counted": [], "present": ["sid"]})]
            for actor, step, step_body in steps:
                clock.advance(seconds=61)
                reply = actor.post(f"{ROOM}/{step}", step_body)
                assert reply.status_code == 200, reply.text
    finally:
        floor.close()
        floor.store.close()
        floor.accounts.close()


def _streams(db: Path) -> dict[str, list[dict[str, object]]]:
    """Every table log, custody ledger and table bank (the floor's own records - accounts,
    staff, faults, answers - are not replayed by scripts)."""
    with open_store(str(db), create=False) as store:
        return {s: [event_to_dict(e) for e in store.events(s)] for s in store.streams()
                if kinds.kind_of(s) in SCRIPTED_KINDS}


def test_every_stream_of_a_played_floor_exports_and_replays_to_the_same_events(
        tmp_path: Path) -> None:
    db = tmp_path / "floor.db"
    _play(db)
    before = _streams(db)
    assert {"custody:demo-pa", "custody:demo-in", "props-pa-1"} <= set(before)
    props = [e["type"] for e in before["props-pa-1"]]
    assert "WagersReturned" in props
    out = tmp_path / "scripts"
    runner = CliRunner()
    exported = runner.invoke(cli, ["script", "export", str(db), "--all", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    scripts = sorted(out.glob("*.dts"))
    assert len(scripts) == len(before)
    custody_script = (out / "custody--demo-pa.dts").read_text()
    assert "dice-cancel PA1-S1" in custody_script
    assert "dice-count" in custody_script
    fresh = tmp_path / "fresh.db"
    with open_store(str(fresh), create=True):
        pass
    loaded = runner.invoke(cli, ["script", "load", str(fresh), *map(str, scripts)])
    assert loaded.exit_code == 0, loaded.output
    after = _streams(fresh)
    assert set(after) == set(before)
    for stream, events in before.items():
        assert after[stream] == events, stream
    compared = sum(len(v) for k, v in before.items() if kinds.kind_of(k) != "bank")
    assert len(before) == 12  # 5 tables, 2 custody ledgers, 5 table banks
    assert compared == 110  # a third Craps dealer assigned at the two Craps tables
    banks = sum(len(v) for k, v in before.items() if kinds.kind_of(k) == "bank")
    # 4 live tables opened with a count (opened, counted, the count's totals checkpoint, open);
    # the electronic one opened only
    assert banks == 4 * 4 + 1
    _same_state(db, fresh, before)


def _same_state(db: Path, fresh: Path, streams: dict[str, list[dict[str, object]]]) -> None:
    from dicetable.bank.ledger import TableBank
    from dicetable.custody.ledger import CustodyLedger
    from dicetable.custody.reports import pit_report
    from dicetable.table.table import Table

    for path_a, path_b in [(db, fresh)]:
        with open_store(str(path_a), create=False) as a, \
                open_store(str(path_b), create=False) as b:
            for s in streams:
                if kinds.kind_of(s) == "bank":
                    ba, bb = TableBank.replay(a.events(s)), TableBank.replay(b.events(s))
                    assert ba.state == bb.state, s
                elif kinds.kind_of(s) == "custody":
                    la, lb = CustodyLedger.replay(a.events(s)), CustodyLedger.replay(b.events(s))
                    assert json.dumps(pit_report(la.state, la.log), sort_keys=True) == \
                        json.dumps(pit_report(lb.state, lb.log), sort_keys=True)
                else:
                    ta = Table.replay(list(a.table_events(s)))
                    tb = Table.replay(list(b.table_events(s)))
                    assert ta.state == tb.state, s
