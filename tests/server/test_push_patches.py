"""Pushes carry merge patches: each viewer's hello view with every patch it was pushed applied
in turn is exactly that viewer's view after each batch; the patches are worked out once per
part, not once per viewer; one player joining among 1,000 makes a small push."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dicetable.application.accounts import Account, Kind
from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.server.controls import controls_for
from dicetable.server.floor import Chore, Floor, Given, Hub, Watcher
from dicetable.server.live_views import PACK_CONSTANTS, Patch, apply_patch
from tests.server.pipeline_helpers import T, account, bet, small_floor


class InlineLoop:
    """Stands in for the event loop: the hub's deliveries happen at once, on the caller's
    thread (the table's), so that each push can be read right after its batch."""

    def is_closed(self) -> bool:
        return False

    def call_soon_threadsafe(self, callback: Callable[..., object], *args: object) -> None:
        callback(*args)


def pushed(floor: Floor) -> None:
    """Wait until the pushes of every batch so far are made: a command is answered before its
    batch is pushed, and the table takes the next batch only after that push."""
    floor.submit(T, Chore(list)).result()


def _normal(data: object) -> Any:
    return json.loads(json.dumps(data))


def _patch_of(message: dict[str, Any]) -> Patch:
    return Patch(message["patch"], tuple(tuple(p) for p in message.get("nulls", [])))


VIEWERS = [account("dee", Kind.STAFF),  # the table's dealer
           account("pat", Kind.STAFF),  # staff with no role at this table
           account("alice"),            # seated
           account("una"),              # joins, then leaves (her seat becomes null)
           account("zed")]              # a player watching, never at the table


def test_each_viewers_patched_view_equals_its_view_after_every_batch() -> None:
    floor = small_floor(chips=500_00)
    hub = Hub(floor)
    hub.bind(InlineLoop())  # type: ignore[arg-type]
    floor.listen(hub.publish)
    expected: list[dict[str, Any]] = []

    def record(table_id: str, events: object) -> None:
        # After the hub, on the table's thread, its lock held: the views this batch leaves.
        expected.append({v.username: _normal(floor._view_locked(table_id, v))
                         for v in VIEWERS})

    floor.listen(record)
    joined: dict[str, tuple[Watcher, dict[str, Any]]] = {}
    for v in VIEWERS:
        watcher, hello = hub.join(T, v, 0)
        joined[v.username] = (watcher, json.loads(hello)["view"])

    def run(*commands: g.Command) -> None:
        floor.submit(T, Chore(lambda: list(commands))).result()

    def player(who: str, make: Callable[[str, Role], g.Command]) -> None:
        floor.submit(T, Given(account(who), make, g.PlaceBet)).result(10)

    player("alice", bet("pass", 10_00))
    player("bob", bet("field", 5_00))
    run(g.JoinTable(actor="una", role=Role.PLAYER, player="una", seat=7),
        g.BuyChips(actor="table", role=Role.SYSTEM, player="una", amount=50_00))
    player("una", bet("any7", 1_00))
    for faces in ("4-2", "3-3", "1-1", "5-2"):
        info = floor.tables[T]
        run(g.CloseBetting(actor="table", role=Role.SYSTEM),
            info.table.command("roll", roll=faces, actor="table", role=Role.SYSTEM))
        floor.submit(T, Chore(advance=lambda table: table.automate())).result()
        player("alice", bet("field", 5_00))
    run(g.LeaveTable(actor="una", role=Role.PLAYER, player="una"))
    player("carol", bet("hard8", 1_00))
    pushed(floor)

    assert len(expected) >= 12
    for v in VIEWERS:
        watcher, view = joined[v.username]
        pushes = [json.loads(text) for _, text in watcher.buffer]
        assert len(pushes) == len(expected)
        for push, after in zip(pushes, expected, strict=True):
            assert "view" not in push
            view = apply_patch(view, _patch_of(push))
            assert view == after[v.username], v.username
            assert not set(PACK_CONSTANTS) & set(push["patch"])  # the hello carried them
    una = json.loads(joined["una"][0].buffer[-2][1])
    assert [e["type"] for e in una["events"]] == ["PlayerLeft"]
    assert ["me", "seat"] in una["nulls"]
    assert ["seats", "una"] in una["nulls"]
    floor.close()


def test_the_public_patch_is_worked_out_once_per_push_not_per_viewer() -> None:
    floor = small_floor()
    hub = Hub(floor)
    hub.bind(InlineLoop())  # type: ignore[arg-type]
    floor.listen(hub.publish)
    watchers = [hub.join(T, account(p), 0)[0] for p in ("alice", "bob", "carol", "zed") * 50]
    floor.submit(T, Given(account("alice"), bet("field", 1_00), g.PlaceBet)).result(10)
    pushed(floor)
    # The public part once (its seq moved); alice's own part once; zed's, bob's and carol's
    # parts unchanged: no patch for them at all.
    assert hub.patched == 2
    texts = {id(text) for w in watchers for _, text in w.buffer}
    assert len(texts) == 2  # alice's connections share one text, everyone else another
    bobs = json.loads(watchers[1].buffer[0][1])
    assert "me" not in bobs["patch"]
    floor.close()


def test_the_parts_all_viewers_share_are_looked_up_once_per_push_not_per_viewer(
        monkeypatch: Any) -> None:
    """A push's connections mostly start from the same public, staff and extra parts and go
    to the same ones: those three parts' pieces are looked up once per pair of views, and
    only each player's own part per connection; the texts are as before (the patched views
    are each viewer's view: ``test_each_viewers_patched_view_equals_its_view_after_every_
    batch``). The floor hands the hub's class of each connection from the table it holds."""
    from dicetable.server import live_views

    floor = small_floor()
    hub = Hub(floor)
    hub.bind(InlineLoop())  # type: ignore[arg-type]
    floor.listen(hub.publish)
    for p in ("alice", "bob", "carol", "zed") * 25:
        hub.join(T, account(p), 0)
    # The first push starts from each connection's hello (each its own extra part); the
    # one after it from the parts that push shared out.
    floor.submit(T, Given(account("bob"), bet("field", 1_00), g.PlaceBet)).result(10)
    pushed(floor)
    asked: list[str] = []
    part = live_views.Patches._part

    def counted(self: live_views.Patches, name: str, base: Any, now: Any) -> tuple[str, str]:
        asked.append(name)
        return part(self, name, base, now)

    monkeypatch.setattr(live_views.Patches, "_part", counted)
    floor.submit(T, Given(account("alice"), bet("field", 1_00), g.PlaceBet)).result(10)
    pushed(floor)
    assert sorted(set(asked)) == ["extra", "me", "public", "staff"]
    assert [asked.count(n) for n in ("public", "staff", "extra", "me")] == [1, 1, 1, 100]
    info = floor.get(T)
    for name in ("alice", "zed", "dee"):
        who = account(name, Kind.STAFF if name == "dee" else Kind.PLAYER)
        assert floor.extra_class(T, who, info.table) == floor.extra_class(T, who)
    floor.close()


def _crowded(names: list[str]) -> tuple[Floor, Hub]:
    """The small floor with ``names`` at its table too (unseated, $100 each), and its hub."""
    floor = small_floor()
    crowd: list[g.Command] = []
    for name in names:
        crowd += [g.JoinTable(actor=name, role=Role.PLAYER, player=name, seat=None),
                  g.BuyChips(actor="table", role=Role.SYSTEM, player=name, amount=100_00)]
    floor.submit(T, Chore(lambda: crowd)).result()
    hub = Hub(floor)
    hub.bind(InlineLoop())  # type: ignore[arg-type]
    floor.listen(hub.publish)
    return floor, hub


def test_one_player_joining_among_a_thousand_makes_a_small_push() -> None:
    floor, hub = _crowded([f"p{i:04d}" for i in range(1000)])
    seated: Watcher = hub.join(T, account("p0500"), 0)[0]
    watching: Watcher = hub.join(T, Account("zed", Kind.PLAYER, "Zed"), 0)[0]
    _, hello = hub.join(T, account("p0001"), 0)
    floor.submit(T, Chore(lambda: [g.JoinTable(actor="newcomer", role=Role.PLAYER,
                                               player="newcomer", seat=None)])).result()
    pushed(floor)
    for watcher in (seated, watching):
        (_, text), = watcher.buffer
        assert '"type":"PlayerJoined"' in text
        assert len(text.encode()) < 2_000, text
    assert len(hello.encode()) > 20_000  # the whole view, for scale
    floor.close()


def test_a_dealer_watching_a_full_table_asks_the_engine_only_about_the_player_who_bet(
        monkeypatch: Any) -> None:
    """The dealer's console lists what it may book for every seated player; a push after one
    player's bet asks the engine again about that player alone, and works the extra out once
    per kind of viewer (the seated players share one), not once per viewer."""
    import dicetable.server.live_views as live_views

    names = [f"p{i:03d}" for i in range(200)]
    floor, hub = _crowded(names)
    dealer = hub.join(T, account("dee", Kind.STAFF), 0)[0]
    for name in names:
        hub.join(T, account(name), 0)
    asked: list[str] = []
    real = controls_for

    def counting(table: Any, actor: str, role: Role, player: str) -> dict[str, Any]:
        asked.append(player)
        return real(table, actor, role, player)

    monkeypatch.setattr(live_views, "controls_for", counting)
    extras: list[str] = []
    real_extra = floor.extra

    def counting_extra(table_id: str, who: Account) -> dict[str, Any]:
        extras.append(who.username)
        return real_extra(table_id, who)

    monkeypatch.setattr(floor, "extra", counting_extra)
    floor.submit(T, Given(account("p007"), bet("field", 1_00), g.PlaceBet)).result(10)
    pushed(floor)
    assert asked == ["p007"]
    assert len(extras) == 2  # the dealer's, and one seated player's for them all
    assert "dee" in extras
    (_, text), = dealer.buffer
    patch = json.loads(text)["patch"]
    assert set(patch.get("bet_controls", {})) == {"p007"}  # the rest of the console unchanged
    floor.close()


def test_authority_staff_a_relieved_dealer_is_no_longer_offered_a_players_wagers() -> None:
    """authority.staff: what a dealer may book is remembered across rolls, by who works the
    table; relieving the dealer takes it away at once."""
    from dicetable.server import controls
    from dicetable.table import commands as tcmd

    floor = small_floor()
    info = floor.tables[T]
    with info.lock:
        assert controls._may_handle_wagers(info.table, "dee", Role.DEALER, "alice")
    floor.submit(T, Chore(lambda: [tcmd.RelieveStaff(
        actor="fran", role=Role.FLOORPERSON, person="dee", staff_role=Role.DEALER)])).result()
    with info.lock:
        assert not controls._may_handle_wagers(info.table, "dee", Role.DEALER, "alice")
        assert not controls._asks_permit(info.table, "dee", Role.DEALER, "alice", None)
    floor.close()


def test_authority_staff_a_push_asks_the_matrix_once_per_kind_of_player(
        monkeypatch: Any) -> None:
    """authority.staff: within one push the dealer's booking asks whether they may handle a
    player's wagers once for the players who hold a bet and once for those who hold none,
    not once per player; each answer is still the matrix's own."""
    from dicetable.server import controls

    floor = small_floor()
    floor.submit(T, Given(account("alice"), bet("field", 1_00), g.PlaceBet)).result(10)
    info = floor.tables[T]
    asked: list[str] = []
    real = controls._asks_permit

    def counting(table: Any, actor: str, role: Role, player: str, first: Any) -> bool:
        asked.append(player)
        return real(table, actor, role, player, first)

    monkeypatch.setattr(controls, "_asks_permit", counting)
    controls._PERMITTED.clear()
    with info.lock:
        controls.pin(info.table)
        try:
            booked = {p: controls._may_handle_wagers(info.table, "dee", Role.DEALER, p)
                      for p in ("alice", "bob", "carol")}
        finally:
            controls.pin(None)
        assert len(asked) == 2  # alice (a bet), bob (none); carol is bob's kind
        for player, allowed in booked.items():
            first = next(iter(info.table.state.bets_of(player)), None)
            assert allowed == real(info.table, "dee", Role.DEALER, player, first)
    floor.close()


def test_a_subscription_through_the_floor_is_its_hello_then_a_push_per_batch() -> None:
    floor = small_floor(chips=500_00)
    floor.hub.bind(InlineLoop())  # type: ignore[arg-type]
    feed = floor.subscribe(T, account("alice"), 0)
    hello = json.loads(feed.hello)
    assert hello["type"] == "hello"
    assert hello["view"] == _normal(floor.view(T, account("alice")))
    floor.submit(T, Given(account("alice"), bet("pass", 10_00), g.PlaceBet)).result(10)
    pushed(floor)
    assert [json.loads(text)["type"] for _, text in feed.watcher.buffer] == ["events"]
    feed.close()
    assert feed.watcher not in floor.hub.watchers
    floor.submit(T, Given(account("alice"), bet("field", 5_00), g.PlaceBet)).result(10)
    pushed(floor)
    assert len(feed.watcher.buffer) == 1  # nothing more once closed
    assert floor.hub is floor.hub  # one hub, listening once
