"""``dicetable odds PACK``: the exact house edge of every wager of a rule pack (the Typer
command; what it does is ``cli.odds_run``)."""

from __future__ import annotations

from pathlib import Path

import typer

from dicetable.cli import odds_run
from dicetable.cli.tables import WIDE_OPTION_HELP


def odds(pack: str | None = typer.Argument(None, metavar="PACK",
                                           help="A preset name or a house pack JSON file"),
         as_json: bool = typer.Option(False, "--json", help="One JSON object per wager"),
         as_csv: bool = typer.Option(False, "--csv", help="CSV, one row per wager"),
         bets: list[str] = typer.Option([], "--bet", help="A layout instead: CODE[=AMOUNT"
                                        "[xODDS]], repeated; e.g. --bet pass=10x2 --bet "
                                        "place6=12"),
         with_table: bool = typer.Option(False, "--table", help="Layout: follow the puck and "
                                         "the pack's working rules"),
         point: int | None = typer.Option(None, "--point", help="Layout: the point when the "
                                          "bets are made (with --table)"),
         session: Path | None = typer.Option(None, "--session", help="A strategy file instead: "
                                             "its exact session outcomes (risk of ruin, "
                                             "bankroll after N rolls, length)"),
         bankroll: str | None = typer.Option(None, "--bankroll", help="Session: the bankroll "
                                             "(default: the strategy's)"),
         goal: str | None = typer.Option(None, "--goal", help="Session: stop on reaching this "
                                         "bankroll (default: bankroll + the stop-win)"),
         stop_loss: str | None = typer.Option(None, "--stop-loss", help="Session: stop after "
                                              "losing this much (default: the strategy's)"),
         rolls: int | None = typer.Option(None, "--rolls", min=1,
                                          help="Session: N, the rolls whose "
                                          "final bankroll is shown (default: the strategy's "
                                          "max_rolls, or 200)"),
         sessions: int = typer.Option(20_000, "--sessions", max=10**9,
                                      help="Session: simulated sessions "
                                      "for the estimates beside the exact figures"),
         seed: int | None = typer.Option(None, "--seed", min=0,
                                         help="Session: the simulator's seed"),
         wide: bool = typer.Option(False, "--wide", help=WIDE_OPTION_HELP),
         ) -> None:
    """Exact house edge of every wager of PACK (Fractions, by Markov chains).

    Each wager is measured in action (every roll counts); the 'table' columns follow the
    table's puck and the pack's working rules for a standing wager made on the come-out.
    With --bet, the combined edge and variance of that layout instead. With --session, a
    strategy's exact chance of reaching --goal before ruin, its bankroll after a session of
    --rolls N and its expected length, each beside the simulator's estimate and 99% interval.
    """
    code = odds_run.run(pack, as_json=as_json, as_csv=as_csv, bets=bets or None,
                        with_table=with_table, point=point, session=session,
                        bankroll=bankroll, goal=goal, stop_loss=stop_loss, rolls=rolls,
                        sessions=sessions, seed=seed, wide=wide)
    if code:
        raise typer.Exit(code)
