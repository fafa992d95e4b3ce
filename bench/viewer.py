"""Benchmark the viewer's files: the size of a league's folder (replay pages, leaderboard, logs) and their cost.

Runs a league of about ``--games`` games (default 1,000) of Stop the Bus at
tables of 3 between four copies of bench/echo_bot.py (which plays like the
random sample bot and answers at once), with ``referee run``, twice: as
leagues run by default (the page helper writes the leaderboard; ``referee
serve`` makes replay pages when asked), then with ``static_replays: true``
(the helper also writes every game's replay page as it ends). For each it
reports the page helper's CPU time as a share of the referee's own (both read
from /proc while the league runs; the target is under 0.1 by default). Then:
the folder's size in all and by part, the replay pages' sizes (median and
largest), the time to write one replay page and the leaderboard, and, where
Playwright and Chromium are installed, how long the largest replay page
takes to open in the browser (from navigation to drawn).

    .venv/bin/python bench/viewer.py                # about 6 minutes on 2 cores
    .venv/bin/python bench/viewer.py --games 120    # quick
"""

from __future__ import annotations

import argparse
import json
import os
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


def write_league(directory: Path, games: int, static_replays: bool = False) -> Path:
    lines = [
        "name: viewer-bench",
        f"static_replays: {'true' if static_replays else 'false'}",
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


HELPER = b"referee.publish.live"  # the page helper's command line: python -m referee.publish.live
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """A process's own CPU time (user and system, not its children's), from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime: fields 14 and 15 of stat(5)


def helpers_of(pid: int) -> list[int]:
    """The page helpers among the children of process ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and HELPER in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def run_measured(league: Path) -> tuple[float, float, float]:
    """Run ``league`` with ``referee run``; return its wall time, the referee's CPU and its page helpers' CPU."""
    started = time.perf_counter()
    referee = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "run", str(league), "--no-progress"], stdout=subprocess.DEVNULL
    )
    referee_cpu, helper_cpu = 0.0, {}  # the last reading of each, before it ended
    while referee.poll() is None:
        referee_cpu = max(referee_cpu, cpu_seconds(referee.pid))
        for helper in helpers_of(referee.pid):
            helper_cpu[helper] = max(helper_cpu.get(helper, 0.0), cpu_seconds(helper))
        time.sleep(0.1)
    if referee.returncode:
        raise SystemExit(f"the league failed ({referee.returncode})")
    return time.perf_counter() - started, referee_cpu, sum(helper_cpu.values())


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
        for static in (False, True):
            folder = directory / ("static" if static else "default")
            folder.mkdir(parents=True, exist_ok=True)
            wall, referee_cpu, helper_cpu = run_measured(write_league(folder, args.games, static))
            print(
                f"{'static_replays: true ' if static else 'by default (no replay files)'}: played and published in "
                f"{wall:.0f} s; the referee's CPU {referee_cpu:.1f} s, the page helper's {helper_cpu:.1f} s: "
                f"a share of {helper_cpu / referee_cpu:.3f}" + ("" if static else " (target: under 0.1)")
            )
        output = directory / "static" / "out"
        records = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
        pages = sorted((output / "replays").iterdir(), key=lambda page: page.stat().st_size)
        sizes = [page.stat().st_size for page in pages]

        from referee.apps.league import standings_from_directory
        from referee.publish.files import write_leaderboards
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
            f"{len(records)} games (median {statistics.median(decisions.values()):.0f} decisions) with static replays"
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
