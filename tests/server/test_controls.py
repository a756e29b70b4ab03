"""Every control a page offers is accepted by the engine, and nothing refused is offered.

A scripted session at the demo's live PA Craps table (a come-out, a point, come bets that
travel, odds, a seven-out) is walked step by step; at each step the player's page data and the
dealer's are read from the server, and every offered control is tried on a copy of the table
(the table rebuilt from its log), where it must be accepted. Wagers not offered must be refused
at their first legal amount. A dealer books a called bet through the API and the log records
it as the dealer's command on the player's behalf.
"""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dicetable.core.roles import Role
from dicetable.games import commands as g
from dicetable.games.engine import check_amount, legal_amounts
from dicetable.games.packs import PRESETS, compile_pack, load_preset
from dicetable.server.floor import Floor
from dicetable.table import Table
from dicetable.table import commands as tcmd
from tests.profiles import examples
from tests.server.conftest import Login

T = "/api/tables/craps-pa-1"
TABLE = "craps-pa-1"


def _copy(floor: Floor) -> Table:
    """The live table rebuilt from its log: trying a command there changes nothing real."""
    table = floor.tables[TABLE].table
    return Table.replay(list(floor.store.events(TABLE)), clock=table.clock)


def _commands(controls: dict[str, Any], actor: str, role: Role, player: str,
              bets: list[dict[str, Any]]) -> list[tuple[str, g.Command]]:
    """Every command the offered controls would send."""
    out: list[tuple[str, g.Command]] = []
    for code, ladder in controls["open"].items():
        for amount in {ladder["first"], ladder["last"]}:
            out.append((f"bet {code} {amount}", g.PlaceBet(actor=actor, role=role,
                                                            player=player, wager=code,
                                                            amount=amount)))
    by_id = {b["id"]: b for b in bets}
    for bet_id, info in controls["bets"].items():
        if info["remove"]:
            out.append((f"take down {bet_id}", g.RemoveBet(actor=actor, role=role, bet=bet_id)))
        if info["toggle"]:
            out.append((f"toggle {bet_id}", g.SetWorking(actor=actor, role=role, bet=bet_id,
                                                          working=not info["working_now"])))
        if info["press_to"] is not None:
            out.append((f"press {bet_id}", g.ChangeBet(actor=actor, role=role, bet=bet_id,
                                                       amount=info["press_to"])))
        if info["odds"] is not None:
            for amount in {info["odds"]["first"], info["odds"]["last"]}:
                out.append((f"odds on {bet_id} {amount}", g.PlaceBet(
                    actor=actor, role=role, player=player, wager="odds", amount=amount,
                    base=bet_id)))
        assert bet_id in by_id
    return out


def _check_offers(floor: Floor, login: Login, step: str) -> int:
    """Try every control offered to alice (her page) and to dee for alice (the console)."""
    tried = 0
    alice_view = login("alice").get(T).json()
    dee = login("dee")
    dee_view = dee.get(T).json()
    # The console's view carries the answers on alice's bets; what is open to her, the
    # console asks when she is chosen for booking.
    booking = dee.get(f"{T}/controls?player=alice").json()
    assert dee_view["bet_controls"]["alice"] == booking["bets"], step
    pages = [(alice_view["me"]["controls"], "alice", Role.PLAYER, alice_view["me"]["bets"]),
             (booking, "dee", Role.DEALER,
              [b for b in dee_view["bets"].values() if b["player"] == "alice"])]
    for controls, actor, role, bets in pages:
        for label, command in _commands(controls, actor, role, "alice", bets):
            copy = _copy(floor)
            try:
                copy.execute(command)
            except ValueError as e:  # every refusal is a DicetableError (a ValueError)
                raise AssertionError(f"{step}: offered to {actor} but refused: {label}: {e}"
                                     ) from None
            tried += 1
        # A wager not offered is refused: the page greys exactly what the engine refuses.
        table = _copy(floor)
        for code, info in alice_view["ladders"].items():
            if code in controls["open"] or info["ladder"] is None:
                continue
            command = g.PlaceBet(actor=actor, role=role, player="alice", wager=code,
                                 amount=info["ladder"]["first"])
            assert not table.can(command), f"{step}: {code} refused on the page, engine takes it"
    return tried


def test_every_offered_control_is_accepted_by_the_engine(floor: Floor, login: Login) -> None:
    alice, sam, dee = login("alice"), login("sam"), login("dee")
    tried = _check_offers(floor, login, "before the dice are offered")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert alice.post(f"{T}/bets", {"wager": "place6", "amount": 600}).status_code == 200
    tried += _check_offers(floor, login, "come-out")
    script = [("2-2", "point 4"), ("3-3", "come travels to 6"), ("4-4", "come travels to 8"),
              ("1-2", "craps on a come bet"), ("3-4", "seven-out")]
    for faces, step in script:
        me = alice.get(T).json()["me"]
        if me["controls"]["open"].get("come"):
            assert alice.post(f"{T}/bets", {"wager": "come", "amount": 500}).status_code == 200
        for bet in me["bets"]:
            odds = me["controls"]["bets"][bet["id"]]["odds"]
            if odds:
                assert alice.post(f"{T}/bets", {"wager": "odds", "amount": odds["first"],
                                                "base": bet["id"]}).status_code == 200
        tried += _check_offers(floor, login, f"before {faces} ({step})")
        # Another player's wager changes nothing offered to alice (her answers are kept).
        assert login("bob").post(f"{T}/bets", {"wager": "field", "amount": 100}
                                 ).status_code == 200
        tried += _check_offers(floor, login, f"bob bets the field before {faces}")
        assert sam.post(f"{T}/roll", {"faces": faces}).status_code == 200
        tried += _check_offers(floor, login, f"{faces} thrown, not settled")
        assert dee.post(f"{T}/settle").status_code == 200
        tried += _check_offers(floor, login, f"after {faces} ({step})")
    assert tried > 100  # the walk offered (and tried) controls at every step


def test_pa_craps_come_bets_show_on_their_numbers_with_their_odds(floor: Floor,
                                                                   login: Login) -> None:
    alice, sam, dee = login("alice"), login("sam"), login("dee")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    for faces in ("2-2", "3-3"):
        if faces == "3-3":
            assert alice.post(f"{T}/bets", {"wager": "come", "amount": 500}).status_code == 200
        assert sam.post(f"{T}/roll", {"faces": faces}).status_code == 200
        assert dee.post(f"{T}/settle").status_code == 200
    me = alice.get(T).json()["me"]
    come = next(b for b in me["bets"] if b["wager"] == "come")
    assert (come["point"], come["label"]) == (6, "Come on 6")
    odds = me["controls"]["bets"][come["id"]]["odds"]
    assert odds == {"first": 500, "step": 500, "last": 2500}  # 5x of $5 in 6-to-5 steps
    assert alice.post(f"{T}/bets", {"wager": "odds", "amount": 1000,
                                    "base": come["id"]}).status_code == 200
    me = alice.get(T).json()["me"]
    behind = next(b for b in me["bets"] if b["base"] == come["id"])
    assert behind["name"] == "Odds on Come (6)"
    assert "b" + come["id"][1:] not in behind["label"]  # no bet ids in the player's words


def test_a_dealer_books_a_called_bet_on_the_players_behalf(floor: Floor, login: Login) -> None:
    alice, dee = login("alice"), login("dee")
    controls = dee.get(f"{T}/controls", {"player": "alice"}).json()  # type: ignore[dict-item]
    # $6, $9, $12 ... up to what her $500 covers (the posted maximum is $4,998).
    assert controls["open"]["place8"] == {"first": 600, "step": 300, "last": 49800}
    reply = dee.post(f"{T}/bets", {"wager": "place8", "amount": 1200, "player": "alice"})
    assert reply.status_code == 200, reply.text
    placed = next(e for e in reply.json()["events"] if e["type"] == "BetPlaced")
    assert (placed["actor"], placed["role"], placed["player"]) == ("dee", "dealer", "alice")
    stored = [e for e in floor.store.events(TABLE) if e.kind == "BetPlaced"][-1]
    assert (stored.actor, stored.role) == ("dee", Role.DEALER)
    mine = alice.get(f"{T}/events").json()
    assert any(e["type"] == "BetPlaced" and e["actor"] == "dee" and e["player"] == "alice"
               for e in mine)                                         # the player sees it
    bet = placed["bet"]
    assert dee.patch(f"{T}/bets/{bet}", {"working": False}).status_code == 200
    assert dee.patch(f"{T}/bets/{bet}", {"amount": 1800}).status_code == 200
    assert dee.delete(f"{T}/bets/{bet}").status_code == 200
    # A player cannot ask for another player's controls.
    assert alice.get(f"{T}/controls", {"player": "bob"}).status_code == 403  # type: ignore[dict-item]


def test_pa_craps_recall_names_the_shooter_and_marks_no_rolls(floor: Floor,
                                                             login: Login) -> None:
    alice, sam, bo, dee = login("alice"), login("sam"), login("bo"), login("dee")
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200
    grounds = floor.tables[TABLE].table.pack.get("noroll.grounds")
    assert bo.post(f"{T}/no-roll", {"grounds": [grounds[0]], "observed": [grounds[0]]}
                   ).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200
    assert dee.post(f"{T}/settle").status_code == 200
    rounds = [r for r in sam.get(f"{T}/recall").json() if r["rolls"]]
    assert [r["label"] for r in rounds] == ["hand 1, roll 1 (no roll)", "hand 1, roll 1"]
    assert {roll["shooter"] for r in rounds for roll in r["rolls"]} == {"alice"}
    assert {roll["actor"] for r in rounds for roll in r["rolls"]} == {"sam"}


def test_legal_amount_ladders_match_the_engines_amount_check() -> None:
    """Every rung of every wager's ladder is accepted; every amount between rungs refused."""
    for name in PRESETS:
        pack = load_preset(name)
        compiled = compile_pack(pack)
        for code in pack.menu_in_order:
            if code == "odds":
                continue
            ladder = legal_amounts(pack, compiled[code], code)
            assert ladder is not None, code
            first, step, last = ladder
            for amount in range(max(1, first - 2 * step), min(last, first + 6 * step) + 1):
                on = first <= amount <= last and (amount - first) % step == 0
                try:
                    check_amount(pack, compiled[code], amount, code)
                    accepted = True
                except ValueError:
                    accepted = False
                assert accepted == on, f"{name} {code} {amount}"


def test_player_rules_panel_cites_only_the_tables_own_regulations(floor: Floor,
                                                                  login: Login) -> None:
    """A PA player is never shown another regulator's text as if it governed the table."""
    view = login("alice").get(T).json()
    panel = view["rules_panel"]
    pack = floor.tables[TABLE].table.pack
    assert panel
    for entry in panel:
        rule = pack.rules[entry["rule"]]
        if rule.status.value == "regulation":
            assert entry["citation"] == rule.citation
            assert entry["status"] == "regulation"
        else:
            assert entry["citation"] == "", entry          # no stand-in's citation shown
            assert entry["status"].startswith("house rule")
    shown = " ".join(e["citation"] for e in panel)
    assert "Pa. Code" in shown
    for foreign in ("N.J.A.C.", "COMAR", "Québec", "France", "ARSD"):
        assert foreign not in shown


def test_console_buttons_follow_the_engine(floor: Floor, login: Login) -> None:
    """The console's simple buttons (no more bets, overturn, settlement steps) are offered
    exactly when the engine would take them from the viewer."""
    alice, sam, bo = login("alice"), login("sam"), login("bo")
    assert sam.get(T).json()["can"]["no-more-bets"] is True
    assert sam.get(T).json()["can"]["overturn"] is False   # no no roll to overturn
    assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
    assert sam.post(f"{T}/offer-dice", {"patron": "alice"}).status_code == 200
    assert alice.post(f"{T}/select-dice", {"serials": ["PA1-1", "PA1-2"]}).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200
    grounds = floor.tables[TABLE].table.pack.get("noroll.grounds")
    assert bo.post(f"{T}/no-roll", {"grounds": [grounds[0]], "observed": [grounds[0]]}
                   ).status_code == 200
    for who in ("sam", "bo", "dee"):
        can = login(who).get(T).json()["can"]
        table = _copy(floor)
        for name, cls in (("overturn", tcmd.OverturnNoRoll), ("collect", g.CollectLosers)):
            account = floor.accounts.get(who)
            assert account is not None
            role = floor.role_for(account, TABLE, cls)
            assert can[name] == table.can(cls(actor=who, role=role)), (who, name)


def test_players_alike_share_their_open_wagers_and_the_rest_get_their_own() -> None:
    """A full table works out the new wagers open to players once per kind of player (their
    seat, their part in the procedure, the spots they stand on, their balance up to what the
    dearest rung costs), not once per player - and each still gets exactly the engine's own
    answers."""
    from dicetable.server import controls

    table = Table.open("pa-craps", "t1", mode="bare")
    for name, chips in (("ann", 1_000_000), ("ben", 2_000_000), ("cat", 1_000_000),
                        ("dan", 700), ("eve", 1_000_000)):
        table.join(name)
        table.buy_in(name, chips)
    table.bet("cat", "pass", 1000)
    table.roll("2-2")
    table.settle()
    table.bet("cat", "odds", 1000, base="b1")
    table.bet("eve", "field", 500)
    controls._OPEN.clear()
    controls._SEEN.clear()
    answers = {p: controls.controls_for(table, p, Role.PLAYER, p)
               for p in ("ann", "ben", "cat", "dan", "eve")}
    for player, answer in answers.items():
        assert answer == controls._controls(table, player, Role.PLAYER, player, share=False)
    assert answers["ann"]["open"] is answers["ben"]["open"]  # alike: worked out once
    assert len(controls._OPEN) == 3  # ann, ben and dan (whatever their balance); cat; eve
    assert answers["dan"]["open"] != answers["ann"]["open"]  # dan's cut to his $7
    assert "field" not in answers["eve"]["open"]  # one wager per spot
    assert "field" in answers["ann"]["open"]


@settings(max_examples=examples(60), deadline=None)
@given(balances=st.lists(st.one_of(st.integers(0, 3_000), st.integers(0, 2_000_000),
                                   st.sampled_from([2_099, 2_100, 2_199, 4_199, 4_200,
                                                    10_499, 10_500, 19_999])),
                         min_size=1, max_size=6),
       point=st.sampled_from([None, "2-2", "3-3", "5-5"]),
       wagers=st.lists(st.sampled_from(["pass", "field", "buy4", "lay10", "place6"]),
                       max_size=3))
def test_money_balance_each_players_open_wagers_are_the_engines_own_answers_for_their_balance(
        balances: list[int], point: str | None, wagers: list[str]) -> None:
    """money.balance: what a player may afford is cut from the answers whatever the balance
    by each rung's stake (the amount and an up-front commission), and that cut is exactly what
    the engine accepts from that player - at every balance, near every commission step."""
    from dicetable.server import controls

    table = Table.open("pa-craps", "t1", mode="bare")
    table.join("rich")
    table.buy_in("rich", 5_000_000)
    names = [f"p{i}" for i in range(len(balances))]
    for name in names:
        table.join(name)
    if point is not None:
        table.bet("rich", "pass", 1_000)
        table.roll(point)
        table.settle()
    for name, chips, wager in zip(names, balances, [*wagers, *[None] * len(names)],
                                  strict=False):
        if wager is not None and chips:
            table.buy_in(name, chips)
            with contextlib.suppress(ValueError):
                table.bet(name, wager, 2_000 if wager.startswith(("buy", "lay")) else 1_000)
        elif chips:
            table.buy_in(name, chips)
    for name in names:
        shared = controls.controls_for(table, name, Role.PLAYER, name)
        assert shared == controls._controls(table, name, Role.PLAYER, name, share=False), (
            name, table.state.balance(name))


_DICE = ["1-1", "1-2", "2-2", "3-4", "5-6", "3-3", "4-6", "2-5", "6-6", "4-4", "1-6"]


@settings(max_examples=examples(40), deadline=None)
@given(rolls=st.lists(st.sampled_from(_DICE), min_size=1, max_size=14))
def test_fire_placement_bonus_placement_answers_kept_across_rolls_are_the_engines(
        rolls: list[str]) -> None:
    """fire.placement, bonus.placement: the Fire Bet only before a new shooter's first
    come-out, the bonus bets only at the start or after a seven. What is remembered of the
    engine's answers is kept across rolls by the roll counters the engine reads
    (``placement_counters``), not the counters themselves: after every roll, each player's
    remembered answers are the engine's own, asked afresh."""
    from dicetable.server import controls

    table = Table.open("pa-craps", "t1", mode="bare")
    for name, chips in (("ann", 1_000_000), ("ben", 2_500)):
        table.join(name)
        table.buy_in(name, chips)
    table.bet("ann", "pass", 1_000)
    for dice in rolls:
        table.roll(dice)
        table.settle()
        for name in ("ann", "ben"):
            kept = controls.controls_for(table, name, Role.PLAYER, name)
            assert kept == controls._controls(table, name, Role.PLAYER, name, share=False), (
                name, dice)
        if table.state.point is None and not table.state.bets_of("ann"):
            table.bet("ann", "pass", 1_000)


def _each_holding(wager: str, point: str, spares: list[int], *,
                  before_point: tuple[str, ...]) -> Table:
    """A bare PA Craps table after ``point`` is rolled where players ``p0``, ``p1``... each
    hold the same ``wager`` (placed before the roll if it is one of ``before_point``, else
    after) with ``spares[i]`` chips left over besides its stake."""
    table = Table.open("pa-craps", "t1", mode="bare")
    names = [f"p{i}" for i in range(len(spares))]
    amount = {"buy4": 2_000, "lay10": 2_000, "place6": 1_200}.get(wager, 1_000)
    early = wager in before_point
    for name, chips in zip(names, spares, strict=True):  # the bet, and what is left
        table.join(name)
        table.buy_in(name, amount + chips + (100 if wager in ("buy4", "lay10") else 0))
        if early:
            table.bet(name, wager, amount)
    table.roll(point)
    table.settle()
    for name in names:
        if not early:
            table.bet(name, wager, amount)
    return table


@settings(max_examples=examples(80), deadline=None)
@given(balances=st.lists(st.one_of(st.integers(0, 4_000), st.sampled_from(
           [0, 99, 100, 499, 500, 999, 1_000, 2_099, 2_100, 4_199, 4_200, 10_500])),
           min_size=2, max_size=5),
       wager=st.sampled_from(["pass", "place6", "buy4", "lay10", "field", "come"]),
       point=st.sampled_from(["2-2", "3-3", "4-6"]))
def test_money_balance_a_bets_press_raise_and_odds_are_the_engines_for_each_balance(
        balances: list[int], wager: str, point: str) -> None:
    """money.balance, wagers.change: every player holds the same bet; what each may press
    it to, raise it to and lay odds behind it is answered once for the bet alike and cut to
    each balance - and is exactly what the engine takes from that player."""
    from dicetable.server import controls

    table = _each_holding(wager, point, balances, before_point=("pass", "field"))
    for name in table.state.players:
        shared = controls.controls_for(table, name, Role.PLAYER, name)
        assert shared == controls._controls(table, name, Role.PLAYER, name, share=False), (
            name, table.state.balance(name))


@settings(max_examples=examples(40), deadline=None)
@given(rolls=st.lists(st.sampled_from(_DICE), min_size=1, max_size=12),
       moves=st.lists(st.tuples(st.sampled_from(["ann", "ben", "cat"]),
                                st.sampled_from(["pass", "come", "dontpass", "dontcome",
                                                 "field", "place6", "odds"])),
                      min_size=12, max_size=12))
def test_wagers_odds_the_bets_that_take_odds_remembered_are_the_engines(
        rolls: list[str], moves: list[tuple[str, str]]) -> None:
    """menu.odds, wagers.odds: odds stand behind a line or put bet with a point and no odds
    yet. Which of a player's bets take odds is remembered for players alike (the bets' wagers
    and states, the odds behind them, not their ids or amounts); after every roll and bet,
    each player's remembered answer is the engine's own, asked afresh."""
    from dicetable.server import controls

    table = Table.open("pa-craps", "t1", mode="bare")
    for name in ("ann", "ben", "cat"):
        table.join(name)
        table.buy_in(name, 1_000_000)
    for dice, (who, wager) in zip(rolls, moves, strict=False):
        base = None
        if wager == "odds":
            lines = [b.id for b in table.state.bets_of(who) if b.base is None]
            base = lines[-1] if lines else None
        with contextlib.suppress(ValueError):
            table.bet(who, wager, 1_000, base=base)
        for moment in ("before", "after"):
            for name in ("ann", "ben", "cat"):
                mine = table.state.bets_of(name)
                assert controls.odds_bases(table, name, mine) == table.odds_bases(
                    name, [b.id for b in mine]), (moment, name, dice)
            if moment == "before":
                table.roll(dice)
                table.settle()


def test_wagers_odds_a_come_bet_takes_odds_once_it_moves_to_its_number_and_not_twice() -> None:
    """menu.odds, wagers.one-per-spot: players whose bets are alike share the remembered
    answer, and a bet that moves (a Come bet to its number) or gets odds behind it changes it,
    while the table's own situation (the point, the counters) stays as it was."""
    from dicetable.server import controls

    table = Table.open("pa-craps", "t1", mode="bare")
    for name in ("ann", "ben", "cat"):
        table.join(name)
        table.buy_in(name, 1_000_000)

    def check() -> dict[str, list[str]]:
        out = {}
        for name in ("ann", "ben", "cat"):
            mine = table.state.bets_of(name)
            out[name] = controls.odds_bases(table, name, mine)
            assert out[name] == table.odds_bases(name, [b.id for b in mine]), name
        return out

    table.bet("ann", "pass", 1_000)
    table.roll("2-2")
    table.settle()
    for name in ("ann", "ben", "cat"):
        table.bet(name, "come", 1_000)
    before = check()
    assert before["ben"] == before["cat"] == []  # a Come bet with no number yet
    table.roll("3-3")
    table.settle()
    moved = check()
    assert len(moved["ann"]) == 2
    assert len(moved["ben"]) == len(moved["cat"]) == 1
    come = moved["ben"][0]
    table.bet("ben", "odds", 1_000, base=come)
    after = check()
    assert after["ben"] == []
    assert after["cat"] == moved["cat"]


@settings(max_examples=examples(40), deadline=None)
@given(offsets=st.lists(st.one_of(st.integers(-250, 250), st.integers(-3_000_000, 3_000_000)),
                        min_size=1, max_size=5),
       wager=st.sampled_from(["pass", "dontpass", "place6", "buy4", "lay10", "come"]),
       point=st.sampled_from(["2-2", "3-3", "4-6"]))
def test_money_balance_a_bet_answered_whole_from_the_balance_that_covers_its_top_rungs(
        offsets: list[int], wager: str, point: str) -> None:
    """money.balance, wagers.change, wagers.odds: from the balance that covers a bet's top
    raise and its top odds (``_RichBet.cap``) up, its answers are the ones worked out once for
    the bet whatever the balance; below it, cut to the balance. On either side of that line
    and far from it, each player's answers are exactly what the engine takes from them."""
    from dicetable.server import controls

    table = _each_holding(wager, point, [0] * len(offsets),  # the stake, nothing left over
                          before_point=("pass", "dontpass"))
    names = list(table.state.players)
    bet = table.state.bets_of(names[0])[0]
    cap = controls._shared_bet(table, names[0], bet).cap
    for name, offset in zip(names, offsets, strict=True):
        top_up = cap + offset - table.state.balance(name)
        if top_up > 0:
            table.buy_in(name, top_up)
    for name in names:
        shared = controls.controls_for(table, name, Role.PLAYER, name)
        assert shared == controls._controls(table, name, Role.PLAYER, name, share=False), (
            name, table.state.balance(name), cap)


def test_within_a_push_each_players_answers_are_the_engines_and_their_bets_are_read_once(
        monkeypatch: Any) -> None:
    """Within a push (``controls.pin``) a player's answers are the ones outside it and the
    engine's own, and the state is asked for each player's bets once, not once per step
    (their situation, their opening, their bets' answers, their open wagers)."""
    from dicetable.games.state import TableState
    from dicetable.server import controls

    table = _each_holding("place6", "3-3", [0, 150, 5_000, 2_000_000],
                          before_point=("pass",))
    table.bet("p3", "come", 1_000)
    names = list(table.state.players)
    outside = {name: controls.controls_for(table, name, Role.PLAYER, name) for name in names}
    asked: list[str] = []
    bets_of = TableState.bets_of

    def counted(state: TableState, player: str) -> list[Any]:
        asked.append(player)
        return bets_of(state, player)

    controls._SEEN.clear()  # each player's answers made again (the kinds' are kept)
    monkeypatch.setattr(TableState, "bets_of", counted)
    controls.pin(table)
    try:
        inside = {name: controls.controls_for(table, name, Role.PLAYER, name)
                  for name in names}
        again = {name: controls.controls_for(table, name, Role.PLAYER, name)
                 for name in names}
    finally:
        controls.pin(None)
    assert sorted(asked) == sorted(names)
    for name in names:
        assert inside[name] is again[name]
        assert inside[name] == outside[name]
        assert inside[name] == controls._controls(table, name, Role.PLAYER, name, share=False)


def test_within_a_push_a_players_part_takes_its_bets_views_and_opening_from_the_push(
        monkeypatch: Any) -> None:
    """Within a push, once the staff part and a player's controls are made, the player's own
    part (``views.me_view``) makes no bet's view again and ``odds_bases`` no opening again;
    the part is the one made outside a push."""
    from dicetable.server import controls, views

    table = _each_holding("pass", "3-3", [0, 2_000_000], before_point=("pass",))
    names = list(table.state.players)
    outside = {name: views.me_view(table, name) for name in names}
    controls._SEEN.clear()  # the controls made again, their openings with them
    made: list[str] = []
    bet_view, opening = views._bet_view, controls._opening

    def viewed(t: Table, bet: str) -> dict[str, Any]:
        made.append(bet)
        return bet_view(t, bet)

    def opened(t: Table, player: str) -> tuple[Any, ...]:
        made.append(player)
        return opening(t, player)

    controls.pin(table)
    try:
        views.staff_view(table)
        for name in names:
            controls.controls_for(table, name, Role.PLAYER, name)
        monkeypatch.setattr(views, "_bet_view", viewed)
        monkeypatch.setattr(controls, "_opening", opened)
        inside = {name: views.me_view(table, name) for name in names}
    finally:
        controls.pin(None)
    assert made == []
    assert inside == outside
    assert all(part["odds_bases"] for part in inside.values())  # a pass line on a point
