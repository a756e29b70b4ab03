"""``dicetable serve``: run a floor of live tables (the main job)."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer


def serve(db: str = typer.Option("dicetable.db", "--db",
                                 help="A SQLite file (default) or a postgresql:// URL"),
          host: str = typer.Option("127.0.0.1", help="Address to listen on"),
          port: int = typer.Option(8000, help="Port"),
          workers: int = typer.Option(1, help="Server processes (needs PostgreSQL when > 1)"),
          bet_seconds: int = typer.Option(20, help="Electronic tables: the betting countdown"),
          key: str | None = typer.Option(None, "--key", help="The chain key file (default: "
                                         "DICETABLE_KEY, DICETABLE_KEY_FILE, DB.key; a new "
                                         "SQLite store gets DB.key created)"),
          checkpoints: str | None = typer.Option(
              None, "--checkpoints", help="Append signed checkpoints of every stream's head "
                                          "here, and check the store against them: one at "
                                          "start-up and one after every verification "
                                          "(--verify-every) that finds no new fault. Events "
                                          "dropped from a log's end are found offline only "
                                          "once a checkpoint covers them"),
          verify_every: float = typer.Option(60.0, "--verify-every",
                                             help="Seconds between full verifications, which "
                                                  "are also the checkpoint cadence (0: at "
                                                  "start-up only)"),
          certfile: str | None = typer.Option(None, "--certfile", help="TLS certificate "
                                              "(PEM): serve HTTPS"),
          keyfile: str | None = typer.Option(None, "--keyfile", help="TLS private key (PEM)"),
          shed_wait_ms: float | None = typer.Option(
              None, "--shed-wait-ms", min=0.001, help="Refuse a command (503) that would wait "
              "longer than this behind those already in the server (default 40)"),
          shed_strangers: int | None = typer.Option(
              None, "--shed-strangers", min=1, help="Commands whose session this server does "
              "not remember yet (just started, a login elsewhere) that may be in flight at "
              "once; more are refused (503) as they are read (default 64)"),
          shed_hold_ms: float | None = typer.Option(
              None, "--shed-hold-ms", min=0.001, help="A client refused for load that sends "
              "again sooner gets its next 503 this long after its last (default: none, every "
              "refusal answered at once)"),
          shed_resend_hold_ms: float | None = typer.Option(
              None, "--shed-resend-hold-ms", min=0.001, help="A connection refused for load "
              "that sends again sooner gets its next 503 this long after its last (default "
              "20): a client spinning on its refusals takes that little of the server"),
          header_timeout: float | None = typer.Option(
              None, "--header-timeout", min=0.001, help="Seconds a request's headers may "
              "take to arrive; later, 408 and the connection closed (default 10)"),
          body_timeout: float | None = typer.Option(
              None, "--body-timeout", min=0.001, help="Seconds a request's body may take "
              "to arrive after its headers; later, 408 and the connection closed (default "
              "10). A command counts against the server's capacity only once its body is "
              "whole"),
          max_connections: int | None = typer.Option(
              None, "--max-connections", min=1, help="Connections open at once; more are "
              "refused (503) as they are accepted (default 4096)"),
          max_connections_per_client: int | None = typer.Option(
              None, "--max-connections-per-client", min=1, help="Connections open at once "
              "from one address (a named proxy: only the total); more are refused (503) as "
              "they are accepted (default 256)"),
          forwarded_allow_ips: str = typer.Option(
              "", "--forwarded-allow-ips", help="Comma-separated addresses of the proxies "
              "whose X-Forwarded-For / X-Forwarded-Proto are honoured (the client address "
              "used for the failed-login limit); default none: those headers are ignored"),
          schema: str = typer.Option("dicetable", "--schema", help="PostgreSQL: the schema "
                                     "that holds the floor"),
          upgrade: str = typer.Option(
              os.environ.get("DICETABLE_UPGRADE", "auto"), "--upgrade",
              help="A store at an older layout: auto - upgrade it first (each migration once, "
              "recorded; env DICETABLE_UPGRADE); refuse - do not serve it"),
          cpu: str | None = typer.Option(
              None, "--cpu", help="The CPU each server process keeps its threads on: auto "
              "(default; the first one no other dicetable server here has claimed), a CPU's "
              "number, or none (env DICETABLE_CPU). One process's threads share one "
              "interpreter lock, and spread over cores each bet cost a fifth more"),
          log_format: str = typer.Option(
              "text", "--log-format", help="text: warnings and errors; json: one JSON line "
              "per record, and one per request (method, path, status, ms, table, command "
              "kind, Idempotency-Key, a refusal's rule)"),
          ) -> None:
    """Serve the floor; an empty store gets the demo floor (credentials printed)."""
    from dicetable.core.errors import DicetableError
    from dicetable.server.observe import LOG_ENV, configure_logging

    try:
        configure_logging(log_format)
    except DicetableError as e:
        typer.echo(f"dicetable: {e}", err=True)
        raise typer.Exit(2) from None
    os.environ[LOG_ENV] = log_format  # the worker processes read it
    typer.echo(f"dicetable: opening {db} ...")
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from dicetable.server.app import create_app
    from dicetable.server.cpu_pin import AUTO, CPU_ENV, checked, pin_from_env
    from dicetable.server.demo import DEMO_PASSWORD
    from dicetable.server.door import Proxies
    from dicetable.server.main import (
        admission_from_env,
        build_floor,
        connections_from_env,
        impatience_from_env,
    )

    for name, value in (("DICETABLE_SHED_WAIT_MS", shed_wait_ms),
                        ("DICETABLE_SHED_STRANGERS", shed_strangers),
                        ("DICETABLE_SHED_HOLD_MS", shed_hold_ms),
                        ("DICETABLE_SHED_RESEND_HOLD_MS", shed_resend_hold_ms),
                        ("DICETABLE_HEADER_TIMEOUT", header_timeout),
                        ("DICETABLE_BODY_TIMEOUT", body_timeout),
                        ("DICETABLE_MAX_CONNECTIONS", max_connections),
                        ("DICETABLE_MAX_CONNECTIONS_PER_CLIENT", max_connections_per_client)):
        if value is not None:  # the worker processes read them too
            os.environ[name] = repr(value)
    try:  # the choice checked before the store is opened
        os.environ[CPU_ENV] = checked(cpu or os.environ.get(CPU_ENV, AUTO))
    except DicetableError as e:
        typer.echo(f"dicetable: {e}", err=True)
        raise typer.Exit(2) from None
    proxies = named_proxies(forwarded_allow_ips)
    os.environ["DICETABLE_FORWARDED_ALLOW_IPS"] = proxies  # the worker processes read it
    forwarded = proxy_options()

    postgres = db.startswith(("postgresql://", "postgres://"))
    if workers > 1 and not postgres:
        typer.echo("several workers share one PostgreSQL store; use --db postgresql://...",
                   err=True)
        raise typer.Exit(2)
    if (certfile is None) != (keyfile is None):
        typer.echo("--certfile and --keyfile go together", err=True)
        raise typer.Exit(2)
    from dicetable.store.keys import find_key
    from dicetable.store.schema_version import upgrade_on_start
    from dicetable.store.serving import hold_serving

    try:
        for step in upgrade_on_start(db, find_key(key, db), schema=schema, mode=upgrade):
            typer.echo(f"dicetable: migrated {db} {step.version_from} -> {step.version_to} "
                       f"({step.name}), recorded")
        # Held (shared) while this process serves: a restore is refused meanwhile.
        serving = hold_serving(db, schema)
        floor, credentials = build_floor(db, bet_seconds=bet_seconds, key_file=key,
                                         schema=schema,
                                         checkpoints=checkpoints, progress=_progress)
        if credentials:  # a store made just now: brought to this layout before it is served
            floor.close()
            floor.store.close()
            floor.accounts.close()
            serving.release()
            upgrade_on_start(db, find_key(key, db), schema=schema)
            serving = hold_serving(db, schema)
            floor, _ = build_floor(db, bet_seconds=bet_seconds, key_file=key, schema=schema,
                                   checkpoints=checkpoints)
    except DicetableError as e:
        typer.echo(f"dicetable: {e}", err=True)
        raise typer.Exit(2) from None
    _progress(None)
    url = f"{'https' if certfile else 'http'}://{host}:{port}/"
    for fault in floor.faults.open.values():
        typer.echo(f"FAULT: {fault['table']} is locked ({fault['what']}: {fault['detail']})",
                   err=True)
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
        os.environ["DICETABLE_SCHEMA"] = schema
        if key:
            os.environ["DICETABLE_KEY_FILE"] = key
        if checkpoints:
            os.environ["DICETABLE_CHECKPOINTS"] = checkpoints
        os.environ["DICETABLE_VERIFY_EVERY"] = str(verify_every)
        uvicorn.run("dicetable.server.main:app_from_env", factory=True, host=host, port=port,
                    workers=workers, log_level="warning", ssl_certfile=certfile,
                    log_config=None if log_format == "json" else LOGGING_CONFIG,
                    ssl_keyfile=keyfile, http=HTTP_PROTOCOL, **forwarded)
        serving.release()
        return
    kept_to = pin_from_env()  # checked above
    typer.echo(f"dicetable: on CPU {kept_to}" if kept_to is not None
               else "dicetable: not kept to one CPU")
    clock = float(os.environ.get("DICETABLE_CLOCK_SECONDS", "60"))
    uvicorn.run(create_app(floor, clock_seconds=clock or None, verify_seconds=verify_every,
                           admission=admission_from_env(),
                           impatience=impatience_from_env(),
                           connections=connections_from_env(),
                           proxies=Proxies(proxies)),
                host=host, port=port, log_level="warning", ssl_certfile=certfile,
                log_config=None if log_format == "json" else LOGGING_CONFIG,
                ssl_keyfile=keyfile, http=HTTP_PROTOCOL, **forwarded)
    serving.release()


def named_proxies(forwarded_allow_ips: str) -> str:
    """``--forwarded-allow-ips`` as a clean comma-separated list (empty: none named)."""
    return ",".join(p.strip() for p in forwarded_allow_ips.split(",") if p.strip())


def proxy_options() -> dict[str, Any]:
    """uvicorn's settings for proxy headers: off, always. The app's own door honours
    X-Forwarded-For/-Proto from the proxies named, and only from them (``security.Proxies``);
    uvicorn's own default would trust loopback."""
    return {"proxy_headers": False}


HTTP_PROTOCOL = "dicetable.server.refusing_http:RefusingHttp"
"""uvicorn's HTTP protocol, refusing the excess as it is read (``server.refusing_http``)."""


def _progress(step: str | None) -> None:
    """One line, rewritten in place on a terminal, while a fresh store is prepared."""
    tty = sys.stderr.isatty()
    if step is None:
        if tty:
            sys.stderr.write("\r\033[K")
        return
    sys.stderr.write(f"\r\033[K{step} ..." if tty else f"{step} ...\n")
    sys.stderr.flush()
