"""Staff and player accounts: hashed passwords, session tokens, lockout after failed logins.

Passwords are hashed with Argon2id (argon2-cffi). An account locks after ``LOCK_AFTER``
failed logins (``LOCKOUT``: N.J.A.C. 13:69E-1.37A, spec/standards.md SEC-4 - New Jersey's
rule standing in for PA/IN text we do not have, so ``other-jurisdiction`` and configurable)
for ``LOCK_MINUTES`` minutes (industry-default), or until a pit boss unlocks it. A lock ends
every session of the account. A session token is 32 random bytes (``secrets``) and its
account's name, and expires after ``SESSION_HOURS``.

Every account is a stream of the one store (``account:NAME``, ``store.account_stream``):
its kind and password hash, each session opened or closed (by the token's SHA-256 digest,
never the token), each checked-and-wrong password, each lock and unlock. The account is the
fold of that stream, and every link folded is verified against the chain key first: a row
written into the database by someone without the key (a session, a kind, a password hash)
is not a link of the chain, so it grants nothing - the account is refused until its log
verifies again, and ``audit verify`` and the server's periodic verification report it.

Against guessing (spec/standards.md SEC-4): only a password that was actually checked and was
wrong counts towards the lock - a login refused for capacity or rate is not a failed login.
The password checks (``HASH_SLOTS`` at once) are shared fairly (``FairChecks``): each client
has at most one login running or waiting and each account at most one check running, the
waiting are served in order, so no client's or account's flood can take every check; past
``CHECKS_WAITING`` waiting logins one is refused with 429 at once (not a failed login). A
locked-out floor is unlocked with ``dicetable accounts unlock`` (break-glass: needs the
store's chain key, recorded in the stream).

Sessions remembered in memory, so that a request does not read the database to learn who
sent it: otherwise every request, every bet among them, would pay two queries for it.

What is kept is what ``Accounts.session`` would read - the account and the session's expiry,
only ever from an account stream verified link by link - keyed by the token's digest, for at
most ``SESSION_CACHE_SECONDS`` (each for between half and all of it, by its digest:
``SESSION_CACHE_SPREAD``). This process forgets an entry the moment it changes the
session or the account itself (logout, a login attempt, lock, unlock) and whenever the store
tells it the account's stream moved, so here a logout or a lock takes effect at once. A
change made by *another* process (a second server on PostgreSQL or on the same SQLite file,
``dicetable accounts unlock``) reaches this one within ``SESSION_CACHE_SECONDS`` at the
latest: that is the revocation delay, and it is bounded (on PostgreSQL the store's notice
usually ends it sooner). Expiry is checked on every use, cached or not.

An entry read from the database while an invalidation was under way is not kept (a
generation count says so), so a logout can never be undone by a lookup that raced it.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import re
import secrets
import threading
import time
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, NoReturn, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import DicetableError, InvalidInput, RoleNotPermitted, StaleVersion
from dicetable.store import account_stream as acct
from dicetable.store.base import EventStore, Notice
from dicetable.store.chain import EMPTY, Head, decode_body, link_hash
from dicetable.store.open import open_store
from dicetable.store.versioned import retry_stale

log = logging.getLogger(__name__)

SESSION_CACHE_SECONDS = 5.0
"""How long a session read from the database is trusted without reading it again
(industry-default): the longest a logout or lock made by another process goes unseen here."""
SESSION_CACHE_SIZE = 100_000
"""Sessions kept at most (industry-default; a full cache starts afresh)."""
SESSION_CACHE_SPREAD = 0.5
"""Share of the cache's time by which its entries' lives are spread (industry-default): an
entry is kept for between half and all of ``SESSION_CACHE_SECONDS``, by its digest, so that
sessions read together (a server's start, a shift's logins) are not all read again in the
same instant. Kept for the whole time, they were: in ``bench.load_bench`` (d) the 1,000
players' sessions read at its start were all read again 5 s later, and the commands admitted
in that half-second waited 250-290 ms."""

SESSION_READ_AHEAD = 0.2
"""Share of ``SESSION_CACHE_SECONDS`` before an entry's trust ends in which a request that
finds it has it read again in the background (industry-default; less than the shortest life,
``1 - SESSION_CACHE_SPREAD``): a session in use is then never read on its request's way. In
``bench.load_bench`` (d) each of the 1,000 players' sessions ran out every 2.5-5 s, and the
command that found it so took the long way: the door, and a store read on a worker thread."""

READ_AHEAD_GATHER = 0.1
"""Seconds a session found due to be read again waits for others to go with it (industry-
default; well inside the read ahead's second, ``SESSION_READ_AHEAD``): one at a time, each
read was a job handed to the reader's thread and that thread woken for it, about 30 us of CPU
where the read itself is 7."""

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Entry(Generic[A]):
    account: A
    username: str
    expires: datetime
    until: float
    """Monotonic time after which the database is asked again."""

class SessionCache(Generic[A]):
    def __init__(self, *, seconds: float = SESSION_CACHE_SECONDS,
                 size: int = SESSION_CACHE_SIZE, spread: float = SESSION_CACHE_SPREAD,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.spread = spread
        self.size = size
        self.clock = clock
        self._entries: dict[str, Entry[A]] = {}
        self._of: dict[str, set[str]] = {}
        """Each username's cached digests (forgetting an account never scans the cache)."""
        self._lock = threading.Lock()
        self._generation = 0
        self._ahead: set[str] = set()
        """Digests being read again before their trust ends (``read_ahead``)."""
        self.hits = 0
        self.misses = 0
        """Lookups answered from memory, and from the database (tests count them)."""

    def get(self, digest: str) -> Entry[A] | None:
        entry = self._entries.get(digest)
        if entry is None or entry.until <= self.clock():
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def read_ahead(self, digest: str, entry: Entry[A]) -> bool:
        """Is ``entry`` (found for ``digest``) in the last part of its trust, and not being
        read again yet? Then it is marked as being read (until ``put`` or ``forget_session``).

        >>> t = [0.0]
        >>> cache: SessionCache[str] = SessionCache(seconds=5.0, spread=0.0, clock=lambda: t[0])
        >>> cache.put("d", "ann", "ann", datetime.max, cache.generation())
        >>> t[0] = 3.9; entry = cache.get("d"); cache.read_ahead("d", entry)
        False
        >>> t[0] = 4.1; cache.read_ahead("d", entry), cache.read_ahead("d", entry)
        (True, False)
        """
        if entry.until - self.clock() > self.seconds * SESSION_READ_AHEAD \
                or digest in self._ahead:
            return False
        with self._lock:
            if digest in self._ahead:
                return False
            self._ahead.add(digest)
        return True

    def generation(self) -> int:
        """Taken before reading the database; ``put`` keeps nothing if it has moved since."""
        return self._generation

    def put(self, digest: str, account: A, username: str, expires: datetime,
            generation: int) -> None:
        if self.seconds <= 0:
            return
        with self._lock:
            self._ahead.discard(digest)
            if generation != self._generation:
                return  # something was invalidated meanwhile: what was read may be stale
            if len(self._entries) >= self.size:
                self._entries.clear()
                self._of.clear()
            self._drop(digest)  # a digest re-read may now belong to another account
            self._entries[digest] = Entry(account, username, expires,
                                          self.clock() + self.kept_for(digest))
            self._of.setdefault(username, set()).add(digest)

    def kept_for(self, digest: str) -> float:
        """Seconds the entry for ``digest`` is trusted: never more than ``seconds``, and at
        least ``1 - spread`` of them, by the digest (the same each time it is read).

        >>> cache: SessionCache[str] = SessionCache(seconds=5.0, spread=0.5)
        >>> lives = [cache.kept_for(f"{n:064x}") for n in range(1000)]
        >>> 2.5 <= min(lives) < 2.6 and 4.9 < max(lives) < 5.0
        True
        """
        return self.seconds * (1 - self.spread * zlib.crc32(digest.encode()) / 2**32)

    def forget_session(self, digest: str) -> None:
        with self._lock:
            self._generation += 1
            self._ahead.discard(digest)
            self._drop(digest)

    def forget_account(self, username: str) -> None:
        """Every session of ``username`` (its account changed: locked, unlocked, a login)."""
        with self._lock:
            self._generation += 1
            for digest in self._of.pop(username, ()):
                self._entries.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._of.clear()

    def _drop(self, digest: str) -> None:
        """Forget one entry, and its place in its account's set (the lock held)."""
        entry = self._entries.pop(digest, None)
        if entry is not None:
            digests = self._of.get(entry.username)
            if digests is not None:
                digests.discard(digest)
                if not digests:
                    del self._of[entry.username]


@dataclass(frozen=True)
class Lockout:
    """When failed logins lock an account, and the rule that says so (configurable)."""

    after: int = 3
    minutes: int = 30
    citation: str = "N.J.A.C. 13:69E-1.37A (spec/standards.md SEC-4)"
    status: str = "other-jurisdiction"
    """Another regulator's rule standing in for PA/IN text we do not have."""

    @property
    def cites(self) -> str:
        return f"{self.citation} [{self.status}]"


LOCKOUT = Lockout()
LOCK_AFTER = LOCKOUT.after
"""Failed logins that lock an account (N.J.A.C. 13:69E-1.37A, other-jurisdiction)."""
LOCK_MINUTES = LOCKOUT.minutes
"""How long a lock lasts unless a pit boss lifts it first (industry-default)."""
SESSION_HOURS = 12
"""A session token's life: one shift (industry-default)."""
HASH_SLOTS = 2
"""Password checks (Argon2, deliberately slow) that may run at once (industry-default)."""
CHECKS_WAITING = 256
"""Logins that may wait for a password check (industry-default); past it, 429 at once."""
CHECK_WAIT_SECONDS = 30.0
"""The longest a login waits for a check before it is refused (429, not counted)."""
STREAM = acct.KIND
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class TooManyAttempts(DicetableError):
    """Too many logins at once, or from one client: try again shortly."""


def token_digest(token: str) -> str:
    """What is recorded for a session token: its SHA-256 (a stolen database holds no
    tokens)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class NotAuthenticated(DicetableError):
    """No valid session, or wrong credentials."""


class AccountLocked(DicetableError):
    """Too many failed logins."""


class AccountUnverified(NotAuthenticated):
    """The account's log does not verify under the chain key: it grants nothing."""


class Kind(StrEnum):
    STAFF = "staff"
    PLAYER = "player"


@dataclass(frozen=True)
class Account:
    username: str
    kind: Kind
    display: str
    failed: int = 0
    locked_until: str | None = None


_DUMMY_TEXT = "dicetable: no such account"


_DUMMY_HASHES: dict[tuple[object, ...], str] = {}


def _dummy_hash(hasher: PasswordHasher) -> str:
    """What an unknown user's password is checked against, so that they cost what a real
    check costs: one per Argon2 cost, made the first time it is asked for, not at import
    (every server, CLI command and test process imports this module, and a hash at the
    production cost is 0.16 CPU-s)."""
    cost = (hasher.time_cost, hasher.memory_cost, hasher.parallelism, hasher.hash_len,
            hasher.salt_len, hasher.type)
    found = _DUMMY_HASHES.get(cost)
    if found is None:
        found = _DUMMY_HASHES.setdefault(cost, hasher.hash(_DUMMY_TEXT))
    return found


class FairChecks:
    """The password checks, shared fairly: at most ``slots`` at once; each client has at
    most one login running or waiting and each account at most one check running; the
    waiting are served in arrival order (a waiting login whose account is being checked lets
    the next one go first). So a flood from N clients delays an honest login by at most N
    checks and does not refuse it while fewer than ``waiting`` wait; a refusal here (429)
    is never a failed login."""

    def __init__(self, slots: int = HASH_SLOTS, *, waiting: int = CHECKS_WAITING,
                 wait_seconds: float = CHECK_WAIT_SECONDS) -> None:
        self.slots = slots
        self.waiting = waiting
        self.wait_seconds = wait_seconds
        self._cond = threading.Condition()
        self._queue: deque[tuple[object, str]] = deque()
        self._clients: Counter[str] = Counter()
        self._running: set[str] = set()
        self.refused = 0
        self.most_at_once = 0

    @contextmanager
    def take(self, client: str | None, account: str) -> Iterator[None]:
        """A check slot for ``account``'s login from ``client`` (None: a caller in this
        process, such as the CLI, with no client to share with)."""
        with self._cond:
            if (client is not None and self._clients[client]) \
                    or len(self._queue) >= self.waiting:
                self.refused += 1
                raise TooManyAttempts("too many logins are being checked at once; try again "
                                      "in a moment", rule="accounts.concurrency")
            if client is not None:
                self._clients[client] += 1
            ticket = (object(), account)
            self._queue.append(ticket)
            deadline = time.monotonic() + self.wait_seconds
            try:
                while not self._my_turn(ticket):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.refused += 1
                        raise TooManyAttempts("too many logins are being checked at once; "
                                              "try again in a moment",
                                              rule="accounts.concurrency")
                    self._cond.wait(left)
            except BaseException:
                self._queue.remove(ticket)
                self._done(client)
                raise
            self._queue.remove(ticket)
            self._running.add(account)
            self.most_at_once = max(self.most_at_once, len(self._running))
        try:
            yield
        finally:
            with self._cond:
                self._running.discard(account)
                self._done(client)

    def _my_turn(self, ticket: tuple[object, str]) -> bool:
        if len(self._running) >= self.slots:
            return False
        for waiting in self._queue:
            if waiting[1] not in self._running:
                return waiting is ticket
        return False

    def _done(self, client: str | None) -> None:
        if client is not None:
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]
        self._cond.notify_all()


class Accounts:
    """Accounts and sessions, as streams of ``store`` (an ``EventStore``, or where one lives:
    ``memory``, a SQLite path, a PostgreSQL URL - then this object owns it)."""

    def __init__(self, store: EventStore | str | Path = "memory", *,
                 schema: str = "dicetable", clock: Clock | None = None,
                 key: bytes | None = None, hash_slots: int = HASH_SLOTS,
                 session_cache_seconds: float = SESSION_CACHE_SECONDS,
                 lockout: Lockout = LOCKOUT, hasher: PasswordHasher | None = None) -> None:
        self._owned = not isinstance(store, EventStore)
        self.store: EventStore = store if isinstance(store, EventStore) \
            else open_store(store, schema=schema, key=key)
        refuse_old_tables(self.store)
        self.lockout = lockout
        self.sessions: SessionCache[Account] = SessionCache(seconds=session_cache_seconds)
        """Sessions remembered for a few seconds (``SessionCache``: forgotten at once
        on this process's own logout, login, lock and unlock, and on the store's notice of
        any change to the account)."""
        self.checks = FairChecks(hash_slots)
        self.faulted: Callable[[str], bool] = lambda stream: False
        """Whether a stream is under an integrity fault (the floor's open faults): a faulted
        account grants nothing, even where its chain alone verifies (a cut-back log)."""
        self._on_change: list[Callable[[str], None]] = []
        self._states: dict[str, tuple[Head, acct.AccountState]] = {}
        self._states_lock = threading.Lock()
        self.password_checks = 0
        """How many password hashes were computed (tests count what happened)."""
        self._count_lock = threading.Lock()
        self._hasher = hasher or PasswordHasher()
        """Argon2's cost for the hashes this object makes (a login pays what its stored hash
        says); another ``hasher`` only where the cost is not what is tested."""
        self.clock: Clock = clock or SystemClock()
        self._subscription = self.store.subscribe(self._on_notice)
        self._due: dict[str, str] = {}
        """Sessions found due to be read again (digest -> token), not yet read."""
        self.read_ahead_gather = READ_AHEAD_GATHER
        self._due_lock = threading.Lock()
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="sessions-ahead")
        """The thread that reads remembered sessions again ahead of time (``remembered``;
        started by the first such read)."""

    @property
    def most_at_once(self) -> int:
        return self.checks.most_at_once

    def close(self) -> None:
        self._reader.shutdown(wait=True, cancel_futures=True)
        self._subscription.close()
        if self._owned:
            self.store.close()

    def _on_notice(self, notice: Notice) -> None:
        """An account's stream moved (here or, on PostgreSQL, in another process): its
        remembered sessions are read again."""
        if notice.table.startswith(STREAM + ":"):
            self.changed(notice.table[len(STREAM) + 1:])

    def on_change(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener`` with a username whenever that account may have changed (its
        stream moved, here or in another process, or it was faulted); returns the remover."""
        self._on_change.append(listener)
        return lambda: self._on_change.remove(listener)

    def changed(self, username: str) -> None:
        """The account may have changed: its remembered sessions are read again, and the
        listeners (the open WebSockets) check theirs."""
        self.sessions.forget_account(username)
        for listener in list(self._on_change):
            listener(username)

    def _now(self) -> datetime:
        now = self.clock.now()
        return now if now.tzinfo is UTC else now.astimezone(UTC)

    # -- the account's stream, verified link by link -----------------------------------------
    def _state(self, username: str, head: Head | None = None) -> acct.AccountState | None:
        """The fold of ``account:NAME`` (None: no such account). Every link read is checked
        against the chain key and the recorded head (``head``: read just now by the caller,
        with others'); a stream that fails grants nothing."""
        stream = f"{STREAM}:{username}"
        if self.faulted(stream):
            raise AccountUnverified(f"the log of account {username!r} is under an integrity "
                                    "fault; it grants nothing until a pit boss clears it",
                                    rule="accounts.integrity")
        given = head
        if head is None:
            head = self.store.head(stream)
        with self._states_lock:
            cached = self._states.get(username)
        if given is not None and cached is not None and head.seq < cached[0].seq:
            head = self.store.head(stream)  # read before this process's own last append
        if cached is not None and head.seq < cached[0].seq:
            # events dropped from the end (a shorter chain verifies): never a lock undone
            raise AccountUnverified(f"the log of account {username!r} was cut short",
                                    rule="accounts.integrity")
        if head.seq == 0:
            return None
        if cached is not None and cached[0] == head:
            return cached[1]
        base, state = (cached[0], copy.deepcopy(cached[1])) \
            if cached is not None and cached[0].seq < head.seq else (EMPTY,
                                                                      acct.AccountState())
        prev, seq = base.hash, base.seq
        for row in self.store.records(stream, after=base.seq, until=head.seq):
            if row.seq != seq + 1 or row.prev_hash != prev \
                    or link_hash(prev, row.body, self.store.key) != row.hash:
                raise _unverified(username, row.seq)
            try:
                event = decode_body(row.body)
                if event.stream != stream or event.seq != row.seq:
                    raise ValueError("stored in another place than it names")
                acct.apply(state, event)
            except (DicetableError, ValueError) as e:
                raise _unverified(username, row.seq, str(e)) from None
            prev, seq = row.hash, row.seq
        if (seq, prev) != (head.seq, head.hash):
            raise _unverified(username, seq + 1, "the log does not end at its recorded head")
        with self._states_lock:
            self._states[username] = (head, state)
        return state

    def heads(self) -> list[tuple[str, Head]]:
        """Each account stream's newest head this process has read or written (the floor's
        high water: an account's log is never to be found behind it)."""
        with self._states_lock:
            return [(f"{STREAM}:{name}", head) for name, (head, _) in self._states.items()]

    def _append(self, username: str, state: acct.AccountState | None,
                *events: acct.AccountEvent) -> None:
        self.store.append(f"{STREAM}:{username}", list(events),
                          expected=state.seq if state is not None else 0, request="")

    def _event(self, cls: type[acct.AccountEvent], username: str, state: acct.AccountState
               | None, n: int = 1, **fields: Any) -> acct.AccountEvent:
        seq = (state.seq if state is not None else 0) + n
        return cls(account=username, seq=seq, at=self._now().isoformat(), **fields)

    def _check_password(self, stored: str, password: str) -> bool:
        """One Argon2 check (the caller holds a fair check slot)."""
        with self._count_lock:
            self.password_checks += 1
        try:
            return bool(self._hasher.verify(stored, password))
        except (VerificationError, InvalidHashError):
            return False

    # -- accounts ----------------------------------------------------------------------------
    def hash_password(self, password: str) -> str:
        """An Argon2 hash of ``password`` at this object's cost, for ``create(...,
        password_hash=)``: set-up that gives many accounts one password hashes it once."""
        if len(password) < 8:
            raise InvalidInput("a password has at least 8 characters", rule="accounts.password")
        return str(self._hasher.hash(password))

    def create(self, username: str, password: str, kind: Kind, display: str = "", *,
               password_hash: str | None = None) -> Account:
        """A new account (``password_hash``: an Argon2 hash already made, for bulk set-up)."""
        if not _NAME.match(username):
            raise InvalidInput("a username is 1-64 letters, digits, '-' and '_'",
                               rule="accounts.username")
        if password_hash is None and len(password) < 8:
            raise InvalidInput("a password has at least 8 characters", rule="accounts.password")
        taken = InvalidInput(f"the username {username!r} is taken", rule="accounts.username")
        if self.store.head(f"{STREAM}:{username}").seq:
            raise taken
        created = self._event(acct.AccountCreated, username, None, account_kind=kind.value,
                              display=display or username,
                              password_hash=password_hash or self._hasher.hash(password))
        try:
            self._append(username, None, created)
        except StaleVersion:
            raise taken from None
        account = self.get(username)
        assert account is not None
        return account

    def get(self, username: str) -> Account | None:
        """The account (None: none by that name). ``AccountUnverified`` when its log fails."""
        if not _NAME.match(username):
            return None
        state = self._state(username)
        return None if state is None else _account(state)

    def all(self) -> list[Account]:
        """Every account whose log verifies."""
        out = []
        for stream in self.store.streams(STREAM):
            try:
                account = self.get(stream[len(STREAM) + 1:])
            except AccountUnverified:
                continue
            if account is not None:
                out.append(account)
        return sorted(out, key=lambda a: a.username)

    def empty(self) -> bool:
        return not self.store.streams(STREAM)

    # -- login and sessions -------------------------------------------------------------------
    def login(self, username: str, password: str, client: str | None = None) -> str:
        """A new session token. Only a password checked and wrong counts towards the lock;
        a login refused for capacity (``TooManyAttempts``) changes nothing."""
        with self.checks.take(client, username):
            return self._login(username, password, client)

    def _login(self, username: str, password: str, client: str | None) -> str:
        self.sessions.forget_account(username)
        known = _NAME.match(username) is not None
        state = self._state(username) if known else None
        if state is None:
            # Spend the time a real check takes.
            self._check_password(_dummy_hash(self._hasher), password)
            raise NotAuthenticated("wrong username or password", rule="accounts.login")
        self._refuse_locked(username, state)
        right = self._check_password(state.password_hash, password)

        def attempt() -> str:  # another process's change to the account: decide again
            state = self._state(username)
            assert state is not None
            self._refuse_locked(username, state)
            if not right:
                self._failed(username, state, client)
            return self._open_session(username, state)

        return retry_stale(f"{STREAM}:{username}", attempt,
                           exhausted=_too_fast("the account is changing too fast; try again"))

    def _refuse_locked(self, username: str, state: acct.AccountState) -> None:
        if state.locked_until and datetime.fromisoformat(state.locked_until) > self._now():
            raise AccountLocked(f"{username} is locked after {self.lockout.after} failed "
                                f"logins until {state.locked_until}", rule="accounts.lockout",
                                citation=self.lockout.cites)

    def _failed(self, username: str, state: acct.AccountState, client: str | None
                ) -> NoReturn:
        expired = state.locked_until is not None  # (not refused above: the lock is over)
        attempt = (0 if expired else state.failed) + 1
        events: list[acct.AccountEvent] = [
            self._event(acct.LoginFailed, username, state, attempt=attempt,
                        client=client or "")]
        if attempt >= self.lockout.after:
            until = (self._now() + timedelta(minutes=self.lockout.minutes)).isoformat()
            events.append(self._event(acct.AccountLocked, username, state, 2, until=until,
                                      after=self.lockout.after))
        self._append(username, state, *events)
        self.changed(username)  # a lock closes its open sockets here at once
        if attempt >= self.lockout.after:
            raise AccountLocked(f"{username} is now locked after {self.lockout.after} failed "
                                "logins", rule="accounts.lockout", citation=self.lockout.cites)
        raise NotAuthenticated("wrong username or password", rule="accounts.login")

    def _open_session(self, username: str, state: acct.AccountState) -> str:
        token = f"{secrets.token_urlsafe(32)}.{username}"
        expires = (self._now() + timedelta(hours=SESSION_HOURS)).isoformat()
        self._append(username, state, self._event(acct.SessionOpened, username, state,
                                                  session=token_digest(token),
                                                  expires=expires))
        return token

    def open_session(self, username: str) -> str:
        """A session for ``username`` without a password check: for trusted set-up in this
        process (a benchmark's thousands of players), recorded like any other."""

        def attempt() -> str:
            state = self._state(username)
            if state is None:
                raise InvalidInput(f"no account {username!r}", rule="accounts.username")
            self._refuse_locked(username, state)
            return self._open_session(username, state)

        return retry_stale(f"{STREAM}:{username}", attempt,
                           exhausted=_too_fast("the account is changing too fast"))

    def session(self, token: str | None) -> Account:
        """The account behind a session token, or ``NotAuthenticated``. Valid only while its
        ``SessionOpened`` is in the verified chain, unclosed, unexpired and the account is
        not locked (remembered for a few seconds: ``SessionCache``)."""
        if not token:
            raise NotAuthenticated("log in first", rule="accounts.session")
        digest = token_digest(token)
        entry = self.sessions.get(digest)
        if entry is None:
            account, expires = self._read_session(token, digest)
        else:
            account, expires = entry.account, entry.expires
        if expires <= self._now():
            self.sessions.forget_session(digest)
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        return account

    def recheck(self, token: str) -> Account:
        """``session``, read from the account's log (verified), never from the cache: for a
        session held open (a WebSocket) that must end when the account is locked."""
        if not token:
            raise NotAuthenticated("log in first", rule="accounts.session")
        account, expires = self._session_from_log(token, token_digest(token))
        if expires <= self._now():
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        return account

    def remembered(self, token: str) -> Account | None:
        """The account behind ``token`` if its session is remembered and unexpired, without
        reading the store (None: ask ``session``). One near the end of its trust is read
        again meanwhile, on a thread of this object's own (``read_again``)."""
        digest = token_digest(token)
        entry = self.sessions.get(digest)
        if entry is None or entry.expires <= self._now():
            return None
        if self.sessions.read_ahead(digest, entry):
            self._read_later(token, digest)
        return entry.account

    def _read_later(self, token: str, digest: str) -> None:
        """Have a remembered session read again on this object's thread, with the others
        found due meanwhile (``read_due``)."""
        with self._due_lock:
            first = not self._due
            self._due[digest] = token
        if not first:
            return  # a read of those due is already on its way: this one goes with it
        try:
            self._reader.submit(self.read_due)
        except RuntimeError:  # closed: the entries run out and are read on the way
            with self._due_lock:
                due, self._due = self._due, {}
            for forgotten in due:
                self.sessions.forget_session(forgotten)

    def read_due(self) -> None:
        """Read again every remembered session found due since the last such read and in
        the next ``read_ahead_gather`` seconds, their accounts' heads in one read of the
        store (each unchanged account's state is the one this object holds): 4,000 players'
        sessions in use were 1,000 reads a second, each a job of its own for this thread."""
        time.sleep(self.read_ahead_gather)  # the others found due meanwhile go too
        with self._due_lock:
            due, self._due = self._due, {}
        if not due:
            return
        generation = self.sessions.generation()  # before the heads: see ``_read_session``
        names = {digest: token.rpartition(".")[2] for digest, token in due.items()}
        try:
            heads = self.store.heads_for(sorted({f"{STREAM}:{name}" for name in names.values()
                                                 if _NAME.match(name)}))
        except Exception:  # each is read alone below, and what fails is forgotten there
            log.exception("the heads of the sessions due could not be read together")
            heads = {}
        for digest, token in due.items():
            if self.sessions.generation() == generation:
                self.read_again(token, digest, head=heads.get(f"{STREAM}:{names[digest]}"),
                                generation=generation)
            else:  # something was forgotten since the heads were read: read this one afresh
                self.read_again(token, digest)

    def read_again(self, token: str, digest: str, *, head: Head | None = None,
                   generation: int | None = None) -> None:
        """Read a remembered session from its account's log, as ``session`` reads one it does
        not remember, and remember what it says; a session the log no longer grants (closed,
        expired, an account under a fault), or a read that fails, is forgotten: its next
        request reads it and is answered as the log says. ``head`` and ``generation``: the
        account's head and the cache's generation, read before (``read_due``)."""
        try:
            self._read_session(token, digest, head=head, generation=generation)
        except DicetableError:
            self.sessions.forget_session(digest)
        except Exception:
            self.sessions.forget_session(digest)
            log.exception("a session could not be read again ahead of its request")

    def _read_session(self, token: str, digest: str, *, head: Head | None = None,
                      generation: int | None = None) -> tuple[Account, datetime]:
        """A session read from its account's log, and remembered - unless something was
        forgotten meanwhile (the cache's generation, taken before the read: before
        ``head``, where one is given)."""
        if generation is None:
            generation = self.sessions.generation()
        account, expires = self._session_from_log(token, digest, head)
        self.sessions.put(digest, account, account.username, expires, generation)
        return account, expires

    def _session_from_log(self, token: str, digest: str,
                          head: Head | None = None) -> tuple[Account, datetime]:
        username = token.rpartition(".")[2]
        state = self._state(username, head) if "." in token and _NAME.match(username) \
            else None
        if state is None or digest not in state.sessions:
            raise NotAuthenticated("the session has expired; log in again",
                                   rule="accounts.session")
        return _account(state), datetime.fromisoformat(state.sessions[digest])

    def logout(self, token: str) -> None:
        digest = token_digest(token)
        self.sessions.forget_session(digest)
        username = token.rpartition(".")[2]

        def attempt() -> None:
            state = self._state(username) if _NAME.match(username) else None
            if state is None or digest not in state.sessions:
                return
            self._append(username, state, self._event(acct.SessionClosed, username, state,
                                                      session=digest))

        # A close that lost every race is refused, not reported done: the session would stay
        # open while its holder believes it closed.
        retry_stale(f"{STREAM}:{username}", attempt,
                    exhausted=_too_fast("the account is changing too fast; log out again"))
        self.sessions.forget_session(digest)  # a lookup that raced the close keeps nothing

    def unlock(self, username: str, *, by: str, role: str, via: str = "api") -> None:
        """Lift a lock: an authorised, recorded command (``by`` in ``role``), never one's own
        (spec/standards.md SEC-5: two people). A process without the store's key is refused
        (the store will not append), changing nothing."""
        if by == username:
            raise RoleNotPermitted(f"{by} may not unlock their own account",
                                   rule="duties.no_self",
                                   citation="spec/standards.md SEC-5 [industry-default]")

        def attempt() -> None:
            state = self._state(username) if _NAME.match(username) else None
            if state is None:
                raise InvalidInput(f"no account {username!r}", rule="accounts.username")
            self._append(username, state, self._event(acct.AccountUnlocked, username, state,
                                                      actor=by, by_role=role, via=via))

        retry_stale(f"{STREAM}:{username}", attempt,
                    exhausted=_too_fast("the account is changing too fast; unlock again"))
        self.sessions.forget_account(username)

    @contextmanager
    def opened(self) -> Iterator[Accounts]:
        try:
            yield self
        finally:
            self.close()


def _too_fast(message: str) -> Callable[[], NoReturn]:
    def exhausted() -> NoReturn:
        raise TooManyAttempts(message, rule="accounts.concurrency")
    return exhausted


def _account(state: acct.AccountState) -> Account:
    return Account(state.username, Kind(state.kind), state.display, state.failed,
                   state.locked_until)


def _unverified(username: str, seq: int, why: str = "") -> AccountUnverified:
    detail = why or "the row is not a link of the keyed chain"
    return AccountUnverified(f"the log of account {username!r} fails verification at seq "
                             f"{seq} ({detail}); it grants nothing until it is restored",
                             rule="accounts.integrity")


def refuse_old_tables(store: EventStore) -> None:
    """A store from before accounts were streams of the event log keeps them in tables of
    its own (``accounts``, ``sessions``, ``stream_log``), outside the keyed chain: they are
    not trusted, so they are not migrated; such a store is refused, saying what to do."""
    found = store.legacy_tables()
    if found:
        raise InvalidInput(
            f"{store.location} holds accounts, sessions or streams in the old tables "
            f"({', '.join(found)}), outside the keyed event log; they are not migrated "
            "(rows there were never vouched for by the chain). Export the table logs "
            "(dicetable audit export), then serve a new store and create the accounts "
            "again, or drop those tables once you have kept a copy", rule="store.legacy")


__all__ = ["Account", "AccountLocked", "AccountUnverified", "Accounts",
           "FairChecks", "Kind", "Lockout", "NotAuthenticated", "TooManyAttempts",
           "token_digest"]
