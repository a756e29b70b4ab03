"""Where the simulator's dice come from: roll indices 0..35 (``Roll.index``), (rolls, lanes).

``PackedDice`` is the simulator's own source: each 64-bit word of the generator below
``3 * 36**12`` is twelve fair rolls (its base-36 digits, least significant first); a word at or
above it is dropped, so every roll is exactly uniform. That is 64 / (12 x 0.771) = 6.9 random
bits a roll, against NumPy's ``integers(0, 36, dtype=uint8)`` at 8 bits (and a little
rejection), and one division per roll instead of a bounded draw.

>>> d = PackedDice(np.random.default_rng(1))
>>> d.draw(2, 3).shape, int(d.draw(1000, 1).max()) < 36
((2, 3), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # numpy.typing and these aliases are for the type checker only
    from numpy.typing import NDArray

    U8 = NDArray[np.uint8]

PER_WORD = 12
BLOCK = 36 ** PER_WORD
LIMIT = (2 ** 64 // BLOCK) * BLOCK
"""Words below this are kept: 3 x 36^12, so ``word % 36^12`` is uniform (77.1% of words)."""
KEPT = LIMIT / 2 ** 64


class Dice(Protocol):
    def draw(self, rolls: int, lanes: int) -> U8:
        """Roll indices 0..35 (``Roll.index``), shaped (rolls, lanes)."""
        ...


class RandomDice:
    """Two fair dice from a NumPy generator: one uniform draw of 36 (unbiased; no modulo)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def draw(self, rolls: int, lanes: int) -> U8:
        return self.rng.integers(0, 36, size=(rolls, lanes), dtype=np.uint8)


def decode_numpy(words: NDArray[np.uint64], out: U8) -> int:
    """The reference decoder: the digits of every kept word, in order, into ``out``."""
    kept = words[words < np.uint64(LIMIT)] % np.uint64(BLOCK)
    digits = np.empty((kept.size, PER_WORD), dtype=np.uint8)
    for i in range(PER_WORD):
        digits[:, i] = kept % np.uint64(36)
        kept //= np.uint64(36)
    out[:digits.size] = digits.reshape(-1)
    return int(digits.size)


def decode_fused(words: NDArray[np.uint64], out: U8) -> int:
    """The same digits from the compiled decoder (one pass, straight into ``out``)."""
    from dicetable.sim import fused

    return fused.decode(words, LIMIT, BLOCK, PER_WORD, out)


class PackedDice:
    """Twelve rolls per kept 64-bit word (see the module). The stream of rolls depends on the
    generator alone: not on how it is drawn (chunk sizes) nor on which decoder runs."""

    def __init__(self, rng: np.random.Generator, fused: bool | None = None) -> None:
        self.bits: Any = rng.bit_generator
        if fused is None:  # only then is Numba loaded to ask (about 0.3 s of a process)
            from dicetable.sim import fused as fused_mod

            fused = fused_mod.AVAILABLE
        use = fused
        self.decode = decode_fused if use else decode_numpy
        self.left = np.zeros(0, dtype=np.uint8)

    def draw(self, rolls: int, lanes: int) -> U8:
        n = rolls * lanes
        have = self.left.size
        words = max(0, int((n - have) / (PER_WORD * KEPT))) + 8
        buf = np.empty(have + words * PER_WORD, dtype=np.uint8)
        buf[:have] = self.left
        while have < n:
            if buf.size < have + words * PER_WORD:
                buf = np.concatenate([buf[:have], np.empty(words * PER_WORD, np.uint8)])
            have += self.decode(self.bits.random_raw(words), buf[have:])
            words = 8 + int((n - have) / (PER_WORD * KEPT)) if have < n else words
        self.left = buf[n:have].copy()
        return buf[:n].reshape(rolls, lanes)


class ScriptedDice:
    """Given rolls, one sequence per lane (for differential tests against other simulators)."""

    def __init__(self, rolls: U8) -> None:
        self.rolls = rolls if rolls.ndim == 2 else rolls[:, None]
        self.at = 0

    def draw(self, rolls: int, lanes: int) -> U8:
        out = self.rolls[self.at:self.at + rolls, :lanes]
        self.at += rolls
        if out.shape[0] < rolls:  # past the script: the dice keep rolling (settle what is left)
            more = np.random.default_rng(len(self.rolls)).integers(
                0, 36, size=(rolls - out.shape[0], lanes), dtype=np.uint8)
            out = np.concatenate([out, more])
        return np.ascontiguousarray(out)


__all__ = ["BLOCK", "LIMIT", "PER_WORD", "Dice", "PackedDice", "RandomDice", "ScriptedDice",
           "decode_fused", "decode_numpy"]
