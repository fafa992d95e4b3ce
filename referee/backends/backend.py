"""What every backend is: a player of a league's games that hands each one back as it finishes.

See :mod:`referee.backends` for the backends and how the league runner uses them.
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from referee.backends import BackendName
from referee.backends.pool import GameWatcher, Restarts
from referee.records import notes
from referee.records.gamelog import GAME_LOG_DIR as GAME_LOG_DIR  # re-exported: the league and the ladder make it
from referee.records.gamelog import log_path
from referee.records.retention import Retention

if TYPE_CHECKING:
    from referee.leaguefile.config import League
    from referee.leaguefile.schedule import ScheduledGame

BOT_LOG_DIR = "logs"  # OUTPUT/logs/: each bot process's output
NOTES_DIR = notes.NOTES_DIR  # OUTPUT/notes/<game_id>.jsonl.zst: the bots' private notes of each game, if any


@dataclass(frozen=True)
class FinishedGame:
    """A game that ended: its place in the schedule and its ``games.jsonl`` record (its log is written)."""

    game: ScheduledGame
    record: dict[str, Any]  # its games.jsonl line (referee.records.results)


class Backend(ABC):
    """Plays a league's games and hands each one back as it finishes; used as ``async with``.

    ``concurrency`` is the number of games at once asked for (``None``:
    auto); once open, :attr:`concurrency` is the number the backend plays.
    """

    name: BackendName

    def __init__(self, league: League, output: Path, concurrency: int | None) -> None:
        self.league = league
        self.output = output
        self.asked_concurrency = concurrency
        self.concurrency = concurrency or 1
        self.restarts = Restarts(league.max_restarts)
        # Told of each game played in this process (a backend that plays games elsewhere tells nobody).
        self.watcher: GameWatcher | None = None
        self.retention: Retention | None = None  # the logs kept (keep_logs), made from the records when opened

    @property
    def game_log_dir(self) -> Path:
        return self.output / GAME_LOG_DIR

    @property
    def bot_log_dir(self) -> Path:
        return self.output / BOT_LOG_DIR

    def game_paths(self, game: ScheduledGame) -> tuple[Path, Path]:
        """Where ``game``'s log and its bots' private notes (written only if a bot wrote one) go: the league's
        ``games/`` and ``notes/``, or those of the game's own folder (an author's test on a ladder)."""
        folder = self.output
        if game.folder is not None:
            folder = self.output / game.folder
            (folder / GAME_LOG_DIR).mkdir(parents=True, exist_ok=True)
        return log_path(folder / GAME_LOG_DIR, game.game_id), notes.notes_path(folder / NOTES_DIR, game.game_id)

    def watcher_of(self, game: ScheduledGame) -> GameWatcher | None:
        """Who is told of ``game`` as it is played (the live pages): nobody for a game of a folder of its own."""
        return self.watcher if game.folder is None else None

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

    def ended(self, finished: Callable[[FinishedGame], None], done: FinishedGame) -> None:
        """Hand a game that ended back (``finished``, which records it); then the logs that the league's
        ``keep_logs`` no longer keeps go (:mod:`referee.records.retention`)."""
        finished(done)
        if self.retention is not None:
            self.retention.ended(done.record)

    async def renew(self, league: League) -> None:
        """Play the games handed to :meth:`play` from now on with ``league``'s bots (a ladder's field changed).

        ``league`` is the same league with other bots: a version entered, or
        one withdrawn. Games under way end with the processes they started
        with; processes of a bot that plays no more are not kept.
        """
        self.league = league

    async def close(self) -> None:
        """Stop every bot process and everything the backend started."""

    async def __aenter__(self) -> Self:
        try:
            await self.open()
            self.retention = await asyncio.to_thread(Retention.of, self.output, self.league.keep_logs)
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()


BackendFactory = Callable[["League", Path, "int | None"], Backend]


def auto_concurrency() -> int:
    """Games at once that this machine holds fairly: one per CPU the referee may use.

    Each game has one bot thinking at a time, so with a CPU for each game a
    bot that thinks never waits for one; the honest clock does not charge
    the wait when it does (referee.protocol.clock), but every game takes longer.
    """
    return max(1, len(os.sched_getaffinity(0)))


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The error that stopped a group of tasks (the others were cancelled because of it)."""
    leaves: list[BaseException] = []

    def collect(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                collect(inner)
        else:
            leaves.append(error)

    collect(group)
    return next((error for error in leaves if not isinstance(error, asyncio.CancelledError)), leaves[0])
