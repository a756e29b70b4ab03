"""The fused kernel: one compiled loop per chunk of rolls (Numba), the same work as the NumPy
reference in ``dicetable.sim.engine`` without its passes over memory.

For each roll and each lane it does what the reference does with whole-array operations: the
stop decision (stop-loss, stop-win, ruin, length), the table lookup per component, the money,
the row count for the per-wager accounts and the bankroll trace, in one pass. The roll is the
outer loop: consecutive lanes are independent, so the processor overlaps their table lookups
(a lane's own lookups form a chain: twice as slow when the lane is the outer loop). The
reference and this kernel read the same dice and the same tables; ``tests/test_sim_fused.py``
holds them equal to the cent.

Numba compiles these functions on first use and caches the machine code next to this file, so
a fresh process (a worker, a CLI run) loads them instead of compiling again.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

numba: Any
try:
    numba = importlib.import_module("numba")
except ImportError:  # pragma: no cover - numba is a dependency; the reference still works
    numba = None

AVAILABLE = numba is not None

STOP_WIN, STOP_LOSS, RUIN, LENGTH = 1, 2, 3, 4  # engine.REASONS

if numba is not None:
    _jit = numba.njit(cache=True, nogil=True, boundscheck=False)

    @_jit  # type: ignore[untyped-decorator]
    def _advance(rolls: Any, j36: Any, net: Any, stopped: Any, reason: Any, lane_ids: Any,
                 thrown: Any, group_base: Any, hist: Any, hist_off: Any, nxt: Any, delta: Any,
                 settled: Any, need: Any, tab_off: Any, half_off: Any, rows_k: Any,
                 empty36: Any, step: int, betting: bool, lim_rolls: int, longer: int,
                 money: bool, bankroll: int, has_bankroll: bool, stop_win: int,
                 has_stop_win: bool, stop_loss: int, has_stop_loss: bool, trace_net: Any,
                 traced: int, every: int, n_checks: int) -> None:  # pragma: no cover
        chunk, active = rolls.shape
        ncomp = j36.shape[0]
        for t in range(chunk):
            now = step + t
            every_lane = now < lim_rolls and not money
            last = now == lim_rolls - 1
            longer_last = longer > 0 and now == lim_rolls
            decide = betting and (money or last or longer_last)
            checkpoint = 0
            if traced > 0 and betting and (now + 1) % every == 0 and (now + 1) // every <= n_checks:
                checkpoint = (now + 1) // every
            rr = rolls[t]
            # Rolls thrown: by every lane while betting, else by lanes with bets still out.
            if every_lane:
                for lane in range(active):
                    thrown[lane] += 1
            else:
                for lane in range(active):
                    for k in range(ncomp):
                        if j36[k, lane] != empty36[k]:
                            thrown[lane] += 1
                            break
            if not decide:  # the common roll: carry on, one tight loop per component
                for k in range(ncomp):
                    jk = j36[k]
                    gk = group_base[k]
                    to = tab_off[k]
                    ho = hist_off[k]
                    for lane in range(active):
                        row = np.int64(jk[lane]) + rr[lane]
                        net[lane] += delta[to + row]
                        jk[lane] = nxt[to + row]
                        hist[ho + gk[lane] + row] += 1
            else:
                for lane in range(active):
                    r = np.int64(rr[lane])
                    st = stopped[lane]
                    stop = False
                    if money and not st:
                        after = net[lane]
                        for k in range(ncomp):
                            after += settled[half_off[k] + j36[k, lane] + r]
                        if has_stop_loss and after <= -stop_loss:
                            reason[lane] = STOP_LOSS
                            stop = True
                        if has_stop_win and not stop and after >= stop_win:
                            reason[lane] = STOP_WIN
                            stop = True
                        if has_bankroll and not stop:
                            want = 0
                            for k in range(ncomp):
                                want += need[half_off[k] + j36[k, lane] + r]
                            if bankroll + net[lane] < want:
                                reason[lane] = RUIN
                                stop = True
                    if not st and not stop and ((last and lane_ids[lane] >= longer)
                                                or longer_last):
                        reason[lane] = LENGTH
                        stop = True
                    if stop:
                        stopped[lane] = True
                    offset = st or stop
                    n = net[lane]
                    for k in range(ncomp):
                        row = j36[k, lane] + r
                        if offset:
                            row += rows_k[k]
                        n += delta[tab_off[k] + row]
                        j36[k, lane] = nxt[tab_off[k] + row]
                        hist[hist_off[k] + group_base[k, lane] + row] += 1
                    net[lane] = n
            if checkpoint:
                for lane in range(active):
                    if lane_ids[lane] < traced:
                        trace_net[lane_ids[lane], checkpoint - 1] = net[lane]

    @_jit  # type: ignore[untyped-decorator]
    def _decode(words: Any, limit: np.uint64, block: np.uint64, per_word: int,
                out: Any) -> int:  # pragma: no cover
        """Base-36 digits of the accepted words, least significant first; how many written."""
        at = 0
        d36 = np.uint64(36)
        for i in range(words.shape[0]):
            w = words[i]
            if w >= limit:
                continue
            v = w % block
            for _ in range(per_word):
                out[at] = np.uint8(v % d36)
                v = v // d36
                at += 1
        return at


def advance(*args: Any) -> None:
    """One chunk of rolls for every active lane (see ``engine.run_lanes``)."""
    _advance(*args)


def decode(words: np.ndarray[Any, np.dtype[np.uint64]], limit: int, block: int,
           per_word: int, out: np.ndarray[Any, np.dtype[np.uint8]]) -> int:
    return int(_decode(words, np.uint64(limit), np.uint64(block), per_word, out))


__all__ = ["AVAILABLE", "advance", "decode"]
