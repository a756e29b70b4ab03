"""The vectorised simulator: many independent lanes (sessions), one roll at a time, in NumPy.

Every lane holds one state per component; a roll is a table lookup per component
(``row = state*36 + roll``), money moves by ``delta[row]`` and the next state is
``next36[row]``. Rows are also counted (per lane group) so that the per-wager breakdown and its
confidence interval come from the tables afterwards, not from work in the loop. Dice are drawn a
chunk at a time, so memory stays bounded however many rolls are asked for.

Each chunk is run by the fused kernel (``sim.fused``, compiled by Numba: one loop, the lane's
state in registers) or by the NumPy reference below (``fused=False``: a few whole-array
operations per roll); the two are held equal to the cent by the tests.

Money is integer cents (int64) throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from dicetable.sim.dice import Dice, PackedDice, RandomDice, ScriptedDice
from dicetable.sim.kernel import FIELDS, FlatComponent, Kernel

if TYPE_CHECKING:  # numpy.typing and these aliases are for the type checker only
    from numpy.typing import NDArray

    I8 = NDArray[np.int8]
    I64 = NDArray[np.int64]

RUNNING, STOP_WIN, STOP_LOSS, RUIN, LENGTH = range(5)
REASONS = ("running", "stop-win", "stop-loss", "ruin", "length")
"""Why a session stopped betting: its stop-win, its stop-loss, it could not cover its next
bets (ruin), or it reached its length. After that it only lets its bets ride out."""

CHUNK_CELLS = 1 << 20
"""Lanes x rolls drawn at once: the dice and row buffers stay near 4 MB per component."""
MAX_CHUNK_ROLLS = 4096
WIND_DOWN_CHUNK = 64
MAX_WIND_DOWN = 100_000
"""Rolls after the last betting roll before giving up on bets that never settle."""


class Limits(NamedTuple):
    """What a lane does besides betting: length, bankroll, stop-win, stop-loss (cents). (A
    named tuple: a frozen dataclass compiles its methods' source when the module loads, four
    times a named tuple's CPU.)"""

    rolls: int
    """Betting rolls per lane; then the lane winds down."""
    longer: int = 0
    """The first ``longer`` lanes bet one roll more (to hit an exact total of rolls)."""
    bankroll: int | None = None
    stop_win: int | None = None
    stop_loss: int | None = None

    @property
    def money(self) -> bool:
        return any(v is not None for v in (self.bankroll, self.stop_win, self.stop_loss))


@dataclass
class LaneResult:
    lanes: int
    final_net: I64
    reason: I8
    rolls: I64
    """Rolls thrown per lane, winding down included."""
    groups: I64
    """(groups, labels, fields): per lane group, what each label moved (see ``entry.FIELDS``)."""
    trace: I64
    """(traced lanes, checkpoints): each traced lane's net result after each checkpoint roll."""
    checkpoints: I64


def group_count(components: list[FlatComponent], wanted: int = 32) -> int:
    """Lane groups for the batch-means confidence intervals, fewer when tables are large."""
    biggest = max(2 * c.rows for c in components)
    return max(4, min(wanted, (1 << 22) // biggest))


def fused_default() -> bool:
    """The fused kernel when Numba is installed; the NumPy reference otherwise."""
    from dicetable.sim import fused

    return fused.AVAILABLE


def run_lanes(kernel: Kernel, dice: Dice, lanes: int, limits: Limits,
              trace: int = 0, every: int = 1, groups: int | None = None,
              tick: Callable[[int], None] | None = None,
              fused: bool | None = None) -> LaneResult:
    """Simulate ``lanes`` independent sessions of a strategy's ``kernel`` on ``dice``.

    ``trace`` lanes have their net result recorded every ``every`` rolls (bankroll bands).
    ``tick`` is told how many rolls were thrown after each chunk (a progress bar).
    ``fused``: the compiled kernel (``sim.fused``) or the NumPy reference (False); both read
    the same dice in the same order and give the same result to the cent.
    """
    use_fused = fused_default() if fused is None else fused
    flats = list(kernel.components)
    g = max(1, min(groups or group_count(flats), lanes))
    ncomp = len(flats)
    net = np.full(lanes, kernel.initial_net, dtype=np.int64)
    j36 = np.array([np.full(lanes, c.start36, dtype=np.int32) for c in flats])
    hist_size = [g * 2 * c.rows for c in flats]
    hist_off = np.cumsum([0, *hist_size]).astype(np.int64)
    hist_all = np.zeros(int(hist_off[-1]), dtype=np.int64)
    hist = [hist_all[hist_off[k]:hist_off[k + 1]] for k in range(ncomp)]
    lane_ids = np.arange(lanes, dtype=np.int64)
    group_base = np.array([(lane_ids % g) * (2 * c.rows) for c in flats], dtype=np.int64)
    reason = np.zeros(lanes, dtype=np.int8)
    stopped = np.zeros(lanes, dtype=bool)
    rolls_thrown = np.zeros(lanes, dtype=np.int64)
    final_net = np.zeros(lanes, dtype=np.int64)
    final_reason = np.zeros(lanes, dtype=np.int8)
    final_rolls = np.zeros(lanes, dtype=np.int64)
    traced = min(trace, lanes)
    n_checks = (limits.rolls + (1 if limits.longer else 0)) // every if traced else 0
    checkpoints = np.arange(1, n_checks + 1, dtype=np.int64) * every
    sentinel = np.iinfo(np.int64).min
    trace_net = np.full((traced, n_checks), sentinel, dtype=np.int64)
    last_betting = limits.rolls + (1 if limits.longer else 0)
    cells = max(1, min(CHUNK_CELLS // max(lanes, 1), MAX_CHUNK_ROLLS))
    step = 0
    active = lanes
    tables = _Tables(flats) if use_fused else None

    def finish(done: NDArray[np.bool_]) -> None:
        ids = lane_ids[done]
        final_net[ids] = net[done]
        final_reason[ids] = reason[done]
        final_rolls[ids] = rolls_thrown[done]

    while active:
        if step >= last_betting + MAX_WIND_DOWN:
            raise RuntimeError("bets still unsettled after the wind-down limit")
        if step < last_betting:
            chunk = min(cells, last_betting - step)
        else:  # winding down takes a few rolls: small chunks, little waste
            chunk = min(cells, WIND_DOWN_CHUNK)
        rolls = dice.draw(chunk, active)
        betting = step < last_betting
        if tables is not None:
            from dicetable.sim import fused as fused_mod

            fused_mod.advance(
                rolls, j36, net, stopped, reason, lane_ids, rolls_thrown, group_base, hist_all,
                hist_off, tables.nxt, tables.delta, tables.settled, tables.need, tables.tab_off,
                tables.half_off, tables.rows, tables.empty36, step, betting, limits.rolls,
                limits.longer, limits.money, limits.bankroll or 0, limits.bankroll is not None,
                limits.stop_win or 0, limits.stop_win is not None, limits.stop_loss or 0,
                limits.stop_loss is not None, trace_net, traced, every, n_checks)
        else:
            _advance_numpy(flats, rolls, j36, net, stopped, reason, lane_ids, rolls_thrown,
                           group_base, hist, limits, step, betting, trace_net, traced, every,
                           n_checks)
        step += chunk
        if tick is not None:
            tick(int(chunk * active))
        done = j36[0] == flats[0].empty36
        for k in range(1, ncomp):
            done &= j36[k] == flats[k].empty36
        if step >= last_betting and done.all():
            finish(done)
            active = 0
            break
        if (step >= last_betting or done.sum() * 2 > active) and done.any():
            # Compact: finished sessions leave the arrays, so no work is spent on them.
            finish(done)
            keep = ~done
            net, reason, stopped, rolls_thrown, lane_ids = (
                net[keep], reason[keep], stopped[keep], rolls_thrown[keep], lane_ids[keep])
            j36 = np.ascontiguousarray(j36[:, keep])
            group_base = np.ascontiguousarray(group_base[:, keep])
            active = int(keep.sum())

    if traced:
        fill = trace_net == sentinel
        trace_net[fill] = np.broadcast_to(final_net[:traced, None], trace_net.shape)[fill]
    group_totals = _group_totals(kernel, hist, g)
    per_group = np.bincount(np.arange(lanes) % g, minlength=g).astype(np.int64)
    group_totals += per_group[:, None, None] * kernel.initial_acc[None]  # the first bets'
    return LaneResult(lanes, final_net, final_reason, final_rolls, group_totals, trace_net,
                      checkpoints)


class _Tables:
    """Every component's tables in one array each, with offsets, for the fused kernel."""

    def __init__(self, flats: list[FlatComponent]) -> None:
        self.nxt = np.concatenate([c.next36 for c in flats]).astype(np.int32)
        self.delta = np.concatenate([c.delta for c in flats]).astype(np.int64)
        self.settled = np.concatenate([c.settled for c in flats]).astype(np.int64)
        self.need = np.concatenate([c.need for c in flats]).astype(np.int64)
        self.rows = np.array([c.rows for c in flats], dtype=np.int64)
        self.tab_off = np.cumsum([0, *(2 * self.rows[:-1])]).astype(np.int64)
        self.half_off = np.cumsum([0, *self.rows[:-1]]).astype(np.int64)
        self.empty36 = np.array([c.empty36 for c in flats], dtype=np.int64)


def _advance_numpy(flats: list[FlatComponent], rolls: NDArray[np.uint8],
                   j36: NDArray[np.int32], net: I64, stopped: NDArray[np.bool_], reason: I8,
                   lane_ids: I64, rolls_thrown: I64, group_base: I64, hist: list[I64],
                   limits: Limits, step: int, betting: bool, trace_net: I64, traced: int,
                   every: int, n_checks: int) -> None:
    """The reference: one chunk of rolls, a few whole-array operations per roll."""
    chunk, active = rolls.shape
    faces = rolls.astype(np.int32)  # once: adding a roll to the int32 states then needs no cast
    ncomp = len(flats)
    buffers = [np.empty((chunk, active), dtype=np.int32) for _ in flats]
    money = limits.money
    # Without money limits a lane stops betting only at its length (the last roll or two).
    deciding = range(chunk) if money else range(limits.rolls - 1 - step,
                                                limits.rolls + 1 - step)
    # Until the length is reached without money limits, nobody has stopped: every lane throws
    # each of these first rolls (counted at once, not roll by roll).
    everyone = 0 if money else max(0, min(chunk, limits.rolls - step))
    rolls_thrown += everyone
    for t in range(chunk):
        r = faces[t]
        now = step + t  # every lane of a shard throws its n-th roll together
        rows = [buffers[k][t] for k in range(ncomp)]
        for k in range(ncomp):
            np.add(j36[k], r, out=rows[k])
        if betting and t in deciding:
            stop_now = _decide(flats, rows, net, stopped, reason, lane_ids, limits, now)
            if stop_now is not None:
                for k, c in enumerate(flats):
                    rows[k] += stop_now * c.rows
        if t >= everyone:
            alive = j36[0] != flats[0].empty36
            for k in range(1, ncomp):
                alive |= j36[k] != flats[k].empty36
            rolls_thrown += alive
        for k, c in enumerate(flats):
            net += c.delta.take(rows[k])
            c.next36.take(rows[k], out=j36[k])
        if traced and betting and (now + 1) % every == 0 and (now + 1) // every <= n_checks:
            pos = np.flatnonzero(lane_ids < traced)
            trace_net[lane_ids[pos], (now + 1) // every - 1] = net[pos]
    for k in range(ncomp):
        cells_k = buffers[k] + group_base[k].astype(np.int32)
        hist[k] += np.bincount(cells_k.ravel(), minlength=hist[k].size)


def _decide(flats: list[FlatComponent], rows: list[NDArray[np.int32]], net: I64,
            stopped: NDArray[np.bool_], reason: I8, lane_ids: I64, limits: Limits,
            now: int) -> NDArray[np.int32] | None:
    """Which lanes stop betting after this roll (1) and which carry on (0); None: all carry on."""
    last = now == limits.rolls - 1
    longer_last = limits.longer and now == limits.rolls
    if not limits.money and not last and not longer_last:
        return None
    stop = np.zeros(net.shape, dtype=bool)
    if limits.money:
        settled = flats[0].settled.take(rows[0])
        for k in range(1, len(flats)):
            settled = settled + flats[k].settled.take(rows[k])
        after = net + settled
        fresh = ~stopped
        if limits.stop_loss is not None:
            hit = fresh & (after <= -limits.stop_loss)
            reason[hit] = STOP_LOSS
            stop |= hit
        if limits.stop_win is not None:
            hit = fresh & ~stop & (after >= limits.stop_win)
            reason[hit] = STOP_WIN
            stop |= hit
        if limits.bankroll is not None:
            need = flats[0].need.take(rows[0])
            for k in range(1, len(flats)):
                need = need + flats[k].need.take(rows[k])
            hit = fresh & ~stop & (limits.bankroll + net < need)
            reason[hit] = RUIN
            stop |= hit
    if last:
        ending = ~stopped & ~stop & (lane_ids >= limits.longer)
        reason[ending] = LENGTH
        stop |= ending
    if longer_last:
        ending = ~stopped & ~stop
        reason[ending] = LENGTH
        stop |= ending
    stopped |= stop
    return stopped.astype(np.int32)


def _group_totals(kernel: Kernel, hist: list[I64], g: int) -> I64:
    """Per lane group and label, the money and counts the visited rows add up to: the visits
    to each row times what that row moves, one matrix product per bet."""
    out = np.zeros((g, len(kernel.labels), len(FIELDS)), dtype=np.int64)
    for flat, h, parts in zip(kernel.components, hist, kernel.parts, strict=True):
        counts = h.reshape(g, -1)  # (groups, 2 x states x 36)
        visited = np.flatnonzero(counts.any(axis=0))  # most rows of a long strategy are not
        counts = counts[:, visited]
        visits = int(counts.sum())
        k, state, face = np.unravel_index(visited, (2, flat.rows // 36, 36))
        for part in parts:
            labels = part.acc.shape[3]
            # What each visited row moves for this bet (the row of its own state).
            own = state if len(parts) == 1 else part.mapping[state]
            acc = part.acc[k, own, face].reshape(len(visited), labels * len(FIELDS))
            moved = _exact_product(counts, acc, visits)
            first = part.first_label
            out[:, first:first + labels] += moved.reshape(g, labels, len(FIELDS))
    return out


def _exact_product(counts: I64, acc: I64, visits: int) -> I64:
    """``counts @ acc`` to the cent. In floating point (a BLAS product, many times faster than
    NumPy's integer one) when no partial sum can reach 2**53, so every product and sum is an
    integer held exactly; otherwise in integers."""
    if visits * int(np.abs(acc).max(initial=0)) < 2**53:
        product = counts.astype(np.float64) @ acc.astype(np.float64)
        return np.rint(product).astype(np.int64)
    result: I64 = counts @ acc
    return result


__all__ = ["LENGTH", "REASONS", "RUIN", "STOP_LOSS", "STOP_WIN", "Dice", "LaneResult",
           "Limits", "PackedDice", "RandomDice", "ScriptedDice", "fused_default", "group_count",
           "run_lanes"]
