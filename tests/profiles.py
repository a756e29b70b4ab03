"""How hard the property tests search: lean in CI, thorough in the nightly run.

``pytest --slow`` (or ``DICETABLE_THOROUGH=1``) selects the thorough run: Hypothesis's
``thorough`` profile, every test's own example count times ``THOROUGH_FACTOR`` (``examples``),
and the tests marked ``thorough``. Without it (CI, and a developer's run) the ``ci`` profile:
derandomized, so that a red CI run is the change's doing and not a new draw's; the nightly run
draws afresh and prints the blob that reproduces a failure. Every property keeps running in CI,
on fewer examples; none is left to the nightly run alone.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

THOROUGH_FACTOR = 10
LEAN_EXAMPLES = 60
"""A property test's examples in CI where the test names no count of its own."""

_thorough = [os.environ.get("DICETABLE_THOROUGH", "") not in ("", "0")]


def register() -> None:
    common = {"deadline": None,  # a loaded machine is slow; speed is the benchmarks' business
              "suppress_health_check": [HealthCheck.too_slow]}
    settings.register_profile("ci", max_examples=LEAN_EXAMPLES, derandomize=True,
                              database=None, **common)  # type: ignore[arg-type]
    settings.register_profile("thorough", max_examples=LEAN_EXAMPLES * THOROUGH_FACTOR,
                              print_blob=True, **common)  # type: ignore[arg-type]
    settings.load_profile("thorough" if thorough() else "ci")


def set_thorough(on: bool) -> None:
    _thorough[0] = on
    settings.load_profile("thorough" if on else "ci")


def thorough() -> bool:
    return _thorough[0]


def examples(lean: int) -> int:
    """A test's example count: ``lean`` in CI, ``THOROUGH_FACTOR`` times more with --slow."""
    return lean * THOROUGH_FACTOR if thorough() else lean
