"""The league runner: play every unfinished game of a league and write its output folder.

What the folder holds, resume and growth are told in docs/leagues.md
("Results"); :mod:`referee.records.results` is the one reader and writer of its
records, and where the games are played is a backend's business
(:mod:`referee.backends`): either way this process alone writes
``games.jsonl``. The runner prints nothing: its caller hears of the run
through ``announce`` and ``progress`` (the command line shows them:
:mod:`referee.cli.run_console`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.backends import BackendName
from referee.backends.backend import BOT_LOG_DIR, GAME_LOG_DIR, Backend, BackendFactory, FinishedGame
from referee.backends.local import LocalBackend
from referee.common.atomic import remove_stale_temporaries
from referee.common.errors import OutputError
from referee.leaguefile.config import League, league_identity
from referee.leaguefile.lanes import with_lane_copies
from referee.leaguefile.league_record import write_league
from referee.leaguefile.schedule import Schedule, ScheduledGame
from referee.leaguefile.submissions import BUILDS_DIR, BuildResult, build_submissions
from referee.publish.files import write_leaderboards
from referee.publish.live import LiveSite
from referee.records.results import (
    LEAGUE_FILE,
    LEAGUE_RECORD_VERSION,
    RESULTS_FILE,
    ResultsFile,
    count_games,
    read_league,
)
from referee.records.standings import Standings, folder_standings
from referee.records.visibility import DealsInPlay, Shown

# ----- the output folder and what changed in the league --------------------------------


@contextlib.contextmanager
def output_folder(output: Path) -> Iterator[None]:
    """Create the output folder, and hold it for this run: a second run on it at the same time is refused."""
    if output.exists() and not output.is_dir():
        raise OutputError(f"{output}: is a file, not a folder; give the league's output a folder (made if missing)")
    output.mkdir(parents=True, exist_ok=True)
    handle = os.open(output, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(
                f"{output}: another referee is running a league in this folder; wait for it to end, "
                "or give this run another --output"
            ) from None
        remove_stale_temporaries(output, leave=(BUILDS_DIR,))  # what an interrupted run left half-written
        yield
    finally:
        os.close(handle)  # and with it the lock


@dataclass(frozen=True)
class LeagueChanges:
    """How the league file differs from the league its results were made with."""

    growth: list[str] = field(default_factory=list)  # what only adds games: more rounds, bots appended
    refused: list[str] = field(default_factory=list)  # what would change finished games


def league_changes(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> LeagueChanges:
    """Compare two :func:`referee.leaguefile.config.league_identity` documents: what grew, and what may not change."""
    changes = LeagueChanges()
    before_rules, after_rules = recorded.get("rules", {}), current["rules"]
    for key, before, after in _differences(before_rules, after_rules):
        changes.refused.append(f"{key}: {before} -> {after}")
    before_rounds, after_rounds = recorded.get("rounds"), current["rounds"]
    if after_rounds != before_rounds:
        text = f"rounds: {before_rounds} -> {after_rounds}"
        if isinstance(before_rounds, int) and after_rounds > before_rounds:
            changes.growth.append(text)
        else:
            changes.refused.append(f"{text} (a league can gain rounds, not lose them)")
    before_bots, after_bots = list(recorded.get("bots", [])), list(current["bots"])
    before_names = [bot.get("league_name") for bot in before_bots]
    after_names = [bot["league_name"] for bot in after_bots]
    removed = [name for name in before_names if name not in after_names]
    if removed:
        changes.refused.append(
            f"bots: {', '.join(map(str, removed))} {'is' if len(removed) == 1 else 'are'} no longer in the league file"
        )
    kept = [name for name in after_names if name in before_names]
    if not removed and after_names[: len(before_names)] != before_names:
        if kept != before_names:
            changes.refused.append("bots: their order changed")
        else:
            inserted = next(name for name in after_names if name not in before_names)
            following = after_names[after_names.index(inserted) + 1 :]
            before_whom = next(name for name in following if name in before_names)
            changes.refused.append(
                f"bots: {inserted} is added before {before_whom}; add new bots at the end of the list"
            )
    for was_bot in before_bots:
        league_name = was_bot.get("league_name")
        now_bot = next((bot for bot in after_bots if bot["league_name"] == league_name), None)
        if now_bot is None:
            continue
        for key, was, now in _differences(was_bot, now_bot):
            changes.refused.append(f"bot {league_name}: {key}: {was} -> {now}")
    new_bots = [bot for bot in after_bots if bot["league_name"] not in before_names]
    for bot in new_bots:
        if bot.get("replaces"):
            changes.growth.append(f"{bot['league_name']} replaces {bot['replaces']}")
    added = [bot["league_name"] for bot in new_bots if not bot.get("replaces")]  # a new version adds no game
    format_type = after_rules.get("format", {}).get("type", "round-robin")
    if added and format_type != "round-robin":
        changes.refused.append(
            f"bots added: {', '.join(added)} (a {format_type} league's tables are drawn from its "
            "bots: new bots would change every table; start it afresh in another output)"
        )
    if added and not changes.refused:
        changes.growth.append(f"bots added: {', '.join(added)}")
    return changes


def _differences(before: Any, after: Any, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """``(key path, value before, value after)`` for each leaf that differs between two JSON objects."""
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted(set(before) | set(after)):
            yield from _differences(before.get(key), after.get(key), f"{prefix}{key}.")
    elif before != after:
        shown = [("(none)" if value is None else json.dumps(value, ensure_ascii=False)) for value in (before, after)]
        yield prefix.rstrip("."), shown[0], shown[1]


def claim_output(league: League, output: Path) -> LeagueChanges:
    """Check that ``output`` holds nothing, or results of this league (grown, maybe); return what grew.

    Raises :class:`OutputError` naming every change a finished league may not take.
    """
    recorded = read_league(output)
    if recorded is None:
        if count_games(output / RESULTS_FILE):
            raise OutputError(
                f"{output}: holds {RESULTS_FILE} but no {LEAGUE_FILE}; it is not this league's output, "
                "so it is left alone: give this league another --output"
            )
        return LeagueChanges()
    identity = recorded.identity
    if identity is None or recorded.record_version != LEAGUE_RECORD_VERSION:
        raise OutputError(
            f"{output / LEAGUE_FILE}: was written by another version of the referee "
            f"({recorded.referee_version or 'unknown'}), which kept no copy of its league file to compare "
            f"with {league.source}: give this league another --output"
        )
    changes = league_changes(identity, league_identity(league))
    if changes.refused:
        raise OutputError(
            f"{output}: holds results of league {recorded.name!r} (from {recorded.source}), and "
            f"{league.source} differs from it in what decides them: "
            + "; ".join(changes.refused)
            + ". A league may only gain rounds, or bots added at the end of its list (a new version with "
            "replaces: among them), and its bots may be withdrawn or disqualified (status:): undo the change, "
            "or give this league another --output."
        )
    return changes


# ----- running a league ------------------------------------------------------------


@dataclass
class RunPlan:
    """What a run is about to do, once builds are done: told to ``announce`` before the first game."""

    league: League  # the league as played: bots left out by a failed build are not in it
    output: Path
    total: int
    already_finished: int
    growth: list[str]
    builds: list[BuildResult]  # each bot that plays and runs a submission (a bot that plays no more is not built)
    backend: BackendName = "local"  # where the games are played (referee.backends)
    unplayed: int = 0  # scheduled games left unplayed: they seat a withdrawn or disqualified bot


@dataclass
class RunSummary:
    """What a run did: games played now, games finished before, the standings and the time taken."""

    played: int
    already_finished: int
    total: int
    standings: Standings
    wall_s: float
    disabled: dict[str, str]
    left_out: dict[str, str]  # bot name -> why it never played (its build failed)
    failed_logs: dict[str, Path]  # bot name -> the log of its last failed process
    concurrency: int
    unplayed: int = 0  # scheduled games left unplayed: they seat a withdrawn or disqualified bot


async def run_league(
    league: League,
    *,
    output: Path | None = None,
    concurrency: int | None = None,
    progress: Callable[[int, int, Standings | None], None] | None = None,
    announce: Callable[[RunPlan], None] | None = None,
    stop: Callable[[], bool] | None = None,
    stop_is_final: bool = False,
    backend: BackendFactory | None = None,
) -> RunSummary:
    """Play every unfinished game of ``league``; return the standings of all finished games.

    ``stop`` is asked before each game is started: once it says true, no
    game is started and the run ends when the games under way have; with
    ``stop_is_final`` (a duel decided), no game left is ever played, so the
    games on their deals may be shown (:mod:`referee.records.visibility`). The
    games are played by ``backend`` (:mod:`referee.backends`; default: on
    this machine).

    Interrupted (Ctrl-C, SIGTERM: the task is cancelled) or stopped by an
    error (a full disk), it stops the bots and writes the leaderboards of the
    games finished so far before the exception goes on.
    """
    started = time.perf_counter()
    output = (output or league.output).resolve()
    concurrency = concurrency or league.concurrency  # None: the backend's auto
    backend = backend or LocalBackend
    with output_folder(output):
        growth = claim_output(league, output)
        has_results = count_games(output / RESULTS_FILE) > 0
        playing, builds = await build_submissions(
            league,
            output,
            output / BOT_LOG_DIR,
            retry_failed=not has_results,
            left_out_before=_left_out_before(league, output) if has_results else (),
        )
        (output / BOT_LOG_DIR).mkdir(exist_ok=True)
        (output / GAME_LOG_DIR).mkdir(exist_ok=True)
        playing = _hide_output(playing, league.output, output)
        games = playing.schedule()
        playing = await asyncio.to_thread(with_lane_copies, playing, output, games)
        # Checked before league.json takes the league file; a new version's games seat it in its old version's seats.
        results = ResultsFile(output / RESULTS_FILE, games, stands_in=playing.stands_in)
        # Games not finished that seat a bot which plays no more are not played: the schedule keeps their ids.
        unplayed = (
            0
            if playing.every_bot_plays
            else sum(1 for game in games if game.game_id not in results.finished and playing.seated(game) is None)
        )
        total = len(games) - unplayed
        try:
            write_league(output, league, playing, scheduled=total)
            already = len(results.finished)
            players = backend(playing, output, concurrency)
            if announce is not None:
                announce(RunPlan(playing, output, total, already, growth.growth, builds, players.name, unplayed))
            async with players:
                played = await _play_games(
                    players, playing, output, games, total, results, progress, stop, stop_is_final
                )
        except BaseException:
            results.close()
            # Interrupted, or stopped by an error: the standings of the games finished so far.
            with contextlib.suppress(Exception):
                publish_standings(output, total)
            raise
        results.close()
        standings = publish_standings(output, total)
    left_out = {build.bot: build.message for build in builds if not build.ok}
    return RunSummary(
        played,
        already,
        total,
        standings,
        time.perf_counter() - started,
        dict(players.restarts.disabled),
        left_out,
        dict(players.restarts.last_failed_log),
        players.concurrency,
        unplayed,
    )


def _left_out_before(league: League, output: Path) -> frozenset[str]:
    """The league's bots that the last run's league left out (a failed build, or added since), by ``league.json``.

    The finished games were played on that league's schedule, so a bot that is not built now (it plays no more)
    keeps the place it had there: in the schedule, or out of it.
    """
    recorded = read_league(output)
    if recorded is None or recorded.bots is None:
        return frozenset()
    return frozenset(name for name in league.bot_names if name not in recorded.bots)


def _hide_output(league: League, written: Path, output: Path) -> League:
    """The league with its output (``--output`` may move it from where the league file says) hidden from every bot."""
    if written == output:
        return league
    bots = tuple(
        dataclasses.replace(
            bot,
            spec=dataclasses.replace(
                bot.spec, hidden=(str(output), *(path for path in bot.spec.hidden if path != str(written)))
            ),
        )
        if bot.spec.command
        else bot
        for bot in league.bots
    )
    return dataclasses.replace(league, bots=bots)


async def _play_games(
    backend: Backend,
    league: League,
    output: Path,
    games: Schedule,
    total: int,
    results: ResultsFile,
    progress: Callable[[int, int, Standings | None], None] | None,
    stop: Callable[[], bool] | None,
    stop_is_final: bool = False,
) -> int:
    """Have the backend play the games not yet in ``results`` (``total`` with those), recording each; return how many.

    Each game is played by its seats' newest versions (:meth:`League.seated`), and not at all when one plays no more.
    What of the games may be shown, and when, is the run's :class:`DealsInPlay`'s to say, from the whole schedule
    at the start: on a normal end the run waits for the last game's spectator delay, so that its standings hold
    every game.
    """
    played = 0
    report_every = max(1, -(-total // 4))  # standings so far about four times a run
    deals = DealsInPlay(output, league.spectator_delay_s, accounted=results.size)
    for dealt_alike in games_by_deal(games):
        deals.deal(
            (game.game_id for game in dealt_alike),
            finished=(game.game_id for game in dealt_alike if game.game_id in results.finished),
            unplayed=(game.game_id for game in dealt_alike if league.seated(game) is None),
        )
    await asyncio.to_thread(deals.write)  # before any game: from the start, nothing of a deal in play is shown
    site = LiveSite(output, total, deals=deals, static_replays=league.static_replays)
    deals.on_shown = site.shown
    if progress is not None:
        progress(len(results.finished), total, None)
    # Replay pages lost since (a kill -9, a full disk, removed by hand) are written again by the page helper.
    site.rebuild(sorted(results.finished.difference(deals.held())))

    def finished(done: FinishedGame) -> None:
        nonlocal played
        results.append(done.record)
        deals.ended(done.game.game_id, results.size)
        played += 1
        if progress is not None:
            count = len(results.finished)
            show = count % report_every == 0 and count < total
            progress(count, total, folder_standings(output)[0] if show else None)

    def todo() -> Iterator[ScheduledGame]:
        for game in games:
            seated = None if game.game_id in results.finished else league.seated(game)
            if seated is not None:
                yield seated

    showing = asyncio.get_running_loop().create_task(deals.run())
    backend.watcher = site.watch()
    try:
        await backend.play(todo(), finished, stop or _never)
        if stop_is_final and stop is not None and stop():  # what is left will never be played: its deals are done
            deals.unplayed([game.game_id for game in games if game.game_id not in results.finished])
        await asyncio.gather(deals.settle(), site.spectators.settle())  # the spectator delay of the last games
    finally:
        backend.watcher = None
        showing.cancel()
        await asyncio.gather(showing, return_exceptions=True)
        deals.write()
        await site.close()
    return played


def games_by_deal(games: Iterable[ScheduledGame]) -> list[list[ScheduledGame]]:
    """The games of a schedule in groups dealt alike (on one seed), in the order each group's first game comes."""
    by_seed: dict[int, list[ScheduledGame]] = {}
    for game in games:
        by_seed.setdefault(game.seed, []).append(game)
    return list(by_seed.values())


def _never() -> bool:
    return False


def publish_standings(output: Path, scheduled: int | None = None) -> Standings:
    """Compute the standings of every finished game in ``output`` that may be shown, and write its leaderboards."""
    shown = Shown.read(output)
    standings, league = folder_standings(output, shown=shown)
    write_leaderboards(standings, output, league.name, scheduled=scheduled, shown=shown)
    return standings


def standings_from_directory(directory: Path) -> tuple[Standings, str]:
    """Standings and title from a results folder (for ``referee leaderboard``)."""
    standings, league = folder_standings(directory)
    return standings, league.name
