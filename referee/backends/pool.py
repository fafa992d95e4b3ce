"""Playing a league's games in one process: bot processes kept between games, and one scheduled game.

Bot processes are kept between games: a bot that ends a game healthy plays
its next game in the same process. A bot that crashed, timed out or failed
to start is restarted for its next game, at most ``max_restarts`` times over
the league (:class:`Restarts`); after that it forfeits its remaining games
in a league, and a ladder, told at once, suspends it (:mod:`referee.apps.ladder.run`).

No process plays two games on the same deals. The games of a table share
its seed (duplicate deals), and a process that played one of them would know
the others' cards. So each process of a bot plays in one *lane*
(:meth:`referee.leaguefile.schedule.ScheduledGame.lane`): lane ``k`` holds the ``k``-th
game the bot plays on each seed (the table's rotation ``k``, in most
formats), so a process plays one rotation of many tables and never meets a
deal again. A bot keeps a process for each lane it plays in; what it writes
in its ``shared:`` folders is kept for each lane apart too (``lane_spec``,
:mod:`referee.leaguefile.lanes`).

The local backend has one :class:`BotPool` for the run; on Ray each actor
has its own, on its node, and the driver adds up their failures.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from referee.leaguefile.lanes import lane_spec
from referee.play.match import Match, MatchResult, start_all
from referee.play.session import BotSession
from referee.protocol.faults import BotFault, FaultKind

if TYPE_CHECKING:
    from referee.engine.games import Game
    from referee.leaguefile.config import League
    from referee.leaguefile.schedule import ScheduledGame


# How a failure in a game is told (by release), apart from a failure to start (the start's own words).
IN_GAME = ("it crashed", "it stopped answering")


@dataclass(frozen=True)
class Failure:
    """A bot's process that failed (a crash, a start that failed), as :class:`Restarts` counts it."""

    bot: str
    detail: str  # what happened, in the referee's words
    log_path: Path | None  # the process's output
    count: int  # the bot's failures so far, this one included
    disabled: bool  # this failure took the bot past its restart limit: it is started no more


class Restarts:
    """Each bot's failures over a league, and the bots that reached the restart limit and play no more.

    ``told``, when set, hears of each failure as it is counted, in the event
    loop that counted it: a ladder records each, and suspends a version the
    moment it is disabled, so that no table seats it again.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.failures: dict[str, int] = defaultdict(int)
        self.disabled: dict[str, str] = {}  # bot name -> why it plays no more
        self.last_failed_log: dict[str, Path] = {}  # bot name -> the log of its last process that failed
        self.told: Callable[[Failure], None] | None = None

    def failed(self, name: str, detail: str, log_path: Path | None) -> None:
        """Count a failure of bot ``name`` (``detail``: what happened; ``log_path``: its process's output)."""
        if log_path is not None:
            self.last_failed_log[name] = log_path
        self.failures[name] += 1
        newly = self.failures[name] > self.limit and name not in self.disabled
        if newly:
            self.disabled[name] = self._why(detail)
        if self.told is not None:
            self.told(Failure(name, detail, log_path, self.failures[name], newly))

    def carry(self, name: str, failures: int, last: str) -> None:
        """Count ``failures`` of bot ``name`` before this run (a ladder's, from its register; ``last``: the last)."""
        self.failures[name] = failures
        if failures > self.limit:
            self.disabled.setdefault(name, self._why(last))

    def forgive(self, name: str) -> None:
        """Forget bot ``name``'s failures: it has its every restart again (a ladder's version reinstated)."""
        self.failures.pop(name, None)
        self.disabled.pop(name, None)
        self.last_failed_log.pop(name, None)

    def _why(self, detail: str) -> str:
        return f"not started: the restart limit ({self.limit}) was reached; last failure: {detail}"


class BotPool:
    """Bot processes kept between games, each in one lane, restarted after failures up to the league's limit.

    Each process's output goes to ``log_dir/NAME-TAGN.log`` (``N`` counts the
    bot's processes in this pool; ``tag`` tells pools that share a folder apart).
    """

    def __init__(self, league: League, log_dir: Path, restarts: Restarts | None = None, tag: str = "") -> None:
        self._league = league
        self._retired = _retired(league)
        self._log_dir = log_dir
        self._tag = tag
        self.restarts = restarts or Restarts(league.max_restarts)
        self._idle: dict[tuple[str, int], list[BotSession]] = defaultdict(list)  # (bot name, lane) -> processes
        self._busy: dict[BotSession, int] = {}  # process -> its lane
        self._started: dict[str, int] = defaultdict(int)

    async def acquire(self, name: str, lane: int = 0) -> BotSession | BotFault:
        """Return a started, handshaken process of bot ``name`` in ``lane``, or the fault that prevents one."""
        if name in self.restarts.disabled:
            return BotFault(FaultKind.STARTUP, self.restarts.disabled[name], name)
        idle = self._idle[(name, lane)]
        while idle:
            bot = idle.pop()
            if bot.usable:
                self._busy[bot] = lane
                return bot
            await bot.stop()
        spec = lane_spec(self._league.bot(name).spec, lane)
        self._started[name] += 1
        bot = BotSession(spec, self._log_dir / f"{name}-{self._tag}{self._started[name]}.log")
        try:
            await bot.start(self._league.game_setup)
        except BotFault as fault:
            self.restarts.failed(name, fault.detail, bot.log_path)
            return fault
        self._busy[bot] = lane
        return bot

    async def release(self, bot: BotSession) -> None:
        """Take a process back after a game: keep it in its lane if healthy and its bot plays on, else stop it.

        A process that is not healthy counts a failure of its bot.
        """
        lane = self._busy.pop(bot, 0)
        name = bot.spec.name
        if bot.usable and name not in self._retired:
            self._idle[(name, lane)].append(bot)
            return
        usable = bot.usable
        # Said before it is stopped, which ends the process whatever it did.
        why = f"{IN_GAME[0]}: {bot.process.exit_detail()}" if bot.has_exited() else IN_GAME[1]
        await bot.stop()
        if not usable:
            self.restarts.failed(name, why, bot.log_path)

    async def renew(self, league: League) -> None:
        """Start the bots of ``league`` from now on (a ladder's field changed); stop the idle ones that play no more.

        A bot that played no more and plays again (a ladder's version reinstated) has its every restart again.
        """
        self._league = league
        playing_again = self._retired - _retired(league)
        self._retired = _retired(league)
        for name in playing_again:
            self.restarts.forgive(name)
        retired = [key for key in self._idle if key[0] in self._retired]
        stopping = [bot for key in retired for bot in self._idle.pop(key)]
        await asyncio.gather(*(bot.stop() for bot in stopping), return_exceptions=True)

    async def close(self) -> None:
        """Stop every process, idle or busy."""
        bots = [bot for idle in self._idle.values() for bot in idle] + list(self._busy)
        self._idle.clear()
        self._busy.clear()
        await asyncio.gather(*(bot.stop() for bot in bots), return_exceptions=True)


def _retired(league: League) -> frozenset[str]:
    """The bots of ``league`` that play no new game: a process of one is not kept between games."""
    return frozenset(bot.name for bot in league.bots if not bot.plays)


class GameWatcher(Protocol):
    """Told of each game as it begins and ends (or is stopped before its end), in the event loop that plays it (the
    spectators' feeds: :class:`referee.publish.spectators.SpectatorFeeds`). It may read the game between
    decisions, never change it."""

    def started(self, game_id: str, game: Game, players: Sequence[str]) -> None: ...

    def finished(self, game_id: str) -> None: ...

    def stopped(self, game_id: str) -> None: ...


async def play_scheduled(
    league: League,
    pool: BotPool,
    game: ScheduledGame,
    log_path: Path,
    watcher: GameWatcher | None = None,
    notes_path: Path | None = None,
) -> dict[str, Any]:
    """Play one game of the schedule, each bot in its lane, its log to ``log_path`` and the bots' private notes,
    if they write any, to ``notes_path`` (:mod:`referee.records.notes`); return its record.

    ``watcher``, if given, is told when the game begins and ends (:class:`GameWatcher`)."""
    bots = await acquire_all(pool, [(name, game.lane(name)) for name in game.seats])
    began = time.time()
    clock = time.perf_counter()
    try:
        match = Match(
            league.game,
            bots,
            seed=game.seed,
            game_id=game.game_id,
            timing=league.timing,
            turn_limit=league.turn_limit,
            policy=league.fault_policy,
            log_path=log_path,
            players=list(game.seats),
            notes_path=notes_path,
        )
        if watcher is not None:
            watcher.started(game.game_id, match.game, list(game.seats))
        try:
            result = await match.play()
        except BaseException:
            if watcher is not None:
                watcher.stopped(game.game_id)  # played again from its start: its feed goes
            raise
        if watcher is not None:
            watcher.finished(game.game_id)
    finally:
        await asyncio.gather(*(pool.release(bot) for bot in bots if isinstance(bot, BotSession)))
    return game_record(game, league, result, began, time.perf_counter() - clock)


async def acquire_all(pool: BotPool, seats: Sequence[tuple[str, int]]) -> list[BotSession | BotFault]:
    """A process (or the fault that prevents one) for each (bot, lane); interrupted, every process goes back."""

    async def give_back(acquired: list[BotSession | BotFault]) -> None:
        await asyncio.gather(*(pool.release(bot) for bot in acquired if isinstance(bot, BotSession)))

    return await start_all([pool.acquire(name, lane) for name, lane in seats], give_back)


def game_record(
    game: ScheduledGame, league: League, result: MatchResult, started: float, wall_s: float
) -> dict[str, Any]:
    """The ``games.jsonl`` line of a finished game; wall-clock figures only under ``timing``."""
    return {
        **game.record(),
        "game": league.game,
        "finish_order": result.placements,  # seats, first place first
        "hands_played": result.hands_played,
        "decisions": result.decisions,
        "faults": [{kind.value: count for kind, count in sorted(counter.items())} for counter in result.faults],
        # Only the fault kind: the details (exit codes, paths, timings) are in the game's log.
        "forfeits": {str(seat): forfeit.kind.value for seat, forfeit in sorted(result.forfeits.items())},
        **({"void": result.void_reason} if result.void else {}),
        "timing": {
            "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="milliseconds"),
            "wall_s": round(wall_s, 3),
            "latency_ms": [[round(ms, 3) for ms in seat] for seat in result.latencies_ms],
        },
    }
