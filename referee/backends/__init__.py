"""Where a league's games are played: on this machine (``local``) or on a Ray cluster (``ray``).

The league runner (:mod:`referee.apps.league`) owns the output folder: the results
file, resume, the leaderboards. A backend only plays games and hands each
finished one back: :meth:`Backend.play` is given the games still to play and
calls ``finished`` with each game's ``games.jsonl`` record as the game ends,
once the game's log is in ``OUTPUT/games/<game_id>.jsonl``. It checks
``stop()`` before it starts each game, so a sequential format can end a run
as soon as its answer is clear; games already started are finished.

A backend also counts each bot's failures over the league (:class:`Restarts`):
a bot that crashed, timed out or failed to start is restarted for its next
game at most ``max_restarts`` times; after that it forfeits its games.

- :mod:`referee.backends.local`: ``concurrency`` games at once in this
  process, bot processes kept between games (:mod:`referee.backends.pool`);
- :mod:`referee.backends.ray`: one Ray actor per game played at once, each
  keeping its own bot processes on the node Ray placed it on
  (docs/scaling.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from referee.common.errors import LeagueError

if TYPE_CHECKING:
    from referee.backends.backend import BackendFactory

# Importing this package loads no gRPC (the command line reads the names when it builds its options): the parts
# of a backend are in referee.backends.backend, each backend in its own module.
__all__ = ["BACKENDS", "BackendName", "backend_factory"]

BackendName = Literal["local", "ray"]
BACKENDS: tuple[BackendName, ...] = get_args(BackendName)


def backend_factory(name: BackendName, address: str | None = None) -> BackendFactory:
    """The backend called ``name`` (one of :data:`BACKENDS`); ``address``: the Ray cluster to join."""
    if name == "local":
        from referee.backends.local import LocalBackend

        return LocalBackend
    if name == "ray":
        from referee.backends.ray import RayBackend

        return lambda league, output, concurrency: RayBackend(league, output, concurrency, address=address)
    raise LeagueError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")
