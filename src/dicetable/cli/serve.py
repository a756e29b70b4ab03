"""``dicetable serve``: run a floor of live tables (the main job)."""

from __future__ import annotations

import os

import typer

from dicetable.server.demo import DEMO_PASSWORD


def serve(db: str = typer.Option("dicetable.db", "--db",
                                 help="A SQLite file (default) or a postgresql:// URL"),
          host: str = typer.Option("127.0.0.1", help="Address to listen on"),
          port: int = typer.Option(8000, help="Port"),
          workers: int = typer.Option(1, help="Server processes (needs PostgreSQL when > 1)"),
          bet_seconds: int = typer.Option(20, help="Electronic tables: the betting countdown"),
          ) -> None:
    """Serve the floor; an empty store gets the demo floor (credentials printed)."""
    import uvicorn

    from dicetable.server.app import create_app
    from dicetable.server.main import build_floor

    postgres = db.startswith(("postgresql://", "postgres://"))
    if workers > 1 and not postgres:
        typer.echo("several workers share one PostgreSQL store; use --db postgresql://...",
                   err=True)
        raise typer.Exit(2)
    floor, credentials = build_floor(db, bet_seconds=bet_seconds)
    url = f"http://{host}:{port}/"
    typer.echo(f"dicetable: {len(floor.tables)} tables on {db}")
    if credentials:
        typer.echo(f"demo floor created; every demo account's password is {DEMO_PASSWORD!r}")
        typer.echo("  staff:   fran (floorperson), pat (pit boss), sam (stickperson), "
                   "bo (boxperson), dee (dealer)")
        typer.echo("  dice room: ann (shift manager), sid (security), val (surveillance), pat; "
                   "open /dice-room")
        typer.echo("  players: alice, bob, carol, dan")
    typer.echo(f"open {url}")
    if workers > 1:
        floor.close()
        floor.store.close()
        os.environ["DICETABLE_DB"] = db
        os.environ["DICETABLE_BET_SECONDS"] = str(bet_seconds)
        os.environ["DICETABLE_WORKERS"] = str(workers)  # the processes split the tables
        uvicorn.run("dicetable.server.main:app_from_env", factory=True, host=host, port=port,
                    workers=workers, log_level="warning")
        return
    clock = float(os.environ.get("DICETABLE_CLOCK_SECONDS", "60"))
    uvicorn.run(create_app(floor, clock_seconds=clock or None), host=host, port=port,
                log_level="warning")
