"""DESIGN.md, one declaration per concept: the command catalogue and the game variants."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from dicetable.games import commands as gcmd
from dicetable.games.catalogue import variants
from dicetable.table import commands as tcmd
from dicetable.table.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import check_game_names as names  # type: ignore[import-not-found]  # noqa: E402
import check_one_declaration as check  # type: ignore[import-not-found]  # noqa: E402

GAMES = frozenset({"craps", "mini-craps", "props-and-hops", "crapless-craps"})


def _commands() -> set[type[gcmd.Command]]:
    out: set[type[gcmd.Command]] = set()
    for module in (gcmd, tcmd):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, gcmd.Command) \
                    and value is not gcmd.Command and value not in gcmd.FIELD_GROUPS:
                out.add(value)
    return out


def test_the_check_knows_the_field_groups() -> None:
    """The AST check skips the same bases the modules declare as field groups."""
    from dicetable.custody import commands as ccmd

    assert {g.__name__ for g in gcmd.FIELD_GROUPS} == check.COMMAND_GROUPS
    assert {g.__name__ for g in ccmd.FIELD_GROUPS} == check.CUSTODY_GROUPS


def test_every_command_is_declared_once_in_the_catalogue() -> None:
    assert _commands() == set(CATALOGUE.by_command)
    verbs = [v.verb for v in CATALOGUE.by_verb.values()]
    assert len(verbs) == len(set(verbs))


def test_every_script_verb_formats_what_it_parses() -> None:
    """python-chess style: each verb's formatter writes what its parser reads back."""
    from dicetable.core.roles import Role
    from dicetable.table.script_export import script_line

    samples = {"bet": ["pass", "10", "on", "with=plaques"], "odds": ["b1", "30"],
               "roll": ["3-4", "die-on-chips", "distance=1/3", "thrower=ann",
                        "serials=A1,A2"], "no-roll": ["dice-in-cup", "observed=die-on-rail"],
               "join": ["ann", "3"], "buy": ["ann", "12.50"], "change": ["b1", "15"],
               "working": ["b2", "off"], "assign": ["sam", "stickperson"],
               "bring-dice": ["P1", "P2", "witness=dee"], "offer-dice": ["ann", "A1", "A2"],
               "remove-dice": ["A1", "reason=damaged"], "player-shake": ["3"]}
    for verb, spec in CATALOGUE.by_verb.items():
        if spec.claims is not None and verb in ("on", "off"):
            continue  # read-only spellings of 'working'
        args = samples.get(verb, [])
        if spec.entry.fields and verb not in samples:
            args = {"leave": ["ann"], "cashout": ["ann", "5"], "remove": ["b1"],
                    "relieve": ["sam", "dealer"], "select-dice": ["A1", "A2"],
                    "remove-shooter": ["violation"], "overturn": ["misread"],
                    "offer-shaker": ["amy"]}.get(verb, [])
        plain = [a for a in args if "=" not in a]
        opts = dict(a.split("=", 1) for a in args if "=" in a)
        command = spec.parse_words(None, "ann", Role.PLAYER, plain, opts)
        line = script_line(command).split()
        assert line[2] == verb, (verb, line)
        again = spec.parse_words(None, "ann", Role.PLAYER,
                                 [w for w in line[3:] if "=" not in w],
                                 dict(w.split("=", 1) for w in line[3:] if "=" in w))
        assert again == command, verb


def test_an_event_that_records_a_command_carries_its_fields_by_name() -> None:
    """``Entry.records``: the script export writes such an event back as its command from
    the event's fields of the same names, so each field the command must be given is one of
    the event's, of the same type; and no event records two commands."""
    import dataclasses

    from dicetable.core.events import type_hints

    recorded = [e for e in CATALOGUE if e.records is not None]
    assert len(recorded) >= 30
    assert len({e.records for e in recorded}) == len(recorded)
    for entry in recorded:
        assert entry.records is not None
        event = type_hints(entry.records)
        hints = type_hints(entry.command)
        for f in dataclasses.fields(entry.command):
            if f.name in ("actor", "role"):
                continue
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                assert f.name in event, (entry.name, f.name)
            if f.name in event:
                assert event[f.name] == hints[f.name], (entry.name, f.name)


def test_each_game_is_a_variant_with_its_own_module() -> None:
    names = {v.name for v in variants()}
    assert names == {"craps", "mini-craps", "props-and-hops", "crapless-craps"}
    for v in variants():
        assert type(v).__module__ in ("dicetable.games.craps", "dicetable.games.props_hops",
                                      "dicetable.games.crapless")


def test_the_check_finds_a_game_name_compared_and_a_command_declared_elsewhere() -> None:
    bad = ast.parse('if state.game == "props-and-hops":\n    pass\n'
                    'x = {"craps": 1}\n'
                    'class Sneaky(Command):\n    pass\n'
                    'T = {cmd.A: 1, cmd.B: 2, cmd.C: 3}\n')
    assert names.game_comparisons(bad, GAMES) == [1, 3]
    assert check.command_declarations(bad) == [(4, "Sneaky")]
    assert check.command_tables(bad) == [6]


def test_the_check_passes_on_the_source_tree() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "check_one_declaration.py")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_the_check_finds_a_hand_written_route_for_a_catalogued_command() -> None:
    commands = check.command_names(ROOT / "src" / "dicetable")
    assert {"PlaceBet", "RecordRoll", "PassShaker", "ReturnWagers"} <= commands
    bad = ast.parse('@app.post("/api/tables/{table_id}/bets")\n'
                    'async def place(table_id: str, body: BetIn, who: Me) -> dict:\n'
                    '    return await act(table_id, who, g.PlaceBet, lambda a, r: g.PlaceBet(\n'
                    '        actor=a, role=r, player=who.username, wager=body.wager))\n'
                    '@app.get("/api/tables/{table_id}/audit")\n'
                    'def audit(table_id: str) -> dict:\n    return {}\n')
    assert check.hand_written_routes(bad, commands) == [(3, "PlaceBet"), (3, "PlaceBet")]


def test_the_check_finds_a_table_method_building_a_catalogued_command() -> None:
    commands = check.command_names(ROOT / "src" / "dicetable")
    bad = ast.parse("class Table:\n"
                    "    def start(self):\n        self.execute(cmd.OpenTable(actor='f'))\n"
                    "    def roll(self, faces):\n"
                    "        return self.execute(cmd.RecordRoll(actor='s', roll=faces))\n")
    assert check.hand_built_commands(bad, commands) == [(5, "RecordRoll")]


def test_the_table_methods_are_what_the_catalogue_gives() -> None:
    """Every entry that declares a method has it on Table, generated (and CI-checked)."""
    from dicetable.table import Table
    from dicetable.table.command_methods import CommandMethods

    assert check.generated_methods_current() is None
    for entry in CATALOGUE:
        if entry.method is not None:
            assert entry.method.name in vars(CommandMethods), entry.name
            assert entry.method.name not in vars(Table), f"Table.{entry.method.name} by hand"
