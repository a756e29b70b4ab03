"""Table procedure over the game engines: commands in, events out, state = fold of events."""

from dicetable.table import procedure as _procedure  # noqa: F401  (registers folds)
from dicetable.table.table import MODES, Table, engine_for

__all__ = ["MODES", "Table", "engine_for"]
