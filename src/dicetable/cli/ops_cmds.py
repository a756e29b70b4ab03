"""``dicetable backup``, ``dicetable restore`` and ``dicetable upgrade``: operating a floor's
store (docs/operators-guide.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dicetable.cli.output import output
from dicetable.cli.refusal import refused_in_red

console = output()
err = output(stderr=True)

DB_HELP = "A SQLite file or a postgresql:// URL"


def backup(db: str = typer.Option(..., "--db", help=DB_HELP),
           to: Path = typer.Option(..., "--to", help="A new (or empty) directory for the "
                                                    "backup"),
           key_file: Path | None = typer.Option(None, "--key", help="The chain key file "
                                                "(default: DICETABLE_KEY, "
                                                "DICETABLE_KEY_FILE, DB.key)"),
           checkpoints: Path | None = typer.Option(
               None, "--checkpoints", envvar="DICETABLE_CHECKPOINTS",
               help="The server's checkpoint file (copied first)"),
           method: str = typer.Option("auto", "--method", help="auto, sqlite, pg_dump or "
                                      "copy (PostgreSQL without pg_dump)"),
           schema: str = typer.Option("dicetable", "--schema")) -> None:
    """Back up a running floor: the store, its key, its checkpoint file and archive files,
    and a signed manifest of their digests. The floor keeps playing."""
    from dicetable.store.backup import backup as run
    from dicetable.store.keys import default_key_path, find_key

    with refused_in_red(err):
        key = _key(find_key(key_file, db))
        source = key_file or _key_source(db, default_key_path(db))
        made = run(db, to, key=key, key_file=source, checkpoints=checkpoints, schema=schema,
                   method=method)
    heads = made.manifest["heads"]
    console.print(f"backup of {made.manifest['source']} written to {to} "
                  f"({made.manifest['method']}; {len(heads)} streams, "
                  f"{sum(h[0] for h in heads.values())} events; checkpoint "
                  f"{made.checkpoint}; manifest sha256 {made.digest[:16]})")


def restore(db: str = typer.Option(..., "--db", help=DB_HELP + " (the server stopped)"),
            source: Path = typer.Option(..., "--from", help="The backup's directory"),
            by: str = typer.Option(..., "--by", help="Who restores (a staff account)"),
            approved_by: str = typer.Option(..., "--approved-by",
                                            help="Who approves (another staff account)"),
            reason: str = typer.Option(..., "--reason", help="Why (recorded)"),
            key_file: Path | None = typer.Option(None, "--key", help="The chain key file "
                                                 "(default: as serve finds it, else the "
                                                 "backup's)"),
            checkpoints: Path | None = typer.Option(
                None, "--checkpoints", envvar="DICETABLE_CHECKPOINTS",
                help="The server's checkpoint file: what it signed after the backup is "
                     "listed as lost, and the restore is appended to it"),
            report: Path | None = typer.Option(None, "--report", help="Where the report of "
                                               "what was lost goes (default beside the "
                                               "replaced store)"),
            passwords_from_stdin: bool = typer.Option(
                False, "--passwords-from-stdin", help="Read the two passwords (--by's, then "
                "--approved-by's) from two lines of standard input instead of prompting"),
            schema: str = typer.Option("dicetable", "--schema")) -> None:
    """Restore a floor from a backup: two people authenticate, everything acknowledged after
    the backup is listed, the replaced store is kept, and the restore is recorded (signed)
    in the store and the checkpoint file. The server verifies every stream when it starts."""
    from dicetable.store.backup import KEY_FILE
    from dicetable.store.keys import find_key, read_key
    from dicetable.store.restore import restore as run

    with refused_in_red(err):
        key = find_key(key_file, db)
        if key is None and (source / KEY_FILE).exists():
            key = read_key(source / KEY_FILE)
        key = _key(key)
        first, second = _passwords(by, approved_by, passwords_from_stdin)
        done = run(db, source, key, by=(by, first), approved_by=(approved_by, second),
                   reason=reason, checkpoints=checkpoints, schema=schema, report=report)
    console.print(f"restored {db} from {source} (backup of {done['backup_at']}, checkpoint "
                  f"{done['backup_checkpoint']}); by {by}, approved by {approved_by}; "
                  f"recorded as {done['event']['stream']} seq {done['event']['seq']}")
    if done["previous"]:
        console.print(f"the replaced store is kept at {done['previous']}")
    console.print(f"lost: {done['lost_events']} events, {done['lost_requests']} "
                  f"acknowledged requests with a key; report {done['report']}")
    for stream, s in sorted(done["streams"].items()):
        console.print(f"  {stream}: seqs {s['backup_seq'] + 1}-{s['backup_seq'] + s['lost']} "
                      f"lost (checkpointed to {s['checkpointed_seq']})")
    for r in done["requests"]:
        console.print(f"  request {r['request']}: {r['table']} seqs {r['first_seq']}-"
                      f"{r['last_seq']}")
    for note in done["notes"]:
        console.print(f"  note: {note}")


def upgrade(db: str = typer.Option(..., "--db", help=DB_HELP + " (the server stopped)"),
            key_file: Path | None = typer.Option(None, "--key", help="The chain key file"),
            schema: str = typer.Option("dicetable", "--schema"),
            check: bool = typer.Option(False, "--check", help="Only print the store's "
                                       "layout version and the newest")) -> None:
    """Bring a store's layout to this version's: each migration runs once and is recorded
    in the store (an unkeyed chain is verified, then re-linked under the key)."""
    from dicetable.store.keys import find_key
    from dicetable.store.schema_version import CURRENT, upgrade, version_of

    with refused_in_red(err):
        if check:
            console.print(f"store version {version_of(db, schema)}; this dicetable writes "
                          f"version {CURRENT}")
            return
        from dicetable.store.serving import exclusive

        with exclusive(db, "upgrade", schema):  # never under a running server
            steps = upgrade(db, find_key(key_file, db), schema=schema)
    if not steps:
        console.print(f"{db} is at store version {CURRENT}; nothing to do")
    for step in steps:
        console.print(f"migrated {step.version_from} -> {step.version_to} ({step.name}), "
                      "recorded")


def _key(key: bytes | None) -> bytes:
    from dicetable.core.errors import DicetableError

    if key is None:
        raise DicetableError("a backup and a restore need the store's chain key (--key)",
                             rule="store.key")
    return key


def _key_source(db: str, default: Path) -> Path | None:
    import os

    from dicetable.store.keys import KEY_ENV, KEY_FILE_ENV

    if os.environ.get(KEY_ENV):
        return None
    if os.environ.get(KEY_FILE_ENV):
        return Path(os.environ[KEY_FILE_ENV])
    return default if default.exists() else None


def _passwords(by: str, approved_by: str, from_stdin: bool) -> tuple[str, str]:
    if from_stdin:
        lines = sys.stdin.read().splitlines()
        if len(lines) < 2:
            from dicetable.core.errors import InvalidInput

            raise InvalidInput("--passwords-from-stdin reads two lines: --by's password, "
                               "then --approved-by's", rule="restore.two_person")
        return lines[0], lines[1]
    return (typer.prompt(f"{by}'s password", hide_input=True),
            typer.prompt(f"{approved_by}'s password", hide_input=True))

