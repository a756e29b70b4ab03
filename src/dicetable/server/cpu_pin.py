"""A served process keeps to one CPU: its threads hand one interpreter lock between them.

The server's event loop, each table's deciding thread and the store's committer run Python
under one lock. Left to the operating system, they run on whichever cores are free, and each
hand-over of the lock wakes a thread on another core: on a 2-core host a bet cost a fifth
more CPU (``bench.bet_cost``), and one process over PostgreSQL answered a fifth fewer commands
a second (``bench.scale_bench``). So each served process (``dicetable serve``,
each of its ``--workers``, a process started with ``uvicorn --factory``) pins every thread it
has, and the ones it starts after, to one CPU: industry-default, configurable
(``DICETABLE_CPU``, ``dicetable serve --cpu``):

- ``auto`` (the default): the first CPU the process may run on that no other dicetable server
  on this machine has claimed (a lock file per CPU, let go when the process ends, in a folder
  of the user's own: one that is a link, or another's, or open to others, is not used, and
  the process is not pinned); where every one is claimed, none: it is not pinned;
- a CPU's number: that one (claimed too, whoever else holds it: the operator's choice);
- ``none``: not pinned.

Where the system cannot pin (not Linux), nothing is pinned, and ``pinned`` says so.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from dicetable.core.errors import InvalidInput

CPU_ENV = "DICETABLE_CPU"
AUTO, NONE = "auto", "none"
RULE = "server.cpu"

_claims: list[int] = []
"""The lock files this process holds open (one per CPU claimed): closed, they are let go."""
_pinned: list[int] = []
"""The CPU this process pinned itself to (empty: none)."""


def lock_dir() -> Path:
    """Where the claims are: one folder per user, in the system's temporary folder."""
    return Path(tempfile.gettempdir()) / f"dicetable-cpus-{os.getuid()}"


def pin_from_env(folder: Path | None = None) -> int | None:
    """Pin this process as ``DICETABLE_CPU`` says (unset: ``auto``); the CPU, or None."""
    return pin(os.environ.get(CPU_ENV, AUTO), folder)


def pin(choice: str, folder: Path | None = None) -> int | None:
    """Pin every thread of this process, and those it starts after, to one CPU (``choice``:
    ``auto``, ``none`` or a CPU's number); the CPU, or None where none was pinned.

    >>> pin("none") is None
    True
    >>> try:
    ...     pin("many")
    ... except InvalidInput as refused:
    ...     print(refused)
    DICETABLE_CPU must be auto, none or a CPU's number, not 'many' [rule server.cpu]
    """
    choice = checked(choice)
    if choice == NONE or not hasattr(os, "sched_setaffinity"):
        return None
    folder = folder or lock_dir()
    if choice == AUTO:
        cpu = next((c for c in sorted(os.sched_getaffinity(0)) if _claim(folder, c)), None)
        if cpu is None:
            return None
    else:
        cpu = int(choice)
        _claim(folder, cpu)
    _pin_threads(cpu)
    _pinned[:] = [cpu]
    return cpu


def checked(choice: str) -> str:
    """``choice`` as ``pin`` reads it, or ``InvalidInput`` (rule ``server.cpu``): ``auto``,
    ``none`` or the number of a CPU this process may run on."""
    choice = choice.strip().lower()
    if choice not in (AUTO, NONE) and not choice.isdigit():
        raise InvalidInput(f"{CPU_ENV} must be auto, none or a CPU's number, not {choice!r}",
                           rule=RULE)
    if choice.isdigit() and hasattr(os, "sched_getaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if int(choice) not in allowed:
            raise InvalidInput(f"{CPU_ENV} is {choice}, but this process may run only on "
                               f"CPUs {', '.join(map(str, allowed))}", rule=RULE)
    return choice


def pinned() -> int | None:
    """The CPU this process is pinned to (None: not pinned)."""
    return _pinned[0] if _pinned else None


def _claim(folder: Path, cpu: int) -> bool:
    """Hold CPU ``cpu``'s lock file for as long as this process lives (False: another
    process holds it)."""
    import fcntl  # here: a system without it (Windows) has no sched_setaffinity either

    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        found = os.lstat(folder)
        # In the shared temporary folder another user could have put a link or a folder of
        # their own there first, to have files made where they chose.
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() \
                or found.st_mode & 0o022:
            return False
        fd = os.open(folder / f"cpu-{cpu}.lock",
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _claims.append(fd)
    return True


def _pin_threads(cpu: int) -> None:
    """Every thread of the process on ``cpu`` (Linux keeps an affinity per thread: each
    running one is set, and a thread started later takes its starter's)."""
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        with contextlib.suppress(OSError):  # one that ended meanwhile
            os.sched_setaffinity(thread, {cpu})
