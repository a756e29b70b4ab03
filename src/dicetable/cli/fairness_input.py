"""Where ``dicetable dice fairness`` reads its rolls: a table's event log, the output of
``dicetable export`` (each line wraps the event with its hashes), or the store itself; and
what it says when a sample is too small for the chi-square test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.textinput import decode_utf8, parse_json
from dicetable.games.events import DiceRolled

MIN_EXPECTED = 5
"""The chi-square test wants at least this many expected rolls in every cell (Cochran's rule,
the usual condition for its p-value to mean what it says): 30 rolls for a die's six faces,
180 for a pair's 36 outcomes."""


def rolls_from_file(path: Path) -> list[DiceRolled]:
    """The DiceRolled events of a JSON Lines file: plain events or export records."""
    from dicetable.store.chain import decode  # upcasts older schema versions

    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read {path}: {e.strerror}", rule="fairness.input") from None
    lines = decode_utf8(raw, str(path), rule="fairness.input").splitlines()
    out: list[DiceRolled] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        data = parse_json(line, f"{path} line {n}", rule="fairness.input")
        if isinstance(data, dict) and isinstance(data.get("event"), dict) and "hash" in data:
            data = data["event"]  # a 'dicetable export' record: the event with its hashes
        if not isinstance(data, dict) or data.get("type") != "DiceRolled":
            continue
        try:
            event = decode(data)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, InvalidInput):
                raise
            raise InvalidInput(f"{path} line {n}: not a DiceRolled event ({type(e).__name__}: "
                               f"{e})", rule="fairness.input") from None
        assert isinstance(event, DiceRolled)
        out.append(event)
    return out


def rolls_from_store(db: str, tables: list[str]) -> list[DiceRolled]:
    """The DiceRolled events of a table store (all tables, or those named)."""
    from dicetable.store.open import open_store

    try:
        store = open_store(db, create=False)
    except DicetableError:
        raise
    except Exception as e:  # a database that cannot be reached or read
        raise InvalidInput(f"cannot open {db}: {type(e).__name__}: {e}",
                           rule="fairness.input") from None
    try:
        names = tables or store.tables()
        unknown = [t for t in names if t not in store.tables()]
        if unknown:
            raise InvalidInput(f"no table {unknown[0]!r} in {db}", rule="fairness.input")
        return [e for t in names for e in store.events(t) if isinstance(e, DiceRolled)]
    finally:
        store.close()


def sample_notes(report: dict[str, Any]) -> list[str]:
    """Mark each die and pair whose sample is too small for its chi-square test (in place),
    and say so in words."""
    notes = []
    for key, cells in (("dice", 6), ("pairs", 36)):
        need = MIN_EXPECTED * cells
        for entry in report.get(key, []):
            entry["sample_ok"] = entry["rolls"] >= need
            entry["min_rolls"] = need
            if not entry["sample_ok"]:
                name = entry.get("serial") or " & ".join(entry.get("serials", []))
                notes.append(f"{name}: {entry['rolls']} rolls is too few for the chi-square "
                             f"test over {cells} outcomes (needs {need}, {MIN_EXPECTED} "
                             "expected per outcome); its p-value is not a finding")
    blind = sum(report.get("unattributed_rolls", {}).values())
    if blind:
        notes.append(f"{blind} roll(s) carry no dice serials and are not attributed to a die")
    if not report.get("dice"):
        notes.append("no rolls with dice serials: nothing to test")
    return notes
