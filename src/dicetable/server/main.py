"""Build the app for ``dicetable serve`` (also an ASGI factory for several worker processes).

The store's location comes from ``DICETABLE_DB`` when uvicorn imports the factory itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from argon2 import PasswordHasher
from fastapi import FastAPI

from dicetable.application.accounts import Accounts
from dicetable.core.clock import Clock, SystemClock
from dicetable.core.errors import InvalidInput
from dicetable.server.app import create_app
from dicetable.server.connections import (
    BODY_TIMEOUT,
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    MAX_PER_CLIENT,
    ConnectionGuard,
)
from dicetable.server.cpu_pin import pin_from_env
from dicetable.server.custody_floor import FloorCustody
from dicetable.server.demo import ROSTER, create_demo_floor
from dicetable.server.door import (
    MOST_STRANGERS,
    RESEND_HOLD,
    RETRY_HOLD,
    SERVER_MAX_WAIT,
    Admission,
    Impatience,
    Proxies,
)
from dicetable.server.floor import Floor
from dicetable.server.observe import LOG_ENV, configure_logging
from dicetable.store.base import key_mismatch
from dicetable.store.chain import key_id
from dicetable.store.keys import default_key_path, find_key, init_key, read_key
from dicetable.store.open import is_postgres, open_store


def build_floor(db: str | Path, *, bet_seconds: int = 20, schema: str = "dicetable",
                clock: Clock | None = None, key: bytes | None = None,
                key_file: str | Path | None = None,
                checkpoints: str | Path | None = None,
                progress: Callable[[str], None] | None = None,
                hasher: PasswordHasher | None = None,
                ) -> tuple[Floor, dict[str, str]]:
    """The floor on ``db``, every stream verified first; on an empty store, the demo floor
    and its credentials.

    ``schema`` names the PostgreSQL schema (ignored for SQLite); ``clock`` is injected in
    tests (the tables, the custody ledgers and the floor's scheduler all read it). The chain
    key is ``key``, else found as ``store.keys.find_key`` says; a new store with no key
    anywhere gets one created beside it (``<db>.key``, as ``dicetable keys init``).
    ``progress`` is told of each step of preparing a fresh store. ``hasher``: the accounts'
    Argon2 parameters (``Accounts``; the tests' floors use cheap ones).
    """
    clock = clock or SystemClock()
    if key is None:
        key = find_key(key_file, db)
    if key is None and not is_postgres(db) and str(db) != "memory" \
            and not _has_log(db, schema):
        key = read_key(init_key(default_key_path(db)))
    store = open_store(db, schema=schema, key=key)
    recorded = store.recorded_key_id()
    if recorded is not None and recorded != store.key_id:  # nothing is served without it
        store.close()
        raise key_mismatch(recorded, key_id(key), str(db))
    try:
        accounts = Accounts(store, hasher=hasher)
    except InvalidInput:
        store.close()
        raise
    floor = Floor(store, accounts, bet_seconds=bet_seconds, clock=clock,
                  custody=FloorCustody(store, clock, roster=ROSTER),
                  checkpoints=Path(checkpoints) if checkpoints else None)
    credentials: dict[str, str] = {}
    if not store.tables() and accounts.empty():
        credentials = create_demo_floor(floor, progress)
    return floor, credentials


def _has_log(db: str | Path, schema: str) -> bool:
    """Whether ``db`` already holds a table log (a new store is the one that gets a key)."""
    try:
        store = open_store(db, schema=schema, create=False)
    except InvalidInput:
        return False
    try:
        return bool(store.tables())
    finally:
        store.close()


_LEADER: list[object] = []


def lead_electronic_tables(db: str) -> bool:
    """Of several processes on one PostgreSQL store, only one runs the electronic tables'
    cycles: the one holding a session-level advisory lock (kept until the process ends)."""
    if not db.startswith(("postgresql://", "postgres://")):
        return True
    import psycopg

    conn = psycopg.connect(db, autocommit=True)
    row = conn.execute("SELECT pg_try_advisory_lock(74611)").fetchone()
    if row and row[0]:
        _LEADER.append(conn)
        return True
    conn.close()
    return False


def app_from_env() -> FastAPI:
    """uvicorn's factory: ``uvicorn --factory dicetable.server.main:app_from_env``."""
    configure_logging(os.environ.get(LOG_ENV, "text"))
    pin_from_env()  # each worker process on a CPU of its own (``server.cpu_pin``)
    db = os.environ.get("DICETABLE_DB", "dicetable.db")
    leader = lead_electronic_tables(db)
    # One writer for the checkpoint file: the leading process (the others still verify).
    floor, _ = build_floor(db, bet_seconds=int(os.environ.get("DICETABLE_BET_SECONDS", "20")),
                           schema=os.environ.get("DICETABLE_SCHEMA", "dicetable"),
                           checkpoints=(os.environ.get("DICETABLE_CHECKPOINTS") or None)
                           if leader else None)
    run_electronic = os.environ.get("DICETABLE_ELECTRONIC", "1") == "1"
    clock = float(os.environ.get("DICETABLE_CLOCK_SECONDS", "60"))
    return create_app(floor, electronic_loop=run_electronic and leader,
                      clock_seconds=clock or None,
                      verify_seconds=float(os.environ.get("DICETABLE_VERIFY_EVERY", "60")),
                      admission=admission_from_env(), impatience=impatience_from_env(),
                      connections=connections_from_env(),
                      proxies=Proxies(forwarded_allow_ips()))


def forwarded_allow_ips() -> str:
    """The proxies whose ``X-Forwarded-For`` is honoured: ``DICETABLE_FORWARDED_ALLOW_IPS``
    (comma-separated addresses), unset or empty: none - every client is its own peer
    address, whatever it claims."""
    return os.environ.get("DICETABLE_FORWARDED_ALLOW_IPS", "").strip()


def connections_from_env() -> ConnectionGuard:
    """The connection bounds and read deadlines (``server.connections``):
    ``DICETABLE_MAX_CONNECTIONS``, ``DICETABLE_MAX_CONNECTIONS_PER_CLIENT``,
    ``DICETABLE_HEADER_TIMEOUT`` and ``DICETABLE_BODY_TIMEOUT`` (seconds); unset, the
    industry-default ones. The named proxies (``forwarded_allow_ips``) are bounded only by
    the total."""
    proxies = frozenset(p.strip() for p in forwarded_allow_ips().split(",") if p.strip())
    return ConnectionGuard(
        most=_positive_int("DICETABLE_MAX_CONNECTIONS", MAX_CONNECTIONS),
        per_client=_positive_int("DICETABLE_MAX_CONNECTIONS_PER_CLIENT", MAX_PER_CLIENT),
        header_timeout=_positive_seconds("DICETABLE_HEADER_TIMEOUT", HEADER_TIMEOUT),
        body_timeout=_positive_seconds("DICETABLE_BODY_TIMEOUT", BODY_TIMEOUT),
        proxies=proxies)


def _positive(name: str, parse: Callable[[str], float], what: str, rule: str) -> float | None:
    """``name``'s value, read by ``parse``, above 0 and finite; None when unset."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = parse(raw)
    except ValueError:
        value = 0
    if not value > 0 or value == float("inf"):
        raise InvalidInput(f"{name} must be {what}, not {raw!r}", rule=rule)
    return value


def _positive_int(name: str, default: int, rule: str = "server.connections") -> int:
    value = _positive(name, int, "a whole number of at least 1", rule)
    return default if value is None else int(value)


def impatience_from_env() -> Impatience:
    """How long a client refused for load waits, at least, for its next 503:
    ``DICETABLE_SHED_HOLD_MS`` (on any connection) and ``DICETABLE_SHED_RESEND_HOLD_MS`` (on
    the same one), in milliseconds; unset, ``door.RETRY_HOLD`` and ``door.RESEND_HOLD``."""
    return Impatience(hold=_positive_ms("DICETABLE_SHED_HOLD_MS", RETRY_HOLD),
                      resend=_positive_ms("DICETABLE_SHED_RESEND_HOLD_MS", RESEND_HOLD))


def admission_from_env() -> Admission:
    """The load shedding's bounds: ``DICETABLE_SHED_WAIT_MS``, the wait (in milliseconds) a
    command may expect behind the work already admitted, and ``DICETABLE_SHED_STRANGERS``,
    the commands whose session the server does not remember that may be in flight at once;
    unset, the industry-default ones (``server.door``)."""
    return Admission(max_wait=_positive_ms("DICETABLE_SHED_WAIT_MS", SERVER_MAX_WAIT),
                     most_strangers=_positive_int("DICETABLE_SHED_STRANGERS", MOST_STRANGERS,
                                                  "server.backpressure"))


def _positive_ms(name: str, default: float) -> float:
    return _positive_seconds(name, default, per_second=1000)


def _positive_seconds(name: str, default: float, *, per_second: int = 1) -> float:
    """``name``'s value (in seconds, or thousandths of one), as seconds; unset, ``default``."""
    unit = "milliseconds" if per_second == 1000 else "seconds"
    value = _positive(name, float, f"a positive number of {unit}", "server.backpressure")
    return default if value is None else value / per_second
