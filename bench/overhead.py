"""Benchmark the referee's overhead per decision: real games against a bare gRPC round trip.

Two measurements, interleaved in blocks, against the same bot program
(bench/echo_bot.py: generated stubs served by ``referee.botkit.serve``; it
answers every call at once, picking a legal action by arithmetic on the
decision number), run as the referee runs bots (``referee.session.BotSession``:
a private Unix socket, the same grpc.aio channel and options):

(a) bare round trip: the DecisionRequests of real games, captured as bytes
    once, sent again one at a time over the bot's own channel with no
    serializer and no parsing of the reply (the barest call grpc.aio makes),
    with the referee's deadline. Nothing else runs in the loop.
(b) game decision: whole games (``referee.match.Match``, built and played:
    engine step, the seat's observation, the request, validation, the game
    log written to a file, the GameStarted, HandResult and GameOver
    notifications), their total wall time divided by their decisions. The
    median per decision is the time from one decision's request to the next
    one's, taken by a thin wrapper round ``BotSession.decide`` (its own cost,
    well under a microsecond, counts against the referee).

Each block runs (a) then (b) for every configuration (Stop the Bus with 3
seats, Bastard Brag with 4), in alternating order from block to block; the
ratio of each block's (b) mean to its (a) mean is taken, and the result is
the median over blocks, which other load on the machine moves least. The
last line is ``overhead ratio: R``; the target is R <= 1.15.

The bot plays like the random sample bot by default, so hand ends and game
starts come as often as in a league of sample bots; ``--policy first`` makes
every hand run to the turn limit, which leaves the cost of a decision alone.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/overhead.py            # 7 blocks of about 2,000 decisions per configuration
    .venv/bin/python bench/overhead.py --quick    # 3 blocks of about 1,000
    .venv/bin/python bench/overhead.py --policy first   # hands to the turn limit: a decision's cost alone
    .venv/bin/python bench/overhead.py --profile out.pstats   # then profile (b) alone with cProfile
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import platform
import pstats
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.bots import BotSpec  # noqa: E402
from referee.session import BotSession, GameSetup, Timing  # noqa: E402
from referee.faults import BotFault  # noqa: E402
from referee.match import Match, start_bots, stop_bots  # noqa: E402

ECHO_BOT = ROOT / "bench" / "echo_bot.py"
CONFIGURATIONS = (("stop_the_bus", 3), ("bastard_brag", 4))
TARGET_RATIO = 1.15
TIMING = Timing()  # the league defaults: the deadline passed on every call is the referee's
DECIDE_METHOD = "/referee.v1.Bot/Decide"


@dataclass
class Table:
    """The bots of one configuration, the requests captured from its games, and the next seed to play."""

    game: str
    players: int
    bots: list[BotSession]
    requests: list[tuple[int, bytes]] = field(default_factory=list)  # (seat, serialized DecisionRequest)
    next_seed: int = 1
    next_request: int = 0


@dataclass
class Totals:
    """One block's loop time and count, and every per-call time, for one measurement."""

    seconds: float = 0.0
    count: int = 0
    games: int = 0
    per_call: list[float] = field(default_factory=list)



async def open_table(game: str, players: int, policy: str) -> Table:
    command = [sys.executable, str(ECHO_BOT), "--policy", policy]
    specs = [BotSpec.from_command(command, name=f"echo-{seat}") for seat in range(players)]
    bots = await start_bots(specs, GameSetup(game, players, TIMING))
    failed = [bot for bot in bots if isinstance(bot, BotFault)]
    if failed:
        await stop_bots(bots)
        raise SystemExit(f"the benchmark bot did not start: {failed[0]}")
    return Table(game, players, bots)


async def play_games(table: Table, decisions: int, log_dir: Path, totals: Totals | None, capture: bool) -> None:
    """Play whole games until at least ``decisions`` decisions; add their time to ``totals``."""
    stamps: list[float] = []
    originals = [bot.decide for bot in table.bots]
    for seat, bot in enumerate(table.bots):
        bot.decide = _wrapped(originals[seat], seat, stamps, table.requests if capture else None)
    try:
        played = 0
        while played < decisions:
            seed = table.next_seed
            table.next_seed += 1
            stamps.clear()
            started = perf_counter()
            match = Match(
                table.game, table.bots, seed=seed, game_id=f"bench-{table.game}-{seed}", timing=TIMING,
                log_path=log_dir / f"{table.game}-{seed}.jsonl", players=[bot.spec.name for bot in table.bots],
            )  # fmt: skip
            result = await match.play()
            elapsed = perf_counter() - started
            if any(result.forfeits.values()) or any(result.faults):
                raise SystemExit(f"the benchmark bot faulted: {result.faults} {result.forfeits}")
            played += result.decisions
            if totals is not None:
                totals.seconds += elapsed
                totals.count += result.decisions
                totals.games += 1
                totals.per_call.extend(later - earlier for earlier, later in pairwise(stamps))
    finally:
        for seat, bot in enumerate(table.bots):
            bot.decide = originals[seat]


def _wrapped(decide, seat: int, stamps: list[float], capture: list | None):
    if capture is None:

        async def stamped(request, timeout):
            stamps.append(perf_counter())
            return await decide(request, timeout)

        return stamped

    async def capturing(request, timeout):
        capture.append((seat, bytes(request)))  # the referee sends requests already encoded
        return await decide(request, timeout)

    return capturing


async def bare_round_trips(table: Table, calls: int, totals: Totals) -> None:
    """Send ``calls`` captured requests one at a time, answered at once; add their time to ``totals``."""
    raw_calls = [bot.channel.unary_unary(DECIDE_METHOD) for bot in table.bots]  # bytes in, bytes out
    timeout = (TIMING.move_time_ms + TIMING.time_bank_ms + TIMING.grace_ms) / 1000
    requests = table.requests
    index = table.next_request
    per_call = totals.per_call
    started = perf_counter()
    for _ in range(calls):
        seat, data = requests[index]
        index = (index + 1) % len(requests)
        before = perf_counter()
        await raw_calls[seat](data, timeout=timeout)
        per_call.append(perf_counter() - before)
    totals.seconds += perf_counter() - started
    totals.count += calls
    table.next_request = index


def microseconds(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


async def run(blocks: int, decisions: int, policy: str, profile_path: str | None) -> float:
    tables = [await open_table(game, players, policy) for game, players in CONFIGURATIONS]
    try:
        with tempfile.TemporaryDirectory(prefix="referee-overhead-") as log_dir:
            logs = Path(log_dir)
            for table in tables:
                # Warm up (connections, caches) and capture the requests that (a) sends again.
                await play_games(table, decisions, logs, None, capture=True)
                sizes = sorted(len(data) for _, data in table.requests)
                print(
                    f"{table.game} {table.players} players: {len(table.requests)} requests captured, "
                    f"{statistics.median(sizes):.0f} bytes median, {sizes[0]}-{sizes[-1]} bytes",
                    flush=True,
                )
            bare_all, game_all = Totals(), Totals()
            ratios = []
            for block in range(blocks):
                bare, games = Totals(), Totals()
                for table in tables:
                    if block % 2 == 0:
                        await bare_round_trips(table, decisions, bare)
                        await play_games(table, decisions, logs, games, capture=False)
                    else:
                        await play_games(table, decisions, logs, games, capture=False)
                        await bare_round_trips(table, decisions, bare)
                bare_mean, game_mean = bare.seconds / bare.count, games.seconds / games.count
                ratios.append(game_mean / bare_mean)
                print(
                    f"block {block + 1}/{blocks}: bare round trip {microseconds(bare_mean)} mean, "
                    f"game decision {microseconds(game_mean)} mean ({games.count} decisions, {games.games} games), "
                    f"ratio {ratios[-1]:.3f}",
                    flush=True,
                )
                for total, part in ((bare_all, bare), (game_all, games)):
                    total.seconds += part.seconds
                    total.count += part.count
                    total.games += part.games
                    total.per_call.extend(part.per_call)
            if profile_path:
                profiler = cProfile.Profile()
                profiler.enable()
                for table in tables:
                    await play_games(table, decisions, logs, None, capture=False)
                profiler.disable()
                profiler.dump_stats(profile_path)
                print(f"\nprofile of (b) alone, {decisions} decisions per configuration, under cProfile:")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    finally:
        for table in tables:
            await stop_bots(table.bots)

    bare_median = statistics.median(bare_all.per_call)
    game_median = statistics.median(game_all.per_call)
    bare_mean = bare_all.seconds / bare_all.count
    game_mean = game_all.seconds / game_all.count
    ratio = statistics.median(ratios)
    print()
    print(f"(a) bare round trip: median {microseconds(bare_median)} per call, "
          f"mean {microseconds(bare_mean)} per call, {bare_all.count} calls")  # fmt: skip
    print(f"(b) game decision: median {microseconds(game_median)} per decision (request to next request), "
          f"mean {microseconds(game_mean)} per decision over whole games, "
          f"{game_all.count} decisions in {game_all.games} games")  # fmt: skip
    print(f"referee overhead per decision: {microseconds(game_mean - bare_mean)} (means), "
          f"{microseconds(game_median - bare_median)} (medians)")  # fmt: skip
    print(f"median ratio: {game_median / bare_median:.3f}; ratio of block means, median of {blocks} blocks: "
          f"{min(ratios):.3f}..{max(ratios):.3f}; target: at most {TARGET_RATIO}")  # fmt: skip
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 blocks of about 1,000 decisions instead of 7 of 2,000")
    parser.add_argument("--blocks", type=int, help="number of blocks")
    parser.add_argument("--decisions", type=int, help="decisions per configuration and block (and per warm-up)")
    parser.add_argument(
        "--policy",
        choices=("scattered", "first"),
        default="scattered",
        help="the bot's choice: scattered (the default) plays like the random sample bot; first always takes the "
        "first legal action, so every hand runs to the turn limit and hand ends and game starts all but vanish",
    )
    parser.add_argument("--profile", metavar="FILE", help="afterwards, profile (b) with cProfile and save the stats")
    args = parser.parse_args(argv)
    blocks = args.blocks or (3 if args.quick else 7)
    decisions = args.decisions or (1000 if args.quick else 2000)
    if blocks < 1 or decisions < 1:
        parser.error("--blocks and --decisions must be at least 1")
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {os.cpu_count()} logical cpus")
    print(
        f"bot: {ECHO_BOT.relative_to(ROOT)} --policy {args.policy} (generated stubs, referee.botkit.serve), "
        "one process per seat",
        flush=True,
    )
    ratio = asyncio.run(run(blocks, decisions, args.policy, args.profile))
    print(f"overhead ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
