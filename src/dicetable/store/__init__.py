"""The durable, tamper-evident table log: memory, SQLite (default) and PostgreSQL backends.

``open_store(location)`` gives a store; ``DurableTable`` runs a ``Table`` on it and resumes it
after a restart; ``verify_store`` checks the hash chain; ``recall_rounds`` rebuilds the last
rounds for game recall.
"""

from dicetable.store import aggregates as _aggregates  # noqa: F401  (registers the built-in kinds)
from dicetable.store.audit import verify_store
from dicetable.store.base import EventStore, Notice, Subscription
from dicetable.store.chain import EMPTY, GENESIS, Head, Snapshot, StoredEvent
from dicetable.store.durable import DurableTable
from dicetable.store.memory import MemoryStore
from dicetable.store.open import open_store
from dicetable.store.recall import recall_rounds
from dicetable.store.replay import load_state
from dicetable.store.sqlite import SqliteStore

__all__ = ["EMPTY", "GENESIS", "DurableTable", "EventStore", "Head", "MemoryStore", "Notice",
           "Snapshot", "SqliteStore", "StoredEvent", "Subscription", "load_state",
           "open_store", "recall_rounds", "verify_store"]
