"""Table procedure over the game engines: commands in, events out, state = fold of events."""

from dicetable.table import procedure_state as _procedure_state  # noqa: F401  (registers folds)
from dicetable.table.table import MODES, Table, engine_for

__all__ = ["MODES", "Table", "engine_for"]
