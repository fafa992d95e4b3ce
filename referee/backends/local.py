"""The local backend: a league's games played in this process, ``concurrency`` at once (the default backend)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable

from referee.backends import Backend, FinishedGame
from referee.backends.pool import BotPool, play_scheduled
from referee.schedule import ScheduledGame


def auto_concurrency() -> int:
    """Games at once that this machine holds fairly: one per CPU the referee may use.

    Each game has one bot thinking at a time, so with a CPU for each game a
    bot that thinks never waits for one; the honest clock does not charge
    the wait when it does (referee.clock), but every game takes longer.
    """
    return max(1, len(os.sched_getaffinity(0)))


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
                log_path = self.game_log_dir / f"{game.game_id}.jsonl"
                record = await play_scheduled(self.league, self._pool, game, log_path)
                finished(FinishedGame(game, record))

        try:
            async with asyncio.TaskGroup() as workers:
                for _ in range(self.concurrency):
                    workers.create_task(worker())
        except BaseExceptionGroup as group:
            raise first_error(group) from None

    async def close(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            await pool.close()


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
