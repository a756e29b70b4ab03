"""The views kept from events always equal the views built from scratch, for every viewer, and
the events each privacy class is sent equal what ``event_for`` lets that viewer see."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicetable.application.accounts import Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.events import Event
from dicetable.server import controls
from dicetable.server.controls import controls_for
from dicetable.server.floor import Chore, Floor, Given, _Owned
from dicetable.server.live_views import Fanout
from dicetable.server.views import event_for_viewer, table_view
from tests.profiles import examples
from tests.server.pipeline_helpers import PLAYERS, T, account, small_floor

WAGERS = ["pass", "dontpass", "come", "dontcome", "field", "place6", "place8", "any7",
          "hard6", "hop2-3", "odds", "fire"]
VIEWERS = [account(p) for p in PLAYERS] + [account("dee", Kind.STAFF), account("zed")]

op = st.one_of(
    st.tuples(st.just("bet"), st.sampled_from(PLAYERS), st.sampled_from(WAGERS),
              st.sampled_from([1_00, 5_00, 6_00, 12_00, 30_00])),
    st.tuples(st.just("remove"), st.sampled_from(PLAYERS), st.integers(0, 3)),
    st.tuples(st.just("roll"), st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.just("join"), st.sampled_from(["zed"])),
)


def _apply(floor: Floor, step: tuple[Any, ...]) -> None:
    table = floor.tables[T].table
    kind = step[0]
    try:
        if kind == "bet":
            _, player, wager, amount = step
            base = None
            if wager == "odds":
                lines = [b.id for b in table.state.bets_of(player)]
                base = lines[0] if lines else "none"
            floor.submit(T, Given(account(player), lambda a, r: g.PlaceBet(
                actor=a, role=r, player=a, wager=wager, amount=amount, base=base),
                g.PlaceBet)).result(10)
        elif kind == "remove":
            _, player, k = step
            mine = sorted(b.id for b in table.state.bets_of(player))
            if mine:
                bet = mine[k % len(mine)]
                floor.submit(T, Given(account(player), lambda a, r: g.RemoveBet(
                    actor=a, role=r, bet=bet), g.RemoveBet)).result(10)
        elif kind == "join":
            floor.submit(T, Chore(lambda: [
                g.JoinTable(actor="zed", role=Role.PLAYER, player="zed", seat=9),
                g.BuyChips(actor="table", role=Role.SYSTEM, player="zed", amount=50_00)])).result()
        else:
            _, a, b = step
            info = floor.tables[T]
            floor.submit(T, Chore(lambda: [
                g.CloseBetting(actor="table", role=Role.SYSTEM),
                info.table.command("roll", roll=f"{a}-{b}", actor="table", role=Role.SYSTEM)])
            ).result()
            # The settlement: the table's own automations (collect, pay, move the puck).
            floor.submit(T, Chore(advance=lambda table: table.automate())).result()
    except ValueError:  # a refused step: the table did not change
        pass


def _normal(data: object) -> object:
    return json.loads(json.dumps(data))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=25))
def test_incremental_views_equal_a_full_rebuild(steps: list[tuple[Any, ...]]) -> None:
    floor = small_floor(chips=200_00)
    batches: list[tuple[list[Event], dict[str, str], dict[str, Any]]] = []

    def record(table_id: str, events: list[Event]) -> None:
        # On the table's thread, its lock held: the state is the one just after ``events``.
        info = floor.tables[table_id]
        owners = dict(info.owners)
        expected = {}
        for v in VIEWERS:
            staff = v.kind is Kind.STAFF
            owned = _Owned(v.username, owners, info.table)
            expected[v.username] = [d for d in (event_for_viewer(v.username, staff, e, owned)
                                                       for e in events) if d is not None]
        batches.append((events, owners, expected))

    floor.listen(record)
    try:
        for step in steps:
            _apply(floor, step)
            info = floor.tables[T]
            for v in VIEWERS:
                staff = v.kind is Kind.STAFF
                viewer = v.username if not staff else None
                full = table_view(info.table, viewer, staff, info.history,
                                  floor.extra(T, v))
                assert floor.view(T, v) == full, (step, v.username)
                assert json.loads(floor.view_text(T, v)) == _normal(full)
            # The dealer's answers on every player's bets, kept across batches, equal the
            # engine's answers asked afresh for every seated player.
            dee = VIEWERS[-2]
            role = floor.role_for(dee, T, g.PlaceBet)
            with info.lock:
                kept = floor.extra(T, dee)["bet_controls"]
                assert kept == {p: controls_for(info.table, "dee", role, p)["bets"]
                                for p in sorted(info.table.state.players)}, step
                for p in info.table.state.players:  # the permission, remembered and asked
                    first = next(iter(info.table.state.bets_of(p)), None)
                    assert controls._may_handle_wagers(info.table, "dee", role, p) == \
                        controls._asks_permit(info.table, "dee", role, p, first), (step, p)
        for events, owners, expected in batches:
            fan = Fanout.of(events, owners)
            for v in VIEWERS:
                staff = v.kind is Kind.STAFF
                viewer = v.username if not staff else None
                assert json.loads(fan.events_text(viewer if not staff else v.username, staff)
                                  ) == _normal(expected[v.username])
    finally:
        floor.close()


@settings(max_examples=examples(200), deadline=None)
@given(public=st.lists(st.one_of(st.none(), st.sampled_from(['{"a":1}', '{"b":[]}', '"x"'])),
                       max_size=12),
       own=st.dictionaries(st.integers(0, 11), st.sampled_from(['{"mine":1}', '{"me":2}']),
                           max_size=5))
def test_a_viewers_events_are_the_public_ones_with_their_own_in_their_places(
        public: list[str | None], own: dict[int, str]) -> None:
    """Each viewer's events: the public texts in order, their own where theirs are, the
    events hidden from them left out (sliced from the public text made once)."""
    own = {i: t for i, t in own.items() if i < len(public)}
    fan = Fanout(seq=1, public=public, private={"ann": own} if own else {})
    expected = [own.get(i, pub) for i, pub in enumerate(public)]
    assert fan.events_text("ann", False) == "[" + ",".join(
        t for t in expected if t is not None) + "]"
    assert fan.events_text("bob", False) == "[" + ",".join(
        t for t in public if t is not None) + "]"
