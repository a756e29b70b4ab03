"""spec/table-bank.md §7 item 3, §8 on the floor: ``GET /api/ratings`` gives the pit each
rated player's exact theo beside the industry formula's; a player sees their own only."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from tests.server.conftest import Login
from tests.server.test_api import T, refused, shooter_ready


def test_8_the_pit_sees_exact_and_industry_theo_and_a_player_only_their_own(
        login: Login) -> None:
    shooter_ready(login)  # alice: $10 on the pass line, the shooter
    alice, sam, dee, pat = login("alice"), login("sam"), login("dee"), login("pat")
    assert alice.post(f"{T}/bets", {"wager": "field", "amount": 500}).status_code == 200
    assert sam.post(f"{T}/roll", {"faces": "2-2"}).status_code == 200  # the point is 4
    assert dee.post(f"{T}/settle").status_code == 200
    assert alice.post(f"{T}/bets", {"wager": "place6", "amount": 1200}).status_code == 200
    sam.post(f"{T}/roll", {"faces": "1-2"})
    dee.post(f"{T}/settle")

    body = pat.get(f"/api/ratings?table={T.rsplit('/', 1)[1]}").json()
    [mine] = [r for r in body["ratings"] if r["player"] == "alice"]
    exact = 1000 * Fraction(7, 495) + 500 * Fraction(1, 18) + 1200 * Fraction(1, 216)
    assert Fraction(mine["theo_exact"]) == exact
    assert mine["theo"] == round(exact)
    assert mine["rolls"] == 2
    assert mine["seat"] is not None
    assert mine["ended"] is None
    assert "industry_theo" in mine
    assert mine["rounding"] == "half-up to the cent"
    rules = {r["id"]: r for r in body["rules"]}
    assert rules["ratings.industry.decisions_per_hour"]["status"] == "industry-default"
    assert {r["player"] for r in body["ratings"]} >= {"alice", "bob"}

    what_if = pat.get("/api/ratings?table=craps-pa-1&decisions_per_hour=100&edge=7/495").json()
    assert {r["id"]: r["value"] for r in what_if["rules"]}[
        "ratings.industry.decisions_per_hour"] == 100

    own = alice.get("/api/ratings").json()["ratings"]
    assert own
    assert {r["player"] for r in own} == {"alice"}
    assert all(r["player"] == "bob" for r in login("bob").get("/api/ratings").json()["ratings"])
    refused(dee.get("/api/ratings"), 403, "RoleNotPermitted", "ratings.viewers")


def test_8_bad_rating_parameters_are_refused_naming_the_rule(login: Login) -> None:
    pat = login("pat")
    refused(pat.get("/api/ratings?edge=lots"), 422, "InvalidInput", "ratings.industry.edge")
    refused(pat.get("/api/ratings?edge=100%25"), 422, "InvalidInput", "ratings.industry.edge")
    refused(pat.get("/api/ratings?day=2026-13-01"), 422, "InvalidInput", "ratings.gaming_day")
    refused(pat.get("/api/ratings?table=nowhere"), 404, "NotFound")
    day = pat.get("/api/ratings?day=2000-01-01").json()
    assert day["ratings"] == []
    assert day["day"] == "2000-01-01"


def _gaming_day(at: datetime) -> str:
    """The PA site pack's gaming day of ``at``: it starts at 06:00 in New York (asserted below
    from the pack's own rule)."""
    local = at.astimezone(ZoneInfo("America/New_York"))
    return str(local.date() - timedelta(1) if local.time() < time(6) else local.date())


def test_465a_31_ratings_count_the_bank_s_site_gaming_day_and_the_packs_rule_values(
        login: Login) -> None:
    """One gaming day: the site pack's zone and start (the pit's books count the same day),
    not a parameter of the ratings; the formula's values are the pack's, cited."""
    pat = login("pat")
    before = _gaming_day(datetime.now(UTC))
    books_day = pat.get("/api/bank/craps-pa-1").json()["gaming_day"]
    assert books_day in {before, _gaming_day(datetime.now(UTC))}  # the books count the site's day
    # The demo floor's sessions were started when it was built, which may be the gaming day
    # before this test's (a run crossing 06:00 New York): ask for the day alice's started in.
    every = pat.get("/api/ratings?table=craps-pa-1").json()["ratings"]
    started = min(r["started"] for r in every if r["player"] == "alice")
    day = _gaming_day(datetime.fromisoformat(started))
    body = pat.get(f"/api/ratings?table=craps-pa-1&day={day}").json()
    assert body["day"] == day
    assert {r["player"] for r in body["ratings"]} >= {"alice"}
    after = pat.get(f"/api/ratings?table=craps-pa-1&day={date.fromisoformat(day) + timedelta(1)}")
    assert "alice" not in {r["player"] for r in after.json()["ratings"]
                           if r["started"] == started}  # a session counts in one day only
    rules = {r["id"]: r for r in body["rules"]}
    start = rules["ratings.gaming_day.start"]
    assert start["value"] == "06:00 America/New_York"
    assert "465a.31" in start["citation"]
    dph = rules["ratings.industry.decisions_per_hour"]
    assert (dph["value"], dph["status"]) == (60, "industry-default")
    assert "465a.7" in dph["citation"]  # the pack's citation, not a hard-coded one
    assert rules["ratings.industry.edge"]["value"] == "1.41%"
    # a zone is no longer the ratings' own parameter: it is ignored, the site's day holds
    same = pat.get(f"/api/ratings?table=craps-pa-1&day={day}&zone=Asia/Tokyo").json()
    assert same["ratings"] == body["ratings"]
