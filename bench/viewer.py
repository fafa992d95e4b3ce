"""Benchmark the viewer's files: the size of a league's folder (replay pages, leaderboard, logs) and their cost.

Runs a league of about ``--games`` games (default 1,000) of Stop the Bus at
tables of 3 between four copies of bench/echo_bot.py (which plays like the
random sample bot and answers at once), with ``referee run``, so the replay
pages and the leaderboard are written live as in any league. Then reports:
the folder's size in all and by part, the replay pages' sizes (median and
largest), the time to write one replay page and the leaderboard, and, where
Playwright and Chromium are installed, how long the largest replay page
takes to open in the browser (from navigation to drawn).

    .venv/bin/python bench/viewer.py                # about 3 minutes on 2 cores
    .venv/bin/python bench/viewer.py --games 120    # quick
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ECHO_BOT = ROOT / "bench" / "echo_bot.py"
GAMES_PER_ROUND = 12  # four bots, every three of them, three seat rotations


def folder_size(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())


def write_league(directory: Path, games: int) -> Path:
    lines = [
        "name: viewer-bench",
        "game: stop_the_bus",
        "seed: 20261130",
        "table_size: 3",
        f"rounds: {max(1, round(games / GAMES_PER_ROUND))}",
        "concurrency: 2",
        "output: out",
        "bots:",
    ]
    for index in range(4):
        lines += [f"  - name: echo-{index}", f"    command: python {ECHO_BOT}"]
    path = directory / "league.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def browser_open_ms(page: Path) -> float | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists():
        return None
    args = [
        "--no-sandbox",
        "--headless",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        tab = browser.new_page()
        times = []
        for _ in range(5):
            tab.goto(page.as_uri())
            tab.wait_for_selector("body[data-ready='1']")
            times.append(float(tab.get_attribute("body", "data-ready-ms")))
        browser.close()
    return statistics.median(times)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--games", type=int, default=1000)
    options.add_argument("--keep", type=Path, help="run the league in this folder and keep it")
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        directory = args.keep or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        league = write_league(directory, args.games)
        output = directory / "out"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "referee.cli", "run", str(league), "--no-progress"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
        records = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
        pages = sorted((output / "replays").iterdir(), key=lambda page: page.stat().st_size)
        sizes = [page.stat().st_size for page in pages]

        from referee.league import standings_from_directory
        from referee.publish import write_leaderboards
        from referee.publish.live import write_replay_for

        largest = pages[-1]
        clock = time.perf_counter()
        write_replay_for(output, largest.stem)
        replay_s = time.perf_counter() - clock
        clock = time.perf_counter()
        standings, title = standings_from_directory(output)
        write_leaderboards(standings, output, title)
        leaderboard_s = time.perf_counter() - clock
        decisions = {record["game_id"]: record["decisions"] for record in records}
        parts = {part: folder_size(output / part) for part in ("replays", "games", "logs")}
        total = folder_size(output)
        print(
            f"{len(records)} games (median {statistics.median(decisions.values()):.0f} decisions) "
            f"played and published in {wall:.0f} s"
        )
        print(
            f"league folder: {total / 2**20:.1f} MiB in all: "
            + ", ".join(f"{part}/ {size / 2**20:.1f} MiB" for part, size in parts.items())
            + f", leaderboard.html {(output / 'leaderboard.html').stat().st_size / 1024:.0f} KiB"
            + f", games.jsonl {(output / 'games.jsonl').stat().st_size / 2**20:.1f} MiB"
        )
        print(
            f"replay pages: median {statistics.median(sizes) / 1024:.1f} KiB, largest {sizes[-1] / 1024:.1f} KiB "
            f"({decisions[largest.stem]} decisions)"
        )
        print(
            f"writing the largest replay page: {replay_s * 1000:.0f} ms; the leaderboard files: "
            f"{leaderboard_s * 1000:.0f} ms"
        )
        opened = browser_open_ms(largest)
        if opened is not None:
            print(f"the largest replay page opens in Chromium in {opened:.0f} ms (median of 5, navigation to drawn)")


if __name__ == "__main__":
    main()
