"""Where a league's games are played: on this machine (``local``) or on a Ray cluster (``ray``).

The league runner (:mod:`referee.league`) owns the output folder: the results
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

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from referee.backends.pool import Restarts

if TYPE_CHECKING:
    from referee.config import League
    from referee.schedule import ScheduledGame

BACKENDS = ("local", "ray")
GAME_LOG_DIR = "games"  # OUTPUT/games/<game_id>.jsonl: each game's log
BOT_LOG_DIR = "logs"  # OUTPUT/logs/: each bot process's output


@dataclass(frozen=True)
class FinishedGame:
    """A game that ended: its place in the schedule and its ``games.jsonl`` record (its log is written)."""

    game: ScheduledGame
    record: dict[str, Any]  # its games.jsonl line (referee.results)


class Backend(ABC):
    """Plays a league's games and hands each one back as it finishes; used as ``async with``.

    ``concurrency`` is the number of games at once asked for (``None``:
    auto); once open, :attr:`concurrency` is the number the backend plays.
    """

    name: str

    def __init__(self, league: League, output: Path, concurrency: int | None) -> None:
        self.league = league
        self.output = output
        self.asked_concurrency = concurrency
        self.concurrency = concurrency or 1
        self.restarts = Restarts(league.max_restarts)

    @property
    def game_log_dir(self) -> Path:
        return self.output / GAME_LOG_DIR

    @property
    def bot_log_dir(self) -> Path:
        return self.output / BOT_LOG_DIR

    async def open(self) -> None:
        """Get ready to play (a Ray backend connects to its cluster); set :attr:`concurrency`."""

    @abstractmethod
    async def play(
        self,
        games: Iterable[ScheduledGame],
        finished: Callable[[FinishedGame], None],
        stop: Callable[[], bool],
    ) -> None:
        """Play ``games`` (up to :attr:`concurrency` at once) until they are done or ``stop()`` is true.

        ``finished`` is called once for each game that ended, in the order
        they end; an exception it raises stops the run. ``stop`` is checked
        before each game is started.
        """

    async def close(self) -> None:
        """Stop every bot process and everything the backend started."""

    async def __aenter__(self) -> Self:
        try:
            await self.open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()


BackendFactory = Callable[["League", Path, "int | None"], Backend]


def backend_factory(name: str, address: str | None = None) -> BackendFactory:
    """The backend called ``name`` (one of :data:`BACKENDS`); ``address``: the Ray cluster to join."""
    if name == "local":
        from referee.backends.local import LocalBackend

        return LocalBackend
    if name == "ray":
        from referee.backends.ray import RayBackend

        return lambda league, output, concurrency: RayBackend(league, output, concurrency, address=address)
    raise ValueError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")
