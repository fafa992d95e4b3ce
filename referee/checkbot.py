"""``referee check-bot``: test a bot the way a league will play it, before it is submitted.

The bot is started once for each game it says it plays and each table size
of that game (Stop the Bus 2 to 9 seats, Bastard Brag 3 to 10), and plays
several games in a row in that one process, as a league reuses a process,
under a default league's clock and fault policy. Its opponents are the
sample bots, run inside the referee (they ship with it), so nothing but the
bot under test needs to be installed. Every fault, every forfeit (with the
bot's last output lines), every slow decision and slow handling of the
messages between decisions (a game's start or end) is a problem; the exit
status is 1 when there is any.

Bot output goes to a temporary folder that is removed at the end, unless
``--logs DIR`` keeps it.
"""

from __future__ import annotations

import importlib.util
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from referee.botkit import BotServicer
from referee.bots import BotSpec, log_tail
from referee.faults import BotFault, FaultPolicy
from referee.gamelog import read_log
from referee.games import GAMES, Action, Observation
from referee.match import Match
from referee.printable import printable
from referee.protocol import GAME_FROM_PB, PROTOCOL_VERSION
from referee.resources import sample_bot_path
from referee.session import BotSession, GameSetup, Timing, decision_action
from referee.v2 import bot_pb2 as pb

CANDIDATE = "candidate"
SLOW_FRACTION = 0.5  # a decision over half the move time is reported as slow
# The first decision after a game starts carries the handling of the game's start (and the previous
# game's end): reported when it takes this much longer than the bot's usual decision.
SLOW_MESSAGES_MS = 100.0


# ----- opponents, inside the referee ------------------------------------------------------------


@cache
def _sample_decide(name: str) -> Callable[[Observation], object]:
    """The ``decide`` function of a sample bot shipped with the referee (``random`` or ``heuristic``)."""
    path = sample_bot_path(f"{name}_bot.py")
    spec = importlib.util.spec_from_file_location(f"referee_sample_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.decide


class InProcessBot:
    """An opponent played inside the referee, through the Python bot kit's own code; it never faults."""

    def __init__(self, name: str, decide: Callable[[Observation], object]) -> None:
        self.name = name
        self._servicer = BotServicer(decide, name, "1.0", tuple(GAMES))
        self.last_wall_ms = self.last_charged_ms = 0.0
        self.connected = self.usable = True

    def game_start(self, message: pb.GameStart) -> None:
        self._servicer.history = type(self._servicer.history)(message.game_id)

    def fault_notice(self, message: pb.FaultNotice) -> None:
        """An in-process opponent makes no fault."""

    def game_end(self, body: bytes) -> None:
        """Nothing to do."""

    async def decide(
        self, request: bytes, number: int, move_time_ms: int, limit_ms: int,
        while_waiting: Callable[[], None] | None = None,
    ) -> Action:  # fmt: skip
        if while_waiting is not None:
            while_waiting()
        started = time.perf_counter()
        decision = self._servicer.answer(pb.DecisionRequest.FromString(request)).decision
        self.last_wall_ms = self.last_charged_ms = (time.perf_counter() - started) * 1000
        return decision_action(decision, self.name)  # as a bot on a stream: an error is a malformed fault

    async def stop(self) -> None:
        """Nothing to stop."""


def opponents(count: int) -> list[InProcessBot]:
    """``count`` sample opponents, heuristic and random in turn."""
    kinds = ("heuristic", "random")
    return [InProcessBot(f"{kinds[i % 2]}-{i + 1}", _sample_decide(kinds[i % 2])) for i in range(count)]


# ----- the check ---------------------------------------------------------------------------------


@dataclass
class Report:
    """What the check found: one line per game played, and the problems."""

    logs_kept: bool = True  # false while the logs are in a temporary folder that will be gone
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        print(line, flush=True)
        self.lines.append(line)

    def tail(self, path: Path | None) -> str:
        """A bot's last output lines, to show with a problem."""
        return log_tail(path, show_path=self.logs_kept)


@dataclass(frozen=True)
class CheckSettings:
    """How the bot is checked: games per table size, the seed, the clock, the seats and games to cover."""

    games_per_size: int = 2
    seed: int = 1
    timing: Timing = Timing()
    turn_limit: int = 200
    policy: FaultPolicy = FaultPolicy()
    games: tuple[str, ...] = ()  # empty: every game the bot plays
    seats: tuple[int, ...] = ()  # empty: every table size


async def check_bot(candidate: BotSpec, settings: CheckSettings, log_dir: Path | None) -> int:
    """Check the bot; print what happens and the problems; return the exit status (0: no problem)."""
    kept = log_dir is not None
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="check-bot-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    report = Report(logs_kept=kept)
    try:
        print(f"checking {candidate.describe()}", flush=True)
        declared = await _handshake(candidate, settings, log_dir / "handshake.log", report)
        for game_name in sorted(GAMES):
            if settings.games and game_name not in settings.games:
                continue
            if game_name not in declared:
                report.say(f"- {game_name}: the bot says it does not play it; skipped")
                continue
            game = GAMES[game_name]
            for seats in range(game.min_players, game.max_players + 1):
                if settings.seats and seats not in settings.seats:
                    continue
                await _check_table(candidate, settings, game_name, seats, log_dir, report)
    finally:
        if kept:
            print(f"bot output is kept in {log_dir}")
        else:
            shutil.rmtree(log_dir, ignore_errors=True)
    return _summary(report)


async def _handshake(candidate: BotSpec, settings: CheckSettings, log_path: Path, report: Report) -> set[str]:
    """Start the bot once and handshake; return the games it plays (empty after a problem)."""
    bot = BotSession(candidate, log_path)
    fault = None
    try:
        await bot.start(GameSetup("stop_the_bus", 3, settings.timing, settings.turn_limit))
    except BotFault as error:
        fault = error
    finally:
        await bot.stop()
    response = bot.handshake_response
    if response is not None and PROTOCOL_VERSION in response.protocol_versions:
        by = f" by {response.author}" if response.author else ""
        report.say(printable(f"handshake ok: {response.name or '(no name)'} {response.version}{by}"))
        games = {GAME_FROM_PB[game] for game in response.games if game in GAME_FROM_PB}
        if not games:
            report.problems.append("the handshake lists no game the referee runs (GAME_STOP_THE_BUS, GAME_BASTARD_BRAG)")
        return games
    if fault is not None:
        report.problems.append(f"{fault.kind.value}: {fault.detail}" + report.tail(log_path))
    return set()


async def _check_table(
    candidate: BotSpec, settings: CheckSettings, game_name: str, seats: int, log_dir: Path, report: Report
) -> None:
    """Play ``games_per_size`` games at ``seats`` seats in one process of the bot, rotating its seat."""
    setup = GameSetup(game_name, seats, settings.timing, settings.turn_limit)
    label = f"{game_name} at {seats} seats"
    process_number = 0
    bot: BotSession | None = None
    first_decisions: list[float] = []
    other_decisions: list[float] = []
    try:
        for number in range(settings.games_per_size):
            if bot is None or not bot.usable:
                if bot is not None:
                    await bot.stop()
                process_number += 1
                log_path = log_dir / f"{game_name}-{seats}-{process_number}.log"
                bot = BotSession(candidate, log_path)
                try:
                    await bot.start(setup)
                except BotFault as fault:
                    report.problems.append(f"{label}: {fault.kind.value}: {fault.detail}" + report.tail(log_path))
                    bot = None
                    return
            seat = (number + seats // 2) % seats
            players: list = opponents(seats - 1)
            players.insert(seat, bot)
            seed = settings.seed + 1000 * seats + number
            game_id = f"check-{game_name}-{seats}-{number + 1}"
            game_log = log_dir / f"{game_id}.jsonl"
            match = Match(
                game_name, players, seed=seed, game_id=game_id, timing=settings.timing,
                turn_limit=settings.turn_limit, policy=settings.policy, log_path=game_log,
                players=[CANDIDATE if player is bot else player.name for player in players],
            )  # fmt: skip
            result = await match.play()
            latencies = result.latencies_ms[seat]
            slowest = max(latencies, default=0.0)
            game_label = f"{label}, game {number + 1} (seat {seat}, seed {seed})"
            report.say(
                f"- {game_label}: placed {result.place_of(seat)} of {seats}, {len(latencies)} decisions, "
                f"slowest {slowest:.1f} ms"
            )
            for kind, count in sorted(result.faults[seat].items()):
                faults = [record for record in read_log(game_log) if record["type"] == "fault"]
                details = "; ".join(record["detail"] for record in faults if record["seat"] == seat)
                report.problems.append(f"{game_label}: {count} {kind} fault{'s' if count > 1 else ''}: {details}")
            if seat in result.forfeits:
                report.problems.append(f"{game_label}: forfeited the game: {result.forfeits[seat]}"
                                       + report.tail(bot.log_path))  # fmt: skip
            slow = [ms for ms in latencies if ms > settings.timing.move_time_ms * SLOW_FRACTION]
            if slow:
                report.problems.append(
                    f"{game_label}: {len(slow)} slow decision{'' if len(slow) == 1 else 's'} "
                    f"(over half the {settings.timing.move_time_ms} ms move time; slowest {max(slow):.0f} ms)"
                )
            if latencies:
                first_decisions.append(latencies[0])
                other_decisions.extend(latencies[1:])
    finally:
        if bot is not None:
            await bot.stop()
    if first_decisions and other_decisions:
        usual = statistics.median(other_decisions)
        first = statistics.median(first_decisions)
        if first - usual > SLOW_MESSAGES_MS:
            report.problems.append(
                f"{label}: slow handling of the messages between decisions: the first decision of a game "
                f"(after its game_start, and the previous game's game_end) took {first:.0f} ms (median), "
                f"against {usual:.1f} ms for the others; do the work of a game's start or end faster, "
                "as it is charged to the first decision"
            )


def _summary(report: Report) -> int:
    if not report.problems:
        print("no problems found")
        return 0
    print(f"{len(report.problems)} problem{'s' if len(report.problems) > 1 else ''}:")
    for problem in report.problems:
        print(f"  - {problem}")
    return 1

