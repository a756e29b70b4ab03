"""Sessions remembered in memory (``accounts.SessionCache``, issue 13): a logout, a lock or an
unlock in this process takes effect at once; another process's within the bounded delay;
expiry is checked on every use."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dicetable.application.accounts import (
    LOCK_AFTER,
    SESSION_HOURS,
    SESSION_READ_AHEAD,
    AccountLocked,
    Accounts,
    Kind,
    NotAuthenticated,
    SessionCache,
    token_digest,
)
from dicetable.core.clock import FixedClock
from dicetable.store.chain import Head
from tests.demo_floor import CHEAP_HASHER
from tests.server.conftest import Login

PASSWORD = "correct horse"


def _accounts(path: Path, **kw: object) -> Accounts:
    accounts = Accounts(path, **{"hasher": CHEAP_HASHER, **kw})  # type: ignore[arg-type]
    if accounts.get("ann") is None:
        accounts.create("ann", PASSWORD, Kind.PLAYER)
        accounts.create("pit", PASSWORD, Kind.STAFF)
    return accounts


def test_issue_13_a_remembered_session_reads_the_database_once(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path / "a.db")
    token = accounts.login("ann", PASSWORD)
    for _ in range(5):
        assert accounts.session(token).username == "ann"
    assert accounts.sessions.misses == 1
    assert accounts.sessions.hits == 4
    assert accounts.remembered(token) is not None


def test_issue_13_logout_forgets_the_session_at_once(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path / "a.db")
    token = accounts.login("ann", PASSWORD)
    accounts.session(token)
    accounts.logout(token)
    assert accounts.remembered(token) is None
    with pytest.raises(NotAuthenticated):
        accounts.session(token)


def test_issue_26_a_lock_ends_a_remembered_session_at_once(tmp_path: Path) -> None:
    accounts = _accounts(tmp_path / "a.db")
    token = accounts.login("ann", PASSWORD)
    assert accounts.session(token).locked_until is None
    for _ in range(LOCK_AFTER - 1):
        with pytest.raises(NotAuthenticated):
            accounts.login("ann", "wrong password")
        assert accounts.session(token).failed > 0  # the count is read again, not remembered
    with pytest.raises(AccountLocked):
        accounts.login("ann", "wrong password")
    assert accounts.remembered(token) is None
    with pytest.raises(NotAuthenticated):
        accounts.session(token)  # the lock ended it, in this process at once
    accounts.unlock("ann", by="pit", role="pit_boss")
    with pytest.raises(NotAuthenticated):
        accounts.session(token)  # an unlock opens no session: log in again
    assert accounts.session(accounts.login("ann", PASSWORD)).locked_until is None


def test_issue_13_another_process_logout_is_seen_within_the_cache_delay(
        tmp_path: Path) -> None:
    here = _accounts(tmp_path / "a.db")
    there = Accounts(tmp_path / "a.db")
    token = here.login("ann", PASSWORD)
    here.session(token)
    now = [0.0]
    here.sessions.clock = lambda: now[0]
    here.sessions.clear()
    here.session(token)  # remembered at t=0 for SESSION_CACHE_SECONDS
    there.logout(token)
    assert here.session(token).username == "ann"  # still remembered: the bounded delay
    now[0] += here.sessions.seconds
    with pytest.raises(NotAuthenticated):
        here.session(token)
    there.close()
    here.close()


def _read_ahead_done(accounts: Accounts) -> None:
    """Wait for the reads ahead submitted so far (they run on the accounts' own thread)."""
    accounts._reader.submit(lambda: None).result(timeout=30)


def test_issue_28_a_session_in_use_is_read_again_before_its_trust_ends(
        tmp_path: Path) -> None:
    """The read of a session in use is made ahead, off its request's way: a request in the
    last part of the entry's trust is answered from memory, the entry read again behind it,
    and the next request finds it trusted afresh - no request reads the store."""
    accounts = _accounts(tmp_path / "a.db")
    token = accounts.login("ann", PASSWORD)
    now = [0.0]
    accounts.sessions.clock = lambda: now[0]
    accounts.sessions.clear()
    accounts.session(token)  # read at t=0
    life = accounts.sessions.kept_for(token_digest(token))
    now[0] = life * 0.5
    assert accounts.remembered(token) is not None
    _read_ahead_done(accounts)
    assert accounts.sessions.misses == 1  # mid-life: not read again
    now[0] = life - 0.5 * accounts.sessions.seconds * SESSION_READ_AHEAD
    assert accounts.remembered(token) is not None  # answered from memory ...
    assert accounts.remembered(token) is not None  # (one read ahead, however many ask)
    _read_ahead_done(accounts)
    now[0] = life + 0.5  # ... and past the old entry's trust, the new one answers
    assert accounts.remembered(token) is not None
    assert accounts.sessions.misses == 1
    accounts.close()


def _in_use(accounts: Accounts, players: int) -> tuple[list[str], list[float]]:
    """``players`` players' sessions, each read once at t=0 of the cache's clock (the list
    that clock reads is returned: move it by hand)."""
    names = [f"p{i}" for i in range(players)]
    for name in names:
        accounts.create(name, PASSWORD, Kind.PLAYER)
    tokens = [accounts.login(name, PASSWORD) for name in names]
    now = [0.0]
    accounts.sessions.clock = lambda: now[0]
    accounts.sessions.clear()
    for token in tokens:
        accounts.session(token)
    return tokens, now


def _all_due_while_busy(accounts: Accounts, tokens: list[str], now: list[float]) -> None:
    """Each session asked for in the last moment of its trust (their lives are spread),
    while the reader is busy, so that all are found due before any is read again; then
    the reads done."""
    gate = threading.Event()
    accounts._reader.submit(gate.wait)
    try:
        for token in sorted(tokens, key=lambda t: accounts.sessions.kept_for(token_digest(t))):
            now[0] = accounts.sessions.kept_for(token_digest(token)) - 0.01
            assert accounts.remembered(token) is not None
    finally:
        gate.set()
    _read_ahead_done(accounts)


def _all_renewed(accounts: Accounts, tokens: list[str], now: list[float], misses: int) -> None:
    """Past every old entry's trust, each session is answered from memory (renewed)."""
    now[0] += 0.4 * accounts.sessions.seconds
    assert all(accounts.remembered(token) is not None for token in tokens)
    assert accounts.sessions.misses == misses


def _count_heads(monkeypatch: pytest.MonkeyPatch, accounts: Accounts, *,
                 after_together: Callable[[], None] = lambda: None
                 ) -> tuple[list[list[str]], list[str]]:
    """The streams whose heads the store is asked for together (each call's list) and one
    by one; ``after_together`` runs after each read together."""
    store = accounts.store
    together: list[list[str]] = []
    one: list[str] = []
    real_heads, real_head = store.heads_for, store.head

    def heads_for(streams: Iterable[str]) -> dict[str, Head]:
        together.append(list(streams))
        found = real_heads(together[-1])
        after_together()
        return found

    def head(stream: str) -> Head:
        one.append(stream)
        return real_head(stream)

    monkeypatch.setattr(store, "heads_for", heads_for)
    monkeypatch.setattr(store, "head", head)
    return together, one


def test_issue_28_sessions_due_together_are_read_again_with_one_read_of_the_heads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions found due while a read ahead waits go with it: their accounts' heads in one
    read of the store, not one read each (4,000 players' sessions in use were a thousand
    reads a second); each is still renewed, and none is read on its request's way."""
    accounts = _accounts(tmp_path / "a.db")
    tokens, now = _in_use(accounts, 20)
    misses = accounts.sessions.misses
    together, one = _count_heads(monkeypatch, accounts)
    _all_due_while_busy(accounts, tokens, now)
    assert len(together) == 1
    assert sorted(together[0]) == sorted(f"account:p{i}" for i in range(20))
    assert one == []
    _all_renewed(accounts, tokens, now, misses)
    accounts.close()


def test_issue_28_sessions_read_together_after_a_forget_are_each_read_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Something forgotten after the heads were read together (a logout, an account that
    changed) makes them possibly stale: each session is then read with a head of its own,
    and is still renewed - none left to run out."""
    accounts = _accounts(tmp_path / "a.db")
    tokens, now = _in_use(accounts, 5)
    misses = accounts.sessions.misses
    _, one = _count_heads(monkeypatch, accounts, after_together=lambda: (
        accounts.sessions.forget_session("someone else's")))  # a logout meanwhile
    _all_due_while_busy(accounts, tokens, now)
    assert sorted(one) == sorted(f"account:p{i}" for i in range(5))
    _all_renewed(accounts, tokens, now, misses)
    accounts.close()


def test_issue_13_a_read_ahead_never_keeps_a_session_the_log_has_closed(
        tmp_path: Path) -> None:
    """Reading ahead renews what the log says, never more: a session another process closed
    is forgotten by the read ahead that finds it closed, within the same bounded delay."""
    here = _accounts(tmp_path / "a.db")
    there = Accounts(tmp_path / "a.db")
    token = here.login("ann", PASSWORD)
    now = [0.0]
    here.sessions.clock = lambda: now[0]
    here.sessions.clear()
    here.session(token)
    there.logout(token)
    now[0] = here.sessions.kept_for(token_digest(token)) - 0.1
    assert here.remembered(token) is not None  # still within its trust
    _read_ahead_done(here)
    assert here.remembered(token) is None
    with pytest.raises(NotAuthenticated):
        here.session(token)
    there.close()
    here.close()


def test_issue_13_a_remembered_session_still_expires(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 12, 1, 12, 0, tzinfo=UTC))
    accounts = _accounts(tmp_path / "a.db", clock=clock)
    token = accounts.login("ann", PASSWORD)
    accounts.session(token)
    clock.advance(hours=SESSION_HOURS, seconds=1)
    assert accounts.remembered(token) is None
    with pytest.raises(NotAuthenticated):
        accounts.session(token)


def test_issue_13_a_lookup_that_raced_an_invalidation_keeps_nothing() -> None:
    cache: SessionCache[str] = SessionCache()
    generation = cache.generation()
    cache.forget_session("d")  # a logout while the lookup was reading the database
    cache.put("d", "ann", "ann", datetime.now(UTC) + timedelta(hours=1), generation)
    assert cache.get("d") is None


def test_issue_13_sessions_read_together_are_not_all_read_again_together() -> None:
    # 4,000 sessions read in the same instant (a server's start) and all trusted for the same
    # 5 s were all read again in one burst, every 5 s: half a second of a loaded server's
    # loop. Each is now trusted for between half and all of the bound, by its digest.
    now = [0.0]
    cache: SessionCache[str] = SessionCache(seconds=5.0, clock=lambda: now[0])
    later = datetime(2030, 1, 1, tzinfo=UTC)
    digests = [token_digest(f"token-{n}") for n in range(4000)]
    for digest in digests:
        cache.put(digest, "ann", "ann", later, cache.generation())

    def kept_at(t: float) -> int:
        now[0] = t
        return sum(cache.get(d) is not None for d in digests)

    assert kept_at(2.49) == 4000          # none before half the bound
    kept = [kept_at(2.5 + k * 0.25) for k in range(11)]  # every quarter-second to 5 s
    assert kept[-1] == 0                  # none past the bound: a revocation still lands in 5 s
    expired = [a - b for a, b in itertools.pairwise(kept)]
    assert max(expired) < 4000 // 5       # read again over 2.5 s, no quarter-second takes a fifth


def test_issue_13_logout_over_http_ends_the_session_at_once(login: Login) -> None:
    alice = login("alice")
    assert alice.get("/api/me").status_code == 200
    assert alice.post("/api/tables/craps-pa-1/bets",
                      {"wager": "pass", "amount": 1000}).status_code == 200
    assert alice.post("/api/logout").status_code == 200
    assert alice.get("/api/me").status_code == 401
    again = alice.post("/api/tables/craps-pa-1/bets", {"wager": "field", "amount": 1000})
    assert again.status_code == 401


def test_issue_13_forgetting_an_account_forgets_its_sessions_and_only_its() -> None:
    cache: SessionCache[str] = SessionCache(clock=lambda: 0.0)
    later = datetime(2030, 1, 1, tzinfo=UTC)
    for digest, user in (("d1", "ann"), ("d2", "ann"), ("d3", "bob"), ("d4", "ann")):
        cache.put(digest, user, user, later, cache.generation())
    cache.forget_session("d4")
    cache.put("d2", "bob", "bob", later, cache.generation())  # the digest is bob's now
    cache.forget_account("ann")
    assert cache.get("d1") is None
    assert [cache.get(d).account for d in ("d2", "d3")] == ["bob", "bob"]  # type: ignore[union-attr]
    cache.forget_account("bob")
    assert cache.get("d2") is None
    assert cache.get("d3") is None
    assert not cache._of  # nothing left behind for either account
