"""An account as a stream of the one store: ``account:NAME``, folded into ``AccountState``.

Everything that gives an account power is an event of its keyed chain: its kind and password
hash (``AccountCreated``), each session (``SessionOpened``/``SessionClosed``, by the token's
SHA-256 digest, never the token), each checked-and-wrong password (``LoginFailed``), each lock
and unlock. A row written into the database without the chain key is not a link of the chain,
so it is never folded into a state that grants anything (``application.accounts`` verifies every
link it folds).

A lock ends every session of the account: the fold closes them all.

>>> AT = "2026-01-01T00:00:00+00:00"
>>> s = AccountState()
>>> for e in [AccountCreated(account="al", seq=1, at=AT, account_kind="player",
...                          display="Al", password_hash="$argon2id$x"),
...           SessionOpened(account="al", seq=2, at=AT, session="ab" * 32, expires=AT),
...           LoginFailed(account="al", seq=3, at=AT, attempt=1, client="127.0.0.2"),
...           AccountLocked(account="al", seq=4, at=AT, until=AT, after=3)]:
...     apply(s, e)
>>> s.kind, s.failed, s.locked_until == AT, s.sessions
('player', 1, True, {})
>>> invariants(s), roundtrips(s)
([], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dicetable.core import events as envelope
from dicetable.store.record_codec import roundtrips as roundtrips
from dicetable.store.record_stream import AccountRecordEvent

KIND = "account"
KINDS = ("staff", "player")
"""What an account may be (a staff member's role at a table is the table's own log)."""


class AccountEvent(AccountRecordEvent, abstract=True):
    """The envelope of an account's events: the account is the stream."""

    stream_kind = KIND


class AccountCreated(AccountEvent):
    account_kind: str
    """``staff`` or ``player``."""
    display: str
    password_hash: str
    """Argon2id: the chain vouches for it, so a hash written in without the key checks nothing."""


class SessionOpened(AccountEvent):
    session: str
    """SHA-256 of the session token."""
    expires: str


class SessionClosed(AccountEvent):
    session: str


class LoginFailed(AccountEvent):
    """A password that was checked and was wrong (a login refused for capacity or rate is
    not one)."""

    attempt: int
    client: str = ""


class AccountLocked(AccountEvent):
    until: str
    after: int


class AccountUnlocked(AccountEvent):
    by_role: str
    via: str = "api"


@dataclass
class AccountState:
    seq: int = 0
    username: str = ""
    kind: str = ""
    display: str = ""
    password_hash: str = ""
    failed: int = 0
    locked_until: str | None = None
    sessions: dict[str, str] = field(default_factory=dict)
    """Open sessions: token digest -> expiry (ISO 8601)."""


def apply(state: AccountState, event: envelope.Event) -> None:
    """Fold one account event into the state."""
    if not isinstance(event, AccountEvent):
        raise ValueError(f"a {event.kind} is not an account event")
    if isinstance(event, AccountCreated):
        if state.seq:
            raise ValueError("an account is created once, by its first event")
        state.username, state.kind = event.account, event.account_kind
        state.display = event.display
        state.password_hash = event.password_hash
    elif not state.seq:
        raise ValueError("an account stream starts with AccountCreated")
    elif isinstance(event, SessionOpened):
        state.sessions[event.session] = event.expires
        state.failed, state.locked_until = 0, None
    elif isinstance(event, SessionClosed):
        state.sessions.pop(event.session, None)
    elif isinstance(event, LoginFailed):
        if event.attempt == 1:
            state.locked_until = None  # a fresh count (an expired lock is over)
        state.failed = event.attempt
    elif isinstance(event, AccountLocked):
        state.locked_until = event.until
        state.sessions.clear()  # a lock ends every session of the account
    elif isinstance(event, AccountUnlocked):
        state.failed, state.locked_until = 0, None
    state.seq = event.seq


def invariants(state: Any) -> list[str]:
    problems = []
    if state.kind not in KINDS:
        problems.append(f"account {state.username!r} is of kind {state.kind!r}, not one of "
                        f"{', '.join(KINDS)}")
    if state.failed < 0:
        problems.append("a negative count of failed logins")
    if state.locked_until is not None and state.sessions:
        problems.append("a locked account still has open sessions")
    return problems
