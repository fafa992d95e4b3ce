"""What the environments and the export share: the reward of a place, the seed of each game, the info key."""

from __future__ import annotations

import random

import numpy as np

from referee.common.errors import EnvArgumentError
from referee.engine.seeding import derive_seed
from referee.records.stats import placement_score

INFO_OBSERVATION = "observation"  # the key of the engine's Observation in infos[agent] and a step's info


def placement_reward(place: int, players: int) -> float:
    """The reward of finishing ``place`` (1 is first) of ``players``: the score the referee's standings give a
    place, ``(players - place) / (players - 1)``, first 1, last 0 (:func:`referee.records.stats.placement_score`)."""
    return float(placement_score(place, players))


class GameSeeds:
    """The seed of each game an environment deals: the seed given to reset, else the next of a sequence.

    ``reset(seed=s)`` deals the game a league deals with seed ``s``; each later
    ``reset()`` without a seed deals ``derive_seed(s, "env", k)`` for k = 1,
    2, ...; before any seed is given the sequence starts from the
    environment's own ``seed`` (or, if none, from the operating system's randomness).
    """

    def __init__(self, seed: int | None) -> None:
        _check_seed(seed, "seed")
        self._base = None if seed is None else int(seed)
        self._count = -1  # games dealt from the base so far, less one: the base itself is dealt first

    def next(self, seed: int | None) -> int:
        """The seed of the game to deal now, given ``reset``'s ``seed`` (``None``: the next of the sequence)."""
        _check_seed(seed, "reset(seed)")
        if seed is not None:
            self._base, self._count = int(seed), 0
            return self._base
        if self._base is None:
            self._base = random.SystemRandom().getrandbits(63)
        self._count += 1
        return self._base if self._count == 0 else derive_seed(self._base, "env", self._count)


def _check_seed(seed: object, where: str) -> None:
    if seed is not None and (seed.__class__ is bool or not isinstance(seed, (int, np.integer))):
        raise EnvArgumentError(f"{where} must be an int (a game's seed, as a league gives it) or None, got {seed!r}")
