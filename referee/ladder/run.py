"""A ladder's run: judge what was submitted, draw tables as they are reached, play them, keep every record current.

The run goes in *stretches*. Each stretch starts by judging every new or
changed submission (:mod:`referee.ladder.entries`), then writes
``league.json`` with every accepted version and its status, and plays with
one backend, ``concurrency`` games at once: first the games of tables drawn
before but not finished (a run stopped with a table half played finishes it),
then a table drawn (:func:`referee.ladder.draw.draw_table`) and recorded in
``tables.jsonl`` each time the games run out, every seat rotation of it on
its seed. Every ``poll_s`` seconds, between tables, the submissions folder is
looked at; when a submission is new or changed, no further table is drawn,
the games under way finish, and the next stretch judges it (so games wait
while a version is built and checked).

``games.jsonl``, ``register.jsonl`` and ``tables.jsonl`` are appended a whole
line at a time and flushed to disk before anything depends on them, so a run
stopped in any way (Ctrl-C, SIGTERM, kill -9) resumes where it stopped with
no game played twice: a game is known by its id, ``r1-tTABLE-sROTATION``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from referee.backends import BOT_LOG_DIR, GAME_LOG_DIR, BackendFactory, FinishedGame
from referee.backends.local import LocalBackend
from referee.backends.pool import Restarts
from referee.config import League
from referee.errors import LeagueError
from referee.ladder.draw import Played, draw_table
from referee.ladder.entries import changed_submissions, judge, ladder_bots, now, submission_verdicts, write_reports
from referee.ladder.file import Ladder
from referee.ladder.history import (
    ACCEPTED,
    ACTIVE,
    DISQUALIFIED,
    DrawnTable,
    Register,
    StatusChange,
    Tables,
)
from referee.league import claim_output, output_folder, publish_standings
from referee.publish.live import LiveSite
from referee.results import RESULTS_FILE, ResultsFile, write_league
from referee.schedule import ScheduledGame
from referee.seeding import derive_seed


@dataclass
class LadderSummary:
    """What a run did: the games it played, the versions it accepted and rejected."""

    played: int = 0
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def table_seed(ladder: Ladder, number: int) -> int:
    """Table ``number``'s seed, so every deal of its games: from the ladder's seed and the number alone."""
    return derive_seed(ladder.league.seed, "ladder-table", number)


def ladder_league(ladder: Ladder, register: Register) -> League:
    """The league a stretch plays: the ladder's settings and every accepted version, with its status."""
    return dataclasses.replace(ladder.league, bots=ladder_bots(ladder, register))


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
    backend = backend or LocalBackend
    concurrency = concurrency or ladder.league.concurrency
    summary = LadderSummary()
    output.mkdir(parents=True, exist_ok=True)
    with output_folder(output), contextlib.ExitStack() as records:
        register = Register(output)
        records.callback(register.close)
        tables = Tables(output)
        records.callback(tables.close)
        claim_output(ladder_league(ladder, register), output)
        results = ResultsFile(output / RESULTS_FILE, tables.games())
        records.callback(results.close)
        (output / BOT_LOG_DIR).mkdir(exist_ok=True)
        (output / GAME_LOG_DIR).mkdir(exist_ok=True)
        write_reports(ladder, register)
        site = LiveSite(output, None)
        site.rebuild(sorted(results.finished))
        restarts: Restarts | None = None
        started = 0
        said_waiting = ""

        def finished(done: FinishedGame) -> None:
            results.append(done.record)
            summary.played += 1
            site.game_finished(done.game.game_id)
            seats = done.record["seats"]
            say(f"{done.game.game_id}: " + " > ".join(seats[seat] for seat in done.record["finish_order"]))

        def stop() -> bool:
            return max_games is not None and started >= max_games

        try:
            while not stop():
                for author, folder, digest in changed_submissions(ladder, register):
                    verdict = await judge(ladder, register, author, folder, digest, say)
                    (summary.accepted if verdict.verdict == ACCEPTED else summary.rejected).append(verdict.bot)
                league = ladder_league(ladder, register)
                write_league(output, league, league, submissions=submission_verdicts(register))
                stretch = Stretch(ladder, league, register, tables, results)
                if not stretch.has_games():
                    waiting = (
                        f"waiting for submissions: {len(stretch.active)} active versions, "
                        f"a table needs {league.table_size}"
                    )
                    if waiting != said_waiting:
                        say(waiting)
                    said_waiting = waiting
                    await asyncio.sleep(ladder.poll_s)
                    continue
                said_waiting = ""
                players = backend(league, output, concurrency)
                players.restarts = restarts or players.restarts  # a bot's failures count over the whole ladder
                restarts = players.restarts

                def counted(games: Iterator[ScheduledGame]) -> Iterator[ScheduledGame]:
                    nonlocal started
                    for game in games:
                        started += 1
                        yield game

                async with players:
                    await players.play(counted(iter(stretch)), finished, stop)
                publish_standings(output)
        finally:
            await site.close()
            with contextlib.suppress(Exception):  # stopped or failed: the standings of the games finished so far
                publish_standings(output)
    return summary


class Stretch:
    """The games of one stretch: the unfinished games of tables drawn before, then tables drawn as they are reached."""

    def __init__(self, ladder: Ladder, league: League, register: Register, tables: Tables, results: ResultsFile):
        self.ladder = ladder
        self.league = league
        self.register = register
        self.tables = tables
        self.results = results
        self.active = [bot.name for bot in league.bots if bot.status == ACTIVE]
        self.disqualified = {bot.name for bot in league.bots if bot.status == DISQUALIFIED}
        # Each bot's games and each pair's meetings so far, kept as tables are drawn (not added up again each time).
        self.played = Played()
        for drawn in tables.drawn:
            self.played = self.played.with_table(drawn.bots, len(drawn.bots))

    def unfinished(self) -> Iterator[ScheduledGame]:
        """The games of tables drawn before that did not finish (those of a table seating a disqualified bot: never)."""
        for table in self.tables.drawn:
            if self.disqualified.intersection(table.bots):
                continue
            for game in table.games():
                if game.game_id not in self.results.finished:
                    yield game

    def has_games(self) -> bool:
        return len(self.active) >= self.league.table_size or next(self.unfinished(), None) is not None

    def __iter__(self) -> Iterator[ScheduledGame]:
        yield from self.unfinished()
        looked = time.monotonic()
        size, ladder = self.league.table_size, self.ladder
        while len(self.active) >= size:
            if time.monotonic() - looked >= ladder.poll_s:
                looked = time.monotonic()
                if changed_submissions(ladder, self.register):
                    return  # judged by the next stretch, once the games under way have finished
            number = len(self.tables.drawn) + 1
            bots = draw_table(self.active, self.played, size, ladder.placement_games, ladder.league.seed, number)
            table = DrawnTable(number, bots, table_seed(ladder, number))
            self.tables.add(table)  # on disk before its first game starts
            self.played = self.played.with_table(bots, size)
            yield from table.games()


def change_status(ladder: Ladder, bot: str, status: str, reason: str) -> StatusChange:
    """Withdraw or disqualify accepted version ``bot``: record it in ``register.jsonl`` and rewrite the records."""
    output = ladder.output
    output.mkdir(parents=True, exist_ok=True)
    with output_folder(output):
        register = Register(output)
        try:
            accepted = [judged.bot for judged in register.judged() if judged.verdict == ACCEPTED]
            if bot not in accepted:
                raise LeagueError(
                    f"{output}: {bot!r} is no version accepted on this ladder; the versions are: "
                    + (", ".join(accepted) or "none yet")
                )
            change = StatusChange(bot, status, reason, now())
            register.add(change)
            league = ladder_league(ladder, register)
            write_league(output, league, league, submissions=submission_verdicts(register))
            write_reports(ladder, register)
        finally:
            register.close()
        publish_standings(output)
    return change
