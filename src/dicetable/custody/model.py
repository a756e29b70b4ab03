"""Value types of dice custody: people, shipments, checks, and where a die can be.

>>> Person.parse("Ann Lee:shift-manager:L-1001")
Person(name='Ann Lee', role=<Role.SHIFT_MANAGER: 'shift-manager'>, licence='L-1001')
>>> expand_serials(["D0008-D0011", "X9"])
('D0008', 'D0009', 'D0010', 'D0011', 'X9')
>>> parse_inches("0.750")
Decimal('0.750')
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from fractions import Fraction

from dicetable.core.errors import InvalidInput
from dicetable.core.roles import Role


@dataclass(frozen=True)
class Person:
    """Someone who takes part in a custody step: name, role and occupational licence number."""

    name: str
    role: Role
    licence: str = ""

    @classmethod
    def parse(cls, text: str) -> Person:
        """``NAME:ROLE[:LICENCE]``, e.g. ``Sam Ortiz:security:S-77``."""
        parts = [p.strip() for p in text.split(":")]
        if len(parts) not in (2, 3) or not parts[0]:
            raise InvalidInput(f"not a person: {text!r} (write NAME:ROLE[:LICENCE])",
                               rule="custody.person")
        try:
            role = Role(parts[1])
        except ValueError:
            raise InvalidInput(f"unknown role {parts[1]!r}; roles: "
                               f"{', '.join(r.value for r in Role)}",
                               rule="custody.person") from None
        return cls(parts[0], role, parts[2] if len(parts) == 3 else "")

    def __str__(self) -> str:
        lic = f", licence {self.licence}" if self.licence else ""
        return f"{self.name} ({self.role}{lic})"


@dataclass(frozen=True)
class Manufacturer:
    """Who supplied the dice (68 IAC 14-3-5(c)(3): name, business address, telephone)."""

    name: str
    address: str = ""
    phone: str = ""


@dataclass(frozen=True)
class Box:
    """One sealed box of a shipment and the serials of the dice inside it."""

    box: str
    serials: tuple[str, ...]
    seal_intact: bool = True


@dataclass(frozen=True)
class Finding:
    """What an inspection found wrong with one die."""

    serial: str
    problem: str
    tampering: bool = False
    """True when the problem suggests tampering (the die goes to the enforcement agent)."""


@dataclass(frozen=True)
class BoxInspection:
    """A box whose seal failed, opened at once and its dice inspected (PA 603a.13(a))."""

    box: str
    findings: tuple[Finding, ...] = ()
    """Dice found non-conforming or tampered; every other die in the box conforms."""


class Check(StrEnum):
    """The yes/no checks of a pre-play inspection (68 IAC 14-3-3(b), 14-3-7(b))."""

    LOGO = "logo"
    """The licensee's name or logo is on the die (14-3-3(b)(2))."""
    SERIAL = "serial"
    """The serial number is present and matches the record."""
    FLAT_FACES = "flat-faces"
    """Faces perfectly flat, spots flush with the surface (14-3-3(b)(4))."""
    SQUARE_EDGES = "square-edges"
    """Edges and corners square, 90 degrees to each side, by steel set square (14-3-3(b)(5))."""
    BALANCED = "balanced"
    """Weight evenly spread, by balancing caliper (14-3-3(b)(7); 14-3-7(b)(2), inferred)."""
    NO_MAGNETIC_LOAD = "no-magnetic-load"
    """Nothing in the die reacts to the magnet (14-3-3(b)(3), (b)(7); 14-3-7(b)(3))."""
    OPPOSITE_FACES = "opposite-faces"
    """Opposite faces 1-6, 2-5, 3-4: each pair sums to 7 (14-3-3(b)(9))."""
    FINISH = "finish"
    """All faces have the same texture and finish (14-3-3(b)(6))."""
    SPOTS = "spots"
    """White circular spots 1 to 6, all the same diameter, drilled and filled (b)(8), (b)(10)."""


@dataclass(frozen=True)
class DieCheck:
    """One die's inspection: the three edge measurements and each yes/no check.

    Measurements are inches as exact decimals (a micrometer reads 0.7505, not a float).
    """

    serial: str
    measurements: tuple[Decimal, ...]
    passed: tuple[Check, ...] = tuple(Check)
    """The checks the die passed; a check left out failed."""
    note: str = ""


class DieState(StrEnum):
    """Where a die is in its life, from receipt to cancellation."""

    RECEIVED = "received"
    """Unloaded and checked at receipt, not yet in the storage area."""
    QUARANTINED = "quarantined"
    """Found non-conforming (at receipt or inspection): it must be removed, never played."""
    IN_STORAGE = "in-storage"
    """In the locked, approved storage area."""
    ISSUED = "issued"
    """Taken out of storage for the gaming day; in the pit's locked compartment."""
    INSPECTED = "inspected"
    """Passed the pre-play inspection; ready to go to a table."""
    AT_TABLE = "at-table"
    """In play at a table (in the stickperson's cup or a shaker)."""
    REMOVED = "removed"
    """Taken out of play; waiting in the pit to go to the cancellation room."""
    SEALED = "sealed"
    """Sealed in a tamper envelope, waiting for the enforcement agent."""
    WITH_AGENT = "with-agent"
    """Handed to the enforcement agent: out of the licensee's custody."""
    IN_CANCELLATION_ROOM = "in-cancellation-room"
    """Received in the cancellation room, not yet destroyed."""
    CANCELLED = "cancelled"
    """Destroyed (drilled, shredded or an approved method) under surveillance."""

    @property
    def in_building(self) -> bool:
        """Still physically held by the licensee (and so counted at a physical inventory)."""
        return self not in (DieState.WITH_AGENT, DieState.CANCELLED)


class RemovalReason(StrEnum):
    """Why dice leave play (68 IAC 14-3-4(a)), plus routine change."""

    TAMPERED = "tampered"
    """Any indication of tampering (14-3-4(a)(1)): sealed envelope to the enforcement agent."""
    FLAWED = "flawed"
    """Flawed, e.g. a chip (14-3-4(a)(2)): cancelled."""
    DEFECTIVE = "defective"
    """Defective so as to affect integrity or fairness (14-3-4(a)(3)): cancelled."""
    ROUTINE = "routine"
    """Routine change: end of use, the time limit, a closed table. Cancelled (14-3-4(c))."""


class PlayMode(StrEnum):
    """How dice are used at the table; the time limit differs."""

    TABLE = "table"
    """Thrown by a shooter (Craps, Mini-Craps)."""
    SHAKER = "shaker"
    """Loaded in a covered shaker (Props & Hops, PA 668a.3(b))."""


class CancelMethod(StrEnum):
    """How a die is cancelled (68 IAC 14-3-4(c)(1)-(3))."""

    DRILL = "drill"
    """A circular hole at least 1/4 inch across, through the centre of the die."""
    SHRED = "shred"
    """Shredding."""
    APPROVED = "approved"
    """Another method the executive director approved (name the approval)."""


class Key(StrEnum):
    """The two keys of the dice storage area (PA 603a.13(c))."""

    SECURITY = "security"
    """Held by the security department."""
    TABLE_GAMES = "table-games"
    """Held by table games; only an assistant shift manager or above may use it."""


MAX_SERIAL = 64
"""Characters in one serial, or one range of them (industry-default: dice serials are a
few letters and digits). A longer one is refused before it is parsed."""
_DIGITS = frozenset("0123456789")


def _trailing_digits(text: str) -> str:
    """The run of ASCII digits that ``text`` ends with ("" when none)."""
    end = len(text)
    start = end
    while start > 0 and text[start - 1] in _DIGITS:
        start -= 1
    return text[start:end]


def serial_range(part: str) -> tuple[str, str, str] | None:
    """``part`` as a range ``<prefix><lo>-<prefix><hi>`` - (prefix, lo, hi) - or None.

    Parsed by scanning, never by a pattern that could backtrack: ``part`` is at most
    ``MAX_SERIAL`` characters, and each of its hyphens is tried once.

    >>> serial_range("PA-0001-PA-0010"), serial_range("D7")
    (('PA-', '0001', '0010'), None)
    """
    if len(part) > MAX_SERIAL:
        raise InvalidInput(f"a serial is at most {MAX_SERIAL} characters, not {len(part)}",
                           rule="custody.serials")
    at = part.find("-")
    while at != -1:
        left, right = part[:at], part[at + 1:]
        lo = _trailing_digits(left)
        prefix = left[:len(left) - len(lo)]
        hi = right[len(prefix):]
        if lo and hi and right.startswith(prefix) and all(c in _DIGITS for c in hi):
            return prefix, lo, hi
        at = part.find("-", at + 1)
    return None


def expand_serials(items: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Serials as written by people: ``D0001-D0010`` is a range, anything else one serial
    (each at most ``MAX_SERIAL`` characters)."""
    out: list[str] = []
    for item in items:
        for part in (p.strip() for p in item.split(",")):
            if not part:
                continue
            found = serial_range(part)
            if found is None:
                out.append(part)
                continue
            prefix, lo, hi = found
            a, b = int(lo), int(hi)
            if b < a or b - a > 100_000:
                raise InvalidInput(f"not a serial range: {part!r}", rule="custody.serials")
            out.extend(f"{prefix}{n:0{len(lo)}d}" for n in range(a, b + 1))
    return tuple(out)


MAX_MEASUREMENT = 32
"""Characters in one measurement (industry-default); a longer one is refused unparsed."""


def _fraction(raw: str) -> Fraction | None:
    """``raw`` as ``[whole ]num/den`` (the whole part after a space or a hyphen), scanned
    once; None when it holds no ``/``; ValueError when it does but is not that."""
    top, slash, den = raw.partition("/")
    if not slash:
        return None
    cut = max(top.rfind(" "), top.rfind("-"))
    whole, num = (top[:cut], top[cut + 1:]) if cut >= 0 else ("0", top)
    if not all(part and all(c in _DIGITS for c in part) for part in (whole, num, den)):
        raise ValueError("not a fraction")
    return Fraction(int(whole)) + Fraction(int(num), int(den))


def parse_inches(text: str) -> Decimal:
    """A measurement in inches, exactly as read: a decimal (``0.7505``) or a fraction of an
    inch as the regulations write it (``1/4``, ``3/16``, ``1 1/4``), with an optional ``in``
    or ``"``. Fractions become exact decimals (inch fractions are binary: they terminate).

    >>> parse_inches("3/16"), parse_inches('1/4"'), parse_inches("1 1/2 in")
    (Decimal('0.1875'), Decimal('0.25'), Decimal('1.5'))
    """
    raw = text.strip()
    for unit in ('"', "inches", "inch", "in"):
        if raw.endswith(unit):
            raw = raw.removesuffix(unit).strip()
            break
    try:
        if len(raw) > MAX_MEASUREMENT:  # refused before it is parsed
            raise ValueError("too long")
        fraction = _fraction(raw)
        value = _exact_decimal(fraction) if fraction is not None else Decimal(raw)
    except (InvalidOperation, ZeroDivisionError, ValueError):
        raise InvalidInput(f"not a measurement in inches: {text[:40]!r} (write 0.750, 1/4 "
                           "or 3/16)", rule="custody.measurement") from None
    if not value.is_finite() or value <= 0 or value >= 10:
        raise InvalidInput(f"not a die measurement in inches: {text!r}",
                           rule="custody.measurement")
    return value


def parse_time(text: str) -> datetime:
    """An ISO 8601 time, as the envelope and the commands write it."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"not a time: {text!r}", rule="custody.time") from None


def _exact_decimal(f: Fraction) -> Decimal:
    """``f`` as a Decimal, or ValueError when it does not terminate (1/3 inch)."""
    d = Decimal(f.numerator) / Decimal(f.denominator)
    if Fraction(d) != f:
        raise ValueError("not an exact decimal")
    return d.normalize() if d == d.to_integral_value() else d
