"""Benchmark freezing off move: a ponderer at the table does not slow the steady thinkers beside it.

Three leagues of Stop the Bus at three seats, on the same bots' names and
seeds, as many games at once as the machine has CPUs (``concurrency:
auto``), each bot in its sandbox:

- *control*: every bot a steady thinker (tests/bad_bots/thinker.py: each
  decision spends ``THINK_CPU_MS`` of CPU, then answers);
- *frozen*: one of them, ``ponderer``, is tests/bad_bots/ponderer.py
  instead: it thinks as the others do, and keeps three worker processes
  spinning all the time, on move and off. Bots are frozen off move (the
  default, referee.play.freezer);
- *free*: the same, with ``freeze: false`` (what a ponderer does unchecked).

Move time ``MOVE_TIME_MS``, no time bank, the default 50 ms grace, forfeit
policy. For each league it prints the steady thinkers' charged time per
decision (median, 99th percentile), their wall time (what the clock does
not charge them, the wait for a CPU, shows there) and their timeouts. The target, the
guarantee of docs/security.md: with the ponderer frozen, the thinkers'
median charged time is within 1.25 x the control's, and they get no
timeout. (tests/test_freezer.py measures the ponderer itself: its cgroup's
CPU time between its decisions.)

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/pondering.py            # 4 thinkers and the ponderer: 30 games a league
    .venv/bin/python bench/pondering.py --quick    # 3 thinkers and the ponderer: 12 games a league
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
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

from referee.apps.league import GAME_LOG_DIR, RESULTS_FILE, run_league  # noqa: E402
from referee.leaguefile.config import load_league  # noqa: E402
from referee.play.freezer import description  # noqa: E402
from referee.records.gamelog import log_path, log_text  # noqa: E402
from referee.records.results import read_records  # noqa: E402

THINKER = ROOT / "tests" / "bad_bots" / "thinker.py"
PONDERER = ROOT / "tests" / "bad_bots" / "ponderer.py"
MOVE_TIME_MS = 100
THINK_CPU_MS = 40
WORKERS = 3
TABLE_SIZE = 3
PONDERER_NAME = "ponderer"
TARGET = 1.25
LEAGUES = ("control", "frozen", "free")


@dataclass
class LeagueFigures:
    """What one league showed of the steady thinkers, and how long it took."""

    games: int
    decisions: int
    charged_ms: list[float]  # every steady thinker decision's charged time
    wall_ms: list[float]  # and its wall time
    timeouts: int
    seconds: float


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):.1f} ms, p99 {p99:.1f} ms"


def write_league(folder: Path, kind: str, thinkers: int) -> Path:
    """The league file of ``kind`` (one of LEAGUES): ``thinkers`` steady thinkers and the ponderer's seat."""
    python = sys.executable
    lines = [
        f"name: pondering-{kind}",
        "game: stop_the_bus",
        "seed: 20261201",
        f"table_size: {TABLE_SIZE}",
        f"move_time_ms: {MOVE_TIME_MS}",
        "time_bank_ms: 0",
        "concurrency: auto",
        "fault_policy: {mode: forfeit}",
        "max_restarts: 1000000",
        f"output: {folder / kind}",
        "bots:",
    ]
    thinker = [python, str(THINKER), "--cpu-ms", str(THINK_CPU_MS)]
    for index in range(thinkers):
        lines += [f"  - name: thinker-{index + 1}", f"    command: {json.dumps(thinker)}"]
    ponderer = [python, str(PONDERER), "--cpu-ms", str(THINK_CPU_MS), "--workers", str(WORKERS)]
    lines += [f"  - name: {PONDERER_NAME}", f"    command: {json.dumps(thinker if kind == 'control' else ponderer)}"]
    if kind == "free":
        lines.append("    freeze: false")
    path = folder / f"{kind}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(folder: Path, kind: str, thinkers: int) -> LeagueFigures:
    league = load_league(write_league(folder, kind, thinkers))
    started = time.perf_counter()
    summary = asyncio.run(run_league(league, output=folder / kind))
    seconds = time.perf_counter() - started
    charged: list[float] = []
    wall: list[float] = []
    timeouts = decisions = 0
    for record in read_records(folder / kind / RESULTS_FILE):
        thinkers = {seat for seat, name in enumerate(record["seats"]) if name != PONDERER_NAME}
        for seat in thinkers:
            timeouts += record["faults"][seat].get("timeout", 0)
        decisions += record["decisions"]
        log = log_path(folder / kind / GAME_LOG_DIR, record["game_id"])
        for line in log_text(log).splitlines():
            entry = json.loads(line)
            if entry["type"] == "decision" and entry["seat"] in thinkers:
                charged.append(entry["ms"])
                wall.append(entry["wall_ms"])
    return LeagueFigures(summary.total, decisions, charged, wall, timeouts, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 thinkers (12 games a league) instead of 4 (30)")
    args = parser.parse_args(argv)
    thinkers = 3 if args.quick else 4
    print(f"python {platform.python_version()} ({platform.python_implementation()}) {sys.executable}")
    print(
        f"machine: {platform.platform()}, {cpu_name()}, {len(os.sched_getaffinity(0))} cpus; bots frozen off move "
        f"by {description()}"
    )
    print(
        f"thinkers spend {THINK_CPU_MS} ms of CPU a decision; move time {MOVE_TIME_MS} ms, no bank, grace 50 ms; "
        f"the ponderer keeps {WORKERS} processes spinning",
        flush=True,
    )
    figures = {}
    with tempfile.TemporaryDirectory(prefix="referee-pondering-") as folder:
        for kind in LEAGUES:
            figures[kind] = result = run(Path(folder), kind, thinkers)
            print(
                f"{kind}: {result.games} games, {result.decisions} decisions in {result.seconds:.1f} s; steady "
                f"thinkers charged {quantiles(result.charged_ms)} (wall {quantiles(result.wall_ms)}), "
                f"{result.timeouts} timeouts",
                flush=True,
            )
    control = statistics.median(figures["control"].charged_ms)
    for kind in ("frozen", "free"):
        ratio = statistics.median(figures[kind].charged_ms) / control
        print(f"{kind} / control median: {ratio:.2f}")
    frozen = figures["frozen"]
    met = statistics.median(frozen.charged_ms) <= TARGET * control and frozen.timeouts == 0
    print(f"target (frozen within {TARGET} x the control's median, no timeout): {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
