"""Benchmark whole leagues: games per minute at concurrency 1 and 2, and the referee's peak memory as leagues grow.

Each league is a league file written to a temporary directory and run by
``referee.apps.league.run_league`` in a fresh Python process of its own, which
then reports its figures: the games played, the wall time of the run
(starting the bots, every game, the leaderboards), and the peak resident
memory of that process, the referee (``getrusage(RUSAGE_SELF)``: bot
processes are not counted), with the Python objects still alive after the
run (after a full collection).

1. Throughput: the random sample bot (sample_bots/python/random_bot.py, on
   the bot kit), four of them, three at a table, each in its sandbox as a
   league runs bots: every format (round-robin, sampled, gauntlet) of Stop
   the Bus and the round-robin of Bastard Brag, at concurrency 1, 2 and auto
   (one game per CPU): games per minute and decisions per second.
2. Memory: leagues of about 100, 300 and 1,000 games of Stop the Bus
   between fast bots (bench/echo_bot.py, which answers at once), at
   concurrency 2. The referee keeps no per-game state once a game is written,
   so the peak must stay flat: it is printed for each size, with the growth
   from the smallest league to the largest, per 1,000 games; twice, as the
   referee runs and with the engine's hand-rank cache (which fills up to
   7 MiB as hands are played) filled before the league, to leave what grows
   with the number of games alone.

Run from the repository root with the project installed (the virtual environment of `make test`):

    .venv/bin/python bench/league.py            # about 3 minutes on 2 cores
    .venv/bin/python bench/league.py --quick    # under a minute: fewer games, memory leagues of 30, 100 and 300
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
ECHO_BOT = ROOT / "bench" / "echo_bot.py"
BOTS = 4
TABLE_SIZE = 3
GAMES_PER_ROUND = math.comb(BOTS, TABLE_SIZE) * TABLE_SIZE  # every table, every seat rotation


SEED = 16045690984503098046  # a secret-sized seed, so that validation has nothing to warn about
FORMATS = ("round-robin", "sampled", "gauntlet")


def format_lines(league_format: str, games: int) -> list[str]:
    """The league file's lines that make about ``games`` games in ``league_format``."""
    if league_format == "sampled":
        return [f"format: {{type: sampled, games_per_bot: {max(1, round(games * TABLE_SIZE / BOTS))}}}"]
    if league_format == "gauntlet":  # a candidate's table plays TABLE_SIZE rotations; one candidate
        return [
            "format: {type: gauntlet, candidates: [candidate]}",
            f"rounds: {max(1, round(games / (math.comb(BOTS - 1, TABLE_SIZE - 1) * TABLE_SIZE)))}",
        ]
    return [f"rounds: {max(1, round(games / GAMES_PER_ROUND))}"]


def write_league(
    directory: Path,
    name: str,
    game: str,
    bot: Path,
    games: int,
    concurrency: int | str,
    league_format: str = "round-robin",
) -> Path:
    """A league file of about ``games`` games between ``BOTS`` copies of ``bot``; return its path."""
    lines = [
        f"name: {name}",
        f"game: {game}",
        f"seed: {SEED}",
        f"table_size: {TABLE_SIZE}",
        *format_lines(league_format, games),
        f"concurrency: {concurrency}",
        f"output: {directory / name}",
        "bots:",
    ]
    for index in range(BOTS):
        bot_name = "candidate" if league_format == "gauntlet" and index == 0 else f"{bot.stem}-{index}"
        lines += [f"  - name: {bot_name}", f"    command: python {bot}"]
    path = directory / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fill_hand_rank_cache() -> int:
    """Rank every three-card hand once; return the growth of peak RSS, in KiB, that it caused.

    ``referee.engine.hands`` keeps every hand it has ranked (an unbounded cache over
    the 22,100 hands there are), so the referee's memory grows with the
    hands played until the cache is full. Filling it first leaves, in the
    league's figures, only what grows with the number of games.
    """
    from itertools import combinations

    from referee.engine.cards import DECK
    from referee.engine.hands import hand_rank

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for cards in combinations(DECK, 3):
        hand_rank(cards)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before


def run_child(league_file: str, fill_cache: bool) -> None:
    """Run one league in this process and print its figures as one JSON line (the parent reads it)."""
    from referee.apps.league import RESULTS_FILE, run_league
    from referee.leaguefile.config import load_league
    from referee.records.results import read_records

    league = load_league(league_file)
    cache_kib = fill_hand_rank_cache() if fill_cache else 0
    summary = asyncio.run(run_league(league))
    gc.collect()
    decisions = sum(record["decisions"] for record in read_records(league.output / RESULTS_FILE))
    figures = {
        "played": summary.played,
        "wall_s": summary.wall_s,
        "decisions": decisions,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "hand_rank_cache_kib": cache_kib,
        "objects_after": len(gc.get_objects()),
        "disabled": summary.disabled,
    }
    print(json.dumps(figures))


def run_league_process(league_file: Path, fill_cache: bool = False) -> dict:
    """Run a league in a fresh referee process; return its figures."""
    command = [sys.executable, __file__, "--child", str(league_file)] + (
        ["--fill-hand-rank-cache"] if fill_cache else []
    )
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the league {league_file.name} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["disabled"]:
        raise SystemExit(f"bots were disabled in {league_file.name}: {figures['disabled']}")
    return figures


def throughput(directory: Path, games_per_league: int) -> None:
    print(
        f"\nthroughput: {BOTS} random sample bots, {TABLE_SIZE} at a table, each in its sandbox, "
        f"about {games_per_league} games a league; auto is {len(os.sched_getaffinity(0))} here"
    )
    runs = [("stop_the_bus", league_format) for league_format in FORMATS] + [("bastard_brag", "round-robin")]
    for game, league_format in runs:
        for concurrency in (1, 2, "auto"):
            name = f"throughput-{game}-{league_format}-c{concurrency}"
            league_file = write_league(directory, name, game, RANDOM_BOT, games_per_league, concurrency, league_format)
            figures = run_league_process(league_file)
            minutes = figures["wall_s"] / 60
            print(
                f"{game} {league_format} concurrency {concurrency}: {figures['played'] / minutes:.1f} games/min "
                f"({figures['played'] / minutes * 60 * 24:,.0f} a day), "
                f"{figures['decisions'] / figures['wall_s']:.0f} decisions/s "
                f"({figures['played']} games, {figures['decisions']} decisions in {figures['wall_s']:.1f} s); "
                f"referee peak RSS {figures['peak_rss_kib'] / 1024:.1f} MiB",
                flush=True,
            )


def memory(directory: Path, sizes: tuple[int, ...]) -> None:
    print(f"\nmemory: Stop the Bus leagues between {BOTS} fast bots ({ECHO_BOT.name}), concurrency 2")
    for fill_cache in (False, True):
        print(
            "with the hand-rank cache filled before the league (what grows with games alone):"
            if fill_cache
            else "as the referee runs:"
        )
        peaks = []
        for size in sizes:
            name = f"memory-{size}-{'filled' if fill_cache else 'plain'}"
            figures = run_league_process(write_league(directory, name, "stop_the_bus", ECHO_BOT, size, 2), fill_cache)
            peaks.append((figures["played"], figures["peak_rss_kib"] / 1024))
            cache = f" (the filled cache: {figures['hand_rank_cache_kib'] / 1024:.1f} MiB)" if fill_cache else ""
            print(
                f"  {figures['played']} games ({figures['decisions']} decisions, {figures['wall_s']:.1f} s): "
                f"referee peak RSS {figures['peak_rss_kib'] / 1024:.1f} MiB{cache}, "
                f"{figures['objects_after']} Python objects alive after the run",
                flush=True,
            )
        (small_games, small_peak), (large_games, large_peak) = peaks[0], peaks[-1]
        growth = (large_peak - small_peak) / (large_games - small_games) * 1000
        print(
            f"  peak RSS growth from {small_games} to {large_games} games: {large_peak - small_peak:+.1f} MiB "
            f"({growth:+.2f} MiB per 1,000 games)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer games: under a minute")
    parser.add_argument("--child", metavar="LEAGUE_FILE", help=argparse.SUPPRESS)
    parser.add_argument("--fill-hand-rank-cache", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args.child, args.fill_hand_rank_cache)
        return 0
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {os.cpu_count()} logical cpus", flush=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="referee-league-bench-") as temporary:
        directory = Path(temporary)
        throughput(directory, 24 if args.quick else 60)
        memory(directory, (30, 100, 300) if args.quick else (100, 300, 1000))
    print(f"\ndone in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
