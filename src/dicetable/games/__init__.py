"""The dice games. Importing the package declares every game variant: each variant's module
registers itself (and its engine), so the registry imports none of them."""

from dicetable.games import craps as _craps  # noqa: F401
from dicetable.games import props_hops as _props_hops  # noqa: F401
