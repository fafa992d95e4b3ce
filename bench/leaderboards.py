"""Benchmark a big league's leaderboards: the time and peak memory of the last step of ``referee run``.

At a league's end (and every few seconds while it runs) the referee reads
``games.jsonl`` back, computes the standings and writes the leaderboards and
the league page (its newest games and its chart of strength over time,
which standings computed from records given, as here, leave to
``write_leaderboards`` to read from the folder again; a season's page
helper keeps its reading between rewrites: ``bench/standings_scale.py``
measures that). This writes a ``games.jsonl`` of
``--games`` records (Stop the Bus, ``--bots`` bots, ``--seats`` a table, a
random finish order and ``--decisions`` decision times a game; the records
have the fields and sizes of real ones) into a temporary folder, then times
``compute_standings`` and ``write_leaderboards`` on it in a fresh process and
reports that process's peak resident memory after each, and the size of the
page. Then, as a running league does, it adds ``--more`` games and writes the
leaderboards again in the same process (the page's strength chart keeps the
fits it made the first time), and reports that rewrite's time.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/leaderboards.py                  # 20,000 games, about 10 s
    .venv/bin/python bench/leaderboards.py --quick          # 5,000 games
    .venv/bin/python bench/leaderboards.py --games 100000
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)


def write_records(path: Path, games: int, bots: int, seats: int, decisions: int, first: int = 1) -> None:
    """A ``games.jsonl`` of ``games`` records of the shape the referee writes, from index ``first`` (after 1: added)."""
    picks = random.Random(first)
    names = [f"bot-{number}" for number in range(bots)]
    with open(path, "w" if first == 1 else "a", encoding="utf-8") as out:
        for index in range(first, first + games):
            table = picks.sample(names, seats)
            finish = list(range(seats))
            picks.shuffle(finish)
            record = {
                "index": index,
                "game_id": f"r1-t{index:06d}-s1",
                "round": 1,
                "table": index,
                "rotation": 1,
                "seed": picks.getrandbits(64),
                "seats": table,
                "game": "stop_the_bus",
                "finish_order": finish,
                "hands_played": 10,
                "decisions": decisions,
                "faults": [{} for _ in table],
                "forfeits": {},
                "timing": {
                    "started": "2026-12-01T00:00:00.000+00:00",
                    "wall_s": 0.1,
                    "latency_ms": [
                        [round(picks.uniform(0.3, 2.0), 3) for _ in range(decisions // seats)] for _ in table
                    ],
                },
            }
            out.write(json.dumps(record, separators=(",", ":")) + "\n")


def measure(folder: Path, more: dict) -> dict:
    """In this process: the standings and leaderboards of ``folder``, timed, with the peak memory after each;
    then ``more`` (``write_records``'s arguments) games added and the leaderboards written again, timed."""
    from referee.publish.files import write_leaderboards
    from referee.records.results import read_records
    from referee.records.standings import compute_standings

    started = time.perf_counter()
    standings = compute_standings(read_records(folder / "games.jsonl"))
    standings_s = time.perf_counter() - started
    standings_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    write_leaderboards(standings, folder, "bench")
    figures = {
        "standings_s": standings_s,
        "standings_peak_mib": standings_peak,
        "leaderboards_s": time.perf_counter() - started,
        "leaderboards_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "page_bytes": (folder / "leaderboard.html").stat().st_size,
    }
    write_records(folder / "games.jsonl", **more)
    standings = compute_standings(read_records(folder / "games.jsonl"))
    started = time.perf_counter()
    write_leaderboards(standings, folder, "bench")
    figures["rewrite_s"] = time.perf_counter() - started
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, help="records in games.jsonl (default 20,000; --quick: 5,000)")
    parser.add_argument("--quick", action="store_true", help="5,000 games")
    parser.add_argument("--bots", type=int, default=8, help="bots in the league (default 8)")
    parser.add_argument("--seats", type=int, default=3, help="seats a table (default 3)")
    parser.add_argument("--decisions", type=int, default=64, help="decisions a game (default 64, Stop the Bus's mean)")
    parser.add_argument("--more", type=int, default=100, help="games added before the rewrite (default 100)")
    parser.add_argument("--child", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--child-more", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(Path(args.child), json.loads(args.child_more))))
        return 0
    args.games = args.games or (5_000 if args.quick else 20_000)
    if args.games < 1 or not 2 <= args.seats <= args.bots:
        parser.error("--games must be at least 1, and --seats between 2 and --bots")
    print(f"python {platform.python_version()} {sys.executable}; {cpu_name()}")
    with tempfile.TemporaryDirectory(prefix="referee-leaderboards-") as folder:
        path = Path(folder) / "games.jsonl"
        write_records(path, args.games, args.bots, args.seats, args.decisions)
        more = {"games": args.more, "bots": args.bots, "seats": args.seats, "decisions": args.decisions}
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                folder,
                "--child-more",
                json.dumps({**more, "first": args.games + 1}),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(child.stdout)
        print(f"{args.games} games, games.jsonl {path.stat().st_size / 2**20:.1f} MiB")
    print(f"standings: {figures['standings_s']:.1f} s, peak RSS {figures['standings_peak_mib']:.0f} MiB")
    print(
        f"leaderboards and league page: {figures['leaderboards_s']:.1f} s, peak RSS "
        f"{figures['leaderboards_peak_mib']:.0f} MiB; page {figures['page_bytes'] / 2**20:.1f} MiB"
    )
    print(f"the same, written again after {args.more} more games: {figures['rewrite_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
