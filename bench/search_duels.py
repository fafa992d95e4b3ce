"""The search bot against the heuristic bot in real duels, at a table size and move time, with an untuned field.

Issue 53's measure of the reference bot: ``referee run`` of a duel league (``format: sprt``, candidates
search then heuristic, ``elo0: 0``, ``elo1: 100`` by default), every bot a real process in its sandbox on
the league's clock, each deal in every seat rotation, the other seats filled from the field in turn. The
field is bots the search was never tuned on: the random sample bot and the heuristic's noisy variants
(``noisyN``, bench/noisy_bot.py). It prints the leaderboard, the duel's verdict with it.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/search_duels.py --game bastard_brag --table-size 3 --move-time-ms 300
    .venv/bin/python bench/search_duels.py --game stop_the_bus --table-size 4 --move-time-ms 1000 \\
        --field noisy8,random --keep /tmp/duel-stb-4-1000

Each duel takes minutes to an hour: a deal is a game per seat, and the search thinks for most of its move
time at each of its decisions. ``--concurrency 1`` (the default) keeps one game at a time, so that the
search's thinking is not crowded on a small machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from luck import league_entry  # noqa: E402  (bench/luck.py: the bench's bots as league entries)

PYTHON = sys.executable


def league_text(args: argparse.Namespace, where: Path) -> str:
    field = args.field.split(",")
    entries = league_entry("search", where) + league_entry("heuristic", where)
    for number, name in enumerate(field, start=1):
        entries += league_entry(name, where, f"field-{number}")
    return (
        f"name: search-duel\ngame: {args.game}\nseed: {args.seed}\ntable_size: {args.table_size}\n"
        f"move_time_ms: {args.move_time_ms}\ntime_bank_ms: {10 * args.move_time_ms}\n"
        f"concurrency: {args.concurrency}\n"
        f"format: {{type: sprt, candidates: [search, heuristic], elo0: 0, elo1: {args.elo1}, "
        f"max_games: {args.max_games}}}\noutput: out\nbots:\n{entries}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="stop_the_bus", choices=("stop_the_bus", "bastard_brag"))
    parser.add_argument("--table-size", type=int, default=3, choices=(3, 4))
    parser.add_argument("--move-time-ms", type=int, default=1000)
    parser.add_argument("--field", default="noisy8,random", help="the field's bots, in turn: random, noisyN")
    parser.add_argument("--elo1", type=float, default=100.0)
    parser.add_argument("--max-games", type=int, default=600)
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="the duel's folder (else a temporary one)")
    args = parser.parse_args()
    where = args.keep or Path(tempfile.mkdtemp(prefix="search-duel-"))
    where.mkdir(parents=True, exist_ok=True)
    (where / "league.yaml").write_text(league_text(args, where))
    print(
        f"{args.game}, search against heuristic, tables of {args.table_size}, {args.move_time_ms} ms a move, "
        f"field {args.field}, elo1 {args.elo1:g}, seed {args.seed}: {where}",
        flush=True,
    )
    started = time.monotonic()
    run = subprocess.run(
        [PYTHON, "-m", "referee.cli", "run", str(where / "league.yaml"), "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        print(run.stdout.strip()[-2000:], run.stderr.strip()[-2000:], sep="\n")
    print(f"played in {time.monotonic() - started:.0f} s (exit {run.returncode})")
    board = subprocess.run(
        [PYTHON, "-m", "referee.cli", "leaderboard", str(where / "out")], capture_output=True, text=True, check=False
    )
    print(board.stdout)


if __name__ == "__main__":
    main()
