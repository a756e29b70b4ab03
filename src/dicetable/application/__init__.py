"""The application layer: between the domain (``table``, ``custody``, ``bank``) and the
surfaces (``server``, ``cli``, scripts).

Every surface runs its commands through one entry, ``service.Application.submit(stream,
order)``: a table's go through its ``StreamPipeline`` (``pipeline.py``: decided in order
against the state that includes the earlier ones, written in one group commit, each answered
only after that commit), any other aggregate's (a custody ledger, a bank) on the aggregate
held on its stream. ``server.floor.Floor`` is the application of a served floor (its tables on
the store, watched and pushed); ``service.Local`` hosts a script's tables in memory
(``scripts.py``: the one runner of table scripts, for the library, ``dicetable replay`` and
``dicetable script load``). A new stream's first events are an ``Open`` order too
(``streams.py``: a custody ledger's opening, an import, a script's load, a bank's opening).
Load shedding is not decided here (it stays at the HTTP door); the pipeline only reports its
load (``StreamPipeline.load``). ``integrity.py`` (verification and faults) and ``wallets.py`` (a
player's wallet stream) read and write the store for the server and the command line alike.
"""
