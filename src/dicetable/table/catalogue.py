"""The procedure's commands in the one command catalogue (``dicetable.games.catalogue``).

Importing ``dicetable.table`` adds these entries; ``CATALOGUE`` then holds every command of a
live or electronic table. The permission matrix (``authority``), the procedure's handlers,
the script verbs, the server's routes and ``Table.do`` read it.

>>> sorted(e.name for e in CATALOGUE if e.authority == "authority.shaker")
['offer-shaker', 'pass-shaker', 'shake', 'uncover']
"""

from __future__ import annotations

from typing import Any

from dicetable.games.catalogue import (
    CATALOGUE,
    Entry,
    Field,
    Method,
    Route,
    ScriptContext,
    declare,
    declare_by_name,
)
from dicetable.table import commands as tcmd
from dicetable.table import events as tev
from dicetable.table.script_v2 import parse_role

__all__ = ["CATALOGUE", "PROCEDURE_ENTRIES", "Entry"]


def _staff(x: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    return {"person": a[0], "staff_role": parse_role(a[1])}


def _format_staff(x: ScriptContext | None, c: Any) -> list[str]:
    return [c.person, c.staff_role.value]


def _offer(x: ScriptContext | None, a: list[str], o: dict[str, str]) -> dict[str, Any]:
    serials = tuple(a[1:]) if len(a) > 1 else (x.bowl() if x is not None else ())
    return {"patron": a[0], "serials": serials}


def _opt(name: str, value: str | None, default: str | None = None) -> list[str]:
    return [f"{name}={value}"] if value is not None and value != default else []


_STAFF = (Field("person", max_length=64), Field("staff_role", json="role"))
_SERIALS = Field("serials", min_length=1, max_length=12)

PROCEDURE_ENTRIES: tuple[Entry, ...] = (
    declare(tcmd.AssignStaff, "assign-staff", "authority.staff",
            "Assign a person to a staff role at this table.", verb="assign", parse=_staff,
            format=_format_staff, route=Route("staff", ("assign-staff",), body=_STAFF),
            method=Method("assign", ("person", "staff_role")), tags=("dealer",),
            records=tev.StaffAssigned),
    declare(tcmd.RelieveStaff, "relieve-staff", "authority.staff",
            "Relieve a person of a staff role at this table.", verb="relieve", parse=_staff,
            format=_format_staff, route=Route("staff/relieve", ("relieve-staff",), body=_STAFF),
            method=Method("relieve", ("person", "staff_role")), tags=("dealer",),
            records=tev.StaffRelieved),
    declare(tcmd.BringDice, "bring-dice", "authority.dice",
            "Bring dice to the table by serial (Props & Hops: load the shaker, with the "
            "dealer as witness).", verb="bring-dice",
            parse=lambda x, a, o: {"serials": tuple(a), "witness": o.get("witness")},
            format=lambda x, c: [*c.serials, *_opt("witness", c.witness)],
            route=Route("dice", ("bring-dice",), body=(
                _SERIALS, Field("witness", max_length=64))),
            method=Method("bring_dice", varargs="serials",
                          defaults=(("witness", "shaker-dealer"),)), tags=("dealer",),
            records=tev.DiceBrought),
    declare(tcmd.RemoveDice, "remove-dice", "authority.dice",
            "Take dice from the table, with the reason.", verb="remove-dice",
            parse=lambda x, a, o: {"serials": tuple(a), "reason": o.get("reason", "replaced")},
            format=lambda x, c: [*c.serials, *_opt("reason", c.reason, "replaced")],
            route=Route("dice/remove", ("remove-dice",), body=(
                _SERIALS, Field("reason", max_length=100))),
            method=Method("remove_dice", varargs="serials"), tags=("dealer",),
            records=tev.DiceTakenFromTable),
    declare(tcmd.OfferDice, "offer-dice", "authority.offer_dice",
            "Offer the dice to the patron next in turn (by default, the whole bowl).",
            verb="offer-dice", parse=_offer, format=lambda x, c: [c.patron, *c.serials],
            route=Route("offer-dice", ("offer-dice",), body=(
                Field("patron", max_length=64),
                Field("serials", max_length=12, optional=True,
                      description="left out or null: the whole bowl"))),
            method=Method("offer_dice", ("patron", "serials")),
            tags=("dealer",), records=tev.DiceOffered),
    declare(tcmd.DeclineDice, "decline-dice", "authority.select_dice",
            "The patron offered the dice declines them.", verb="decline",
            route="decline-dice", method=Method("decline_dice"), tags=("players",),
            records=tev.DiceDeclined),
    declare(tcmd.SelectDice, "select-dice", "authority.select_dice",
            "The new shooter selects two of the dice offered.", verb="select-dice",
            parse=lambda x, a, o: {"serials": tuple(a)}, format=lambda x, c: list(c.serials),
            route=Route("select-dice", ("select-dice",), body=(_SERIALS,)),
            method=Method("select_dice", varargs="serials",
                          defaults=(("serials", "offered-pair"),)), tags=("players",)),
    declare(tcmd.RelinquishDice, "relinquish-dice", "authority.select_dice",
            "The shooter gives up the dice.", verb="relinquish", route="relinquish-dice",
            method=Method("relinquish_dice"), tags=("players",)),
    declare(tcmd.RemoveShooter, "remove-shooter", "authority.remove_shooter",
            "Take the dice from the shooter, on a listed ground.",
            verb="remove-shooter", parse=lambda x, a, o: {"ground": a[0]},
            format=lambda x, c: [c.ground],
            route=Route("remove-shooter", ("remove-shooter",), body=(
                Field("ground", max_length=64),)),
            method=Method("remove_shooter", ("ground",)), tags=("dealer",)),
    declare(tcmd.OverturnNoRoll, "overturn", "authority.overturn_no_roll",
            "Overturn the declaration on the last roll.", verb="overturn",
            parse=lambda x, a, o: {"reason": " ".join(a)},
            format=lambda x, c: [c.reason] if c.reason else [],
            route=Route("overturn", ("overturn",), body=(Field("reason", max_length=200),)),
            method=Method("overturn", ("reason",)), tags=("dealer",), records=tev.NoRollOverturned),
    declare_by_name(tcmd.ShakeShaker, "shake", "authority.shaker",
                    "The dealer shakes the covered shaker.", tags=("dealer",),
                    records=tev.ShakerShaken),
    declare(tcmd.OfferShaker, "offer-shaker", "authority.shaker",
            "Offer the covered shaker to the player whose turn it is.", verb="offer-shaker",
            parse=lambda x, a, o: {"player": a[0]}, format=lambda x, c: [c.player],
            route=Route("offer-shaker", ("offer-shaker",), body=(
                Field("player", max_length=64),)),
            method=Method("offer_shaker", ("player",)), tags=("dealer",),
            records=tev.ShakerOffered),
    declare(tcmd.PlayerShake, "player-shake", "authority.shake",
            "The player shakes the covered shaker (count the shakes).", verb="player-shake",
            parse=lambda x, a, o: {"times": int(a[0]) if a else 1},
            format=lambda x, c: [str(c.times)],
            route=Route("player-shake", ("player-shake",), body=(
                Field("times", ge=1, le=100, default=(3,)),)),
            method=Method("player_shake", ("times",)), tags=("players",),
            records=tev.ShakerShakenByPlayer),
    declare_by_name(tcmd.RemoveLid, "remove-lid", "authority.shake",
                    "The player takes the lid off the shaker (a violation).",
                    tags=("players",), records=tev.ShakerLidRemoved),
    declare(tcmd.RecoverShaker, "re-cover-shaker", "authority.shake",
            "The player who took the lid off puts it back; the shaker is shaken again before "
            "it is returned (58 Pa. Code 585.3(e)).", verb="re-cover",
            route="re-cover-shaker", method=Method("re_cover_shaker"), tags=("players",),
            since=2, records=tev.ShakerRecovered),
    declare_by_name(tcmd.ReturnShaker, "return-shaker", "authority.shake",
                    "The player returns the covered shaker to the dealer.",
                    tags=("players",), records=tev.ShakerReturned),
    declare_by_name(tcmd.UncoverShaker, "uncover", "authority.shaker",
                    "The dealer uncovers the shaker in the designated circle.",
                    tags=("dealer",), records=tev.ShakerUncovered),
    declare_by_name(tcmd.PassShaker, "pass-shaker", "authority.shaker",
                    "Props & Hops: after a round ending on the passing total "
                    "(shaker.passes_on), the shaker goes to the next player to the left.",
                    automatable=True, tags=("dealer",), since=3, records=tev.ShakerPassed),
    declare(tcmd.Tick, "tick", None,
            "The table's clock ticks: raise what time has made due.", verb="tick",
            method=Method("tick"), records=tev.AlertRaised),
)
