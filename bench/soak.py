"""Fault soak: a league of misbehaving bots beside good ones, checked game by game, with a leak check after.

The league (written to a temporary folder) is every bot of tests/bad_bots
that fails in its own way (hang, slow, crash, exit at start, never listen,
garbage, empty and unknown actions, an error status, illegal, stale, flood,
huge reply, handshake mismatch, forking children that stay behind, memory
hog under a memory limit) beside three good bots (the sample random bot
twice and the heuristic bot), two to a table (Stop the Bus), every pair in
both seats. ``max_restarts`` is high, so every bot keeps failing in its own
way to the end. Afterwards:

- every game's faults, per seat, are exactly what the bots are scripted to
  do: a bot that fails before the game (start-up, handshake) faults in every
  game; one that fails on a decision faults on its first decision of every
  game in which it gets one (not when the other seat forfeited first: the
  first seat to act comes from the game's seed); the others never fault.
  Each fault's detail in the game's log names what happened (and the memory
  limit, for the memory hog); the standings count the same faults per bot;
- the games between good bots have exactly the results (placements, hands,
  decisions) of the same games in a league of the good bots alone (same
  seeds: the schedule's table seed depends only on the round and the bots at
  the table);
- no bot process is left (nor any child or detached grandchild of one), no
  private socket directory nor socket file, and the referee (this process)
  has no more open file descriptors than before the league.

Run from a checkout (it needs tests/bad_bots), with the Python the project
is installed in, since the bots import ``referee.play.kit``:

    .venv/bin/python bench/soak.py               # the long soak: 20 bots, 380 games
    .venv/bin/python bench/soak.py --rounds 2    # 760 games
    .venv/bin/python bench/soak.py --quick       # the short league tests/test_soak.py plays

It prints the games, faults by kind, wall time and the open file
descriptors before and after, and exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.apps.league import GAME_LOG_DIR, RESULTS_FILE, RunSummary, run_league  # noqa: E402
from referee.engine.games import game_class  # noqa: E402
from referee.leaguefile.config import load_league  # noqa: E402
from referee.leaguefile.schedule import table_seed  # noqa: E402
from referee.protocol.clock import Timing  # noqa: E402
from referee.records.gamelog import log_path, read_log  # noqa: E402
from referee.records.results import read_records  # noqa: E402
from tests.processes import marked_processes  # noqa: E402

BAD_BOTS_DIR = ROOT / "tests" / "bad_bots"
SAMPLE_BOTS_DIR = ROOT / "sample_bots" / "python"
GAME = "stop_the_bus"
TABLE_SIZE = 2  # the expected faults below are worked out for two seats
SEED = 20261130
MEMORY_LIMIT_MB = 128
# A deadline of move + bank + grace (the default, 50 ms) = 850 ms: prompt bots answer in milliseconds.
MOVE_TIME_MS = 500
TIME_BANK_MS = 300
# Long enough for a Python bot to start on a busy machine (a bot that exits at start is told by its exit,
# not by this timeout); only a bot that never listens waits it out, in the long soak.
STARTUP_TIMEOUT_MS = 10_000
NO_RESTART_LIMIT = 1_000_000  # every bot keeps failing in its own way to the end


@dataclass(frozen=True)
class SoakBot:
    """A bot of the soak league: its program, and the fault it is scripted to cause (None: it plays legally)."""

    name: str
    script: Path
    args: tuple[str, ...] = ()
    fault: str | None = None
    before_game: bool = False  # it fails at start-up or handshake, so in every game it is seated in
    detail: str = ""  # words every one of its faults' details holds
    limits: dict[str, int] = field(default_factory=dict)
    # Another fault taken for the scripted one, and the words its details hold (see the memory hog).
    also: str | None = None
    also_detail: str = ""


def _bad(name: str, script: str, *args: str, **kwargs) -> SoakBot:
    return SoakBot(name, BAD_BOTS_DIR / script, args, **kwargs)


GOOD_BOTS = (
    SoakBot("random", SAMPLE_BOTS_DIR / "random_bot.py"),
    SoakBot("heuristic", SAMPLE_BOTS_DIR / "heuristic_bot.py"),
    SoakBot("random-2", SAMPLE_BOTS_DIR / "random_bot.py"),
)
DEADLINE_MS = MOVE_TIME_MS + TIME_BANK_MS + Timing().grace_ms
BAD_BOTS = (
    _bad("hang", "slow.py", "--at", "all", "--forever", fault="timeout", detail=f"(limit {DEADLINE_MS} ms;"),
    _bad(
        "slow",
        "slow.py",
        "--at",
        "all",
        "--sleep-ms",
        str(2 * DEADLINE_MS),
        fault="timeout",
        detail=f"(limit {DEADLINE_MS} ms;",
    ),
    _bad("crash", "crash.py", "--at", "all", fault="crash", detail="process exit code 3"),
    _bad(
        "exit-at-start",
        "exit_at_start.py",
        fault="startup",
        before_game=True,
        detail="exited with exit code 2 before listening",
    ),
    _bad("no-listen", "no_listen.py", fault="startup", before_game=True, detail="did not listen on unix:"),
    _bad(
        "garbage",
        "wire.py",
        "--mode",
        "garbage",
        "--at",
        "all",
        fault="malformed",
        detail="bytes that are not a PlayResponse",
    ),
    _bad("empty", "bad_reply.py", "--mode", "empty", "--at", "all", fault="malformed", detail="empty action"),
    _bad(
        "unknown-kind",
        "bad_reply.py",
        "--mode",
        "unknown-kind",
        "--at",
        "all",
        fault="malformed",
        detail="unknown action kind 99",
    ),
    _bad(
        "error-status",
        "bad_reply.py",
        "--mode",
        "error",
        "--at",
        "all",
        fault="malformed",
        detail="the bot could not decide: RuntimeError",
    ),
    _bad(
        "illegal",
        "bad_reply.py",
        "--mode",
        "illegal",
        "--at",
        "all",
        fault="illegal",
        detail="'knock' is not an action of Stop the Bus",
    ),
    _bad("stale", "bad_reply.py", "--mode", "stale", "--at", "all", fault="stale", detail="replied to decision"),
    _bad("huge", "wire.py", "--mode", "huge", "--at", "all", fault="malformed", detail="byte limit broke the stream"),
    _bad("flood", "flood.py", "--at", "1", "--megabytes", "2"),  # floods its log once, plays legally
    _bad(
        "handshake",
        "handshake.py",
        "--protocol-version",
        "7",
        fault="handshake",
        before_game=True,
        detail="speaks protocol versions 7",
    ),
    _bad("fork-play", "fork.py", "--children", "sleeper,detached"),  # leaves children running, plays legally
    _bad(
        "fork-crash",
        "fork.py",
        "--children",
        "sleeper,detached",
        "--crash",
        "--at",
        "all",
        fault="crash",
        detail="process exit code 3",
    ),
    # The detail names the limit: "memory limit of N MB exceeded" (a cgroup) or "(memory limit N MB)" (an rlimit).
    _bad(
        "memory-hog",
        "hog.py",
        "--resource",
        "memory",
        "--at",
        "all",
        fault="crash",
        detail="memory limit",
        limits={"memory_mb": MEMORY_LIMIT_MB},
        # Under heavy load the hog may time out before it reaches its limit: where cgroup v2's cpu.pressure is
        # missing, the referee cannot tell a bot waiting for a CPU from a slow one (docs/leagues.md), and the hog
        # needs a few hundred ms of CPU to fill 128 MB. The limit itself is tested in tests/test_sandbox.py.
        also="timeout",
        also_detail=f"(limit {DEADLINE_MS} ms;",
    ),
)
# The short league: every fault kind, forking and the memory hog: 11 bots, 110 games. (Never listening costs
# the whole start-up timeout in every game; tests/test_faults.py has it. A plain crash is fork-crash's fault
# without the children, and the memory hog crashes too.)
QUICK_BAD_NAMES = (
    "hang",
    "exit-at-start",
    "garbage",
    "illegal",
    "stale",
    "handshake",
    "fork-crash",
    "memory-hog",
)


def soak_bots(quick: bool) -> tuple[SoakBot, ...]:
    """The bad bots of the long soak, or of the short one."""
    return tuple(bot for bot in BAD_BOTS if bot.name in QUICK_BAD_NAMES) if quick else BAD_BOTS


# ----- the league file ------------------------------------------------------------------------


def write_league(
    path: Path,
    bots: Sequence[SoakBot],
    command: Callable[[Path, Sequence[str]], list[str]],
    marker: str,
    *,
    rounds: int = 1,
    concurrency: int = 4,
) -> Path:
    """Write a league of ``bots`` (two to a table) to ``path``; ``command`` makes each bot's command line."""
    lines = [
        f"name: soak-{len(bots)}",
        f"game: {GAME}",
        f"seed: {SEED}",
        f"table_size: {TABLE_SIZE}",
        f"rounds: {rounds}",
        f"move_time_ms: {MOVE_TIME_MS}",
        f"time_bank_ms: {TIME_BANK_MS}",
        f"startup_timeout_ms: {STARTUP_TIMEOUT_MS}",
        f"max_restarts: {NO_RESTART_LIMIT}",
        f"concurrency: {concurrency}",
        "bots:",
    ]
    for bot in bots:
        lines.append(f"  - name: {bot.name}")
        lines.append(f"    command: {json.dumps(command(bot.script, bot.args))}")
        lines.append(f"    env: {{REFEREE_TEST_MARKER: {marker}}}")
        if bot.limits:
            lines.append(f"    limits: {json.dumps(bot.limits)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(league_path: Path, output: Path) -> RunSummary:
    """Run a league in this process."""
    return asyncio.run(run_league(load_league(league_path), output=output))


# ----- what each game should show -----------------------------------------------------------


def expected_outcome(seats: Sequence[str], seed: int, bots: dict[str, SoakBot]) -> tuple[list[dict], dict[str, str]]:
    """The faults by seat, and the forfeits, of a two-seat game where every bot does what it is scripted to do.

    Bots that fail before the game fault at once, each of them, and the
    first forfeits (the game is then over: the other seat is left alone).
    Otherwise the seat to act first (from the seed) decides first: if it
    fails on a decision it forfeits and the game is over before the other
    seat is asked; if not, the other seat is asked in its turn.
    """
    assert len(seats) == TABLE_SIZE, "the expected faults are worked out for two seats"
    faults: list[dict[str, int]] = [{} for _ in seats]
    failed_before = [seat for seat, name in enumerate(seats) if bots[name].before_game]
    for seat in failed_before:
        faults[seat] = {bots[seats[seat]].fault: 1}
    if failed_before:
        return faults, {str(failed_before[0]): bots[seats[failed_before[0]]].fault}
    first = game_class(GAME)(TABLE_SIZE, seed).current_seat
    for seat in (first, 1 - first):
        fault = bots[seats[seat]].fault
        if fault is not None:
            faults[seat] = {fault: 1}
            return faults, {str(seat): fault}
    return faults, {}


def _as_scripted(record: dict, bots: dict[str, SoakBot]) -> list[tuple[dict[str, int], str | None]]:
    """Each seat's faults and forfeit (None: none) in ``record``, a bot's ``also`` fault read as its scripted one."""
    seats = []
    for seat, name in enumerate(record["seats"]):
        bot = bots[name]
        faults, forfeit = dict(record["faults"][seat]), record["forfeits"].get(str(seat))
        if bot.also is not None and bot.fault is not None and bot.also in faults:
            faults[bot.fault] = faults.get(bot.fault, 0) + faults.pop(bot.also)
            forfeit = bot.fault if forfeit == bot.also else forfeit
        seats.append((faults, forfeit))
    return seats


def check_faults(output: Path, bots: Sequence[SoakBot]) -> tuple[Counter, list[str]]:
    """Compare every game's faults with the script; return the faults by kind and every difference found."""
    by_name = {bot.name: bot for bot in bots}
    problems: list[str] = []
    by_kind: Counter = Counter()
    per_bot: dict[str, Counter] = {bot.name: Counter() for bot in bots}
    for record in sorted(read_records(output / RESULTS_FILE), key=lambda record: record["index"]):
        game_id, seats = record["game_id"], record["seats"]
        expected, expected_forfeits = expected_outcome(seats, int(record["seed"]), by_name)
        as_scripted = _as_scripted(record, by_name)
        if [faults for faults, _ in as_scripted] != expected:
            problems.append(f"{game_id} {seats}: faults {record['faults']}, scripted {expected}")
        forfeits = {str(seat): forfeit for seat, (_, forfeit) in enumerate(as_scripted) if forfeit is not None}
        if forfeits != expected_forfeits:
            problems.append(f"{game_id} {seats}: forfeits {record['forfeits']}, scripted {expected_forfeits}")
        if sorted(record["finish_order"]) != list(range(len(seats))):
            problems.append(f"{game_id}: finish_order {record['finish_order']} is not a ranking of every seat")
        for seat, faults in enumerate(record["faults"]):
            per_bot[seats[seat]].update(faults)
            by_kind.update(faults)
        game_log = read_log(log_path(output / GAME_LOG_DIR, game_id))
        for entry in (entry for entry in game_log if entry["type"] == "fault"):
            bot = by_name[entry["bot"]]
            detail = bot.also_detail if entry["kind"] == bot.also else bot.detail
            if entry["kind"] not in (bot.fault, bot.also) or detail not in entry["detail"]:
                problems.append(
                    f"{game_id}: {bot.name} faulted {entry['kind']}: {entry['detail']!r}; "
                    f"scripted {bot.fault}: ...{bot.detail}..."
                )
    standings = json.loads((output / "leaderboard.json").read_text(encoding="utf-8"))
    for row in standings["rows"]:
        counted = {kind: count for kind, count in row["faults"].items() if count}
        if counted != dict(per_bot[row["bot"]]):
            problems.append(f"standings: {row['bot']} has faults {counted}; the games hold {dict(per_bot[row['bot']])}")
    for bot in bots:
        if bot.fault is None and per_bot[bot.name]:
            problems.append(f"{bot.name} plays legally but has faults {dict(per_bot[bot.name])}")
        if bot.fault is not None and per_bot[bot.name][bot.fault] + per_bot[bot.name][bot.also] == 0:
            problems.append(f"{bot.name} never showed its {bot.fault} fault")
    return by_kind, problems


def compare_good_games(output: Path, reference: Path, good: Sequence[str]) -> tuple[int, list[str]]:
    """Check that games between good bots equal the same games of a league of the good bots alone."""
    alone = {(record["round"], tuple(record["seats"])): record for record in read_records(reference / RESULTS_FILE)}
    problems = []
    compared = 0
    for record in read_records(output / RESULTS_FILE):
        if not set(record["seats"]) <= set(good):
            continue
        compared += 1
        key = (record["round"], tuple(record["seats"]))
        twin = alone.get(key)
        if twin is None:
            problems.append(f"{record['game_id']} {record['seats']}: no such game in the league of good bots alone")
            continue
        if record["seed"] != twin["seed"] or int(record["seed"]) != table_seed(SEED, record["round"], record["seats"]):
            problems.append(f"{record['game_id']}: seed {record['seed']}, alone {twin['seed']}")
        for item in ("finish_order", "hands_played", "decisions", "faults", "forfeits"):
            if record[item] != twin[item]:
                problems.append(f"{record['game_id']} {record['seats']}: {item} {record[item]}, alone {twin[item]}")
    if compared == 0:
        problems.append("no game between good bots to compare")
    return compared, problems


# ----- leaks -------------------------------------------------------------------------------------


def open_fds() -> int:
    """This process's open file descriptors, after a garbage collection (the listing's own one not counted)."""
    gc.collect()
    return len(os.listdir("/proc/self/fd")) - 1


def socket_leftovers(*roots: Path) -> list[str]:
    """Private socket directories (``referee-*``) and Unix socket files left under ``roots``."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.name.startswith("referee-") and path.is_dir():
                found.append(f"directory {path}")
            elif stat.S_ISSOCK(path.lstat().st_mode):
                found.append(f"socket {path}")
    return found


# ----- the command -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--quick", action="store_true", help="the short league of tests/test_soak.py")
    options.add_argument("--rounds", type=int, default=1, help="rounds of the league (default 1)")
    options.add_argument("--concurrency", type=int, default=4, help="games at once (default 4)")
    options.add_argument("--keep", action="store_true", help="keep the results folder and print where it is")
    args = options.parse_args(argv)

    marker = f"referee-soak-{uuid.uuid4().hex[:12]}"
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    socket_root = Path(tempfile.mkdtemp(prefix="rs-", dir="/tmp"))  # short: a socket path has 108 bytes at most
    tempfile.tempdir = str(socket_root)  # the bots' private socket directories go here

    def command(script: Path, bot_args: Sequence[str]) -> list[str]:
        return [sys.executable, str(script), *bot_args, "--marker", marker]

    bad = soak_bots(args.quick)
    good_names = [bot.name for bot in GOOD_BOTS]
    all_bots = (*GOOD_BOTS, *bad)
    reference = write_league(work / "alone.yaml", GOOD_BOTS, command, marker, rounds=args.rounds)
    soak = write_league(work / "soak.yaml", all_bots, command, marker, rounds=args.rounds, concurrency=args.concurrency)
    problems: list[str] = []
    try:
        run(reference, work / "alone")  # also warms up grpc, whose first channel opens descriptors for good
        fds_before = open_fds()
        started = time.perf_counter()
        summary = run(soak, work / "soak")
        wall_s = time.perf_counter() - started
        fds_after = open_fds()
        by_kind, fault_problems = check_faults(work / "soak", all_bots)
        problems += fault_problems
        compared, good_problems = compare_good_games(work / "soak", work / "alone", good_names)
        problems += good_problems
        time.sleep(1.0)  # the kernel reaps the last namespaces a moment after their init dies
        leftovers = marked_processes(marker, socket_root)
        problems += [f"left running: {line}" for line in leftovers]
        problems += [f"left behind: {line}" for line in socket_leftovers(socket_root, work)]
        if fds_after > fds_before:
            problems.append(f"the referee's open file descriptors grew from {fds_before} to {fds_after}")
    finally:
        for line in marked_processes(marker, socket_root):
            os.kill(int(line.split()[1].rstrip(":")), signal.SIGKILL)
        shutil.rmtree(socket_root, ignore_errors=True)
        if args.keep:
            print(f"results in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print(
        f"soak: {len(all_bots)} bots ({len(bad)} misbehaving), {summary.played} games in {wall_s:.1f} s "
        f"({summary.played / wall_s * 60:.0f} games/min) at concurrency {args.concurrency}"
    )
    print("faults by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(by_kind.items())))
    print(f"games between good bots equal to the league without bad bots: {compared}")
    print(f"referee open file descriptors: {fds_before} before, {fds_after} after")
    print(f"bot processes left: {len(leftovers)}")
    if problems:
        print(f"{len(problems)} problems:")
        for problem in problems:
            print("  " + problem)
        return 1
    print("no problems found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
