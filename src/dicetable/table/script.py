"""Table scripts: executable scenarios in a small, versioned text format (DESIGN.md lesson 8).

A script is a header (the rules pack, the table, its people) followed by one command per line,
each with its actor and role, plus ``expect`` lines that assert the state at that point.
``docs/table-scripts.md`` documents the format; in short::

    dicetable-script 1
    pack pa-craps                  # a preset, or a house pack JSON file (relative path)
    table craps-1
    mode live                      # live (default), electronic or bare
    clock 2026-01-01T20:00:00+00:00
    opener fran floorperson        # who opens the table (default: floor floorperson)
    staff sam stickperson
    seat 1 alice 500               # position, player, chips bought (dollars)
    player carol 100               # a standing player

    bo boxperson bring-dice A1 A2 A3 A4 A5
    sam stickperson offer-dice alice
    alice player bet pass 10 as=line
    alice player select-dice A1 A2
    sam stickperson roll 3-4
    dee dealer settle
    bob player bet pass 5 ! IllegalWager            # this line must be refused
    expect balance alice 510

A line ending in ``! [ErrorName] [rule.id]`` must be refused (with that error and rule, if
given). Running stops at the first unmet expectation or unexpected refusal, naming the line.

This module reads a script and says which command each line gives, in whose name; it runs
none of them. ``play`` hands each to a ``script_runs.Runs``, and the one that exists is the
application's (``dicetable.application.scripts``: ``run_script``, ``run_file``), which gives
every command to ``Application.submit``.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

from dicetable.core.clock import FixedClock
from dicetable.core.dice import Roll
from dicetable.core.errors import DicetableError, InvalidInput
from dicetable.core.events import event_from_dict
from dicetable.core.money import format_cents, parse_money
from dicetable.core.roles import Role
from dicetable.core.textinput import decode_utf8, parse_json
from dicetable.custody.ledger import CustodyLedger
from dicetable.custody.reports import describe as custody_describe
from dicetable.games import commands as gcmd
from dicetable.games import events as gev
from dicetable.games.packs import PRESETS, load_pack, pack_from_dict
from dicetable.rules.model import RulePack
from dicetable.table import commands as tcmd
from dicetable.table import script_custody as custody_steps
from dicetable.table import script_expect as expectations
from dicetable.table import script_runs
from dicetable.table import script_v2 as v2
from dicetable.table.catalogue import CATALOGUE
from dicetable.table.table import AROUND_THE_ROLL, MODES, Table, automations_for, parse_automations

VERSION = 3
"""The newest format; every version in ``script_v2.VERSIONS`` is read. Format 3 makes a no
roll's return of the wagers and the shaker's pass chores of their own (``return-wagers``,
``pass-shaker``); a script of format 1 or 2 runs as it was written, with both done at once."""
HEADER = ("prelude", "pack", "pack-data", "table", "mode", "automations", "clock", "opener",
          "staff", "seat", "player")


@dataclass(frozen=True)
class ScriptFailure:
    line: int
    text: str
    message: str
    error: str = ""
    rule: str = ""
    citation: str = ""

    def __str__(self) -> str:
        where = f"line {self.line}: {self.text.strip()}"
        detail = f"{self.error}: {self.message}" if self.error else self.message
        cite = "; ".join(p for p in (f"rule {self.rule}" if self.rule else "", self.citation)
                         if p)
        return f"{where}\n  {detail}" + (f" [{cite}]" if cite else "")


@dataclass
class ScriptResult:
    table: Table | None
    """None when the header itself could not open the table, and for a script of custody
    alone."""
    failure: ScriptFailure | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    custody: CustodyLedger | None = None
    """The site's custody ledger, when the script has a ``custody`` header line (version 2)."""

    @property
    def ok(self) -> bool:
        return self.failure is None


class ScriptSyntaxError(InvalidInput):
    """A script line that cannot be read."""


def _words(line: str) -> list[str]:
    text = line.split("#", 1)[0]
    try:
        return shlex.split(text)
    except ValueError as e:
        raise ScriptSyntaxError(str(e), rule="script.syntax") from None


def _base64_json(text: str, what: str) -> Any:
    """The JSON a header line carries in base64, read within ``core.textinput``'s bounds."""
    data = base64.b64decode(text, validate=True)
    return parse_json(decode_utf8(data, what, rule="script.syntax"), what, rule="script.syntax")


def _duration(text: str) -> timedelta:
    m = re.fullmatch(r"(\d+)(us|[dhms])", text)
    if not m:
        raise ScriptSyntaxError(f"not a duration: {text!r} (write 25h, 90m, 30s, 2d or "
                                "1500us)", rule="script.syntax")
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(**{{"d": "days", "h": "hours", "m": "minutes", "s": "seconds",
                         "us": "microseconds"}[unit]: n})


def _options(words: list[str]) -> tuple[list[str], dict[str, str]]:
    plain = [w for w in words if "=" not in w]
    opts = dict(w.split("=", 1) for w in words if "=" in w)
    return plain, opts


class _Runner:
    def __init__(self, base_dir: Path, runs: script_runs.Runs) -> None:
        self.base_dir = base_dir
        self.runs = runs
        """How each command reaches the table or the ledger (``script_runs``)."""
        self.table: Table | None = None
        self.clock = FixedClock()
        self.aliases: dict[str, str] = {}
        self.header: dict[str, Any] = {"mode": "live", "table": "t1", "staff": [],
                                       "players": [], "opener": ("floor", Role.FLOORPERSON)}
        self.ext = v2.Extras()
        self.header_lines: dict[object, tuple[int, str]] = {}
        """Which header line each part of the opening came from (to name a failing one)."""
        self.opening: tuple[int, str] | None = None
        """The header line being acted on while the table opens."""

    @property
    def custody_only(self) -> bool:
        """A script of a custody ledger alone: a ``custody`` line and no table's pack."""
        return self.table is None and self.ext.custody is not None and not (
            {"pack", "prelude"} & set(self.header))

    def note(self, part: object, number: int, line: str) -> None:
        self.header_lines[part] = (number, line)

    # -- header ----------------------------------------------------------------------------
    def header_line(self, words: list[str]) -> None:
        key, args = words[0], words[1:]
        h = self.header
        if key == "pack" and len(args) == 1:
            h["pack"] = args[0]
        elif key == "prelude" and len(args) == 1:  # the log before an exported excerpt
            try:
                h["prelude"] = [event_from_dict(d) for d in _base64_json(args[0], "prelude")]
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                raise ScriptSyntaxError(f"prelude is a base64 JSON list of events ({e})",
                                        rule="script.syntax") from None
        elif key == "pack-data" and len(args) == 1:  # a stored table's own pack (export)
            try:
                h["pack"] = pack_from_dict(_base64_json(args[0], "pack-data"))
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                raise ScriptSyntaxError(f"pack-data is a base64 JSON rules pack ({e})",
                                        rule="script.syntax") from None
        elif key == "table" and len(args) == 1:
            h["table"] = args[0]
        elif key == "mode" and len(args) == 1 and args[0] in MODES:
            h["mode"] = args[0]
        elif key == "automations" and len(args) == 1:  # 'none', or a comma-separated list
            h["automations"] = parse_automations(
                [a for a in args[0].split(",") if a and args[0] != "none"])
        elif key == "clock" and len(args) == 1:
            try:
                when = datetime.fromisoformat(args[0].replace("Z", "+00:00"))
            except ValueError:
                raise ScriptSyntaxError(f"not a time: {args[0]!r}", rule="script.syntax") \
                    from None
            if when.tzinfo is None:
                raise ScriptSyntaxError("the clock needs a time zone (e.g. +00:00)",
                                        rule="script.syntax")
            self.clock.set(when)
        elif key == "opener" and len(args) == 2:
            h["opener"] = (args[0], v2.parse_role(args[1]))
        elif key == "staff" and len(args) == 2:
            h["staff"].append((args[0], v2.parse_role(args[1])))
        elif key == "seat" and len(args) in (2, 3):
            h["players"].append((args[1], _int(args[0], "seat"), args[2] if len(args) == 3
                                 else None))
        elif key == "player" and len(args) in (1, 2):
            h["players"].append((args[0], None, args[1] if len(args) == 2 else None))
        elif key in v2.HEADER:
            v2.header_line(self, words)
        else:
            raise ScriptSyntaxError(f"cannot read header line {' '.join(words)!r}",
                                    rule="script.syntax")

    def open_table(self) -> Table:
        h = self.header
        if "prelude" in h:
            self.table = Table.replay(h["prelude"], clock=self.clock)
            self.runs.opened(self.table)
            return self.table
        if "pack" not in h:
            raise ScriptSyntaxError("the header names a rules pack ('pack pa-craps')",
                                    rule="script.syntax")
        pack_name = h["pack"]
        at = self.header_lines.get
        self.opening = at("pack")
        if isinstance(pack_name, RulePack):
            pack = pack_name
        else:
            if pack_name not in PRESETS:
                pack_name = str((self.base_dir / pack_name).resolve())
            pack = load_pack(pack_name)
        opener, opener_role = h["opener"]
        self.opening = at("opener") or at("pack")
        automations = h.get("automations")
        if self.ext.version < 3:  # both were done at once before format 3
            automations = (automations if automations is not None else
                           automations_for(h["mode"], pack)) | frozenset(AROUND_THE_ROLL)
        table = Table.open(pack, h["table"], mode=h["mode"], clock=self.clock, actor=opener,
                           role=opener_role, automations=automations,
                           dice_registry=self.ext.custody)
        self.runs.opened(table)
        run = self.runs.table
        for n, (person, role) in enumerate(h["staff"]):
            self.opening = at(("staff", n))
            run(table, (opener, opener_role), tcmd.AssignStaff(
                actor=opener, role=opener_role, person=person, staff_role=role))
        for n, (player, seat, chips) in enumerate(h["players"]):
            self.opening = at(("player", n))
            run(table, (player, Role.PLAYER), gcmd.JoinTable(
                actor=player, role=Role.PLAYER, player=player, seat=seat))
            if chips is not None:
                actor, role = table.who(gcmd.BuyChips)
                run(table, (actor, role), gcmd.BuyChips(actor=actor, role=role, player=player,
                                                        amount=parse_money(chips)))
        self.opening = None
        self.table = table
        return table

    # -- body ---------------------------------------------------------------------------------
    def bet_ref(self, ref: str) -> str:
        return self.aliases.get(ref, ref)

    def bowl(self) -> tuple[str, ...]:
        return tuple(self.table.procedure.bowl) if self.table is not None else ()

    def command(self, words: list[str]) -> tuple[gcmd.Command, str | None]:
        """The command on a line, and an alias for a bet it places."""
        if len(words) < 3:
            raise ScriptSyntaxError("a command line is: ACTOR ROLE VERB [ARGS...]",
                                    rule="script.syntax")
        actor, role, verb = words[0], v2.parse_role(words[1]), words[2]
        args, opts = _options(words[3:])
        found = CATALOGUE.by_verb.get(verb)
        if found is None:
            raise ScriptSyntaxError(f"unknown verb {verb!r}; known: {', '.join(VERBS)}",
                                    rule="script.syntax")
        if found.entry.since > self.ext.version:
            self.ext.needs_v2(f"the verb {verb!r}", found.entry.since)
        try:
            return found.parse_words(self, actor, role, args, opts), opts.get("as")
        except (IndexError, KeyError, ValueError) as e:
            if isinstance(e, DicetableError):
                raise
            raise ScriptSyntaxError(f"cannot read {verb!r} arguments: {' '.join(words[3:])}",
                                    rule="script.syntax") from None

    def expect(self, words: list[str]) -> str | None:
        """None when the expectation holds, else what differs."""
        t = self.table
        assert t is not None
        what, args = words[0], words[1:]
        if what in expectations.EXPECTATIONS:
            return expectations.expect(self, what, args)

        def yes(text: str) -> bool:
            if text not in ("yes", "no"):
                raise ScriptSyntaxError(f"expected yes or no, not {text!r}",
                                        rule="script.syntax")
            return text == "yes"

        if what == "balance":
            got = t.balance(args[0])
            want = parse_money(args[1])
            return None if got == want else f"balance of {args[0]} is {format_cents(got)}, " \
                                            f"expected {format_cents(want)}"
        if what == "point":
            want_point = None if args[0] in ("none", "off") else int(args[0])
            return None if t.point == want_point else f"point is {t.point or 'off'}"
        if what == "shooter":
            want_name = None if args[0] == "none" else args[0]
            return None if t.shooter == want_name else f"shooter is {t.shooter or 'none'}"
        if what == "shaker":
            want_name = None if args[0] == "none" else args[0]
            return None if t.shaker_holder == want_name \
                else f"the shaker is with {t.shaker_holder or 'nobody'}"
        if what == "blocked":
            return None if t.blocked() == yes(args[0]) else f"blocked is {t.blocked()}"
        if what == "valid":
            valid = t.state.last_roll_valid
            return None if valid == yes(args[0]) else f"last roll valid is {valid}"
        if what == "phase":
            return None if t.phase.value == args[0] else f"phase is {t.phase.value}"
        if what == "bet":
            bet = t.state.bets.get(self.bet_ref(args[0]))
            if args[1] == "none":
                return None if bet is None else f"{args[0]} is on the layout ({bet.amount})"
            if bet is None:
                return f"{args[0]} is not on the layout"
            return None if bet.amount == parse_money(args[1]) \
                else f"{args[0]} is {format_cents(bet.amount)}"
        if what == "house":
            want = parse_money(args[0])
            return None if t.state.house == want else f"house is {format_cents(t.state.house)}"
        if what == "conserved":
            return None if t.state.conserved() else "money is not conserved"
        raise ScriptSyntaxError(f"unknown expectation {what!r}", rule="script.syntax")


def _int(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise ScriptSyntaxError(f"{what} is a number, not {text!r}", rule="script.syntax")
    return int(text)


def _roll(text: str) -> Roll | None:
    return None if text == "-" else Roll.parse(text)


VERBS = (*sorted((*CATALOGUE.by_verb, *custody_steps.CUSTODY_VERBS)), "settle")
"""Script verbs: the command catalogue's, the custody steps (version 2), and ``settle``
(the chores left, in order)."""



def play(text: str, base_dir: Path | str, runs: script_runs.Runs) -> ScriptResult:
    """Read a script, giving each of its commands to ``runs``; stop at the first unmet
    expectation or unexpected refusal (``application.scripts.run_script`` is the entry).

    A line that cannot be read raises ``ScriptSyntaxError`` naming its line number.
    """
    runner = _Runner(Path(base_dir), runs)
    lines = text.splitlines()
    started = False
    result: ScriptResult | None = None
    for number, line in enumerate(lines, start=1):
        try:
            words = _words(line)
            if not words:
                continue
            if not started:
                runner.ext.version = _version(words)
                started = True
                continue
            if runner.table is None and (words[0] in HEADER or words[0] in v2.HEADER):
                h = runner.header
                part: object = words[0]
                if words[0] == "staff":
                    part = ("staff", len(h["staff"]))
                elif words[0] in ("seat", "player"):
                    part = ("player", len(h["players"]))
                runner.header_line(words)
                runner.note(part, number, line)
                continue
            table = runner.table if runner.custody_only else \
                runner.table or runner.open_table()
            result = result or ScriptResult(table, aliases=runner.aliases,
                                            custody=runner.ext.custody)
            failure = _run_line(runner, table, number, line, words)
        except (ScriptSyntaxError, v2.V2SyntaxError) as e:
            raise ScriptSyntaxError(f"line {number}: {e.message}", rule=e.rule) from None
        except DicetableError as e:  # the header could not open the table: name its line
            where, text = runner.opening or (number, line)
            return ScriptResult(runner.table, ScriptFailure(
                where, text, e.message, type(e).__name__, e.rule, e.citation))
        if failure is not None:
            result.failure = failure
            return result
    if not started:
        raise ScriptSyntaxError(_STARTS, rule="script.syntax")
    if result is None:
        result = ScriptResult(None if runner.custody_only else
                              runner.table or runner.open_table(), aliases=runner.aliases,
                              custody=runner.ext.custody)
    return result


_STARTS = "a script starts with 'dicetable-script N', N one of " + \
    ", ".join(map(str, v2.VERSIONS))


def _version(words: list[str]) -> int:
    if len(words) != 2 or words[0] != "dicetable-script" or \
            words[1] not in {str(v) for v in v2.VERSIONS}:
        raise ScriptSyntaxError(_STARTS, rule="script.syntax")
    return int(words[1])


def _run_line(runner: _Runner, table: Table | None, number: int, line: str,
              words: list[str]) -> ScriptFailure | None:
    if table is None and words[0] != "advance" and not (
            len(words) >= 3 and words[2] in custody_steps.CUSTODY_VERBS):
        raise ScriptSyntaxError("a script of custody alone (no 'pack' line) holds custody "
                                "steps and 'advance' lines only", rule="script.syntax")
    if words[0] == "expect":
        if len(words) < 2:
            raise ScriptSyntaxError("expect what?", rule="script.syntax")
        try:
            problem = runner.expect(words[1:])
        except IndexError:
            raise ScriptSyntaxError("expect is missing a value", rule="script.syntax") \
                from None
        except ValueError as e:  # a number that is not one (int() of 'x', of 5,000 digits)
            if isinstance(e, DicetableError):
                raise
            raise ScriptSyntaxError(f"cannot read expect {' '.join(words[1:])}",
                                    rule="script.syntax") from None
        return None if problem is None else ScriptFailure(number, line,
                                                          f"expectation not met: {problem}")
    if words[0] == "advance":
        if len(words) != 2:
            raise ScriptSyntaxError("advance DURATION (e.g. advance 25h)", rule="script.syntax")
        runner.clock.set(runner.clock.now() + _duration(words[1]))
        return None
    refusal: list[str] | None = None
    if "!" in words:
        at = words.index("!")
        words, refusal = words[:at], words[at + 1:]
    try:
        if len(words) >= 3 and words[2] == "settle":
            assert table is not None
            actor, role = words[0], v2.parse_role(words[1])
            runner.runs.table(table, (actor, role),
                              lambda: table.settle_steps(actor=actor, role=role))
            alias = None
        elif len(words) >= 3 and words[2] in custody_steps.CUSTODY_VERBS:
            runner.runs.custody(*custody_steps.custody_step(runner, words))
        else:
            assert table is not None
            command, alias = runner.command(words)
            caller = (words[0], v2.parse_role(words[1]))
            events = runner.runs.table(table, caller, command)
            placed = [e for e in events if isinstance(e, gev.BetPlaced)]
            if alias and placed:
                runner.aliases[alias] = placed[-1].bet
            if isinstance(command, tcmd.RemoveLid) and runner.ext.version == 1:
                # version 1 re-covered the shaker implicitly; version 2 writes 're-cover'
                runner.runs.table(table, caller, tcmd.RecoverShaker(actor=command.actor,
                                                                    role=command.role))
    except (ScriptSyntaxError, v2.V2SyntaxError):
        raise
    except DicetableError as e:
        if refusal is None:
            return ScriptFailure(number, line, e.message, type(e).__name__, e.rule, e.citation)
        wanted = [w for w in refusal if w[:1].isupper()]
        rules = [w for w in refusal if not w[:1].isupper()]
        if wanted and type(e).__name__ not in wanted:
            return ScriptFailure(number, line, f"refused with {type(e).__name__} "
                                               f"({e.message}), expected {wanted[0]}",
                                 type(e).__name__, e.rule, e.citation)
        if rules and e.rule not in rules:
            return ScriptFailure(number, line, f"refused under rule {e.rule}, expected "
                                               f"{rules[0]}", type(e).__name__, e.rule,
                                 e.citation)
        return None
    if refusal is not None:
        return ScriptFailure(number, line, "expected a refusal, but the command was accepted")
    return None


# -- output ----------------------------------------------------------------------------------
_ENVELOPE = {"table", "seq", "actor", "role", "at", "rule"}


_MONEY = {"amount", "win", "returned", "commission", "stake_returned", "commission_returned",
          "rounding", "balance"}
"""Fields in cents: the transcript shows them in dollars, as it shows the balances."""


def _show(value: Any, key: str = "") -> str:
    if key in _MONEY and isinstance(value, int) and not isinstance(value, bool):
        return format_cents(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, Roll):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return "(" + " ".join(f"{k}={_show(v, k)}" for k, v in fields.items()
                              if v not in (0, "", None, ())) + ")"
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    return str(value)


def describe(event: gev.Event) -> str:
    """One line for an event: sequence, kind, who, then its own fields."""
    fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)
              if f.name not in _ENVELOPE}
    if isinstance(event, gev.TableOpened):
        fields = {"game": event.game, "pack": event.pack.get("id"), "mode": event.mode,
                  "digest": event.pack_digest[:12]}
    body = " ".join(f"{k}={_show(v, k)}" for k, v in fields.items()
                    if v not in (None, (), "") and not (k in _MONEY and v == 0))
    return f"{event.seq:>5}  {event.kind:<20} {event.actor}/{event.role.value}  {body}".rstrip()


def transcript(table: Table, custody: CustodyLedger | None = None, *,
               citations: bool = False) -> str:
    """The log, one line per event (with ``citations``, each followed by its rule's citation),
    then the balances (and the custody log, when the script kept one)."""
    lines = []
    for e in table.log:
        lines.append(describe(e))
        if citations:
            lines.append(f"{'':7}\u00a7 {e.rule or '(no citation)'}")
    lines.append("balances: " + ", ".join(f"{p} {format_cents(b)}"
                                          for p, b in table.balances.items()))
    if custody is not None:
        lines.append(f"custody of site {custody.state.site}:")
        lines += [f"{e.seq:>5}  {e.kind:<28} {e.actor}/{e.role.value}  {custody_describe(e)}"
                  for e in custody.log]
    return "\n".join(lines)

