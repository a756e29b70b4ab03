"""The pit's books: each live table's chip bank (table inventory), its counts and Table
Inventory Slips, fills and credits, the drop, and table win per gaming day
(spec/table-bank.md). Pure domain: no I/O, money in integer cents."""
