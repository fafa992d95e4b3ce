"""Benchmark schedules: the time and memory of `referee schedule` and `referee validate`, and the sampled draw.

1. Commands, each run as its own process (wall time, and peak resident
   memory from ``getrusage(RUSAGE_CHILDREN)``), with their targets:
   - ``referee schedule --json`` of 30 bots at tables of 6 with
     ``format: {type: sampled, games_per_bot: 30}`` (issue 12: within 10 s
     and 1 GiB, every bot 30 +- 1 games, every pair meets, pair counts at
     most 2 apart: checked on its output and printed below the table);
   - ``referee validate`` of 30 bots at tables of 6, round-robin
     (3,562,650 games), and of 2 bots with ``rounds: 100000000``: counted,
     never listed (seconds, bounded memory);
   - ``referee schedule --json`` of the 3,562,650-game round-robin into
     ``head``: the first lines at once.
2. The sampled draw's guarantees on seeded random leagues (2 to 60 bots,
   1 to 12 tables a bot, at most 2,500 seats) for a given time, by table
   size: how many were drawn, how many broke a guarantee (pair counts more
   than 2 apart, or a pair that never met although pairs meet 1.5 times on
   average), the widest spread and the slowest draw.
3. The seating of sampled tables that play fewer rotations than seats, on
   seeded random leagues (2 to 40 bots, tables of 2 to 6, 1 to 12 tables a
   bot, one block): when the rotations divide the seats, how many bots sit in
   some seat other than floor or ceil of games / table_size times (the
   promise: none); otherwise the widest spread of a bot's seat counts.

Run from the repository root with the project installed (the virtual environment of `make test`):

    .venv/bin/python bench/schedule.py                  # about 3 minutes: 60 s of draws per group of table sizes
    .venv/bin/python bench/schedule.py --quick          # about a minute
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.leaguefile.schedule.sampled_draw import draw_blocks, draw_tables  # noqa: E402
from referee.leaguefile.schedule.scheduled_games import spaced_shifts  # noqa: E402
from referee.leaguefile.schedule.seating import Seating  # noqa: E402

GIB = 1 << 30


def write_league(folder: Path, name: str, bots: int, table_size: int, body: str) -> Path:
    """A league file of ``bots`` address bots (nothing is started: schedules only)."""
    lines = [f"name: {name}", "game: stop_the_bus", "seed: 2026", f"table_size: {table_size}", body, "bots:"]
    for number in range(1, bots + 1):
        lines += [f"  - name: bot{number:02d}", f"    address: 127.0.0.1:{50000 + number}"]
    path = folder / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def measure(command: list[str], stdout=subprocess.DEVNULL, lines: int | None = None) -> tuple[float, float, str]:
    """Run ``command`` alone; return its wall seconds, its peak memory in MiB, and what it printed first."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    if lines is None:
        done = subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, check=True)
        first = done.stderr.strip().splitlines()[0] if done.stderr.strip() else ""
    else:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = "".join(process.stdout.readline() for _ in range(lines)).strip().splitlines()[-1]
        process.stdout.close()
        process.wait()
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest child so far: each measured command runs after smaller ones.
    return wall, max(peak, before) / 1024, first


def commands(folder: Path) -> None:
    referee = [sys.executable, "-m", "referee.cli"]
    sampled = write_league(folder, "sampled", 30, 6, "format: {type: sampled, games_per_bot: 30}")
    big = write_league(folder, "round-robin", 30, 6, "rounds: 1")
    long = write_league(folder, "long", 2, 2, "rounds: 100000000")
    rows = []
    with open(folder / "sampled.jsonl", "w") as output:
        wall, peak, _ = measure([*referee, "schedule", str(sampled), "--json"], stdout=output)
    verdict = check_issue_league(folder / "sampled.jsonl")
    rows.append(("schedule --json, 30 bots at 6, sampled 30 games each", wall, peak, "10 s, 1024 MiB"))
    wall, peak, _ = measure([*referee, "validate", str(big)])
    rows.append(("validate, 30 bots at 6, round-robin (3,562,650 games)", wall, peak, "seconds"))
    wall, peak, _ = measure([*referee, "validate", str(long)])
    rows.append(("validate, rounds: 100000000 (200,000,000 games)", wall, peak, "seconds"))
    wall, peak, _ = measure([*referee, "schedule", str(big), "--json"], lines=1000)
    rows.append(("schedule --json of that round-robin, first 1,000 lines", wall, peak, "seconds"))
    print(f"{'command':<68} {'wall s':>7} {'peak MiB':>9}  target")
    for label, wall, peak, target in rows:
        print(f"{label:<68} {wall:7.2f} {peak:9.1f}  {target}")
    print(f"\nthe sampled league: {verdict}")


def check_issue_league(path: Path) -> str:
    """Issue 12's checks on the sampled league's ``--json`` output: games per bot, meetings, their spread."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    games = Counter(name for record in records for name in record["seats"])
    tables: dict[int, list[str]] = {}
    for record in records:
        tables.setdefault(record["table"], record["seats"])
    met = Counter(pair for seats in tables.values() for pair in itertools.combinations(sorted(seats), 2))
    counts = [met[pair] for pair in itertools.combinations(sorted(games), 2)]
    rotations = sorted({record["rotation"] for record in records})
    ok = len(games) == 30 and all(29 <= count <= 31 for count in games.values())
    ok = ok and min(counts) >= 1 and max(counts) - min(counts) <= 2
    return (
        f"{len(records)} games, {len(tables)} tables of shifts {rotations}; games per bot "
        f"{min(games.values())} to {max(games.values())}; pairs meet {min(counts)} to {max(counts)} times; "
        + ("meets issue 12" if ok else "FAILS issue 12")
    )


def draws(seconds: float, table_sizes: range, seed: int) -> None:
    """Draw random leagues for ``seconds``; print how the guarantees held for ``table_sizes``."""
    rng = random.Random(seed)  # which leagues to try; each draw is seeded by the referee's own streams
    drawn: Counter = Counter()
    broken: Counter = Counter()
    widest: dict[int, int] = {}
    slowest: dict[int, float] = {}
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        size = rng.choice(table_sizes)
        bots = rng.randint(size, 60)
        per_bot = rng.randint(1, 12)
        if bots * per_bot > 2500:
            continue
        started = time.perf_counter()
        tables = list(draw_tables(bots, size, -(-bots * per_bot // size), rng.randrange(1 << 32)))
        slowest[size] = max(slowest.get(size, 0.0), time.perf_counter() - started)
        met = Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))
        counts = [met[pair] for pair in itertools.combinations(range(bots), 2)]
        spread = max(counts) - min(counts) if counts else 0
        average = per_bot * (size - 1) / max(1, bots - 1)
        drawn[size] += 1
        broken[size] += spread > 2 or (average >= 1.5 and min(counts) == 0)
        widest[size] = max(widest.get(size, 0), spread)
    print("table size   leagues   broken   widest spread   slowest draw s")
    for size in table_sizes:
        if drawn[size]:
            print(f"{size:10d} {drawn[size]:9d} {broken[size]:8d} {widest[size]:15d} {slowest[size]:16.2f}")


def seats(seconds: float, seed: int) -> None:
    """Seat random one-block leagues of fewer rotations than seats for ``seconds``; print how even seats came out."""
    rng = random.Random(seed)
    leagues = off = 0
    widest = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        size = rng.randint(2, 6)
        bots = rng.randint(size, 40)
        rotations = rng.randint(1, size - 1)
        per_bot = rng.randint(1, 12)
        shifts = spaced_shifts(size, rotations)
        seating = Seating(bots, size, shifts)
        sat: Counter = Counter()
        for block in draw_blocks(bots, size, -(-bots * per_bot // size), rng.randrange(1 << 32)):
            for order in seating.order(block):
                for place, bot in enumerate(order):
                    sat.update((bot, (place - shift) % size) for shift in shifts)
        leagues += 1
        for bot in range(bots):
            counts = [sat[bot, seat] for seat in range(size)]
            if size % rotations == 0:
                off += not set(counts) <= {sum(counts) // size, -(-sum(counts) // size)}
            else:
                widest = max(widest, max(counts) - min(counts))
    print(
        f"{leagues} leagues; rotations dividing the seats: {off} bots off an even share of seats; "
        f"others: the widest spread of a bot's seat counts {widest}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 s of draws per group instead of 60")
    parser.add_argument("--seed", type=int, default=1, help="which random leagues to draw (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        commands(Path(folder))
    seconds = 15 if args.quick else 60
    print(f"\nsampled draws, tables of 2 to 6 ({seconds} s):")
    draws(seconds, range(2, 7), args.seed)
    print(f"\nsampled draws, tables of 7 to 10 ({seconds} s):")
    draws(seconds, range(7, 11), args.seed)
    print(f"\nseats at tables of fewer rotations than seats ({seconds // 2} s):")
    seats(seconds // 2, args.seed)


if __name__ == "__main__":
    main()
