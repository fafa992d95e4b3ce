"""Stop the Bus (2-9 players) as a PettingZoo AEC environment: ``env(players=3, seed=...)`` or ``raw_env(...)``.

See :mod:`referee.env.aec` and ``docs/environments.md``.
"""

from __future__ import annotations

from typing import Any

from referee.engine.games import StopTheBus
from referee.env.aec import BragEnv, wrapped

GAME = StopTheBus.name


def raw_env(players: int = 3, **options: Any) -> BragEnv:
    """The environment itself: an illegal action raises :class:`referee.common.errors.EnvArgumentError`."""
    return BragEnv(GAME, players, **options)


def env(players: int = 3, **options: Any) -> Any:
    """The environment in PettingZoo's usual wrappers: an illegal action ends the game, -1 to the agent that
    played it (see :func:`referee.env.aec.wrapped`); the calls must come in order."""
    return wrapped(raw_env(players, **options))
