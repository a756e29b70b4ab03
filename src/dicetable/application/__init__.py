"""The application layer: between the domain (``table``, ``custody``, ``bank``) and the
surfaces (``server``, ``cli``, scripts).

Every surface runs its commands through one entry, ``service.Application.submit(stream,
order)``: a table's go through its ``StreamPipeline`` (``pipeline.py``: decided in order
against the state that includes the earlier ones, written in one group commit, each answered
only after that commit), any other aggregate's (a custody ledger, a bank) on the aggregate
held on its stream. ``server.floor.Floor`` is the application of a served floor (its tables on
the store, watched and pushed); ``service.Local`` hosts a script's tables in memory
(``scripts.py``: ``dicetable replay``, ``dicetable script load``). Load shedding is not
decided here (it stays at the HTTP door); the pipeline only reports its load
(``StreamPipeline.load``). ``integrity.py`` (verification and faults) and ``wallets.py`` (a
player's wallet stream) read and write the store for the server and the command line alike.
"""
