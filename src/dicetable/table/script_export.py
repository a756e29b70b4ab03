"""A table's log written back as a table script (DESIGN.md lesson 8: notation that round-trips).

``export_script(events)`` reads a stored table's log and writes the script that
``run_script`` turns back into the same events and the same final state: an incident, a
dispute or a bug report becomes a test. The export replays as it writes: each command it
writes is executed on a fresh table and must produce the logged events (kinds and payloads,
ids and clock aside); events a command brings with it (a seven-out's new shooter, an
automatic no roll, the chores a table automates) are regenerated, not written.

>>> from dicetable.table import Table
>>> t = Table.open("pa-craps", "demo", mode="bare")
>>> _ = t.join("alice"), t.buy_in("alice", 100_00)
>>> _ = t.bet("alice", "pass", 10_00); _ = t.roll("5-6")
>>> print(export_script(t.log), end="")  # doctest: +ELLIPSIS
dicetable-script 3
pack pa-craps
table demo
mode bare
clock 2...
opener floor floorperson
alice player join alice
dealer dealer buy alice 100
alice player bet pass 10
stick stickperson roll 5-6
"""

from __future__ import annotations

import base64
import dataclasses
import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from dicetable.bank.script import export_bank_script
from dicetable.core import events as envelope
from dicetable.core.clock import FixedClock
from dicetable.core.errors import InvalidInput
from dicetable.core.events import event_to_dict
from dicetable.custody import events as cev
from dicetable.custody.catalogue import CATALOGUE as CUSTODY
from dicetable.custody.commands import CustodyCommand
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.rules import PRESETS as CUSTODY_PRESETS
from dicetable.custody.rules import load_custody_pack
from dicetable.custody.rules import pack_from_dict as custody_pack_from_dict
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.packs import PRESETS, load_preset, pack_from_dict
from dicetable.table import commands as tcmd
from dicetable.table import events as tev
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.script import VERSION
from dicetable.table.table import Table, automations_for, parse_automations

_IGNORED_FIELDS = frozenset({"seq", "at", "table"})
"""What may differ between a logged event and its replay: the clock and the envelope."""


def _pack_line(opened: gev.TableOpened) -> str:
    pack = pack_from_dict(opened.pack, opened.pack_digest)
    if pack.id in PRESETS and load_preset(pack.id).digest == pack.digest:
        return f"pack {pack.id}"
    data = json.dumps(opened.pack, sort_keys=True, separators=(",", ":")).encode()
    return f"pack-data {base64.b64encode(data).decode()}"


def _payload(event: gev.Event) -> dict[str, Any]:
    return {f.name: getattr(event, f.name) for f in dataclasses.fields(event)
            if f.name not in _IGNORED_FIELDS}


def command_for(events: Sequence[gev.Event], i: int, table: Table) -> gcmd.Command:
    """The command that produced ``events[i]``, the first event of its batch; ``table`` is
    the replay so far (the state the command was given in)."""
    e = events[i]
    who: dict[str, Any] = {"actor": e.actor, "role": e.role}
    entry = CATALOGUE.recorded_by(type(e))
    if entry is not None:
        recorded = {f.name for f in dataclasses.fields(e)}
        return entry.command(**who, **{name: getattr(e, name) for name in entry.fields
                                       if name in recorded})
    match e:
        case gev.BetPlaced():
            return gcmd.PlaceBet(**who, player=e.player, wager="odds" if e.base else e.wager,
                                 amount=e.amount, base=e.base, working=e.working,
                                 medium=e.medium)
        case gev.BetRemoved():
            bet = table.state.bets[e.bet]
            if e.rule == table.pack.cite("leaving.wagers"):  # taken down as the player left
                return gcmd.LeaveTable(**who, player=bet.player)
            nxt = events[i + 1] if i + 1 < len(events) else None
            if bet.base is not None and isinstance(nxt, gev.BetRemoved) and nxt.bet == bet.base:
                return gcmd.RemoveBet(**who, bet=bet.base)  # odds come down with their base
            return gcmd.RemoveBet(**who, bet=e.bet)
        case tev.ShooterSelected():
            return tcmd.SelectDice(**who, serials=e.dice)
        case tev.ShooterEnded() if e.reason == "relinquished":
            return tcmd.RelinquishDice(**who)
        case tev.ShooterEnded():
            return tcmd.RemoveShooter(**who, ground=e.reason)
    raise InvalidInput(f"seq {e.seq}: no command writes a {e.kind} event by itself",
                       rule="script.export")


class _Words:
    """The script context a formatter sees: bets keep their ids (replay gives the same)."""

    def bet_ref(self, ref: str) -> str:
        return ref

    def bowl(self) -> tuple[str, ...]:
        return ()


def script_line(command: gcmd.Command) -> str:
    verb = CATALOGUE.verb_for(command)
    words = [command.actor, command.role.value, verb.verb,
             *verb.format_words(_Words(), command)]
    return " ".join(shlex.quote(w) for w in words)


def _advance(before: datetime, after: datetime) -> tuple[str, datetime] | None:
    """A table script's clock moves in whole seconds."""
    seconds = int((after - before).total_seconds())
    if seconds <= 0:
        return None
    return f"advance {seconds}s", before + timedelta(seconds=seconds)


def _write_steps(log: Sequence[Any], i: int, lines: list[str], clock: FixedClock, *,
                 advance: Callable[[datetime, datetime], tuple[str, datetime] | None],
                 command_for: Callable[[int], Any], line: Callable[[Any], str],
                 execute: Callable[[Any], Sequence[Any]],
                 check: Callable[[Sequence[Any], Sequence[Any]], None], step: str) -> str:
    """Write a command line for each batch of ``log`` from ``i`` on, each executed on the
    replay as it is written and checked to record the logged events exactly."""
    while i < len(log):
        event = log[i]
        moved = advance(clock.now(), datetime.fromisoformat(event.at))
        if moved is not None:
            lines.append(moved[0])
            clock.set(moved[1])
        command = command_for(i)
        lines.append(line(command))
        try:
            produced = execute(command)
        except ValueError as err:
            raise InvalidInput(f"seq {event.seq} ({event.kind}): the {step} written for it "
                               f"is refused on replay: {err}", rule="script.export") from None
        check(log[i:i + len(produced)], produced)
        i += len(produced)
    return "\n".join(lines) + "\n"


def export_script(events: Iterable[envelope.Event], from_seq: int | None = None) -> str:
    """The table script for a table's log (from its ``TableOpened``).

    With ``from_seq`` the commands start at that event (or at the start of the command
    that produced it, if it came with another); the events before it travel with the script
    as its ``prelude`` (the table is rebuilt from them, as a restart would).
    """
    log = [e for e in events if isinstance(e, gev.Event)]
    if not log or not isinstance(log[0], gev.TableOpened):
        raise InvalidInput("a table's log starts with TableOpened", rule="events.log")
    start = 0 if from_seq is None else next(
        (k for k, e in enumerate(log) if e.seq >= from_seq), len(log))
    while True:
        try:
            return _export(log, start)
        except InvalidInput:
            if start <= 0:
                raise
            start -= 1  # mid-command: start at the command's first event


def _export(log: Sequence[gev.Event], start: int) -> str:
    opened = log[0]
    assert isinstance(opened, gev.TableOpened)
    if start <= 0:
        clock = FixedClock(datetime.fromisoformat(opened.at))
        pack = pack_from_dict(opened.pack, opened.pack_digest)
        replay = Table.open(pack, opened.table, mode=opened.mode, clock=clock,
                            actor=opened.actor, role=opened.role,
                            automations=parse_automations(opened.automations)
                            if opened.automations is not None else None)
        lines = [f"dicetable-script {VERSION}", _pack_line(opened), f"table {opened.table}",
                 f"mode {opened.mode}", f"clock {opened.at}",
                 f"opener {opened.actor} {opened.role.value}"]
        own = tuple(sorted(automations_for(opened.mode, pack)))
        if opened.automations is not None and tuple(opened.automations) != own:
            lines.insert(4, f"automations {','.join(opened.automations) or 'none'}")
        i = len(replay.log)
        _check(log[:i], replay.log)
    else:
        clock = FixedClock(datetime.fromisoformat(log[start - 1].at))
        replay = Table.replay(list(log[:start]), clock=clock)
        lines = [f"dicetable-script {VERSION}", f"prelude {encode_prelude(log[:start])}",
                 f"clock {log[start - 1].at}"]
        i = start
    return _write_steps(log, i, lines, clock, advance=_advance,
                        command_for=lambda k: command_for(log, k, replay), line=script_line,
                        execute=replay.execute, check=_check, step="command")


def encode_prelude(events: Sequence[gev.Event]) -> str:
    """Events as one script word: base64 of their JSON list."""
    data = json.dumps([event_to_dict(e) for e in events], separators=(",", ":"))
    return base64.b64encode(data.encode()).decode()


def _check(logged: Sequence[gev.Event], produced: Sequence[gev.Event]) -> None:
    if len(logged) != len(produced) or any(
            a.kind != b.kind or _payload(a) != _payload(b) for a, b in zip(logged, produced,
                                                                          strict=False)):
        where = logged[0].seq if logged else "end"
        raise InvalidInput(
            f"seq {where}: replaying the exported script gives "
            f"{[e.kind for e in produced]}, the log has {[e.kind for e in logged]}",
            rule="script.export")


# -- custody ledgers -------------------------------------------------------------------------
def _custody_header(opened: cev.CustodyOpened) -> str:
    pack = custody_pack_from_dict(opened.pack)
    preset = next((k for k, v in CUSTODY_PRESETS.items() if v == pack.id), None)
    if preset is not None and load_custody_pack(preset).digest == opened.pack_digest:
        where = f"custody {preset}"
    else:
        data = json.dumps(opened.pack, sort_keys=True, separators=(",", ":")).encode()
        where = f"custody-data {base64.b64encode(data).decode()}"
    return f"{where} {shlex.quote(opened.site)} {shlex.quote(opened.actor)} {opened.role.value}"


def _custody_advance(before: datetime, after: datetime) -> tuple[str, datetime] | None:
    """A custody script's clock moves to the microsecond."""
    delta = after - before
    micro = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if micro <= 0:
        return None
    words = f"advance {micro // 1_000_000}s" if micro % 1_000_000 == 0 else f"advance {micro}us"
    return words, after


def custody_line(command: CustodyCommand) -> str:
    """One custody step as a script line (the catalogue's verb and formatter)."""
    entry = CUSTODY.of(command)
    words = [command.actor, command.role.value, entry.verb, *entry.format_words(command)]
    return " ".join(shlex.quote(w) for w in words)


def export_custody_script(events: Iterable[envelope.Event]) -> str:
    """A site's custody ledger as a script of custody alone, checked as it is written: each
    step is executed on a fresh ledger and must record the logged events exactly."""
    log = [e for e in events if isinstance(e, cev.CustodyEvent)]
    if not log or not isinstance(log[0], cev.CustodyOpened):
        raise InvalidInput("a custody ledger starts with CustodyOpened", rule="events.log")
    opened = log[0]
    clock = FixedClock(datetime.fromisoformat(opened.at))
    ledger = CustodyLedger.open(custody_pack_from_dict(opened.pack), opened.site, clock=clock,
                                actor=opened.actor, role=opened.role)
    lines = [f"dicetable-script {VERSION}", f"clock {opened.at}", _custody_header(opened)]
    _check_custody(log[:1], ledger.log)
    return _write_steps(log, 1, lines, clock, advance=_custody_advance,
                        command_for=lambda k: CUSTODY.command_for(log, k), line=custody_line,
                        execute=ledger.execute, check=_check_custody, step="custody step")


def _check_custody(logged: Sequence[cev.CustodyEvent],
                   produced: Sequence[cev.CustodyEvent]) -> None:
    if len(logged) != len(produced):
        where = logged[0].seq if logged else "end"
        raise InvalidInput(
            f"seq {where}: replaying the exported custody steps gives "
            f"{[e.kind for e in produced]}, the log has {[e.kind for e in logged]}",
            rule="script.export")
    for a, b in zip(logged, produced, strict=True):
        da, db = event_to_dict(a), event_to_dict(b)
        if da != db:
            field = next(k for k in sorted(set(da) | set(db)) if da.get(k) != db.get(k))
            raise InvalidInput(f"seq {a.seq} ({a.kind}): replaying the exported custody step "
                               f"gives another {field}: {db.get(field)!r}, the log has "
                               f"{da.get(field)!r}", rule="script.export")


SCRIPTED_KINDS = ("table", "custody", "bank")
"""The streams a script replays: a table's log, a custody ledger and a table's bank. The
floor's own records (accounts, staff changes, faults, kept answers) are not commands anyone
gives at a table;
``dicetable export`` writes them as they are."""


def export_stream(kind: str, events: Iterable[envelope.Event],
                  table_events: Iterable[envelope.Event] = ()) -> str:
    """Any stored stream as the script that replays to it: a table's log, a custody ledger,
    or a table's bank (replayed against ``table_events``, its table's log)."""
    if kind == "custody":
        return export_custody_script(events)
    if kind == "bank":
        return export_bank_script(list(events), list(table_events))
    if kind != "table":
        raise InvalidInput(f"a {kind} stream is one of the floor's own records, not a table "
                           "or a custody ledger: no script replays it (dicetable export "
                           "writes it)", rule="script.export")
    return export_script(events)
