"""Judge one die against the dice specification (68 IAC 14-3-3(b), inspected per 14-3-7).

A die fails if any side measures outside the size range (inclusive), the three sides differ
by more than the cube tolerance, or a required check did not pass.

>>> from decimal import Decimal as D
>>> from dicetable.custody.rules import load_custody_pack
>>> pack = load_custody_pack("in")
>>> judge(pack, DieCheck("A1", (D("0.750"), D("0.750"), D("0.750")))).passed
True
>>> judge(pack, DieCheck("A2", (D("0.749"), D("0.749"), D("0.749")))).problems
('side 0.749 in is below the 0.750 in minimum [68 IAC 14-3-3(b)(1) [regulation]]',)
"""

from __future__ import annotations

from dicetable.core.errors import InvalidInput
from dicetable.custody.events import InspectionResult
from dicetable.custody.model import Check, DieCheck
from dicetable.custody.rules import CustodyPack

CHECK_RULES: dict[Check, str] = {
    Check.LOGO: "dice.check.logo",
    Check.SERIAL: "dice.check.serial",
    Check.FLAT_FACES: "dice.check.flat_faces",
    Check.SQUARE_EDGES: "dice.check.square_edges",
    Check.BALANCED: "dice.check.balanced",
    Check.NO_MAGNETIC_LOAD: "dice.check.no_magnetic_load",
    Check.OPPOSITE_FACES: "dice.check.opposite_faces",
    Check.FINISH: "dice.check.finish",
    Check.SPOTS: "dice.check.spots",
}
"""Each yes/no check and the rule that requires it."""


def judge(pack: CustodyPack, check: DieCheck) -> InspectionResult:
    """The result of inspecting one die; malformed input raises ``InvalidInput``."""
    if len(check.measurements) != 3:
        raise InvalidInput(f"die {check.serial}: measure the three sides (edge to edge along "
                           f"each axis), got {len(check.measurements)}",
                           rule="custody.measurement")
    lo, hi = pack.inches("dice.size.minimum_in"), pack.inches("dice.size.maximum_in")
    problems: list[str] = []
    smallest, largest = min(check.measurements), max(check.measurements)
    if smallest < lo:
        problems.append(f"side {smallest} in is below the {lo} in minimum "
                        f"[{pack.cite('dice.size.minimum_in')}]")
    if largest > hi:
        problems.append(f"side {largest} in is above the {hi} in maximum "
                        f"[{pack.cite('dice.size.maximum_in')}]")
    spread = largest - smallest
    tolerance = pack.inches("dice.cube.tolerance_in")
    if spread > tolerance:
        problems.append(f"not a cube: the sides differ by {spread} in, more than {tolerance} in "
                        f"[{pack.cite('dice.cube.tolerance_in')}]")
    for item, rule_id in CHECK_RULES.items():
        if pack.flag(rule_id) and item not in check.passed:
            problems.append(f"failed the {item} check [{pack.cite(rule_id)}]")
    return InspectionResult(check.serial, not problems, tuple(check.measurements),
                            tuple(problems))
