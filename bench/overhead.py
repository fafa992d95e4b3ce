"""Benchmark the referee's overhead per decision: real games against bare gRPC round trips.

Four measurements, interleaved in blocks, against the same bot program
(bench/echo_bot.py: generated stubs served by ``referee.play.kit.serve``; it
answers every decision at once, picking a legal action by arithmetic on the
decision number), run as the referee runs bots (``referee.play.session.BotSession``:
a Unix socket, the same grpc.aio channel and options):

(a) bare stream round trip: the DecisionRequests of real games, captured as
    bytes once, sent again one at a time, each wrapped in a PlayRequest, on
    a v2 stream of its own to the bot (``call.write`` then ``call.read``, no
    serializer, the reply left unparsed): the least a decision can cost.
(u) bare unary call: the same requests sent as a plain unary call
    (``bench.Echo/Decide``, a DecisionRequest in, a Decision out), the way a
    protocol of one call per decision would: what v1 did.
(s) session decision: the same requests through ``BotSession.decide``, the
    referee's own side of a decision without a game (the request wrapped
    and numbered, the reply parsed and handed over by the stream's reader
    task, the clock's readings, the deadline's timer): what the stream's
    machinery costs over (a), apart from the game's own work in (b).
(b) game decision: whole games (``referee.play.match.Match``, built and played:
    engine step, the request, the reply's checks, the honest clock, the game
    log, the game start and game end on every seat's stream), their total
    wall time divided by their decisions. The median per decision is the time
    from one decision's request to the next one's, taken by a thin wrapper
    round ``BotSession.decide``.

Each block runs them for every configuration (Stop the Bus with 3 seats,
Bastard Brag with 4), interleaved: one whole game, then as many bare round
trips, bare unary calls and session decisions as the last game had
decisions, in an order that rotates from game to game, so that all four are
measured over the same stretches of the machine's time. The ratios of each
block's (b) mean to its (u) and (a) means are taken, and each result is the
median over blocks, which other load on the machine moves least. It prints
``decision vs bare unary call: U`` (target U <= 0.75) and, last,
``overhead ratio: R`` ((b) over (a)).

R is the regression guard, and a relative one: it moves with the machine (how
fast it makes the bare round trip against the referee's Python work; every
version measured over 1.30 on one machine that had measured 1.22 to 1.28 a day
before), so no fixed bound holds. ``--against REV`` runs the version REV (its
files, taken from git into a temporary folder, with its own bench/overhead.py)
and this one alternately, several times, in one run, on the same machine at
the same hour, and says whether this version's R is within the noise of
REV's: the 95% interval of the difference of their block ratios (blocks as
the samples) reaching 0 or below. U <= 0.75 stays an absolute target.

The bots are frozen off move, as a league freezes them (referee.play.freezer),
so (s) and (b) include a thaw before each request and a freeze as each reply
is read. What that costs is measured apart, after the blocks, so as to leave
(a), (u), (s) and (b) as they were:

(f) freezing: whole games, as (b), of the same bots alternately frozen off
    move and not (``freeze`` false), game by game; the difference of the
    means per decision is what freezing costs a decision. And the two
    writes themselves, timed on one bot's freezer: a thaw (on a decision's
    path) and a freeze.

Before the two target lines it prints, for each configuration, what the
hand-written request encoder (``referee.protocol.codec.RequestEncoder``) saves
against the protobuf library's own serialisation of the same request,
measured in-process on random games, and what share of a game decision's
mean (b) that is (the encoder is kept while that is at least 5% of a decision).

The bot plays like the random sample bot by default, so hand ends and game
starts come as often as in a league of sample bots; ``--policy first`` makes
every hand run to the turn limit, which leaves the cost of a decision alone.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/overhead.py            # 7 blocks of about 2,000 decisions per configuration
    .venv/bin/python bench/overhead.py --quick    # 3 blocks of about 1,000
    .venv/bin/python bench/overhead.py --policy first   # hands to the turn limit: a decision's cost alone
    .venv/bin/python bench/overhead.py --profile out.pstats   # then profile (b) alone with cProfile
    .venv/bin/python bench/overhead.py --against main        # R against main's, alternating: within its noise?
    .venv/bin/python bench/overhead.py --against main --quick   # 3 rounds of one block each way
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import platform
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from echo_bot import UNARY_METHOD  # noqa: E402
from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.play.match import Match, start_bots, stop_bots  # noqa: E402
from referee.play.processes import BotSpec  # noqa: E402
from referee.play.session import BotSession  # noqa: E402
from referee.protocol.clock import TimeControl, Timing  # noqa: E402
from referee.protocol.codec import play_request  # noqa: E402
from referee.protocol.faults import BotFault  # noqa: E402
from referee.protocol.messages import PLAY_METHOD  # noqa: E402
from referee.protocol.setup import GameSetup  # noqa: E402
from referee.v2 import bot_pb2 as pb  # noqa: E402

ECHO_BOT = ROOT / "bench" / "echo_bot.py"
CONFIGURATIONS = (("stop_the_bus", 3), ("bastard_brag", 4))
MEASUREMENTS = ("stream", "unary", "session", "game")
TARGET_UNARY = 0.75  # absolute; R's guard is relative to a baseline version (--against)
CONFIDENCE = 0.95
TIMING = Timing()  # the league defaults


@dataclass
class Table:
    """The bots of one configuration, the requests captured from its games, and the next seed to play."""

    game: str
    players: int
    bots: list[BotSession]
    requests: list[tuple[int, bytes]] = field(default_factory=list)  # (seat, serialized DecisionRequest)
    # The same requests as (a) sends them (wrapped in a PlayRequest) and as (s) does (with their decision number).
    stream_requests: list[tuple[int, bytes]] = field(default_factory=list)
    session_requests: list[tuple[int, tuple[bytes, int]]] = field(default_factory=list)
    streams: list = field(default_factory=list)  # a bare v2 stream of its own to each seat's bot
    unary_calls: list = field(default_factory=list)  # the bare unary call to each seat's bot
    next_seed: int = 1
    next_request: int = 0
    chunk: int = 1  # round trips of (a), (u) and (s) beside each game: its last game's decisions


@dataclass
class Totals:
    """One block's loop time and count, and every per-call time, for one measurement."""

    seconds: float = 0.0
    count: int = 0
    games: int = 0
    per_call: list[float] = field(default_factory=list)


async def open_table(game: str, players: int, policy: str, freeze: bool = True) -> Table:
    command = [sys.executable, str(ECHO_BOT), "--policy", policy]
    specs = [BotSpec.from_command(command, name=f"echo-{seat}", freeze=freeze) for seat in range(players)]
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
                table.game,
                table.bots,
                seed=seed,
                game_id=f"bench-{table.game}-{seed}",
                timing=TIMING,
                log_path=log_dir / f"{table.game}-{seed}.jsonl",
                players=[bot.spec.name for bot in table.bots],
            )
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

        async def stamped(request, *args):
            stamps.append(perf_counter())
            return await decide(request, *args)

        return stamped

    async def capturing(request, *args):
        capture.append((seat, bytes(request)))  # the referee sends requests already encoded
        return await decide(request, *args)

    return capturing


async def open_streams(table: Table) -> None:
    """Open a bare v2 stream to each seat's bot, past its handshake, and make its bare unary call."""
    handshake = pb.PlayRequest(sequence=1, handshake=pb.Handshake(protocol_versions=[2])).SerializeToString()
    with thawed(table.bots):
        for bot in table.bots:
            channel = bot.transport.channel  # the session's own channel (a GrpcTransport's), so the same options
            call = channel.stream_stream(PLAY_METHOD)()  # bytes in, bytes out
            await call.write(handshake)
            await call.read()
            table.streams.append(call)
            table.unary_calls.append(channel.unary_unary(UNARY_METHOD))  # bytes in, bytes out
    table.stream_requests = [
        (seat, play_request(2, pb.PlayRequest.DECISION_REQUEST_FIELD_NUMBER, data)) for seat, data in table.requests
    ]
    table.session_requests = [
        (seat, (data, pb.DecisionRequest.FromString(data).decision_number)) for seat, data in table.requests
    ]


async def bare_stream_round_trips(table: Table, calls: int, totals: Totals) -> None:
    """Send ``calls`` captured requests one at a time on bare streams, answered at once; add their time."""
    streams = table.streams
    with thawed(table.bots):
        await _round_trips(table, table.stream_requests, calls, totals, lambda seat: _stream_round_trip(streams[seat]))


async def bare_unary_calls(table: Table, calls: int, totals: Totals) -> None:
    """Send ``calls`` captured requests one at a time as unary calls, answered at once; add their time."""
    timeout = (TIMING.move_time_ms + TIMING.time_bank_ms + TIMING.grace_ms) / 1000
    with thawed(table.bots):
        await _round_trips(table, table.requests, calls, totals, lambda seat: _unary(table.unary_calls[seat], timeout))


@contextlib.contextmanager
def thawed(bots: list[BotSession]) -> Iterator[None]:
    """The bots on move (thawed) meanwhile: (a) and (u) ask them past their sessions, which thaw them otherwise."""
    policies = [bot._off_move for bot in bots if bot._off_move is not None]
    for policy in policies:
        policy.on_move()
    try:
        yield
    finally:
        for policy in policies:
            policy.off_move()


async def session_decisions(table: Table, calls: int, totals: Totals) -> None:
    """Send ``calls`` captured requests one at a time through the seats' ``BotSession.decide``; add their time.

    The echo bot answers each with the number it was asked, so the session
    takes every reply as the decision it waits for.
    """
    await _round_trips(table, table.session_requests, calls, totals, lambda seat: _decide(table.bots[seat]))


def _decide(bot: BotSession):
    clock = TimeControl.of(TIMING)  # never spent: each decision has the whole bank, as the first one of a game

    async def round_trip(numbered: tuple[bytes, int]) -> None:
        await bot.decide(numbered[0], numbered[1], clock)

    return round_trip


def _stream_round_trip(call):
    async def round_trip(data: bytes) -> None:
        await call.write(data)
        await call.read()

    return round_trip


def _unary(raw_call, timeout: float):
    async def round_trip(data: bytes) -> None:
        await raw_call(data, timeout=timeout)

    return round_trip


async def _round_trips(table: Table, requests, calls: int, totals: Totals, sender) -> None:
    senders = [sender(seat) for seat in range(table.players)]
    index = table.next_request
    per_call = totals.per_call
    started = perf_counter()
    for _ in range(calls):
        seat, data = requests[index]
        index = (index + 1) % len(requests)
        before = perf_counter()
        await senders[seat](data)
        per_call.append(perf_counter() - before)
    totals.seconds += perf_counter() - started
    totals.count += calls
    table.next_request = index


async def interleaved(table: Table, decisions: int, log_dir: Path, part: dict[str, Totals], turn: int) -> int:
    """Play whole games at ``table`` until ``decisions`` decisions, each beside as many bare stream round
    trips, bare unary calls and session decisions as the last game had decisions, in an order that rotates
    from game to game; add their times to ``part``. Return the next turn of the rotation.

    So the four measurements share the same stretches of the machine's time, a few tens of milliseconds
    each, and a moment of load elsewhere on the machine falls on all four alike.
    """
    steps = {
        "stream": lambda: bare_stream_round_trips(table, table.chunk, part["stream"]),
        "unary": lambda: bare_unary_calls(table, table.chunk, part["unary"]),
        "session": lambda: session_decisions(table, table.chunk, part["session"]),
        "game": lambda: play_games(table, 1, log_dir, part["game"], capture=False),  # one whole game
    }
    game = part["game"]
    target = game.count + decisions
    while game.count < target:
        first = turn % len(MEASUREMENTS)
        for name in MEASUREMENTS[first:] + MEASUREMENTS[:first]:
            before = game.count
            await steps[name]()
            if name == "game":
                table.chunk = game.count - before
        turn += 1
    return turn


def microseconds(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


async def freezing_cost(tables: list[Table], policy: str, blocks: int, decisions: int, logs: Path) -> None:
    """(f): games of the tables' bots, frozen off move, alternating with games of the same bot program not frozen."""
    print()
    for table in tables:
        free = await open_table(table.game, table.players, policy, freeze=False)
        try:
            await play_games(free, decisions // 4, logs, None, capture=False)  # warm up
            frozen_totals, free_totals = Totals(), Totals()
            games = 2 * max(2, blocks * decisions // (4 * max(1, table.chunk)))  # half the blocks' decisions, each way
            for game in range(games):
                first, second = (table, frozen_totals), (free, free_totals)
                for each, totals in (first, second) if game % 2 == 0 else (second, first):
                    await play_games(each, 1, logs, totals, capture=False)
            writes = write_costs(table.bots[0])
        finally:
            await stop_bots(free.bots)
        frozen_mean = frozen_totals.seconds / frozen_totals.count
        free_mean = free_totals.seconds / free_totals.count
        print(
            f"(f) freezing, {table.game} {table.players} players: game decision {microseconds(frozen_mean)} frozen "
            f"off move, {microseconds(free_mean)} not ({frozen_totals.count} and {free_totals.count} decisions, "
            f"means): {microseconds(frozen_mean - free_mean)} a decision; {writes}"
        )


def write_costs(bot: BotSession, pairs: int = 2000) -> str:
    """The time of a thaw and of a freeze of one bot, each alone (medians), with the freezer it uses."""
    freezer = bot.process.freezer
    thaws, freezes = [], []
    for _ in range(pairs):
        started = perf_counter()
        freezer.freeze()
        middle = perf_counter()
        freezer.thaw()
        freezes.append(middle - started)
        thaws.append(perf_counter() - middle)
    return (
        f"a thaw {microseconds(statistics.median(thaws))}, a freeze {microseconds(statistics.median(freezes))} "
        f"({freezer.how}, medians of {pairs})"
    )


async def run(
    blocks: int, decisions: int, policy: str, profile_path: str | None, freezing: bool = True
) -> tuple[float, float, float]:
    tables = [await open_table(game, players, policy) for game, players in CONFIGURATIONS]
    try:
        with tempfile.TemporaryDirectory(prefix="referee-overhead-") as log_dir:
            logs = Path(log_dir)
            for table in tables:
                # Warm up (connections, caches) and capture the requests that (a), (u) and (s) send again.
                warm_up = Totals()
                await play_games(table, decisions, logs, warm_up, capture=True)
                table.chunk = round(warm_up.count / warm_up.games)
                await open_streams(table)
                sizes = sorted(len(data) for _, data in table.requests)
                print(
                    f"{table.game} {table.players} players: {len(table.requests)} requests captured, "
                    f"{statistics.median(sizes):.0f} bytes median, {sizes[0]}-{sizes[-1]} bytes",
                    flush=True,
                )
            names = MEASUREMENTS  # (a), (u), (s), (b)
            overall = {name: Totals() for name in names}
            ratios, unary_ratios = [], []
            turn = 0
            for block in range(blocks):
                part = {name: Totals() for name in names}
                for table in tables:
                    turn = await interleaved(table, decisions, logs, part, turn)
                mean = {name: part[name].seconds / part[name].count for name in names}
                ratios.append(mean["game"] / mean["stream"])
                unary_ratios.append(mean["game"] / mean["unary"])
                print(
                    f"block {block + 1}/{blocks}: bare stream round trip {microseconds(mean['stream'])}, "
                    f"bare unary call {microseconds(mean['unary'])}, session decision {microseconds(mean['session'])}, "
                    f"game decision {microseconds(mean['game'])} "
                    f"(means; {part['game'].count} decisions, {part['game'].games} games): "
                    f"vs unary {unary_ratios[-1]:.3f}, vs stream {ratios[-1]:.3f}",
                    flush=True,
                )
                for name in names:
                    total = overall[name]
                    total.seconds += part[name].seconds
                    total.count += part[name].count
                    total.games += part[name].games
                    total.per_call.extend(part[name].per_call)
            if profile_path:
                profiler = cProfile.Profile()
                profiler.enable()
                for table in tables:
                    await play_games(table, decisions, logs, None, capture=False)
                profiler.disable()
                profiler.dump_stats(profile_path)
                print(f"\nprofile of (b) alone, {decisions} decisions per configuration, under cProfile:")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
            if freezing:
                await freezing_cost(tables, policy, blocks, decisions, logs)
    finally:
        for table in tables:
            for call in table.streams:
                call.cancel()
            await stop_bots(table.bots)

    median = {name: statistics.median(overall[name].per_call) for name in names}
    mean = {name: overall[name].seconds / overall[name].count for name in names}
    print()
    print(
        f"(a) bare stream round trip: median {microseconds(median['stream'])}, mean {microseconds(mean['stream'])}, "
        f"{overall['stream'].count} round trips"
    )
    print(
        f"(u) bare unary call: median {microseconds(median['unary'])}, mean {microseconds(mean['unary'])}, "
        f"{overall['unary'].count} calls"
    )
    print(
        f"(s) session decision: median {microseconds(median['session'])}, mean {microseconds(mean['session'])}, "
        f"{overall['session'].count} decisions"
    )
    print(
        f"(b) game decision: median {microseconds(median['game'])} per decision (request to next request), "
        f"mean {microseconds(mean['game'])} per decision over whole games, "
        f"{overall['game'].count} decisions in {overall['game'].games} games"
    )
    print(
        f"referee overhead per decision over the bare stream: {microseconds(mean['game'] - mean['stream'])} (means), "
        f"{microseconds(median['game'] - median['stream'])} (medians): the session's machinery "
        f"{microseconds(mean['session'] - mean['stream'])}, the game's own work "
        f"{microseconds(mean['game'] - mean['session'])} (means)"
    )
    print(
        f"ratios of block means, over {blocks} blocks: vs unary {min(unary_ratios):.3f}..{max(unary_ratios):.3f} "
        f"(target at most {TARGET_UNARY}), vs stream {min(ratios):.3f}..{max(ratios):.3f} "
        "(the guard: within the noise of a baseline version's, --against REV)"
    )
    return statistics.median(unary_ratios), statistics.median(ratios), mean["game"]


def encoding_costs(decisions: int) -> dict[str, tuple[float, float]]:
    """Per game, the mean cost of a DecisionRequest's bytes: (hand-written encoder, protobuf library), in seconds.

    In-process, on random games of each configuration: at every decision
    both are made from the same state, in turn, and checked equal
    (``RequestEncoder`` against ``decision_request_to_pb(...).SerializeToString()``).
    """
    import random

    from referee.engine.games import GAMES
    from referee.protocol.codec import RequestEncoder
    from tests.reference_encoder import decision_request_to_pb

    costs = {}
    for game_name, players in CONFIGURATIONS:
        picks = random.Random(1)
        written = library = 0.0
        count = 0
        while count < decisions:
            game = GAMES[game_name](players, seed=picks.randrange(2**32))
            encoder = RequestEncoder(game, "r1-t001-s0")
            clock = TimeControl.of(TIMING)
            sent = [0] * players
            while not game.is_over:
                seat = game.current_seat
                started = perf_counter()
                data = encoder.request(count + 1, clock, sent[seat], None)
                middle = perf_counter()
                reference = decision_request_to_pb(
                    game, "r1-t001-s0", count + 1, sent[seat], TIMING.move_time_ms, TIMING.time_bank_ms
                ).SerializeToString()
                written += middle - started
                library += perf_counter() - middle
                if data != reference:
                    raise SystemExit(f"the encoder's bytes differ from the library's at decision {count + 1}")
                sent[seat] = len(game.events)
                count += 1
                game.apply(picks.choice(game.legal_actions()))
        costs[f"{game_name} {players} players"] = (written / count, library / count)
    return costs


# ----- against a baseline version ----------------------------------------------------------------

# A block's line, as every version since the interleaved blocks prints it.
_BLOCK_LINE = re.compile(
    r"^block \d+/\d+: .*: vs unary (?P<unary>[0-9.]+), vs stream (?P<stream>[0-9.]+)$", re.MULTILINE
)


@dataclass
class VersionRuns:
    """The block ratios of one version's runs, R (vs stream) and U (vs unary)."""

    label: str
    script: Path
    stream: list[float] = field(default_factory=list)
    unary: list[float] = field(default_factory=list)


def checkout(revision: str, folder: Path) -> str:
    """The files of ``revision`` (of this repository) in ``folder``, as ``git archive`` gives them; its short id."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "--verify", f"{revision}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if commit.returncode != 0:
        raise SystemExit(f"--against {revision}: not a commit of {ROOT} ({commit.stderr.strip()})")
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", "--format=tar", revision], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"--against {revision}: git archive failed")
    if not (folder / "bench" / "overhead.py").is_file():
        raise SystemExit(f"--against {revision}: that version has no bench/overhead.py")
    return commit.stdout.strip()


def measure_once(version: VersionRuns, blocks: int, decisions: int, policy: str) -> None:
    """Run ``version``'s own bench/overhead.py for ``blocks`` blocks; add its block ratios."""
    command = [sys.executable, str(version.script), "--blocks", str(blocks), "--decisions", str(decisions)]
    command += ["--policy", policy]
    if "--ratios-only" in subprocess.run([*command[:2], "--help"], capture_output=True, text=True).stdout:
        command.append("--ratios-only")  # no freezing or encoding measurements: the blocks alone
    # Each version imports its own referee (the script puts its folder first on the path), nothing of this one.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=version.script.parent.parent)
    blocks_seen = list(_BLOCK_LINE.finditer(done.stdout))
    if done.returncode != 0 or len(blocks_seen) != blocks:
        raise SystemExit(
            f"{version.label}: the run failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    version.stream.extend(float(block["stream"]) for block in blocks_seen)
    version.unary.extend(float(block["unary"]) for block in blocks_seen)
    print(
        f"  {version.label}: R {', '.join(block['stream'] for block in blocks_seen)}; "
        f"U {', '.join(block['unary'] for block in blocks_seen)}",
        flush=True,
    )


def difference_interval(after: list[float], before: list[float]) -> tuple[float, float, float]:
    """The difference of two means with its Welch interval at CONFIDENCE: (estimate, low, high)."""
    from referee.records.stats import interval_multiplier

    difference = statistics.fmean(after) - statistics.fmean(before)
    shares = [statistics.variance(values) / len(values) for values in (after, before)]
    error = (shares[0] + shares[1]) ** 0.5
    if error == 0.0:
        return difference, difference, difference
    degrees = (shares[0] + shares[1]) ** 2 / sum(
        share**2 / (len(values) - 1) for share, values in zip(shares, (after, before), strict=True)
    )
    half = interval_multiplier(CONFIDENCE, max(1, int(degrees))) * error
    return difference, difference - half, difference + half


def against(revision: str, rounds: int, blocks: int, decisions: int, policy: str) -> int:
    """R of this version within the noise of ``revision``'s? Runs of the two alternate, ``rounds`` each."""
    with tempfile.TemporaryDirectory(prefix="referee-baseline-") as folder:
        commit = checkout(revision, Path(folder))
        baseline = VersionRuns(f"baseline {revision} ({commit})", Path(folder) / "bench" / "overhead.py")
        this = VersionRuns("this version", ROOT / "bench" / "overhead.py")
        print(
            f"R against {revision} ({commit}): {rounds} rounds, each a run of either version in turn (the first "
            f"alternating), {blocks} block{'s' if blocks != 1 else ''} of {decisions} decisions per configuration "
            "a run",
            flush=True,
        )
        for round_number in range(rounds):
            print(f"round {round_number + 1}/{rounds}:", flush=True)
            for version in (baseline, this) if round_number % 2 == 0 else (this, baseline):
                measure_once(version, blocks, decisions, policy)
    if len(this.stream) < 2 or len(baseline.stream) < 2:
        raise SystemExit("--against needs at least two blocks of each version: more --rounds or --blocks")
    difference, low, high = difference_interval(this.stream, baseline.stream)
    unary = statistics.median(this.unary)
    print()
    for version in (baseline, this):
        print(
            f"{version.label}: R median {statistics.median(version.stream):.3f} "
            f"({min(version.stream):.3f}..{max(version.stream):.3f}, {len(version.stream)} blocks), "
            f"U median {statistics.median(version.unary):.3f}"
        )
    print(
        f"R difference, this version less the baseline: {difference:+.3f} [{low:+.3f}, {high:+.3f}] "
        f"({CONFIDENCE:.0%} interval of the difference of mean block ratios)"
    )
    within = low <= 0.0
    if within:
        print(f"R: within the noise of {revision}'s (the interval reaches 0)")
    else:
        print(f"R: ABOVE {revision}'s beyond the noise, by {low:.3f} at least: a regression on the decision path")
    print(
        f"U: {unary:.3f} (median of this version's blocks; target at most {TARGET_UNARY}): {'met' if unary <= TARGET_UNARY else 'NOT met'}"
    )
    return 0 if within and unary <= TARGET_UNARY else 1


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
    parser.add_argument(
        "--ratios-only", action="store_true", help="the blocks alone: no freezing or encoding measurements after them"
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="run the version REV (a commit, branch or tag of this repository) and this one alternately, and say "
        "whether this one's R is within the noise of REV's (U stays absolute); with --rounds, and --blocks and "
        "--decisions for each run",
    )
    parser.add_argument("--rounds", type=int, help="with --against: runs of each version (default 3 with --quick, 4)")
    args = parser.parse_args(argv)
    if args.against is not None:
        rounds = args.rounds or (3 if args.quick else 4)
        blocks = args.blocks or (1 if args.quick else 2)
        decisions = args.decisions or (1000 if args.quick else 2000)
        if rounds < 1 or blocks < 1 or decisions < 1:
            parser.error("--rounds, --blocks and --decisions must be at least 1")
        return against(args.against, rounds, blocks, decisions, args.policy)
    blocks = args.blocks or (3 if args.quick else 7)
    decisions = args.decisions or (1000 if args.quick else 2000)
    if blocks < 1 or decisions < 1:
        parser.error("--blocks and --decisions must be at least 1")
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {os.cpu_count()} logical cpus")
    print(
        f"bot: {ECHO_BOT.relative_to(ROOT)} --policy {args.policy} (generated stubs, referee.play.kit.serve), "
        "one process per seat",
        flush=True,
    )
    unary, ratio, decision = asyncio.run(
        run(blocks, decisions, args.policy, args.profile, freezing=not args.ratios_only)
    )
    for configuration, (written, library) in ({} if args.ratios_only else encoding_costs(5 * decisions)).items():
        saved = library - written
        print(
            f"request encoding, {configuration}: hand-written {microseconds(written)}, protobuf library "
            f"{microseconds(library)}: the encoder saves {microseconds(saved)} a decision, "
            f"{saved / decision:.1%} of a game decision's mean (kept while at least 5%)"
        )
    print(f"decision vs bare unary call: {unary:.3f}")
    print(f"overhead ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
