"""Benchmark a season's pages at 10,000, 100,000 and 1,000,000 games: one rewrite's time and peak memory.

A ladder plays about a thousand games a minute and never stops on its own,
and its page helper (``referee.publish.live``) rewrites the standings and the
pages every few seconds. This writes, for each size, a ``games.jsonl`` of a
ladder-like season into a temporary folder: 36 versions, about a dozen
playing at a time (one retired and one submitted every 1/24 of the games),
tables of 3 and 4, each table a deal of as many seat rotations, finish orders
drawn from the versions' planted strengths (Plackett-Luce, with the deal's
luck deciding a fifth of the games), about 28 decision times a seat in the
record's bins, a fault now and then, a void game now and then. Then in a
fresh process, as the helper does (``write_live_leaderboard``), it writes the
standings and pages once from nothing, adds 1,000 games (a minute of play)
and writes them again, and reports each rewrite's wall time and the peak
resident memory while it ran (the process's ``VmHWM``, reset before each with
``/proc/self/clear_refs``). The target: the rewrite after 1,000 more games
at a million games within twice its time and memory at ten thousand.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/standings_scale.py            # 10,000, 100,000 and 1,000,000 games: about 25 minutes
    .venv/bin/python bench/standings_scale.py --quick    # 10,000 and 100,000 games
    .venv/bin/python bench/standings_scale.py --sizes 10000 30000
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

VERSIONS = 36
PLAYING = 12  # versions playing at any time
LUCK = 0.2  # the share of games the deal's cards decide, whoever sits where
ADDED = 1_000  # games added before the second rewrite: a minute of a ladder on two cores


class Season:
    """A seeded ladder-like season: each :meth:`deal` the games of one table, as ``games.jsonl`` lines."""

    def __init__(self, games: int, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.names = [f"author{number % 12:02d}-v{number // 12 + 1}" for number in range(VERSIONS)]
        self.elo = {name: self.rng.gauss(0.0, 150.0) for name in self.names}
        self.change_every = max(1, games // (VERSIONS - PLAYING))  # a version retired and one submitted
        self.index = 0
        self.table = 0

    def playing(self) -> list[str]:
        first = min(self.index // self.change_every, VERSIONS - PLAYING)
        return self.names[first : first + PLAYING]

    def deal(self) -> list[str]:
        """The lines of one table's games: a deal of one seed, one game per seat rotation."""
        self.table += 1
        size = self.rng.choice((3, 4))
        table = self.rng.sample(self.playing(), size)
        seed = self.rng.getrandbits(63)
        cards = self.rng.sample(range(size), size)  # the seats, best cards first
        lines = []
        for rotation in range(size):
            seats = table[rotation:] + table[:rotation]
            if self.rng.random() < LUCK:
                order = list(cards)
            else:  # Plackett-Luce: sort by log strength plus Gumbel noise
                keys = [self.elo[name] / 173.7 - math.log(-math.log(1.0 - self.rng.random())) for name in seats]
                order = sorted(range(size), key=lambda seat: -keys[seat])
            lines.append(self.line(seats, order, rotation, seed))
            self.index += 1
        return lines

    def line(self, seats: list[str], order: list[int], rotation: int, seed: int) -> str:
        rng = self.rng
        faults = ["{}"] * len(seats)
        if rng.random() < 0.01:
            faults[rng.randrange(len(seats))] = '{"timeout":1}'
        steps = []
        for _ in seats:  # about 28 decisions a seat, times near 1.5 ms: bins about 460, a step of 0 to 12 each
            count = rng.randint(16, 40)
            steps.append(
                "[" + ",".join([str(rng.randint(420, 470)), *(str(rng.randint(0, 12)) for _ in range(count - 1))]) + "]"
            )
        void = ',"void":"no bot got to make a decision"' if rng.random() < 0.001 else ""
        return (
            f'{{"index":{self.index},"game_id":"t{self.table:07d}-s{rotation}","round":1,"table":{self.table},'
            f'"rotation":{rotation},"seed":"{seed}","seats":{json.dumps(seats)},"game":"stop_the_bus",'
            f'"finish_order":{json.dumps(order)},"hands_played":10,"decisions":80,"faults":[{",".join(faults)}],'
            f'"forfeits":{{}}{void},"timing":{{"started":"2026-12-07T13:53:03.148+00:00","wall_s":0.25,'
            f'"latency_bins":[{",".join(steps)}]}}}}\n'
        )

    def write(self, path: Path, games: int) -> None:
        with open(path, "a", encoding="utf-8") as out:
            target = self.index + games
            while self.index < target:
                out.write("".join(self.deal()))


def high_water_mib() -> float:
    """The process's peak resident memory since the last reset (``VmHWM``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def reset_high_water() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # the peak resident memory starts again from now


def measure(folder: Path, games: int) -> dict[str, float]:
    """In this (fresh) process: the helper's rewrite from nothing, then after ``ADDED`` more games."""
    from referee.publish.live import write_live_leaderboard

    figures: dict[str, float] = {"base_mib": high_water_mib()}
    reset_high_water()
    started, cpu = time.perf_counter(), time.process_time()
    write_live_leaderboard(folder, None)
    figures["first_s"] = time.perf_counter() - started
    figures["first_cpu_s"] = time.process_time() - cpu
    figures["first_mib"] = high_water_mib()
    season = Season(games)
    season.index, season.table = games, games  # the same season, further on (new seeds, new ids)
    season.rng.seed(games)
    season.write(folder / "games.jsonl", ADDED)
    reset_high_water()
    started, cpu = time.perf_counter(), time.process_time()
    write_live_leaderboard(folder, None)
    figures["rewrite_s"] = time.perf_counter() - started
    figures["rewrite_cpu_s"] = time.process_time() - cpu
    figures["rewrite_mib"] = high_water_mib()
    figures["page_kib"] = (folder / "leaderboard.html").stat().st_size / 1024
    board = json.loads((folder / "leaderboard.json").read_text())
    figures["deals"] = board["ranking"]["deals"]
    figures["sandwich"] = board["ranking"]["covariance"] == "sandwich"
    return figures


def run_size(games: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="referee-standings-scale-") as name:
        folder = Path(name)
        season = Season(games)
        started = time.perf_counter()
        season.write(folder / "games.jsonl", games)
        (folder / "league.json").write_text(
            json.dumps({"name": "scale", "bots": season.names, "game": "stop_the_bus", "settings": {"seed": "7"}})
        )
        written = time.perf_counter() - started
        size = (folder / "games.jsonl").stat().st_size
        child = subprocess.run(
            [sys.executable, __file__, "--child", name, "--child-games", str(season.index)],
            capture_output=True,
            text=True,
            check=True,
        )
        return {**json.loads(child.stdout), "games": season.index, "bytes": size, "written_s": written}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 and 100,000 games")
    parser.add_argument("--sizes", type=int, nargs="+", help="games in each season (default 10,000 100,000 1,000,000)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-games", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(Path(args.child), args.child_games)))
        return 0
    sizes = args.sizes or ([10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000])
    print(f"python {platform.python_version()} {sys.executable}; {cpu_name()}")
    print(
        "| games | games.jsonl | deals | from nothing: wall, CPU, peak | after 1,000 more: wall, CPU, peak | page |\n"
        "|---:|---:|---:|---:|---:|---:|"
    )
    rows = []
    for games in sizes:
        figures = run_size(games)
        rows.append(figures)
        print(
            f"| {figures['games']:,} | {figures['bytes'] / 2**20:,.0f} MiB ({figures['bytes'] / figures['games']:.0f} "
            f"B a line) | {figures['deals']:,.0f} | {figures['first_s']:.1f} s, {figures['first_cpu_s']:.1f} s, "
            f"{figures['first_mib']:.0f} MiB | {figures['rewrite_s']:.2f} s, {figures['rewrite_cpu_s']:.2f} s, "
            f"{figures['rewrite_mib']:.0f} MiB | {figures['page_kib']:.0f} KiB |",
            flush=True,
        )
    first, last = rows[0], rows[-1]
    print(
        f"\nthe rewrite after {ADDED:,} more games at {last['games']:,} games against {first['games']:,}: "
        f"{last['rewrite_s'] / first['rewrite_s']:.2f} x the wall time, {last['rewrite_cpu_s'] / first['rewrite_cpu_s']:.2f}"
        f" x the CPU time, {last['rewrite_mib'] / first['rewrite_mib']:.2f} x the peak memory (target: within 2 x); "
        f"the process before the first rewrite: {first['base_mib']:.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
