"""The pit's books through the server, as the pit works them: the demo tables open with
counted inventories, a buy-in and the first roll move the bank, a fill from request to
receiving count with the right people signing, a refusal naming its rule, the drop, the
gaming-day report with win and hold, and the conservation check."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dicetable.server.bank_floor import banks_of
from dicetable.server.floor import Floor
from dicetable.server.socket_sessions import SESSION_ENDED
from tests.server.conftest import Login

T = "craps-pa-1"


def test_the_demo_tables_open_with_counted_inventories(login: Login) -> None:
    fran = login("fran")
    overview = fran.get("/api/bank").json()
    by_table = {t["table"]: t for t in overview["tables"]}
    assert by_table[T]["status"] == "open"
    assert by_table["craps-pa-e1"]["electronic"]
    assert all(t["conservation"]["holds"] for t in overview["tables"])
    detail = fran.get(f"/api/bank/{T}").json()
    assert detail["last_count"]["purpose"] == "opening"
    assert (detail["last_count"]["counter"], detail["last_count"]["observer"]) == ("bo", "fran")
    # the demo players bought in after the opening count: the bank already moved
    assert detail["expected"] == 20_200_00 - 4 * 500_00


def test_a_fill_end_to_end_with_the_right_people(login: Login) -> None:
    pam, fran, cass, sid, bo = (login(u) for u in ("pam", "fran", "cass", "sid", "bo"))
    dee = login("dee")
    refused = dee.post(f"/api/bank/{T}/request",
                       {"fields": {"kind": "fill", "chips": "2500x80", "shift": "06:00"}})
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "fill.preparer_roles"
    assert "465a.38(a)" in refused.json()["citation"]
    asked = pam.post(f"/api/bank/{T}/request",
                     {"fields": {"kind": "fill", "chips": "2500x80", "shift": "06:00"}})
    assert asked.status_code == 200, asked.text
    req = asked.json()["bank"]["requests"][0]
    assert (req["status"], req["prepared_by"]) == ("requested", "pam")
    early = cass.post(f"/api/bank/{T}/issue", {"fields": {"request": req["request"]}})
    assert early.status_code == 409, early.text
    assert fran.post(f"/api/bank/{T}/sign", {"fields": {"request": req["request"]}}
                     ).status_code == 200
    issued = cass.post(f"/api/bank/{T}/issue", {"fields": {"request": req["request"]}})
    serial = issued.json()["bank"]["requests"][0]["serial"]
    assert sid.post(f"/api/bank/{T}/carry", {"fields": {"serial": serial}}).status_code == 200
    before = bo.get(f"/api/bank/{T}").json()["expected"]
    got = bo.post(f"/api/bank/{T}/receive",
                  {"fields": {"serial": serial, "chips": "2500x80", "officer": "sid"}})
    assert got.status_code == 200, got.text
    assert got.json()["bank"]["expected"] == before + 2_000_00
    assert got.json()["bank"]["conservation"]["holds"]


def test_the_drop_and_the_gaming_day_report(login: Login) -> None:
    fran, cole = login("fran"), login("cole")
    expected = fran.get(f"/api/bank/{T}").json()["expected"]
    chips = f"2500x{expected // 2500}" + (f",100x{expected % 2500 // 100}"
                                         if expected % 2500 else "")
    dropped = fran.post(f"/api/bank/{T}/drop", {"fields": {
        "box": "PA1-A", "replacement": "PA1-B", "chips": chips, "counter": "bo",
        "observer": "fran", "team": "cole,sid"}})
    assert dropped.status_code == 200, dropped.text
    assert not dropped.json()["bank"]["discrepancies"]
    counted = cole.post(f"/api/bank/{T}/count-box", {"fields": {
        "box": "PA1-A", "items": "currency:200000,chips:500", "counters": "cole"}})
    assert counted.status_code == 200, counted.text
    report = login("rae").get(f"/api/bank/{T}/report").json()
    win = report["win"]
    assert win["drop"] == 2_000_00  # currency only: chips are reported apart (601a.9(c)(3))
    assert win["excluded"] == {"chips": 500}
    assert win["win"] == expected + 2_000_00 - 20_200_00
    assert [t["label"].startswith("INFERRED") for t in win["terms"]] == [
        False, False, False, True, True]


def test_players_may_not_read_the_books(login: Login) -> None:
    assert login("alice").get("/api/bank").status_code == 403


def test_465a_35_b_a_staff_change_that_would_leave_an_open_table_short_is_refused(
        login: Login) -> None:
    pat = login("pat")
    assert pat.get(f"/api/bank/{T}").json()["staffing"] == ""
    before = pat.get(f"/api/tables/{T}").json()["seq"]
    relieved = pat.post(f"/api/tables/{T}/staff/relieve", {"person": "dex", "role": "dealer"})
    assert relieved.status_code == 409, relieved.text
    body = relieved.json()
    assert body["rule"] == "staffing.craps"
    assert "465a.35(b)(3),(4)" in body["citation"]
    assert "3 dealers" in body["error"] or "3 dealers" in relieved.text
    assert pat.get(f"/api/tables/{T}").json()["seq"] == before  # nothing changed
    assert pat.get(f"/api/bank/{T}").json()["staffing"] == ""
    # a relief once a replacement dealer is assigned keeps the crew whole
    assigned = pat.post(f"/api/tables/{T}/staff", {"person": "ann", "role": "dealer"})
    assert assigned.status_code == 200, assigned.text
    relieved = pat.post(f"/api/tables/{T}/staff/relieve", {"person": "dex", "role": "dealer"})
    assert relieved.status_code == 200, relieved.text


def test_465a_35_c_the_span_comes_from_the_floor_wide_register(login: Login) -> None:
    fran, pat = login("fran"), login("pat")
    mini = "minicraps-pa-1"
    register = fran.get("/api/bank").json()["register"]
    assert mini in register["pat"]
    assert T in register["fran"]
    # fran already supervises both Craps tables: a Mini-Craps table on top is too wide
    refused = pat.post(f"/api/bank/{mini}/supervise", {"fields": {"person": "fran"}})
    assert refused.status_code == 409, refused.text
    assert refused.json()["rule"] == "staffing.floor_span"
    assert "465a.35(c)" in refused.json()["citation"]
    # a floorperson assigned to the table through its staff is checked the same way
    assign = pat.post(f"/api/tables/{mini}/staff",
                      {"person": "fran", "role": "floorperson"})
    assert assign.status_code == 409, assign.text
    assert assign.json()["rule"] == "staffing.floor_span"
    # handing a Craps table to pat frees fran's span in the register
    moved = pat.post(f"/api/bank/{T}/supervise", {"fields": {"person": "pat"}})
    assert moved.status_code == 200, moved.text
    register = fran.get("/api/bank").json()["register"]
    assert T in register["pat"]
    assert T not in register.get("fran", [])
    dealer = pat.post(f"/api/bank/{T}/supervise", {"fields": {"person": "dee"}})
    assert dealer.status_code == 403, dealer.text  # a dealer supervises nothing


def test_68iac_15_5_3_indiana_receipts_add_the_chip_float_adjustment(login: Login) -> None:
    fran = login("fran")
    table = "craps-in-1"
    expected = fran.get(f"/api/bank/{table}").json()["expected"]
    chips = f"2500x{expected // 2500}" + (f",100x{expected % 2500 // 100}"
                                         if expected % 2500 else "")
    two = fran.post(f"/api/bank/{table}/drop", {"fields": {
        "box": "IN1-A", "replacement": "IN1-B", "chips": chips, "counter": "bo",
        "observer": "fran", "team": "cole,sid"}})
    assert two.status_code == 409, two.text  # 68 IAC 11-3-1(a)(3): at least three
    assert two.json()["rule"] == "drop.team_min"
    dropped = fran.post(f"/api/bank/{table}/drop", {"fields": {
        "box": "IN1-A", "replacement": "IN1-B", "chips": chips, "counter": "bo",
        "observer": "fran", "team": "cole,sid,rae"}})
    assert dropped.status_code == 200, dropped.text
    counted = login("cole").post(f"/api/bank/{table}/count-box", {"fields": {
        "box": "IN1-A", "items": "currency:200000,chips:1000", "counters": "cole"}})
    assert counted.status_code == 200, counted.text
    report = login("rae").http.get(
        f"/api/bank/{table}/report", headers=login("rae").headers,
        params={"float_yesterday": "2500:300000", "float_today": "2500:350000"}).json()
    win = report["win"]
    assert win["drop"] == 2_010_00  # Indiana's drop counts the chips (68 IAC 1-1-25)
    assert report["receipts"]["adjustment"] == 500_00
    assert report["receipts"]["receipts"] == win["win"] + 500_00
    assert "68 IAC 15-5-3" in report["receipts"]["citation"]


def test_465a_35_c_a_floorperson_s_span_is_checked_when_a_table_opens(login: Login) -> None:
    """fran opened both demo Craps tables; with Mini-Craps beside them the span is too wide."""
    fran, pat = login("fran"), login("pat")
    mini = "minicraps-pa-1"
    expected = pat.get(f"/api/bank/{mini}").json()["expected"]
    chips = f"100x{expected // 100}"
    closed = pat.post(f"/api/bank/{mini}/close", {"fields": {
        "chips": chips, "counter": "dee", "observer": "pat", "container": "MC-1"}})
    assert closed.status_code == 200, closed.text
    refused = fran.post(f"/api/bank/{mini}/open", {"fields": {
        "chips": chips, "counter": "dee", "observer": "fran"}})
    assert refused.status_code == 409, refused.text
    assert refused.json()["rule"] == "staffing.floor_span"
    assert "465a.35(c)" in refused.json()["citation"]
    reopened = fran.post(f"/api/bank/{mini}/open", {"fields": {
        "chips": chips, "counter": "dee", "observer": "pat"}})
    assert reopened.status_code == 200, reopened.text


def _signed_request(login: Login, table: str, kind: str, chips: str = "2500x8") -> int:
    asked = login("fran").post(f"/api/bank/{table}/request",
                               {"fields": {"kind": kind, "chips": chips, "shift": "06:00"}})
    assert asked.status_code == 200, asked.text
    return int(asked.json()["bank"]["requests"][0]["request"])


def test_md_36_05_03_04h_one_casino_wide_serial_series_per_slip_kind(login: Login) -> None:
    cass, fran = login("cass"), login("fran")
    serials = []
    for table in (T, "craps-in-1", "minicraps-pa-1"):
        req = _signed_request(login, table, "fill")
        issued = cass.post(f"/api/bank/{table}/issue", {"fields": {"request": req}})
        assert issued.status_code == 200, issued.text
        serials.append(issued.json()["bank"]["requests"][0]["serial"])
    assert serials == [1, 2, 3]  # one series across the floor, not one per table
    credit = _signed_request(login, T, "credit")
    issued = cass.post(f"/api/bank/{T}/issue", {"fields": {"request": credit}})
    assert issued.json()["bank"]["requests"][0]["serial"] == 1  # the credit slips' own series
    # a fill serial another table already used is a duplicate in the casino's series
    again = _signed_request(login, "craps-in-1", "fill")
    dup = cass.post("/api/bank/craps-in-1/issue", {"fields": {"request": again, "serial": 1}})
    assert dup.status_code == 409, dup.text
    assert dup.json()["rule"] == "slips.serial_sequence"
    assert "casino" in dup.json()["message"]
    # a pre-numbered slip that skips numbers leaves a gap the whole floor sees
    gap = cass.post("/api/bank/craps-in-1/issue", {"fields": {"request": again, "serial": 6}})
    assert gap.status_code == 200, gap.text
    floor = fran.get("/api/bank").json()["serials"]
    assert floor["fill"] == ["serial 4 is missing (a gap)", "serial 5 is missing (a gap)"]
    assert floor["credit"] == []
    assert fran.get(f"/api/bank/{T}").json()["serials"]["fill"] == floor["fill"]


def test_465a_37_f_discrepancy_notices_reach_the_accounts_that_must_receive_them(
        login: Login) -> None:
    fran, sid, dee, rae, val = (login(u) for u in ("fran", "sid", "dee", "rae", "val"))
    expected = fran.get(f"/api/bank/{T}").json()["expected"]
    short = fran.post(f"/api/bank/{T}/count", {"fields": {
        "purpose": "shift", "chips": f"100x{(expected - 30_00) // 100}", "counter": "bo",
        "observer": "fran"}})
    assert short.status_code == 200, short.text
    told = sid.get("/api/bank/notices").json()
    assert [(n["table"], n["how"], n["read"]) for n in told] == [(T, "told", False)]
    assert "variance -$30;" in told[0]["text"]
    assert "signed security and surveillance report" in told[0]["text"]
    assert [n["how"] for n in fran.get("/api/bank/notices").json()] == ["told"]
    assert [n["how"] for n in rae.get("/api/bank/notices").json()] == ["regulator-copy"]
    assert dee.get("/api/bank/notices").json() == []  # a dealer is not told (PA's list)
    assert val.get("/api/bank/notices").json() == []
    assert login("alice").get("/api/bank/notices").status_code == 403
    notice = told[0]["notice"]
    read = fran.post(f"/api/bank/{T}/acknowledge", {"fields": {"notice": notice}})
    assert read.status_code == 200, read.text
    assert fran.get("/api/bank/notices").json()[0]["read"] is True
    seen_by_sid = sid.get("/api/bank/notices").json()[0]
    assert (seen_by_sid["read"], seen_by_sid["read_by"]) == (False, ["fran"])
    refused = dee.post(f"/api/bank/{T}/acknowledge", {"fields": {"notice": notice}})
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "discrepancy.notify"


def test_md_36_05_03_04g_the_pit_prints_each_slip(login: Login) -> None:
    cass, fran = login("cass"), login("fran")
    req = _signed_request(login, T, "fill", "2500x8")
    serial = cass.post(f"/api/bank/{T}/issue", {"fields": {"request": req}}
                       ).json()["bank"]["requests"][0]["serial"]
    doc = fran.get(f"/api/bank/{T}/slip/fill/{serial}").json()
    assert (doc["title"], doc["number"], doc["status"]) == ("Fill Slip", f"fill {serial}",
                                                            "issued")
    assert doc["chips"] == [[2500, 8, "$25", "$200"]]
    assert ["Chip bank cashier", "cass"] in doc["signatures"]
    assert ["Table", T] in doc["fields"]
    opener = fran.get(f"/api/bank/{T}/slip/inventory/1").json()
    assert opener["title"] == "Table Inventory Slip"
    assert opener["total_text"] == "$20,200"
    missing = fran.get(f"/api/bank/{T}/slip/credit/99")
    assert missing.status_code == 422, missing.text
    assert login("alice").get(f"/api/bank/{T}/slip/inventory/1").status_code == 403


def test_603a_10_b_a_retired_chip_set_is_refused_wherever_the_bank_moves_chips(
        login: Login) -> None:
    rae, fran = login("rae"), login("fran")
    assert rae.post(f"/api/bank/{T}/retire-chip-set", {"fields": {"set": "B"}}
                    ).status_code == 200
    for table in (T, "craps-in-1"):  # retired at one table: retired on the whole floor
        refused = fran.post(f"/api/bank/{table}/request", {"fields": {
            "kind": "fill", "chips": "2500x8", "shift": "06:00", "set": "B"}})
        assert refused.status_code == 409, refused.text
        assert refused.json()["rule"] == "chips.retired_refused"
        assert "603a.10(b)" in refused.json()["citation"]
    counted = fran.post(f"/api/bank/{T}/count", {"fields": {
        "purpose": "shift", "chips": "100x10", "counter": "bo", "observer": "fran", "set": "B"}})
    assert counted.status_code == 409, counted.text
    fine = fran.post(f"/api/bank/{T}/request", {"fields": {
        "kind": "fill", "chips": "2500x8", "shift": "06:00", "set": "A"}})
    assert fine.status_code == 200, fine.text
    assert fran.get(f"/api/bank/{T}").json()["retired_sets"] == ["B"]


def test_603a_3_the_expected_inventory_by_denomination_by_the_breakdown_rule(
        login: Login) -> None:
    fran = login("fran")
    detail = fran.get(f"/api/bank/{T}").json()
    by = detail["expected_chips"]
    # the opener by denomination, less the four $500 buy-ins, each issued as one $500 chip
    # (largest first); the opener holds none, so the ledger shows -4: the dealer broke down
    assert dict(map(tuple, by["chips"])) == {100: 200, 500: 400, 2500: 400, 10000: 80,
                                             50000: -4}
    assert by["uncovered"] == 0
    assert sum(d * n for d, n in by["chips"]) + by["uncovered"] == detail["expected"]
    assert "industry-default" in by["rule"]


def test_603a_10_b_a_retired_chip_set_is_refused_on_the_bet_path(login: Login) -> None:
    rae, dee, alice, fran = login("rae"), login("dee"), login("alice"), login("fran")
    table = "/api/tables/craps-pa-1"
    assert rae.post(f"/api/bank/{T}/retire-chip-set", {"fields": {"set": "B"}}
                    ).status_code == 200
    seq = fran.get(table).json()["seq"]
    before = alice.get(table).json()
    for reply in (dee.post(f"{table}/chips", {"player": "alice", "amount": 100_00,
                                               "chip_set": "B"}),
                  alice.post(f"{table}/bets", {"wager": "pass", "amount": 10_00,
                                               "chip_set": "B"}),
                  alice.post(f"{table}/commands", {"command": "place-bet", "fields": {
                      "wager": "field", "amount": 5_00, "chip_set": "B"}})):
        assert reply.status_code == 409, reply.text
        assert reply.json()["rule"] == "chips.retired_refused"
        assert "603a.10(b)" in reply.json()["citation"]
    # refused before anything was written: the table's log and alice's money are as they were
    assert fran.get(table).json()["seq"] == seq
    assert alice.get(table).json().get("balance") == before.get("balance")
    assert dee.post(f"{table}/chips", {"player": "alice", "amount": 100_00,
                                       "chip_set": "A"}).status_code == 200
    assert alice.post(f"{table}/bets", {"wager": "pass", "amount": 10_00, "chip_set": "A"}
                      ).status_code == 200
    # a set retired at another table is retired on the whole floor
    refused = alice.post("/api/tables/craps-in-1/bets", {"wager": "pass", "amount": 10_00,
                                                         "chip_set": "B"})
    assert refused.status_code == 409, refused.text
    assert refused.json()["rule"] == "chips.retired_refused"


def test_the_pit_reads_a_table_s_state_under_the_table_s_lock(floor: Floor,
                                                              login: Login) -> None:
    """The pit's view reads the players' chips and the folded log at one seq, under the
    table's lock: while the table's worker holds it (committing a batch of bets) the view
    waits, instead of reading a state half-changed (a bench run under load, load_bench
    --pit, got HTTP 500s from this view while bets were committed)."""
    login("fran")
    banks, info = banks_of(floor), floor.get(T)
    answered: list[dict[str, Any]] = []
    done = threading.Event()

    def view() -> None:
        answered.append(banks.detail(T))
        done.set()

    with info.lock:
        reader = threading.Thread(target=view)
        reader.start()
        assert not done.wait(0.5)  # the view waits for the table
    reader.join(30)
    assert done.is_set()
    assert answered[0]["conservation"]["holds"]


def test_the_books_and_the_dice_room_are_pushed_to_staff_pages(http: TestClient,
                                                              login: Login) -> None:
    """``/ws/floor``: a member of staff's page is told at once that the books or the dice's
    custody changed (it then reads them again); a player, or a kind not followed, is refused."""
    pam, fran, ann = login("pam"), login("fran"), login("ann")
    with http.websocket_connect(f"/ws/floor?kinds=bank&token={fran.token}") as books, \
            http.websocket_connect(f"/ws/floor?kinds=custody&token={fran.token}") as room:
        assert books.receive_json() == {"type": "floor", "kinds": ["bank"]}  # the hello
        assert room.receive_json() == {"type": "floor", "kinds": ["custody"]}
        asked = pam.post(f"/api/bank/{T}/request",
                         {"fields": {"kind": "fill", "chips": "2500x80", "shift": "06:00"}})
        assert asked.status_code == 200, asked.text
        assert books.receive_json()["type"] == "floor"  # another's step, without polling
        drawn = ann.post("/api/dice-room/demo-pa/key-draw", {"key": "table-games"})
        assert drawn.status_code == 200, drawn.text
        assert room.receive_json()["type"] == "floor"
    alice = login("alice")
    for url, code in ((f"/ws/floor?token={alice.token}", 4403),
                      (f"/ws/floor?kinds=account&token={fran.token}", 4400),
                      ("/ws/floor?token=nope", SESSION_ENDED)):
        with pytest.raises(WebSocketDisconnect) as closed, http.websocket_connect(url) as ws:
            ws.receive_json()
        assert closed.value.code == code, url


def test_the_floor_push_refuses_another_origin_a_long_query_and_an_ended_session(
        http: TestClient, login: Login) -> None:
    fran = login("fran")
    for url, headers in ((f"/ws/floor?token={fran.token}", {"origin": "https://evil.example"}),
                         (f"/ws/floor?kinds={'bank,' * 20}bank&token={fran.token}", {})):
        with pytest.raises(WebSocketDisconnect), \
                http.websocket_connect(url, headers=headers) as ws:
            ws.receive_json()
    with http.websocket_connect(f"/ws/floor?kinds=bank&token={fran.token}") as books:
        assert books.receive_json()["type"] == "floor"
        assert fran.post("/api/logout").status_code == 200
        with pytest.raises(WebSocketDisconnect) as closed:
            books.receive_json()
        assert closed.value.code == SESSION_ENDED
