"""The people around a dice table (spec/regulations.md §6)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Who gives a command. Every command and event carries one."""

    PLAYER = "player"
    """A patron at the table (the shooter is a player)."""
    DEALER = "dealer"
    """Base dealer at Craps; the sole dealer at Mini-Craps and Props & Hops."""
    STICKPERSON = "stickperson"
    """Controls the dice and calls the rolls at Craps and Mini-Craps."""
    BOXPERSON = "boxperson"
    """Supervises a Craps table from the box, in front of the bank."""
    FLOORPERSON = "floorperson"
    """Supervises one or more tables; at Mini-Craps also does the box-level checks."""
    PIT_BOSS = "pit-boss"
    """Pit boss or pit manager (IN 14-3-4, 14-3-7); supervisor of the floorpersons."""
    ASSISTANT_SHIFT_MANAGER = "assistant-shift-manager"
    """Assistant table games shift manager: the lowest rank PA 603a.13 lets handle stored dice."""
    SHIFT_MANAGER = "shift-manager"
    """Table games shift manager (above the assistant; PA 603a.13 "or above")."""
    TABLE_GAMES_MANAGER = "table-games-manager"
    """Table games manager or director: the top of table games' ranks."""
    SECURITY = "security"
    """Security department employee (PA 603a.13)."""
    SURVEILLANCE = "surveillance"
    """Surveillance department employee (IN 14-3-4(c)(4))."""
    PIT_CLERK = "pit-clerk"
    """Prepares Fill Request Slips (PA 465a.38(a)); may not sign them."""
    CHIP_BANK_CASHIER = "chip-bank-cashier"
    """The cage's chip bank: prepares Fill and Credit Slips, redeems chips for cash."""
    COUNT_TEAM = "count-team"
    """Drop and count team member: collects drop boxes and counts their contents."""
    REVENUE_AUDITOR = "revenue-auditor"
    """Accounting: reviews slips, counts and table win; moves no chips and no cash."""
    SYSTEM = "system"
    """The electronic table's own automation (no person)."""
