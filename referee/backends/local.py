"""The local backend: a league's games played in this process, ``concurrency`` at once (the default backend)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from referee.backends.backend import Backend, FinishedGame, auto_concurrency, first_error
from referee.backends.pool import BotPool, play_scheduled
from referee.leaguefile.schedule import ScheduledGame

if TYPE_CHECKING:
    from referee.leaguefile.config import League


class LocalBackend(Backend):
    """Games on this machine: ``concurrency`` workers share one :class:`BotPool`."""

    name = "local"

    async def open(self) -> None:
        self.concurrency = self.asked_concurrency or auto_concurrency()
        self._pool = BotPool(self.league, self.bot_log_dir, self.restarts)

    async def play(
        self,
        games: Iterable[ScheduledGame],
        finished: Callable[[FinishedGame], None],
        stop: Callable[[], bool],
    ) -> None:
        # `concurrency` workers take games from one shared iterator, so memory does
        # not grow with the number of games (no task per scheduled game).
        remaining = iter(games)

        async def worker() -> None:
            while not stop():
                game = next(remaining, None)
                if game is None:
                    return
                log_file, notes = self.game_paths(game)
                record = await play_scheduled(self.league, self._pool, game, log_file, self.watcher_of(game), notes)
                self.ended(finished, FinishedGame(game, record))

        try:
            async with asyncio.TaskGroup() as workers:
                for _ in range(self.concurrency):
                    workers.create_task(worker())
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    async def renew(self, league: League) -> None:
        await super().renew(league)
        await self._pool.renew(league)

    async def close(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            await pool.close()
