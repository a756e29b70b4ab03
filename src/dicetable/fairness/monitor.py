"""Watch every roll: per-die and per-pair statistics, and an alert when a die drifts.

The monitor folds ``DiceRolled`` events. Each event names its dice serials in the order of
its faces (``serials[0]`` showed ``roll.first``); a roll without serials cannot be
attributed to a die and only counts toward its table. Each die keeps its face counts and six
CUSUMs (``dicetable.fairness.sequential``); each pair of dice keeps the 36 joint counts.
An alert becomes a custody command (``RecordFairnessAlert``) so it enters the die's history.

>>> from dicetable.core.dice import Roll
>>> m = FairnessMonitor()
>>> m.observe_faces(("D1", "D2"), (6, 6), table="craps-1")
[]
>>> m.dice["D1"].counts, m.pairs[("D1", "D2")].rolls
([0, 0, 0, 0, 0, 1], 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dicetable.core.roles import Role
from dicetable.custody.commands import RecordFairnessAlert
from dicetable.fairness.sequential import CusumDesign, DieCusum
from dicetable.games.events import DiceRolled

if TYPE_CHECKING:  # the tests (and NumPy with them) are imported when a die is judged, not
    # by every server process that folds rolls
    from dicetable.fairness.stats import TestResult

FAIRNESS_BASIS = ("no PA/IN text requires statistical monitoring of dice (spec/standards.md "
                  "§3.1); design from spec/standards.md §3.2 [industry-default]")


@dataclass(frozen=True)
class FairnessAlert:
    """A die whose face ``face`` comes up too often: its CUSUM reached the alarm level."""

    serial: str
    face: int
    statistic: float
    threshold: float
    rolls: int
    table: str
    counts: tuple[int, ...]

    @property
    def detail(self) -> str:
        share = self.counts[self.face - 1] / self.rolls if self.rolls else 0.0
        return (f"face {self.face} shows {self.counts[self.face - 1]} times in {self.rolls} "
                f"rolls ({share:.1%}, fair 16.7%) at {self.table or 'an unknown table'}")

    def to_command(self, actor: str = "fairness-monitor",
                   role: Role = Role.SYSTEM) -> RecordFairnessAlert:
        """The custody command that puts this alert in the die's history."""
        return RecordFairnessAlert(actor=actor, role=role, serial=self.serial,
                                   test=f"CUSUM face {self.face}", detail=self.detail,
                                   statistic=f"{self.statistic:.3f}",
                                   threshold=f"{self.threshold:g}", rolls=self.rolls)


@dataclass
class DieStats:
    serial: str
    design: CusumDesign
    counts: list[int] = field(default_factory=lambda: [0] * 6)
    cusum: DieCusum = field(init=False)
    alerts: int = 0
    tables: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.cusum = DieCusum(self.design)

    @property
    def rolls(self) -> int:
        return sum(self.counts)

    def chi_square(self) -> TestResult:
        from dicetable.fairness.stats import chi_square_faces

        return chi_square_faces(self.counts, name=f"chi-square faces {self.serial}")


@dataclass
class PairStats:
    serials: tuple[str, str]
    cells: list[int] = field(default_factory=lambda: [0] * 36)

    @property
    def rolls(self) -> int:
        return sum(self.cells)

    def chi_square(self) -> TestResult:
        from dicetable.fairness.stats import chi_square

        return chi_square(self.cells, [1 / 36] * 36,
                          f"chi-square 36 outcomes {'+'.join(self.serials)}")


class FairnessMonitor:
    """Per-die and per-pair fairness statistics, fed roll by roll."""

    def __init__(self, design: CusumDesign | None = None) -> None:
        self.design = design or CusumDesign()
        self.dice: dict[str, DieStats] = {}
        self.pairs: dict[tuple[str, str], PairStats] = {}
        self.unattributed: dict[str, int] = {}
        """Rolls per table that named no serials."""
        self.alerts: list[FairnessAlert] = []

    @classmethod
    def replay(cls, events: Iterable[Any], design: CusumDesign | None = None
               ) -> FairnessMonitor:
        monitor = cls(design)
        for e in events:
            if isinstance(e, DiceRolled):
                monitor.observe(e)
        return monitor

    def observe(self, event: DiceRolled) -> list[FairnessAlert]:
        """Fold one roll; returns the alerts it raised."""
        if event.roll is None:
            return []
        return self.observe_faces(event.serials, (event.roll.first, event.roll.second),
                                  event.table)

    def observe_faces(self, serials: Sequence[str], faces: Sequence[int],
                      table: str = "") -> list[FairnessAlert]:
        if len(serials) != len(faces):
            self.unattributed[table] = self.unattributed.get(table, 0) + 1
            return []
        raised = []
        for serial, face in zip(serials, faces, strict=True):
            die = self.dice.get(serial)
            if die is None:
                die = self.dice[serial] = DieStats(serial, self.design)
            die.counts[face - 1] += 1
            die.tables.add(table)
            for alarm_face, value in die.cusum.update(face):
                die.alerts += 1
                raised.append(FairnessAlert(serial, alarm_face, value, self.design.h,
                                            die.rolls, table, tuple(die.counts)))
        if len(serials) == 2:
            order = sorted(range(2), key=lambda i: serials[i])
            key = (serials[order[0]], serials[order[1]])
            pair = self.pairs.get(key)
            if pair is None:
                pair = self.pairs[key] = PairStats(key)
            pair.cells[(faces[order[0]] - 1) * 6 + faces[order[1]] - 1] += 1
        self.alerts += raised
        return raised

    def report(self, alpha: float = 0.01) -> dict[str, Any]:
        """Every die and pair: rolls, face counts, chi-square, CUSUM levels and alerts."""
        return {
            "design": {"delta": self.design.delta, "h": self.design.h,
                       "basis": FAIRNESS_BASIS},
            "dice": [{"serial": d.serial, "rolls": d.rolls, "counts": d.counts,
                      "cusum": [round(v, 3) for v in d.cusum.s], "alerts": d.alerts,
                      "tables": sorted(d.tables), **d.chi_square().to_dict(alpha)}
                     for d in sorted(self.dice.values(), key=lambda d: d.serial)],
            "pairs": [{"serials": list(p.serials), "rolls": p.rolls,
                       **p.chi_square().to_dict(alpha)}
                      for p in sorted(self.pairs.values(), key=lambda p: p.serials)],
            "unattributed_rolls": dict(self.unattributed),
            "alerts": [{"serial": a.serial, "face": a.face, "rolls": a.rolls,
                        "statistic": a.statistic, "detail": a.detail} for a in self.alerts],
        }
