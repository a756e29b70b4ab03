"""Domain core: money, odds, dice, citations, roles and errors. Standard library only, no I/O."""
