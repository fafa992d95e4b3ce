"""Benchmark the honest clock: on an overloaded machine, prompt bots are never charged a timeout; a slow one always is.

A league of Stop the Bus at three seats is run with three times as many games
at once as the machine has CPUs, while as many other processes as there are
CPUs spin without pause (every core busy). Its bots (tests/bad_bots/thinker.py):

- *thinkers*: each decision spends 3 ms of CPU time, then answers;
- one *overtimer*: each decision takes the move time plus 80 ms, sleeping
  (time a bot chooses to spend, which the clock charges).

The league uses a 150 ms move time, no time bank and the default grace
(50 ms), under the forfeit policy: a reply charged more than 200 ms is a
timeout. The targets: the thinkers are charged no timeout at all, and the
overtimer is charged one in every game it plays. The benchmark prints both,
and for the thinkers' decisions the wall time against the time charged
(median, 99th percentile, worst): the difference is what the machine and the
referee made them wait, which the clock did not charge (see referee/protocol/clock.py).

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/fairness.py            # 6 thinkers and the overtimer: 105 games
    .venv/bin/python bench/fairness.py --quick    # 4 thinkers and the overtimer: 30 games

tests/test_clock.py runs the quick league (``run_fairness_league``) in ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.apps.league import RESULTS_FILE, run_league  # noqa: E402
from referee.leaguefile.config import load_league  # noqa: E402
from referee.protocol.clock import Timing  # noqa: E402
from referee.records.gamelog import log_path, log_text  # noqa: E402
from referee.records.results import read_records  # noqa: E402

THINKER = ROOT / "tests" / "bad_bots" / "thinker.py"
MOVE_TIME_MS = 150
OVERTIME_MS = 80
THINK_CPU_MS = 3
TABLE_SIZE = 3
OVERTIMER = "overtimer"


@dataclass
class FairnessResult:
    """What the league showed: timeouts charged to each kind of bot, and the thinkers' wall and charged times."""

    games: int
    concurrency: int
    spinners: int
    thinker_timeouts: int
    thinker_decisions: int
    overtimer_games: int
    overtimer_games_charged: int
    wall_ms: list[float]  # every thinker decision's wall time
    charged_ms: list[float]  # and the time charged for it
    seconds: float


def write_league(folder: Path, thinkers: int, concurrency: int, marker: str = "", sandbox: str | None = None) -> Path:
    """The fairness league's file: ``thinkers`` thinkers and the overtimer."""
    python = sys.executable
    lines = [
        "name: fairness",
        "game: stop_the_bus",
        "seed: 20261130",
        f"table_size: {TABLE_SIZE}",
        f"move_time_ms: {MOVE_TIME_MS}",
        "time_bank_ms: 0",
        f"concurrency: {concurrency}",
        "fault_policy: {mode: forfeit}",
        "max_restarts: 1000000",  # the overtimer times out in every game, and plays every game
        f"output: {folder / 'results'}",
        "bots:",
    ]
    if sandbox is not None:
        lines.insert(-1, f"sandbox: {sandbox}")
    extra = ["--marker", marker] if marker else []
    for index in range(thinkers):
        command = [python, str(THINKER), "--cpu-ms", str(THINK_CPU_MS), *extra]
        lines += [f"  - name: thinker-{index + 1}", f"    command: {json.dumps(command)}"]
    command = [python, str(THINKER), "--cpu-ms", "0", "--sleep-ms", str(MOVE_TIME_MS + OVERTIME_MS), *extra]
    lines += [f"  - name: {OVERTIMER}", f"    command: {json.dumps(command)}"]
    path = folder / "fairness.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def run_fairness_league(folder: Path, thinkers: int, marker: str = "", spinners: int | None = None) -> FairnessResult:
    """Run the league with every CPU kept busy by spinning processes; return what it showed."""
    cpus = len(os.sched_getaffinity(0))
    spinners = cpus if spinners is None else spinners
    concurrency = 3 * cpus
    league = load_league(write_league(folder, thinkers, concurrency, marker))
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(spinners)]
    for process in load:
        process.start()
    started = time.perf_counter()
    try:
        summary = asyncio.run(run_league(league, output=folder / "results"))
    finally:
        stop.set()
        for process in load:
            process.join(5)
            if process.is_alive():
                process.kill()
    seconds = time.perf_counter() - started
    records = list(read_records(folder / "results" / RESULTS_FILE))
    thinker_timeouts = thinker_decisions = overtimer_games = overtimer_charged = 0
    wall_ms: list[float] = []
    charged_ms: list[float] = []
    for record in records:
        for seat, name in enumerate(record["seats"]):
            timeouts = record["faults"][seat].get("timeout", 0)
            if name == OVERTIMER:
                overtimer_games += 1
                overtimer_charged += timeouts > 0
            else:
                thinker_timeouts += timeouts
        game_log = log_path(folder / "results" / "games", record["game_id"])
        for line in log_text(game_log).splitlines():
            entry = json.loads(line)
            if entry["type"] == "decision" and record["seats"][entry["seat"]] != OVERTIMER:
                thinker_decisions += 1
                wall_ms.append(entry["wall_ms"])
                charged_ms.append(entry["ms"])
    return FairnessResult(
        games=summary.total,
        concurrency=concurrency,
        spinners=spinners,
        thinker_timeouts=thinker_timeouts,
        thinker_decisions=thinker_decisions,
        overtimer_games=overtimer_games,
        overtimer_games_charged=overtimer_charged,
        wall_ms=wall_ms,
        charged_ms=charged_ms,
        seconds=seconds,
    )


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):.1f}, p99 {p99:.1f}, worst {ordered[-1]:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 thinkers (30 games) instead of 6 (105 games)")
    args = parser.parse_args(argv)
    thinkers = 4 if args.quick else 6
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.platform()}, {cpu_name()}, {len(os.sched_getaffinity(0))} cpus")
    print(
        f"move time {MOVE_TIME_MS} ms, no bank, grace {Timing().grace_ms} ms: a timeout once "
        f"{MOVE_TIME_MS + Timing().grace_ms} ms are charged",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="referee-fairness-") as folder:
        result = run_fairness_league(Path(folder), thinkers)
    print(
        f"{result.games} games, {result.concurrency} at once, {result.spinners} spinning processes, "
        f"in {result.seconds:.1f} s"
    )
    print(
        f"thinkers ({THINK_CPU_MS} ms of CPU a decision): {result.thinker_timeouts} timeouts charged in "
        f"{result.thinker_decisions} decisions (target 0)"
    )
    print(f"  wall time:    {_quantiles(result.wall_ms)}")
    print(f"  time charged: {_quantiles(result.charged_ms)}")
    print(
        f"overtimer ({MOVE_TIME_MS} + {OVERTIME_MS} ms a decision, sleeping): charged a timeout in "
        f"{result.overtimer_games_charged} of its {result.overtimer_games} games (target: all)"
    )
    met = result.thinker_timeouts == 0 and result.overtimer_games_charged == result.overtimer_games
    print(f"targets {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
