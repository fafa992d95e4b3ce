"""Bytes on disk per game: a league of the sample bots played, then its folder measured part by part.

The league: Stop the Bus, four Python sample bots (random, heuristic and one more of each), three at a table,
each in its sandbox, two games at once, as `referee run` plays it. Once it is over its output folder is
measured, every file counted, by part: the game logs (``games/``), the records (``games.jsonl``), the
spectators' feeds left (``live/``), the pages and leaderboards (``leaderboard.*``, ``replays/``), the bots'
output (``logs/``) and the rest (``league.json``, ``visibility.json``). Each part is given as the bytes its files
hold (what the issue's figures count) and as the space the file system gives them (whole blocks, 4 KiB each
on ext4: a file of 2 KB takes 4 KB), each per game.

    .venv/bin/python bench/disk.py                 # 20,000 games: about 30 minutes on 2 cores
    .venv/bin/python bench/disk.py --quick         # 300 games, about a minute
    .venv/bin/python bench/disk.py --games 3000 --keep-logs 100 --keep results/   # keep_logs, and the folder
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

SEED = 16045690984503098046  # a secret-sized seed, so that validation has nothing to warn about
BOTS = ("random", "heuristic", "random-2", "heuristic-2")
TABLE_SIZE = 3
GAMES_PER_ROUND = math.comb(len(BOTS), TABLE_SIZE) * TABLE_SIZE  # every table at every seat rotation
TARGET_BYTES = 4096  # a game, all included (issue 50)


def write_league(folder: Path, games: int, keep_logs: int | None) -> Path:
    """The league file: about ``games`` games of the sample bots (whole rounds)."""
    python = ROOT / "sample_bots" / "python"
    bots = "\n".join(
        f"  - {{name: {name}, command: python {python / (name.split('-')[0] + '_bot.py')}}}" for name in BOTS
    )
    rounds = max(1, round(games / GAMES_PER_ROUND))
    keep = f"keep_logs: {keep_logs}\n" if keep_logs else ""
    path = folder / "league.yaml"
    path.write_text(
        f"name: disk\ngame: stop_the_bus\nseed: {SEED}\ntable_size: {TABLE_SIZE}\nrounds: {rounds}\nconcurrency: 2\n"
        f"output: {folder / 'results'}\n{keep}bots:\n{bots}\n",
        encoding="utf-8",
    )
    return path


def part_of(relative: Path) -> str:
    """The part a file of the league's folder belongs to."""
    top = relative.parts[0]
    if top == "games":
        return "game logs (games/)"
    if top == "games.jsonl":
        return "records (games.jsonl)"
    if top == "live":
        return "spectator feeds (live/)"
    if top == "replays" or top.startswith("leaderboard."):
        return "pages (leaderboard.*, replays/)"
    if top == "logs":
        return "bots' output (logs/)"
    return "the rest (league.json, visibility.json)"


def measure(output: Path) -> dict[str, tuple[int, int, int]]:
    """Each part's files, bytes and allocated bytes."""
    parts: dict[str, tuple[int, int, int]] = {}
    for directory, _, files in os.walk(output):
        for name in files:
            path = Path(directory) / name
            stat = path.lstat()
            part = part_of(path.relative_to(output))
            count, size, allocated = parts.get(part, (0, 0, 0))
            parts[part] = (count + 1, size + stat.st_size, allocated + stat.st_blocks * 512)
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000, help="about how many games (whole rounds of 12)")
    parser.add_argument("--quick", action="store_true", help="300 games")
    parser.add_argument("--keep-logs", type=int, default=None, help="the league's keep_logs (default: every log)")
    parser.add_argument("--keep", type=Path, default=None, help="copy the league's folder here afterwards")
    args = parser.parse_args()
    games = 300 if args.quick else args.games
    print(f"{platform.python_implementation()} {platform.python_version()}, {cpu_name()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="referee-disk-") as scratch:
        folder = Path(scratch)
        league = write_league(folder, games, args.keep_logs)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "referee", "run", str(league), "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL, cwd=ROOT)  # fmt: skip
        wall = time.perf_counter() - started
        output = folder / "results"
        played = sum(1 for _ in (output / "games.jsonl").open(encoding="utf-8"))
        parts = measure(output)
        if args.keep is not None:
            shutil.copytree(output, args.keep, dirs_exist_ok=True)
    keep_text = f", keep_logs {args.keep_logs}" if args.keep_logs else ", every log kept"
    print(f"{played} games of Stop the Bus in {wall:.0f} s ({played / wall * 60:.0f} games/min){keep_text}")
    print(f"{'part':40s} {'files':>8s} {'bytes/game':>11s} {'on disk/game':>13s}")
    total_size = total_allocated = 0
    for part, (count, size, allocated) in sorted(parts.items(), key=lambda item: -item[1][1]):
        total_size += size
        total_allocated += allocated
        print(f"{part:40s} {count:8d} {size / played:11.0f} {allocated / played:13.0f}")
    print(f"{'all included':40s} {'':8s} {total_size / played:11.0f} {total_allocated / played:13.0f}")
    verdict = "met" if total_size / played <= TARGET_BYTES else "NOT met"
    print(f"target: at most {TARGET_BYTES} bytes a game, all included: {verdict}")


if __name__ == "__main__":
    main()
