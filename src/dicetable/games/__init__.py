"""The dice games. Importing the package declares every game variant: each variant's module
registers itself (and its engine), so the registry imports none of them; then every engine
is checked to decide every game command it must (a missing handler fails the import)."""

from dicetable.games import crapless as _crapless  # noqa: F401
from dicetable.games import craps as _craps  # noqa: F401
from dicetable.games import props_hops as _props_hops  # noqa: F401
from dicetable.games.engine import check_engines

check_engines()
