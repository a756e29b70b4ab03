"""The store's SQL tables, declared once for both SQL backends (``sqlite``, ``postgres``):
each column is text unless marked ``:int``, every column is NOT NULL, and the key is the
table's primary key.

>>> print(sqlite_schema().splitlines()[2])
CREATE TABLE IF NOT EXISTS table_heads (table_id TEXT NOT NULL, seq INTEGER NOT NULL, ...
>>> [t.name for t in TABLES if t.rowid]
['snapshots']
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    columns: str
    """Column names, space-separated; ``seq:int`` is an integer column."""
    key: tuple[str, ...]
    rowid: bool = False
    """SQLite keeps a rowid for it (the others are stored by their key: WITHOUT ROWID)."""

    def body(self, text: str, integer: str) -> str:
        cols = [f"{c.removesuffix(':int')} {integer if c.endswith(':int') else text} NOT NULL"
                for c in self.columns.split()]
        return f"{', '.join(cols)}, PRIMARY KEY ({', '.join(self.key)})"


TABLES = (
    Table("event_log", "table_id seq:int kind body prev_hash hash", ("table_id", "seq")),
    Table("table_heads", "table_id seq:int hash", ("table_id",)),
    Table("request_keys", "request table_id first_seq:int last_seq:int", ("request",)),
    Table("chain_meta", "name value", ("name",)),
    Table("snapshots", "table_id seq:int event_hash body digest", ("table_id", "seq"),
          rowid=True),
    Table("archives", "table_id first_seq:int first_prev last_seq:int last_hash day file mac",
          ("table_id", "first_seq")),
)


def sqlite_schema() -> str:
    """Every table, as one SQLite script."""
    return "\n" + "".join(
        f"CREATE TABLE IF NOT EXISTS {t.name} ({t.body('TEXT', 'INTEGER')})"
        f"{'' if t.rowid else ' WITHOUT ROWID'};\n" for t in TABLES)


def postgres_tables() -> list[str]:
    """Every table's statement, ``{}`` standing for the schema's quoted name."""
    return [f"CREATE TABLE IF NOT EXISTS {{}}.{t.name} ({t.body('text', 'bigint')})"
            for t in TABLES]
