"""Dice custody, from receipt to cancellation: commands in, frozen events out.

A site's dice live in one event stream (``CustodyLedger``). Each step is a command checked
against the custody rule pack (``custody-pa``: 58 Pa. Code § 603a.13; ``custody-in``: 68 IAC
14-3) and recorded as an event with actor, role, the other people present, time and citation:

receive a shipment (two people, seals checked, failed boxes opened and inspected) -> store it
(both storage keys) -> take out the gaming day's dice (security present) -> inspect before
play (measurements and checks, under surveillance) -> issue to a table (24-hour limit) ->
remove (tampered: sealed envelope for the enforcement agent; otherwise: to the cancellation
room) -> cancel (hole of at least 1/4 inch, shredding or an approved method, under
surveillance). A quarterly physical inventory is reconciled against the record, and any
discrepancy raises an alert at once. ``dicetable.custody.reports`` renders the pit report and
the logs the regulations ask for.

Standard library only (a domain layer between ``table`` and ``games``).
"""
