"""A table's bank as a script of its steps, and back: ``dicetable script export`` writes every
bank stream this way, and the script replays to the very same events.

::

    bank pa t1 site=river game=craps
    2026-03-02T17:00:00+00:00 fran floorperson open chips=2500x800 counter=bo:boxperson ...
    2026-03-02T17:05:00+00:00 fran floorperson request kind=fill chips=2500x80 shift=06:00

A step that compares with the table's log (a count, a receiving count) carries the table's
seq at that moment (``@SEQ``); the replay reads the table's own log up to it.

>>> from dicetable.core.clock import FixedClock
>>> from dicetable.core.roles import Role
>>> bank = TableBank.open("pa", "t1", site="river", game="craps", clock=FixedClock())
>>> _ = bank.count("closed-daily", ((2500, 800),), counter="bo", counter_role=Role.BOXPERSON,
...                observer="fran", observer_role=Role.FLOORPERSON, container="C-1")
>>> text = export_bank_script(bank.state.log)
>>> text.splitlines()[2].split()[1:5]
['bo', 'boxperson', 'count', 'purpose=closed-daily']

This module reads and writes the format; it runs no step itself. ``play`` hands each step to
a ``Runs``, and the one the library's callers and the command line use is the application's
(``dicetable.application.scripts.run_bank_script``: every step a ``Step`` through
``Application.submit``). The exporter's own check alone replays in place, on a bank of its
own that nothing else sees, as the table exporter's does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from dicetable.bank import events as bev
from dicetable.bank.catalogue import VERBS, Context, Person, Verb, lines_of, parse_words
from dicetable.bank.ledger import TableBank
from dicetable.bank.rules import PRESETS, load_bank_pack, pack_from_dict
from dicetable.core.clock import FixedClock
from dicetable.core.errors import InvalidInput
from dicetable.core.events import Event, event_to_dict
from dicetable.core.roles import Role

BankStep = Callable[[TableBank, Person], Any]
"""A verb's step, handed the bank and the person who takes it."""
Runs = Callable[[TableBank, Person, BankStep], Any]
"""How a bank script's step reaches its bank (``dicetable.application.scripts`` gives the
one way in)."""


def _in_place(bank: TableBank, who: Person, step: BankStep) -> Any:
    """The exporter's check: its replay's bank takes each step itself."""
    return step(bank, who)


def _step(spec: Verb, args: dict[str, Any], ctx: Context) -> BankStep:
    return lambda bank, who: spec.run(bank, who, args, ctx)


def _seq_of(e: bev.BankEvent) -> int:
    return int(getattr(e, "table_seq", 0) or 0)


def export_bank_script(events: Sequence[Event], table_events: Sequence[Event] = ()) -> str:
    """A bank stream as its script, checked as it is written: the script is replayed (against
    the table's log) and must give the same events."""
    log = [e for e in events if isinstance(e, bev.BankEvent)]
    if not log or not isinstance(log[0], bev.BankOpened):
        raise InvalidInput("a bank log starts with BankOpened", rule="script.export")
    opened = log[0]
    pack = pack_from_dict(opened.pack)
    preset = next((k for k, v in PRESETS.items() if load_bank_pack(v).digest == pack.digest),
                  None)
    where = preset or "data=" + base64.b64encode(json.dumps(opened.pack).encode()).decode()
    head = f"bank {where} {opened.table} site={opened.site} game={opened.game}"
    out = [head + (" electronic" if opened.electronic else ""),
           f"{opened.at} {opened.actor} {opened.role.value} opened"]
    steps = lines_of(log)
    ends = [s[0].seq for s in steps[1:]] + [log[-1].seq + 1] if steps else []
    for (first, verb, words), end in zip(steps, ends, strict=True):
        seq = max((_seq_of(e) for e in log if first.seq <= e.seq < end), default=0)
        mark = [f"@{seq}"] if seq else []
        out.append(" ".join([first.at, first.actor, first.role.value, verb, *words, *mark]))
    text = "\n".join(out) + "\n"
    replayed = play(text, table_events, _in_place).state.log
    if [event_to_dict(e) for e in replayed] != [event_to_dict(e) for e in log]:
        bad = next((i for i, (a, b) in enumerate(zip(replayed, log, strict=False)) if a != b),
                   min(len(replayed), len(log)))
        raise InvalidInput(f"the bank script does not replay to its log (event {bad + 1})",
                           rule="script.export")
    return text


def play(text: str, table_events: Sequence[Event], runs: Runs) -> TableBank:
    """Replay a bank script: each step decided by the ledger at its recorded time (taken to
    the bank by ``runs``; ``application.scripts.run_bank_script`` is the entry)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if len(lines) < 2 or not lines[0].startswith("bank "):
        raise InvalidInput("a bank script starts with 'bank PACK TABLE site=.. game=..' and "
                           "its opening line", rule="script.syntax")
    head = lines[0].split()
    if len(head) < 5:
        raise InvalidInput("bank PACK TABLE site=SITE game=GAME", rule="script.syntax")
    where, table = head[1], head[2]
    opts = dict(w.partition("=")[::2] for w in head[3:] if "=" in w)
    pack = pack_from_dict(json.loads(base64.b64decode(where[5:]))) \
        if where.startswith("data=") else load_bank_pack(where)
    at, actor, role, word = ([*lines[1].split(), "", "", "", ""])[:4]
    if word != "opened":
        raise InvalidInput("the second line is 'TIME ACTOR ROLE opened'", rule="script.syntax")
    clock = FixedClock(datetime.fromisoformat(at))
    bank = TableBank.open(pack, table, site=opts.get("site", ""), game=opts.get("game", ""),
                          electronic="electronic" in head, clock=clock, actor=actor,
                          role=Role(role))
    for n, line in enumerate(lines[2:], start=3):
        parts = line.split()
        if len(parts) < 4 or parts[3] not in VERBS:
            raise InvalidInput(f"line {n}: TIME ACTOR ROLE VERB key=value ... (verbs: "
                               f"{', '.join(VERBS)})", rule="script.syntax")
        when, who, as_role, verb = parts[:4]
        words = [w for w in parts[4:] if not w.startswith("@")]
        marks = [w for w in parts[4:] if w.startswith("@")]
        seq = int(marks[0][1:]) if marks else 0
        clock.set(datetime.fromisoformat(when))
        spec = VERBS[verb]
        args = parse_words(words, spec)
        ctx = Context(table_log=list(table_events), table_seq=seq)
        runs(bank, (who, Role(as_role)), _step(spec, args, ctx))
    return bank
