"""Table procedure over the game engines: commands in, events out, state = fold of events."""

from dicetable.table.table import Table, engine_for

__all__ = ["Table", "engine_for"]
