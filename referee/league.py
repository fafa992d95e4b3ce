"""The league runner: ``referee run league.yaml``.

Plays every scheduled game (``referee.schedule``), ``concurrency`` at once,
and writes to the league's output directory:

- ``league.json``: the league's name, fingerprint and size, written first;
  a later run on the same directory refuses a league file that changed.
- ``games.jsonl``: one line per finished game, appended and flushed to disk
  (``fsync``) as each game ends, in the order games finish; each line's
  ``index`` is its place in the schedule. Everything outside its ``timing``
  object is a pure function of the league file and the bots' choices.
- ``games/<game_id>.jsonl``: each game's event log (``referee.match``).
- ``logs/``: bot output (one file per bot process, capped) and build logs.
- ``leaderboard.md``, ``.csv``, ``.json``, ``.html``: replaced atomically.

Resume: running again on the same directory keeps every finished game (a
line cut short by a crash is dropped) and plays the rest from the start.
Seeds come from the schedule, never from the order games run in, so the
results equal an uninterrupted run's.

Bot processes are kept between games: a bot that ends a game healthy plays
its next game in the same process. A bot that crashed, timed out or failed
to start is restarted for its next game, at most ``max_restarts`` times over
the league; after that it forfeits its remaining games.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from referee import __version__
from referee.bots import BotSpec, namespace_support
from referee.session import BotSession
from referee.config import League, build_submissions, league_fingerprint
from referee.errors import LeagueError
from referee.faults import BotFault, FaultKind
from referee.match import Match, MatchResult
from referee.publish import console_table, write_leaderboards
from referee.schedule import ScheduledGame, schedule
from referee.standings import Standings, compute_standings

RESULTS_FILE = "games.jsonl"
LEAGUE_FILE = "league.json"
GAME_LOG_DIR = "games"
BOT_LOG_DIR = "logs"


# ----- the bot pool ------------------------------------------------------------


class BotPool:
    """Bot processes kept between games, restarted after failures up to the league's limit."""

    def __init__(self, league: League, log_dir: Path) -> None:
        self._league = league
        self._log_dir = log_dir
        self._idle: dict[str, list[BotSession]] = defaultdict(list)
        self._busy: set[BotSession] = set()
        self._failures: dict[str, int] = defaultdict(int)
        self._started: dict[str, int] = defaultdict(int)
        self.disabled: dict[str, str] = {}  # bot name -> why it plays no more

    async def acquire(self, name: str) -> BotSession | BotFault:
        """Return a started, handshaken process of bot ``name``, or the fault that prevents one."""
        if name in self.disabled:
            return BotFault(FaultKind.STARTUP, self.disabled[name], name)
        idle = self._idle[name]
        while idle:
            bot = idle.pop()
            if not bot.has_exited():
                self._busy.add(bot)
                return bot
            await bot.stop()
        spec: BotSpec = self._league.bot(name).spec
        self._started[name] += 1
        bot = BotSession(spec, self._log_dir / f"{name}-{self._started[name]}.log")
        try:
            await bot.start(self._league.game_setup)
        except BotFault as fault:
            self._note_failure(name, fault.detail)
            return fault
        self._busy.add(bot)
        return bot

    async def release(self, bot: BotSession) -> None:
        """Take a process back after a game: keep it if healthy, else stop it and count a failure."""
        self._busy.discard(bot)
        name = bot.spec.name
        if bot.healthy and not bot.has_exited():
            self._idle[name].append(bot)
            return
        await bot.stop()
        self._note_failure(name, "it crashed or stopped answering")

    def _note_failure(self, name: str, detail: str) -> None:
        self._failures[name] += 1
        limit = self._league.max_restarts
        if self._failures[name] > limit and name not in self.disabled:
            self.disabled[name] = (
                f"not started: the restart limit ({limit}) was reached; last failure: {detail}"
            )

    async def close(self) -> None:
        """Stop every process, idle or busy."""
        bots = [bot for idle in self._idle.values() for bot in idle] + list(self._busy)
        self._idle.clear()
        self._busy.clear()
        await asyncio.gather(*(bot.stop() for bot in bots), return_exceptions=True)


# ----- the results file ------------------------------------------------------------


class ResultsFile:
    """``games.jsonl``: read what finished, then append one flushed line per game."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished: set[int] = set()
        if path.exists():
            self._recover()
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _recover(self) -> None:
        """Collect finished games; drop a last line cut short by a crash or power cut."""
        good_bytes = 0
        with open(self.path, "rb") as existing:
            for line in existing:
                if not line.endswith(b"\n"):
                    break
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    break
                self.finished.add(record["index"])
                good_bytes += len(line)
        if good_bytes != self.path.stat().st_size:
            with open(self.path, "r+b") as existing:
                existing.truncate(good_bytes)

    def append(self, record: dict) -> None:
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.finished.add(record["index"])

    def close(self) -> None:
        self._file.close()


def read_records(path: Path) -> Iterator[dict]:
    """Yield the complete records of a ``games.jsonl`` file."""
    if not path.exists():
        return
    with open(path, "rb") as lines:
        for line in lines:
            if not line.endswith(b"\n"):
                break
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                break


def game_record(game: ScheduledGame, league: League, result: MatchResult, started: float, wall_s: float) -> dict:
    """The ``games.jsonl`` line of a finished game; wall-clock figures only under ``timing``."""
    return {
        **game.record(),
        "game": league.game,
        "placements": result.placements,
        "hands_played": result.hands_played,
        "decisions": result.decisions,
        "faults": [dict(sorted(counter.items())) for counter in result.faults],
        # Only the fault kind: the details (exit codes, paths, timings) are in the game's log.
        "forfeits": {str(seat): reason.split(":", 1)[0] for seat, reason in sorted(result.forfeits.items())},
        "timing": {
            "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="milliseconds"),
            "wall_s": round(wall_s, 3),
            "latency_ms": [[round(ms, 3) for ms in seat] for seat in result.latencies_ms],
        },
    }


# ----- running a league ------------------------------------------------------------


@dataclass
class RunSummary:
    """What a run did: games played now, games finished before, the standings and the time taken."""

    played: int
    already_finished: int
    total: int
    standings: Standings
    wall_s: float
    disabled: dict[str, str]


def prepare_output(league: League, output: Path) -> None:
    """Create the output directory, or check that it holds results of this same league."""
    output.mkdir(parents=True, exist_ok=True)
    marker = output / LEAGUE_FILE
    fingerprint = league_fingerprint(league)
    if marker.exists():
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        if recorded.get("fingerprint") != fingerprint:
            raise LeagueError(
                f"{output}: these results were started from a different league file "
                f"(league {recorded.get('name')!r}, from {recorded.get('source')}); the league file "
                f"{league.source} has changed since. Run it with another --output, or remove {output}."
            )
        return
    marker.write_text(
        json.dumps(
            {"name": league.name, "source": str(league.source), "fingerprint": fingerprint,
             "game": league.game, "bots": list(league.bot_names), "referee_version": __version__},
            indent=2,
        )  # fmt: skip
        + "\n",
        encoding="utf-8",
    )


async def run_league(
    league: League,
    *,
    output: Path | None = None,
    concurrency: int | None = None,
    progress: Callable[[int, int, Standings | None], None] | None = None,
) -> RunSummary:
    """Play every unfinished game of ``league``; return the standings of all finished games."""
    started = time.perf_counter()
    output = (output or league.output).resolve()
    concurrency = concurrency or league.concurrency
    if (output / RESULTS_FILE).exists() and not (output / LEAGUE_FILE).exists():
        raise LeagueError(f"{output}: holds {RESULTS_FILE} but no {LEAGUE_FILE}; it is not this league's output")
    (output / BOT_LOG_DIR).mkdir(parents=True, exist_ok=True)
    league, builds = build_submissions(league, output / BOT_LOG_DIR)
    for build in builds:
        if not build.ok:
            print(f"{build.bot}: left out of the league: {build.message}", file=sys.stderr)
    prepare_output(league, output)
    (output / GAME_LOG_DIR).mkdir(exist_ok=True)
    games = schedule(league)
    results = ResultsFile(output / RESULTS_FILE)
    already = len(results.finished)
    todo = [game for game in games if game.index not in results.finished]
    pool = BotPool(league, output / BOT_LOG_DIR)
    played = 0
    report_every = max(1, -(-len(games) // 4))  # standings so far about four times a run

    async def play(game: ScheduledGame) -> None:
        nonlocal played
        bots = await asyncio.gather(*(pool.acquire(name) for name in game.seats))
        began = time.time()
        clock = time.perf_counter()
        try:
            match = Match(
                league.game, bots, seed=game.seed, game_id=game.game_id, timing=league.timing,
                turn_limit=league.turn_limit, policy=league.fault_policy,
                log_path=output / GAME_LOG_DIR / f"{game.game_id}.jsonl", players=list(game.seats),
            )  # fmt: skip
            result = await match.play()
        finally:
            await asyncio.gather(*(pool.release(bot) for bot in bots if isinstance(bot, BotSession)))
        results.append(game_record(game, league, result, began, time.perf_counter() - clock))
        played += 1
        if progress is not None:
            done = len(results.finished)
            show = done % report_every == 0 and done < len(games)
            progress(done, len(games), _standings(league, output) if show else None)

    # `concurrency` workers take games from one shared iterator, so memory does
    # not grow with the number of games (no task per scheduled game).
    remaining = iter(todo)

    async def worker() -> None:
        for game in remaining:
            await play(game)

    try:
        async with asyncio.TaskGroup() as workers:
            for _ in range(min(concurrency, len(todo))):
                workers.create_task(worker())
    finally:
        await pool.close()
        results.close()
    standings = _standings(league, output)
    write_leaderboards(standings, output, league.name)
    return RunSummary(played, already, len(games), standings, time.perf_counter() - started, dict(pool.disabled))


def _standings(league: League, output: Path) -> Standings:
    return compute_standings(read_records(output / RESULTS_FILE), bots=league.bot_names)


def standings_from_directory(directory: Path) -> tuple[Standings, str]:
    """Standings and title from a results directory (for ``referee leaderboard``)."""
    marker = directory / LEAGUE_FILE
    if not marker.exists():
        raise LeagueError(f"{directory}: no {LEAGUE_FILE} here; give the output directory of a league run")
    recorded = json.loads(marker.read_text(encoding="utf-8"))
    return compute_standings(read_records(directory / RESULTS_FILE), bots=recorded.get("bots")), recorded["name"]


# ----- the command ------------------------------------------------------------------


class ProgressDisplay:
    """Games done of total, rate and time left (tqdm on a terminal, plain lines otherwise), plus standings so far."""

    def __init__(self, total: int, already: int, enabled: bool) -> None:
        self._enabled = enabled
        self._bar = None
        self._started = time.perf_counter()
        self._already = already
        self._total = total
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=already, unit="game", dynamic_ncols=True)

    def __call__(self, done: int, total: int, standings: Standings | None) -> None:
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            if standings is not None:
                self._bar.write("standings so far:\n" + console_table(standings, compact=True))
            return
        if standings is not None:
            elapsed = time.perf_counter() - self._started
            rate = (done - self._already) / elapsed * 60 if elapsed > 0 else 0.0
            left = (total - done) / rate if rate > 0 else 0.0
            print(f"{done}/{total} games, {rate:.1f} games/min, about {left:.1f} min left", file=sys.stderr)
            print("standings so far:\n" + console_table(standings, compact=True), file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_command(league: League, output: Path | None, concurrency: int | None, show_progress: bool) -> int:
    """Run a league from the command line; print the final table. Returns the exit status."""
    total = len(schedule(league))
    output = (output or league.output).resolve()
    already = sum(1 for _ in read_records(output / RESULTS_FILE)) if (output / LEAGUE_FILE).exists() else 0
    display = ProgressDisplay(total, already, show_progress)
    print(f"league {league.name}: {league.game}, {len(league.bots)} bots, {total} games"
          + (f", {already} already finished" if already else "") + f"; results in {output}")  # fmt: skip
    no_pid_namespace = namespace_support()["pid"]
    if no_pid_namespace and any(bot.spec.command for bot in league.bots):
        print(f"note: this machine allows no PID namespace ({no_pid_namespace}), so each bot is contained by its "
              "process group and its address: a process a bot starts that leaves its group and clears its "
              "environment can outlive it (see docs/security.md)", file=sys.stderr)  # fmt: skip
    try:
        summary = asyncio.run(_run_with_signals(league, output, concurrency, display))
    finally:
        display.close()
    print(console_table(summary.standings))
    for name, reason in sorted(summary.disabled.items()):
        print(f"{name}: {reason}")
    rate = summary.played / summary.wall_s * 60 if summary.wall_s > 0 else 0.0
    print(f"{summary.played} games played in {summary.wall_s:.1f} s ({rate:.1f} games/min); "
          f"leaderboards written to {output}")  # fmt: skip
    return 0


async def _run_with_signals(league: League, output: Path, concurrency: int | None, display) -> RunSummary:
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    # SIGTERM stops the run like Ctrl-C does: bots are stopped, finished games are kept.
    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await run_league(league, output=output, concurrency=concurrency, progress=display)
    finally:
        with contextlib.suppress(NotImplementedError):
            loop.remove_signal_handler(signal.SIGTERM)
