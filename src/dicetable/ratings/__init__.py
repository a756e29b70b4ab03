"""Player ratings: the exact theoretical loss of every wager a player made, beside the pit's
industry formula (spec/table-bank.md §7 item 3, §8).

A pure fold of a table's event log (no I/O): ``RatingsFold`` reads the events one by one and
keeps, per player and session, the time played, the average bet and the exact theo; the rates
come from the table's own pack through the odds engine (``rates.TheoRates``), so a house
pack's paytable changes the theo. Money is integer cents; theo is an exact ``Fraction`` of a
cent, rounded only for display (``formula.display_cents``).
"""
