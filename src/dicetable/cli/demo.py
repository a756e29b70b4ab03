"""``dicetable demo``: a short scripted session at a PA Craps table, printed as it settles."""

from __future__ import annotations

import typer

from dicetable.cli.output import output
from dicetable.core.dice_sources import SeededDice
from dicetable.core.money import format_cents
from dicetable.games import events as ev
from dicetable.table import Table

console = output()


def describe(event: ev.Event) -> str:
    if isinstance(event, ev.DiceRolled):
        total = f" ({event.roll.total})" if event.roll else ""
        return f"dice: {event.roll}{total}"
    if isinstance(event, ev.LosersCollected):
        return "collected: " + (", ".join(f"{i.player} {i.wager} {format_cents(i.amount)}"
                                          for i in event.items) or "none")
    if isinstance(event, ev.WinnersPaid):
        return "paid: " + (", ".join(f"{i.player} {i.wager} {format_cents(i.win)}"
                                     for i in event.items) or "none")
    if isinstance(event, ev.PuckMoved):
        puck = f"ON {event.point}" if event.point else "OFF"
        return f"puck {puck}" + (" (seven-out)" if event.seven_out else "")
    if isinstance(event, ev.BetPlaced):
        return f"{event.player} bets {format_cents(event.amount)} on {event.wager}"
    return event.kind


def demo(rolls: int = typer.Option(12, min=0, max=100_000, help="How many rolls to play"),
         seed: int = typer.Option(2026, help="Seed for the demo's dice")) -> None:
    """Play a short session at a PA Craps table and print every settlement."""
    table = Table.open("pa-craps", "demo-1")
    dice = SeededDice(seed)
    for name in ("alice", "bob"):
        table.join(name)
        table.buy_in(name, 500_00)
    console.print(f"[bold]{table.pack.name}[/bold] — table {table.id}")
    for _ in range(rolls):
        if table.point is None:
            if not any(b.wager == "pass" for b in table.state.bets_of("alice")):
                table.bet("alice", "pass", 10_00)
            if not any(b.wager == "dontpass" for b in table.state.bets_of("bob")):
                table.bet("bob", "dontpass", 10_00)
        else:
            if not any(b.wager == "place6" for b in table.state.bets_of("bob")):
                table.bet("bob", "place6", 12_00)
        events = table.roll(dice)
        events += table.settle()
        for event in events:
            if isinstance(event, ev.DiceRolled | ev.LosersCollected | ev.WinnersPaid
                          | ev.PuckMoved):
                console.print("  " + describe(event))
    console.print("[bold]balances[/bold]: " + ", ".join(
        f"{p} {format_cents(b)}" for p, b in table.balances.items()))
    console.print(f"money conserved: {table.state.conserved()}")
