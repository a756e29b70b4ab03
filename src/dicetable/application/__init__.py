"""The application layer: between the domain (``table``, ``custody``) and the surfaces
(``server``, ``cli``, scripts).

It owns how a command reaches a stream's log: ``StreamPipeline`` decides a stream's commands in
order against the state that includes the earlier ones, writes a batch in one group commit and
answers each command only after that commit. The stream's host (``server.floor.Floor`` for the
tables) gives it the public ``StreamHost`` contract: catch up with other processes, commit,
rebuild after a failed commit, and tell the subscribers. Load shedding is not decided here (it
stays at the HTTP door); the pipeline only reports its load (``StreamPipeline.load``).
"""
