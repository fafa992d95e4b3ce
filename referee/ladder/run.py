"""A ladder's run: judge what is submitted while games go on, draw tables as they are reached, keep every record current.

Two tasks share the run. The *judge* looks at the submissions folder every
``poll_s`` seconds and judges each new or changed submission
(:mod:`referee.ladder.entries`); after each verdict it rewrites
``league.json``, the reports and the page, and hands the versions now active
to the games. The *games* are played by one backend, opened when the first
table can be drawn and kept for the whole run, ``concurrency`` at once: first
the games of tables drawn before but not finished (a run stopped with a table
half played finishes it), then a table drawn (:func:`referee.ladder.draw.draw_table`,
where the standings last published are unsure unless the ladder file says
``draw: even``) and recorded in ``tables.jsonl``, with the places it was
drawn from, each time the games run out, every seat rotation of it on its
seed. A version accepted while games are under way
sits at the next table drawn; while fewer versions are active than a table
seats, the games wait for the judge.

``games.jsonl``, ``register.jsonl`` and ``tables.jsonl`` are appended a whole
line at a time and flushed to disk before anything depends on them, so a run
stopped in any way (Ctrl-C, SIGTERM, kill -9) resumes where it stopped with
no game played twice: a game is known by its id, ``r1-tTABLE-sROTATION``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.backends.base import BOT_LOG_DIR, GAME_LOG_DIR, Backend, BackendFactory, FinishedGame, first_error
from referee.backends.local import LocalBackend
from referee.config import League
from referee.errors import LeagueError
from referee.ladder.draw import UNSURE, Place, Played, draw_table
from referee.ladder.entries import changed_submissions, judge, ladder_bots, now, submission_verdicts, write_reports
from referee.ladder.file import Ladder
from referee.ladder.history import (
    DrawnTable,
    Register,
    StatusChange,
    Tables,
)
from referee.league import claim_output, output_folder, publish_standings
from referee.publish.live import LiveSite
from referee.results import ACCEPTED, RESULTS_FILE, ResultsFile, write_league
from referee.schedule import ScheduledGame
from referee.season import ACTIVE, DISQUALIFIED, BotStatus
from referee.seeding import derive_seed
from referee.visibility import DealsInPlay


@dataclass
class LadderSummary:
    """What a run did: the games it played, the versions it accepted and rejected."""

    played: int = 0
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def table_seed(ladder: Ladder, number: int) -> int:
    """Table ``number``'s seed, so every deal of its games: from the ladder's seed and the number alone."""
    return derive_seed(ladder.league.seed, "ladder-table", number)


def published_places(output: Path, bots: list[str]) -> dict[str, Place]:
    """Each of ``bots``' place in the standings last published (``leaderboard.json``, rewritten as games finish
    by the page writer, apart from the games): none where there are no standings yet, or they cannot be read."""
    try:
        rows: Any = json.loads((output / "leaderboard.json").read_text(encoding="utf-8"))["rows"]
        found = {row["bot"]: Place.of([row["rank"], *row["rank_range"]]) for row in rows}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # being replaced as it is read cannot happen (replaced in one step); damaged: drawn evenly
    return {bot: found[bot] for bot in bots if bot in found}


def ladder_league(ladder: Ladder, register: Register) -> League:
    """The league the ladder plays now: its settings and every accepted version, with its status."""
    return dataclasses.replace(ladder.league, bots=ladder_bots(ladder, register))


def write_ladder_league(ladder: Ladder, register: Register, league: League) -> None:
    """Write ``league.json``: ``league`` (its versions, with their statuses) and every version judged, for the pages."""
    write_league(ladder.output, league, league, submissions=submission_verdicts(register))


async def run_ladder(
    ladder: Ladder,
    *,
    concurrency: int | None = None,
    backend: BackendFactory | None = None,
    max_games: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> LadderSummary:
    """Run the ladder until it is stopped (cancelled: Ctrl-C, SIGTERM), or until it has started ``max_games``.

    ``say`` hears of each version judged and each game finished.
    """
    output = ladder.output
    summary = LadderSummary()
    output.mkdir(parents=True, exist_ok=True)
    with output_folder(output), contextlib.ExitStack() as records:
        register = Register(output)
        records.callback(register.close)
        tables = Tables(output)
        records.callback(tables.close)
        league = ladder_league(ladder, register)
        claim_output(league, output)
        results = ResultsFile(output / RESULTS_FILE, tables.games())
        records.callback(results.close)
        (output / BOT_LOG_DIR).mkdir(exist_ok=True)
        (output / GAME_LOG_DIR).mkdir(exist_ok=True)
        write_reports(ladder, register)
        # What may be shown and when: every table drawn is known before any game starts (referee.visibility).
        deals = DealsInPlay(output, league.spectator_delay_s, accounted=results.size)
        season = Season(ladder, league, register, tables, results, deals)
        await asyncio.to_thread(deals.write)
        site = season.site = LiveSite(output, None, deals=deals, static_replays=league.static_replays)
        deals.on_shown = site.shown
        site.rebuild(sorted(results.finished.difference(deals.held())))
        showing = asyncio.get_running_loop().create_task(deals.run())
        try:
            async with contextlib.AsyncExitStack() as playing, asyncio.TaskGroup() as tasks:
                judging = tasks.create_task(_judge_submissions(season, summary, say))
                await _play(season, playing, backend or LocalBackend, concurrency, max_games, summary, say)
                judging.cancel()  # --games reached: a version being judged is judged afresh by the next run
            await asyncio.gather(deals.settle(), site.spectators.settle())  # the last games' spectator delay
        except BaseExceptionGroup as group:
            raise first_error(group) from None
        finally:
            showing.cancel()
            await asyncio.gather(showing, return_exceptions=True)
            with contextlib.suppress(OSError):
                deals.write()
            await site.close()
            with contextlib.suppress(Exception):  # stopped or failed: the standings of the games shown so far
                publish_standings(output)
    return summary


class Season:
    """What the judge and the games share: the league the ladder plays now, and the backend playing it."""

    site: LiveSite  # the pages, set once the deals are known

    def __init__(
        self,
        ladder: Ladder,
        league: League,
        register: Register,
        tables: Tables,
        results: ResultsFile,
        deals: DealsInPlay,
    ):
        self.ladder = ladder
        self.register = register
        self.results = results
        self.league = league
        write_ladder_league(ladder, register, league)
        self.games = LadderGames(ladder, league, tables, results, deals)
        self.players: Backend | None = None  # opened when the first table can be drawn
        self.changed = asyncio.Event()  # set by each verdict: the games waiting for versions look again

    def tables_drawn(self) -> int:
        return len(self.games.tables.drawn)

    async def judged(self) -> None:
        """After a verdict (the author's report is written): rewrite league.json and the page; play the versions now."""
        self.league = ladder_league(self.ladder, self.register)
        write_ladder_league(self.ladder, self.register, self.league)
        self.games.renew(self.league)
        if self.players is not None:
            await self.players.renew(self.league)
        self.site.refresh()
        self.changed.set()


async def _judge_submissions(season: Season, summary: LadderSummary, say: Callable[[str], None]) -> None:
    """Judge each new or changed submission, every ``poll_s`` seconds, for as long as the run lasts."""
    ladder, register = season.ladder, season.register
    while True:
        # Reading every author's folder takes time: in a thread, so the games' clocks are not held up.
        for author, folder, digest in await asyncio.to_thread(changed_submissions, ladder, register):
            verdict = await judge(ladder, register, author, folder, digest, say, season.tables_drawn)
            if verdict is None:
                continue  # the folder changed while it was copied: judged afresh at the next look
            (summary.accepted if verdict.verdict == ACCEPTED else summary.rejected).append(verdict.bot)
            await season.judged()
        await asyncio.sleep(ladder.poll_s)


async def _play(
    season: Season,
    playing: contextlib.AsyncExitStack,
    backend: BackendFactory,
    concurrency: int | None,
    max_games: int | None,
    summary: LadderSummary,
    say: Callable[[str], None],
) -> None:
    """Play games while there are tables to draw, waiting for versions when too few are active."""
    ladder, output = season.ladder, season.ladder.output
    concurrency = concurrency or ladder.league.concurrency
    started = 0
    said_waiting = ""

    def finished(done: FinishedGame) -> None:
        season.results.append(done.record)
        season.games.deals.ended(done.game.game_id, season.results.size)
        season.games.in_play.discard(done.game.game_id)
        summary.played += 1
        seats = done.record["seats"]
        say(f"{done.game.game_id}: " + " > ".join(seats[seat] for seat in done.record["finish_order"]))

    running = asyncio.current_task()

    def stop() -> bool:
        # Asked before each game: a run asked to stop (Ctrl-C, SIGTERM) starts no game, whatever a game's task did
        # with its own cancellation, as the tables to draw never run out.
        if running is not None and running.cancelling():
            return True
        return max_games is not None and started >= max_games

    def counted(games: Iterator[ScheduledGame]) -> Iterator[ScheduledGame]:
        nonlocal started
        for game in games:
            started += 1
            yield game

    while not stop():
        season.changed.clear()
        games = season.games
        if not games.has_games():
            size = season.league.table_size
            waiting = (
                f"waiting for submissions: a table needs {size} active versions, the ladder has {len(games.active)}"
            )
            if waiting != said_waiting:
                say(waiting)
            said_waiting = waiting
            await season.changed.wait()
            continue
        said_waiting = ""
        if season.players is None:
            players = backend(season.league, output, concurrency)
            season.players = await playing.enter_async_context(players)
            season.players.watcher = season.site.watch()
        await season.players.play(counted(iter(games)), finished, stop)


class LadderGames:
    """The games a ladder plays next: unfinished games of tables drawn before, then tables drawn as they are reached.

    The versions that may be drawn are those active now (:meth:`renew` after
    each verdict); the tables are drawn from what was drawn before them.
    """

    def __init__(self, ladder: Ladder, league: League, tables: Tables, results: ResultsFile, deals: DealsInPlay):
        self.ladder = ladder
        self.tables = tables
        self.results = results
        self.deals = deals
        self.in_play: set[str] = set()  # the games handed to the backend and not yet finished
        self.disqualified: set[str] = set()
        self.renew(league)
        # Each bot's games and each pair's meetings so far, kept as tables are drawn (not added up again each time).
        self.played = Played()
        for drawn in tables.drawn:
            self.played = self.played.with_table(drawn.bots, len(drawn.bots))
            self._deal(drawn)

    def _deal(self, table: DrawnTable) -> None:
        """Tell the deals of ``table``: its games are dealt alike (those seating a disqualified version: never
        played)."""
        games = [game.game_id for game in table.games()]
        finished = [game for game in games if game in self.results.finished]
        unplayed = games if self.disqualified.intersection(table.bots) else ()
        self.deals.deal(games, finished=finished, unplayed=unplayed)

    def renew(self, league: League) -> None:
        """Draw from ``league``'s active versions from now on."""
        self.table_size = league.table_size
        self.active = [bot.name for bot in league.bots if bot.status == ACTIVE]
        disqualified = {bot.name for bot in league.bots if bot.status == DISQUALIFIED}
        newly, self.disqualified = disqualified - self.disqualified, disqualified
        for table in self.tables.drawn if newly else ():
            if newly.intersection(table.bots):  # its games not started yet never will be: its deals are done
                ids = (game.game_id for game in table.games())
                self.deals.unplayed(
                    [game for game in ids if game not in self.results.finished and game not in self.in_play]
                )

    def unfinished(self) -> Iterator[ScheduledGame]:
        """The games of tables drawn before that did not finish (those of a table seating a disqualified bot: never).

        Asked only when no game is under way, so a game not finished is one not started.
        """
        for table in self.tables.drawn:
            if self.disqualified.intersection(table.bots):
                continue
            for game in table.games():
                if game.game_id not in self.results.finished:
                    yield game

    def has_games(self) -> bool:
        return len(self.active) >= self.table_size or next(self.unfinished(), None) is not None

    def __iter__(self) -> Iterator[ScheduledGame]:
        for game in self.unfinished():
            self.in_play.add(game.game_id)
            yield game
        ladder = self.ladder
        while len(self.active) >= self.table_size:  # read again at each table: a verdict may change it meanwhile
            number = len(self.tables.drawn) + 1
            size = self.table_size
            places = published_places(ladder.output, self.active) if ladder.draw == UNSURE else {}
            drawn_from = places or None  # no bot placed yet: drawn evenly, and recorded so
            seed = ladder.league.seed
            bots = draw_table(self.active, self.played, size, ladder.placement_games, seed, number, drawn_from)
            table = DrawnTable(number, bots, table_seed(ladder, number), drawn_from)
            self.tables.add(table)  # on disk before its first game starts
            self._deal(table)  # and its deals known
            self.played = self.played.with_table(bots, size)
            for game in table.games():
                self.in_play.add(game.game_id)
                yield game


def change_status(ladder: Ladder, bot: str, status: BotStatus, reason: str) -> StatusChange:
    """Withdraw or disqualify accepted version ``bot``: record it in ``register.jsonl`` and rewrite the records."""
    output = ladder.output
    output.mkdir(parents=True, exist_ok=True)
    with output_folder(output):
        register = Register(output)
        tables = Tables(output)
        try:
            accepted = [judged.bot for judged in register.judged() if judged.verdict == ACCEPTED]
            if bot not in accepted:
                raise LeagueError(
                    f"{output}: {bot!r} is no version accepted on this ladder; the versions are: "
                    + (", ".join(accepted) or "none yet")
                )
            change = StatusChange(bot, status, reason, now(), len(tables.drawn))
            register.add(change)
            write_ladder_league(ladder, register, ladder_league(ladder, register))
            write_reports(ladder, register)
        finally:
            tables.close()
            register.close()
        publish_standings(output)
    return change
