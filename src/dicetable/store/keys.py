"""The chain key: 32 random bytes kept outside the database (a file, or the environment).

``dicetable keys init [FILE]`` creates one (hex, mode 0600, never overwritten). A process
finds its key in ``--key FILE``, else ``DICETABLE_KEY`` (hex), else the file named by
``DICETABLE_KEY_FILE``, else the default file next to the store (``<db>.key``).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from dicetable.core.errors import InvalidInput

KEY_ENV = "DICETABLE_KEY"
KEY_FILE_ENV = "DICETABLE_KEY_FILE"


def default_key_path(db: str | Path) -> Path:
    """``<db>.key`` beside a SQLite file; ``dicetable.key`` here for PostgreSQL or memory."""
    text = str(db)
    if text == "memory" or text.startswith(("postgresql://", "postgres://")):
        return Path("dicetable.key")
    return Path(text + ".key")


def init_key(path: str | Path) -> Path:
    """Write a new key to ``path`` (refused if the file exists: a lost key is a lost chain)."""
    target = Path(path)
    if target.exists():
        raise InvalidInput(f"{target} exists; a key is never overwritten", rule="store.key")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32) + "\n")
    return target


def read_key(path: str | Path) -> bytes:
    try:
        text = Path(path).read_text().strip()
    except OSError as e:
        raise InvalidInput(f"cannot read the key {path}: {e.strerror}", rule="store.key") \
            from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise InvalidInput(f"{path} does not hold a hex key", rule="store.key") from None
    if len(key) < 16:
        raise InvalidInput(f"{path}: a key has at least 16 bytes", rule="store.key")
    return key


def find_key(path: str | Path | None = None, db: str | Path | None = None) -> bytes | None:
    """The key for this process (see the module's docstring), or None when there is none."""
    if path is not None:
        return read_key(path)
    if os.environ.get(KEY_ENV):
        try:
            return bytes.fromhex(os.environ[KEY_ENV].strip())
        except ValueError:
            raise InvalidInput(f"{KEY_ENV} is not hex", rule="store.key") from None
    if os.environ.get(KEY_FILE_ENV):
        return read_key(os.environ[KEY_FILE_ENV])
    if db is not None and default_key_path(db).exists():
        return read_key(default_key_path(db))
    return None
