"""dicetable: casino dice tables run exactly as the regulations write them.

Layers (DESIGN.md) import downward only::

    cli > server > store > sim > odds > table > games > wagers > rules > core
"""

__version__ = "0.1.0"
