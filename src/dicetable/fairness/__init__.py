"""Dice fairness: statistics on every recorded roll, and the RNG certification battery.

- ``stats``: chi-square goodness of fit (per die, per pair, totals), runs, serial correlation,
  and the rolls needed to detect a given bias;
- ``sequential``: per-face CUSUMs (and a Wald SPRT) that raise an alert when a die drifts,
  with their documented false-alarm and detection run lengths;
- ``monitor``: folds ``DiceRolled`` events per die serial and per pair; alerts become custody
  events in the die's history;
- ``rng``: ``dicetable rng-test``, the battery on 10 million CSPRNG rolls.

Uses NumPy and SciPy; sits between ``sim`` and ``odds`` in the layers.
"""
