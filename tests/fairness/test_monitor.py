"""The monitor folds DiceRolled events per die serial and per pair; its alerts enter the
die's custody history."""

from __future__ import annotations

import numpy as np

from dicetable.core.dice import Roll
from dicetable.core.roles import Role
from dicetable.custody import events as cev
from dicetable.fairness.monitor import FairnessMonitor
from dicetable.fairness.sequential import loaded
from dicetable.games.events import DiceRolled
from tests.custody.scenario import in_play


def rolls(n: int, seed: int, first: list[float], second: list[float],
          serials: tuple[str, ...] = ("D0001", "D0002")) -> list[DiceRolled]:
    rng = np.random.default_rng(seed)
    a = rng.choice(np.arange(1, 7), size=n, p=first)
    b = rng.choice(np.arange(1, 7), size=n, p=second)
    return [DiceRolled(table="craps-1", seq=i + 1, actor="stick", role=Role.STICKPERSON,
                       at="2026-03-02T09:00:00+00:00", roll=Roll(int(x), int(y)),
                       source="manual", serials=serials) for i, (x, y) in enumerate(zip(a, b,
                                                                                          strict=True))]


def test_monitor_raises_an_alert_on_the_loaded_die_only() -> None:
    fair = [1 / 6] * 6
    monitor = FairnessMonitor()
    first_alert = None
    for event in rolls(3000, seed=3, first=loaded(6, 0.05), second=fair):
        raised = monitor.observe(event)
        if raised and first_alert is None:
            first_alert = (event.seq, raised[0])
    assert first_alert is not None
    seq, alert = first_alert
    assert alert.serial == "D0001"
    assert alert.face == 6
    assert alert.rolls == seq
    assert seq < 1500                      # about 440 expected; a long tail allowed
    assert alert.statistic >= 4.6
    assert "face 6 shows" in alert.detail
    report = monitor.report()
    d1, d2 = report["dice"]
    assert (d1["serial"], d1["rolls"], d1["passed"]) == ("D0001", 3000, False)  # chi-square too
    assert d2["passed"]
    assert report["pairs"][0]["rolls"] == 3000


def test_fair_dice_rarely_alert() -> None:
    fair = [1 / 6] * 6
    monitor = FairnessMonitor.replay(rolls(1000, seed=4, first=fair, second=fair))
    # documented: about one false alarm per 2,300 rolls of a die; two dice, 1,000 rolls
    assert len(monitor.alerts) <= 2
    assert all(p["passed"] for p in monitor.report()["pairs"])


def test_rolls_without_serials_count_for_the_table_only() -> None:
    monitor = FairnessMonitor()
    event = DiceRolled(table="craps-9", seq=1, actor="stick", role=Role.STICKPERSON,
                       at="2026-03-02T09:00:00+00:00", roll=Roll(3, 4), source="manual")
    assert monitor.observe(event) == []
    assert monitor.dice == {}
    assert monitor.unattributed == {"craps-9": 1}


def test_pair_counts_do_not_depend_on_the_order_serials_are_read() -> None:
    monitor = FairnessMonitor()
    monitor.observe_faces(("B", "A"), (2, 5))
    monitor.observe_faces(("A", "B"), (5, 2))
    pair = monitor.pairs[("A", "B")]
    assert pair.cells[(5 - 1) * 6 + (2 - 1)] == 2


def test_an_alert_enters_the_dies_custody_history() -> None:
    led, _, dice = in_play("pa", n=2)
    monitor = FairnessMonitor()
    alerts = []
    for event in rolls(3000, seed=3, first=loaded(6, 0.05), second=[1 / 6] * 6, serials=dice):
        alerts += monitor.observe(event)
    recorded = led.execute(alerts[0].to_command())
    assert isinstance(recorded[0], cev.FairnessAlertRaised)
    assert recorded[0].alert
    assert led.state.dice[dice[0]].fairness_alerts == 1
    assert led.state.dice[dice[0]].history[-1] == recorded[0].seq
