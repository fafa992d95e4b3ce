"""A ladder's run: judge what is submitted while games go on, draw tables as they are reached, keep every record current.

Three tasks share the run. The *judge* looks at the submissions folder every
``poll_s`` seconds and judges each new or changed submission
(:mod:`referee.apps.ladder.entries`); after each verdict it rewrites
``league.json``, the reports and the page, and hands the versions now active
to the games. The *orders* task looks for the organiser's orders as often
(:mod:`referee.apps.ladder.orders`: a version withdrawn, disqualified or
reinstated while the ladder runs) and applies each the same way. The *games*
are played by one backend, opened when the first table can be drawn and kept
for the whole run, ``concurrency`` at once: first the games of tables drawn
before but not finished (a run stopped with a table half played finishes
it), then a table drawn (:func:`referee.apps.ladder.table_draw.draw_table`, where the
standings last published are unsure unless the ladder file says ``draw:
even``) and recorded in ``tables.jsonl``, with the places it was drawn from,
each time the games run out, every seat rotation of it on its seed. A
version accepted while games are under way sits at the next table drawn;
while fewer versions are active than a table seats, or the standings are
settled as the ladder file's ``rest:`` asks (:mod:`referee.apps.ladder.rest`),
the games wait for the field to change.

A version that cannot play is *suspended* the moment it reaches its restart
limit or forfeits ``forfeits_in_a_row`` games in a row (:mod:`referee.apps.ladder.guard`):
the change is recorded in the register, no table seats it again, and the
games not started of the tables drawn with it are dropped, as a
disqualified version's are (the deals told so, :meth:`DealsInPlay.unplayed`).

``games.jsonl``, ``register.jsonl`` and ``tables.jsonl`` are appended a whole
line at a time and flushed to disk before anything depends on them, so a run
stopped in any way (Ctrl-C, SIGTERM, kill -9) resumes where it stopped with
no game played twice: a game is known by its id, ``r1-tTABLE-sROTATION``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.apps.ladder import orders
from referee.apps.ladder.author_tests import AuthorTests
from referee.apps.ladder.entries import (
    changed_submissions,
    judge,
    ladder_league,
    now,
    write_ladder_league,
    write_reports,
)
from referee.apps.ladder.file import Ladder
from referee.apps.ladder.guard import STARTING, Guard, forfeit_streaks, keep_start_output, plain_detail
from referee.apps.ladder.history import DrawnTable, Failure, Register, StatusChange, Tables
from referee.apps.ladder.orders import change_status
from referee.apps.ladder.rest import settled
from referee.apps.ladder.table_draw import UNSURE, Place, Played, draw_table
from referee.apps.league import claim_output, output_folder, publish_standings
from referee.backends.backend import BOT_LOG_DIR, GAME_LOG_DIR, Backend, BackendFactory, FinishedGame, first_error
from referee.backends.local import LocalBackend
from referee.backends.pool import IN_GAME
from referee.backends.pool import Failure as ProcessFailure
from referee.common.errors import LeagueError, OutputError
from referee.engine.seeding import derive_seed
from referee.leaguefile.config import League
from referee.leaguefile.schedule import ScheduledGame
from referee.protocol.standing import ACTIVE, SUSPENDED, WITHDRAWN
from referee.publish.live import LiveSite
from referee.records.results import ACCEPTED, RESULTS_FILE, ResultsFile
from referee.records.visibility import DealsInPlay

__all__ = [  # change_status, ladder_league and write_ladder_league: where the ladder's callers have found them
    "LadderGames",
    "LadderRun",
    "LadderSummary",
    "change_status",
    "ladder_league",
    "published_places",
    "run_ladder",
    "table_seed",
    "write_ladder_league",
]

LEADERBOARD_FILE = "leaderboard.json"


@dataclass
class LadderSummary:
    """What a run did: the games it played, the versions it accepted, rejected and suspended."""

    played: int = 0
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    suspended: list[str] = field(default_factory=list)


def table_seed(ladder: Ladder, number: int) -> int:
    """Table ``number``'s seed, so every deal of its games: from the ladder's seed and the number alone."""
    return derive_seed(ladder.league.seed, "ladder-table", number)


def published_places(output: Path, bots: list[str]) -> dict[str, Place]:
    """Each of ``bots``' place in the standings last published (``leaderboard.json``, rewritten as games finish
    by the page writer, apart from the games): none where there are no standings yet, or they cannot be read."""
    try:
        rows: Any = json.loads((output / LEADERBOARD_FILE).read_text(encoding="utf-8"))["rows"]
        found = {row["bot"]: Place.of([row["rank"], *row["rank_range"]]) for row in rows}
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # being replaced as it is read cannot happen (replaced in one step); damaged: drawn evenly
    return {bot: found[bot] for bot in bots if bot in found}


def busy_refusal(ladder: Ladder) -> OutputError:
    """What a second run of a ladder whose output is held is told: what to do, never another --output."""
    return OutputError(
        f"{ladder.output}: this ladder is running already (another `referee ladder {ladder.source}` holds its output "
        "folder); stop that one first (Ctrl-C, or SIGTERM to it), or give the ladder file another output: to start "
        "another season. --withdraw, --disqualify, --reinstate and the authors' options work while it runs."
    )


async def run_ladder(
    ladder: Ladder,
    *,
    concurrency: int | None = None,
    backend: BackendFactory | None = None,
    max_games: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> LadderSummary:
    """Run the ladder until it is stopped (cancelled: Ctrl-C, SIGTERM), or until it has started ``max_games``.

    ``say`` hears of each version judged, suspended or changed by an order, each game finished, and the ladder
    waiting, resting and waking.
    """
    output = ladder.output
    summary = LadderSummary()
    output.mkdir(parents=True, exist_ok=True)
    holding = contextlib.ExitStack()
    try:
        holding.enter_context(output_folder(output))
    except OutputError:
        if orders.held_by_a_run(output):
            raise busy_refusal(ladder) from None  # not a league's words: a ladder has no --output
        raise
    with holding, contextlib.ExitStack() as records:
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
        # What may be shown and when: every table drawn is known before any game starts (referee.records.visibility).
        deals = DealsInPlay(output, league.spectator_delay_s, accounted=results.size)
        ladder_run = LadderRun(ladder, league, register, tables, results, deals, summary, say)
        await asyncio.to_thread(deals.write)
        site = ladder_run.site = LiveSite(output, None, deals=deals, static_replays=league.static_replays)
        deals.on_shown = site.shown
        site.rebuild(sorted(results.finished.difference(deals.held())))
        await ladder_run.guard_from_records()  # a version past its limits when the last run stopped is suspended now
        showing = asyncio.get_running_loop().create_task(deals.run())
        try:
            async with contextlib.AsyncExitStack() as playing, asyncio.TaskGroup() as tasks:
                helpers = [
                    tasks.create_task(_judge_submissions(ladder_run)),
                    tasks.create_task(_take_orders(ladder_run)),
                    tasks.create_task(_keep_players_current(ladder_run)),
                ]
                await _play(ladder_run, playing, backend or LocalBackend, concurrency, max_games)
                for helper in helpers:
                    helper.cancel()  # --games reached: a version being judged is judged afresh by the next run
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


class LadderRun:
    """One run of a ladder, as its judge, orders and games share it: its records, the league it plays now, and the
    backend playing it."""

    site: LiveSite  # the pages, set once the deals are known

    def __init__(
        self,
        ladder: Ladder,
        league: League,
        register: Register,
        tables: Tables,
        results: ResultsFile,
        deals: DealsInPlay,
        summary: LadderSummary,
        say: Callable[[str], None],
    ):
        self.ladder = ladder
        self.register = register
        self.results = results
        self.league = league
        self.summary = summary
        self.say = say
        write_ladder_league(ladder, register, league)
        self.games = LadderGames(ladder, league, tables, results, deals, register.closed_before())
        self.players: Backend | None = None  # opened when the first table can be drawn
        self.changed = asyncio.Event()  # set by each change of the field: the games waiting for it look again
        self.renewal = asyncio.Event()  # set when the backend is to learn the league now (after a suspension)
        self.last_change = ""  # what changed the field last, for the console when a resting ladder wakes
        failures = {bot: [each.detail for each in found] for bot, found in register.failures_since_entry().items()}
        self.guard = Guard(ladder.league.max_restarts, ladder.forfeits_in_a_row, self.suspend, failures)
        self.tests = AuthorTests(ladder.output, ladder.author_tests, say)  # authors' own A/B tests, unrated
        self.tests.load(league)

    def tables_drawn(self) -> int:
        return len(self.games.tables.drawn)

    async def guard_from_records(self) -> None:
        """Count the forfeits in a row that the end of ``games.jsonl`` holds, and suspend each active version that a
        run before this one left past its limits."""
        statuses = self.register.statuses()
        entered = {bot: tables for bot, tables in self.register.entered_at().items() if statuses.get(bot) == ACTIVE}
        path = self.ladder.output / RESULTS_FILE
        self.guard.carry(await asyncio.to_thread(forfeit_streaks, path, entered, self.ladder.forfeits_in_a_row))

    # ----- the field changes ----------------------------------------------------------------------------------

    def _field_changed(self, what: str) -> None:
        """The register changed (a verdict, a status): the league now, its records and pages, the games to draw."""
        self.league = ladder_league(self.ladder, self.register)
        write_ladder_league(self.ladder, self.register, self.league)
        self.games.renew(self.league, self.register.closed_before())
        self.tests.renew(self.league)
        self.site.refresh()
        self.last_change = what
        self.changed.set()

    async def judged(self, bot: str, verdict: str) -> None:
        """After a verdict (the author's report is written): rewrite league.json and the page; play the versions now."""
        self._field_changed(f"{bot} {verdict}")
        if self.players is not None:
            await self.players.renew(self.league)

    def change(self, change: StatusChange) -> None:
        """Record ``change`` and play on with the field it makes (the backend told by :meth:`renewal`, or the
        caller)."""
        self.register.add(change)
        author = next(judged.author for judged in self.register.judged() if judged.bot == change.bot)
        write_reports(self.ladder, self.register, [author])
        if change.status == ACTIVE:
            self.guard.entered(change.bot)
            if self.players is not None:
                self.players.restarts.forgive(change.bot)
        words = "reinstated" if change.status == ACTIVE else change.status
        self._field_changed(f"{change.bot} {words}")

    def suspend(self, bot: str, reason: str) -> None:
        """Suspend version ``bot`` now (the guard found it cannot play): no table seats it again."""
        if self.register.statuses().get(bot) not in (ACTIVE, WITHDRAWN):
            return  # disqualified or suspended already: nothing to stop
        self.change(StatusChange(bot, SUSPENDED, reason, now(), self.tables_drawn()))
        self.renewal.set()
        self.summary.suspended.append(bot)
        self.say(
            f"warning: {bot} suspended: {reason}. It plays no new game, and the games not started of its tables are "
            f"dropped; its author's page says why. It plays again as its author's next version, or with "
            f"`referee ladder {self.ladder.source} --reinstate {bot}`"
        )

    def failed(self, failure: ProcessFailure) -> None:
        """A process of a version failed (the backend's restart count tells): record it, and count it."""
        detail = plain_detail(failure.detail, self.ladder.output)
        detail = detail if detail.startswith(IN_GAME) else STARTING + detail
        log, kept = (failure.log_path.name, "") if failure.log_path is not None else ("", "")
        if failure.log_path is not None and detail.startswith(STARTING):
            kept = keep_start_output(self.ladder.output, failure.bot, failure.log_path)
        self.register.add(Failure(failure.bot, detail, log, now(), self.tables_drawn(), kept=kept))
        self.guard.failed(failure.bot, detail, failure.disabled)

    async def obey(self, order: orders.Order) -> orders.Answer:
        """Apply the organiser's ``order`` (it waits for the answer)."""
        try:
            change = orders.decide(self.register, self.ladder.output, order, self.tables_drawn())
        except LeagueError as refusal:
            return orders.Answer(False, str(refusal))
        if change is not None:
            self.change(change)
            if self.players is not None:
                await self.players.renew(self.league)
        return orders.Answer(True, orders.said(change, order))


async def _judge_submissions(ladder_run: LadderRun) -> None:
    """Judge each new or changed submission, every ``poll_s`` seconds, for as long as the run lasts; and, while the
    ladder rests, have it look again when the standings are published anew."""
    ladder, register, summary = ladder_run.ladder, ladder_run.register, ladder_run.summary
    published = _modified(ladder.output / LEADERBOARD_FILE)
    while True:
        # Reading every author's folder takes time: in a thread, so the games' clocks are not held up.
        for author, folder, digest in await asyncio.to_thread(changed_submissions, ladder, register):
            verdict = await judge(ladder, register, author, folder, digest, ladder_run.say, ladder_run.tables_drawn)
            if verdict is None:
                continue  # the folder changed while it was copied: judged afresh at the next look
            (summary.accepted if verdict.verdict == ACCEPTED else summary.rejected).append(verdict.bot)
            await ladder_run.judged(verdict.bot, verdict.verdict)
        if ladder_run.games.resting is not None:
            now_published = _modified(ladder.output / LEADERBOARD_FILE)
            if now_published != published:
                ladder_run.changed.set()  # the standings it rested on may have moved
            published = now_published
        await asyncio.sleep(ladder.poll_s)


def _modified(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


async def _take_orders(ladder_run: LadderRun) -> None:
    """Apply the organiser's orders, and take up the authors' test requests, every ``poll_s`` seconds, for as long as
    the run lasts."""
    output = ladder_run.ladder.output
    while True:
        for order in await asyncio.to_thread(lambda: list(orders.take(output))):
            outcome = await ladder_run.obey(order)
            await asyncio.to_thread(orders.answer, output, order.id, outcome)
            ladder_run.say(("order: " if outcome.ok else "order refused: ") + outcome.said)
        if ladder_run.tests.take_requests():
            ladder_run.changed.set()  # a resting or waiting ladder plays the test
        await asyncio.sleep(ladder_run.ladder.poll_s)


async def _keep_players_current(ladder_run: LadderRun) -> None:
    """Tell the backend of the league as it is after a suspension (made where nothing can wait for the backend)."""
    while True:
        await ladder_run.renewal.wait()
        ladder_run.renewal.clear()
        if ladder_run.players is not None:
            await ladder_run.players.renew(ladder_run.league)


async def _play(
    ladder_run: LadderRun,
    playing: contextlib.AsyncExitStack,
    backend: BackendFactory,
    concurrency: int | None,
    max_games: int | None,
) -> None:
    """Play games while there are tables to draw, waiting for versions when too few are active, resting when the
    standings are settled."""
    ladder, output, say = ladder_run.ladder, ladder_run.ladder.output, ladder_run.say
    concurrency = concurrency or ladder.league.concurrency
    started = 0
    said_waiting = ""
    awake = await playing.enter_async_context(contextlib.AsyncExitStack())  # the backend, while there are games

    def finished(done: FinishedGame) -> None:
        if ladder_run.tests.owns(done.game):  # an author's test game: its test's, never the ladder's records
            ladder_run.tests.ended(done.game, done.record)
            return
        ladder_run.results.append(done.record)
        ladder_run.games.deals.ended(done.game.game_id, ladder_run.results.size)
        ladder_run.games.in_play.discard(done.game.game_id)
        ladder_run.summary.played += 1
        seats = done.record["seats"]
        say(f"{done.game.game_id}: " + " > ".join(seats[seat] for seat in done.record["finish_order"]))
        ladder_run.guard.finished(done.record)

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
        ladder_run.changed.clear()
        games = ladder_run.games
        if not games.has_games() and not ladder_run.tests.has_games():
            if games.resting is not None:
                waiting = (
                    f"resting: {games.resting}; no new table until a version arrives, is reinstated or is withdrawn"
                )
            else:
                size = ladder_run.league.table_size
                waiting = (
                    f"waiting for submissions: a table needs {size} active versions, the ladder has {len(games.active)}"
                )
            if waiting != said_waiting:
                say(waiting)
                ladder_run.last_change = ""  # what wakes the ladder is told when it wakes
            said_waiting = waiting
            if ladder_run.players is not None and ladder_run.players.name == "local":
                # Idle, a bot's process still costs the referee a timer (its session's clock): while the ladder
                # waits, none is kept. The restart count goes on from the register's (_carry_failures).
                ladder_run.players = None
                await awake.aclose()
            await ladder_run.changed.wait()
            continue
        if said_waiting.startswith("resting"):
            say(f"awake: {ladder_run.last_change or 'the standings moved'}; tables are drawn again")
        said_waiting = ""
        if ladder_run.players is None:
            players = backend(ladder_run.league, output, concurrency)
            _carry_failures(players, ladder_run.guard.failures)
            players.restarts.told = ladder_run.failed
            ladder_run.players = await awake.enter_async_context(players)
            ladder_run.players.watcher = ladder_run.site.watch()
        # Rated games first; an author's test game now and then between them, and alone when none is to be played.
        await ladder_run.players.play(ladder_run.tests.interleaved(counted(iter(games))), finished, stop)


def _carry_failures(players: Backend, failures: Mapping[str, list[str]]) -> None:
    """Start the backend's restart count where the register's left it (each version's failures since it entered)."""
    for bot, details in failures.items():
        if details:
            players.restarts.carry(bot, len(details), details[-1])


class LadderGames:
    """The games a ladder plays next: unfinished games of tables drawn before, then tables drawn as they are reached.

    The versions that may be drawn are those active now (:meth:`renew` after
    each change of the field); the tables are drawn from what was drawn
    before them. A table drawn with a version disqualified or suspended since
    is *closed*: its games not started are never played.
    """

    def __init__(
        self,
        ladder: Ladder,
        league: League,
        tables: Tables,
        results: ResultsFile,
        deals: DealsInPlay,
        closed: Mapping[str, int],
    ):
        self.ladder = ladder
        self.tables = tables
        self.results = results
        self.deals = deals
        self.in_play: set[str] = set()  # the games handed to the backend and not yet finished
        self.closed: dict[str, int] = dict(closed)  # version -> the tables drawn before it was closed
        self.resting: str | None = None  # why the ladder rests, while it does
        self.renew(league, closed)
        # Each bot's games and each pair's meetings so far, kept as tables are drawn (not added up again each time).
        self.played = Played()
        for drawn in tables.drawn:
            self.played = self.played.with_table(drawn.bots, len(drawn.bots))
            self._deal(drawn)

    def is_closed(self, table: DrawnTable) -> bool:
        return any(table.number <= self.closed.get(bot, 0) for bot in table.bots)

    def _deal(self, table: DrawnTable) -> None:
        """Tell the deals of ``table``: its games are dealt alike (those of a closed table not finished: never
        played)."""
        games = [game.game_id for game in table.games()]
        finished = [game for game in games if game in self.results.finished]
        unplayed = [game for game in games if game not in finished] if self.is_closed(table) else ()
        self.deals.deal(games, finished=finished, unplayed=unplayed)

    def renew(self, league: League, closed: Mapping[str, int]) -> None:
        """Draw from ``league``'s active versions from now on; drop the games not started of tables just closed."""
        self.table_size = league.table_size
        self.active = [bot.name for bot in league.bots if bot.status == ACTIVE]
        newly = {bot: tables for bot, tables in closed.items() if tables > self.closed.get(bot, 0)}
        self.closed = dict(closed)
        for table in self.tables.drawn if newly else ():
            if any(table.number <= newly.get(bot, 0) for bot in table.bots):  # its deals are done
                ids = (game.game_id for game in table.games())
                self.deals.unplayed(
                    [game for game in ids if game not in self.results.finished and game not in self.in_play]
                )

    def unfinished(self) -> Iterator[ScheduledGame]:
        """The games of tables drawn before that did not finish (those of a closed table: never).

        Asked only when no game is under way, so a game not finished is one not started.
        """
        for table in self.tables.drawn:
            for game in table.games():
                if self.is_closed(table):
                    break  # closed as its games were handed out: the rest are dropped
                if game.game_id not in self.results.finished:
                    yield game

    def settled(self) -> str | None:
        """Why the standings are settled enough to rest (the ladder file's ``rest:``), or None."""
        rest = self.ladder.rest
        if rest is None:
            return None
        places = published_places(self.ladder.output, self.active) if rest.rank_range is not None else {}
        return settled(rest, self.active, self.played, self.ladder.placement_games, places)

    def has_games(self) -> bool:
        if next(self.unfinished(), None) is not None:
            return True
        self.resting = self.settled() if len(self.active) >= self.table_size else None
        return len(self.active) >= self.table_size and self.resting is None

    def __iter__(self) -> Iterator[ScheduledGame]:
        for game in self.unfinished():
            self.in_play.add(game.game_id)
            yield game
        ladder = self.ladder
        while len(self.active) >= self.table_size:  # read again at each table: a verdict may change it meanwhile
            self.resting = self.settled()
            if self.resting is not None:
                return  # the games under way end; the ladder rests until the field changes
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
                if self.is_closed(table):
                    break  # a version of it suspended meanwhile: the rest are dropped
                self.in_play.add(game.game_id)
                yield game
