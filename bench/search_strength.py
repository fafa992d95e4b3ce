"""Benchmark the search bot's strength and decision times against the heuristic bot, in process.

For each game, at tables of three: the search bot (sample_bots/python/search_bot.py) in one seat and the
heuristic bot in the others, on the same seeds with the search bot in every seat in turn, so that each
deal's luck is shared. The search thinks as the kit lets it under a move time (``--move-time-ms``; it
thinks for at most ``THINK_SHARE`` of it), through the same :class:`referee.play.kit.MoveClock` the kit
gives it in a league. It prints, per game:

- the search bot's mean score per game, ``(n - place) / (n - 1)`` (0.5: as strong as the heuristic bot
  beside it), with a 95% interval over deals; at three seats this is also the share of games it finished
  above one given heuristic bot, and the Elo that share gives;
- how often it changed the heuristic bot's choice, and its decision times (mean, 99th percentile, most).

No clock faults here: the game is played in process (the duel against real processes is
``referee duel``; docs/performance.md gives both). The target: a score above 0.5 in both games.

Run from the repository root with the project installed (the virtual environment of ``make test``):

    .venv/bin/python bench/search_strength.py                   # 150 deals a game, 1000 ms move time
    .venv/bin/python bench/search_strength.py --quick           # 20 deals a game
    .venv/bin/python bench/search_strength.py --move-time-ms 250 --deals 300 --jobs 4
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from machine import cpu_name  # noqa: E402  (bench/machine.py, beside this script)

from referee.engine.games import GAMES  # noqa: E402
from referee.play.inprocess import sample_decide  # noqa: E402
from referee.play.kit import MoveClock  # noqa: E402
from referee.records.stats import elo_from_score, placement_score  # noqa: E402

TABLE_SIZE = 3
FIRST_SEED = 1_000_000  # away from the seeds the tests play


search_decide = sample_decide("search")  # takes the clock as its second argument
heuristic_decide = sample_decide("heuristic")


def play(game_name: str, seed: int, search_seat: int, move_time_ms: int) -> tuple[float, list[float], int]:
    """One game: the search bot's score, its decision times (ms), and how many of its choices differ from the
    heuristic bot's."""
    game = GAMES[game_name](TABLE_SIZE, seed=seed)
    times: list[float] = []
    changed = 0
    while not game.is_over:
        seat = game.current_seat
        assert seat is not None
        obs = game.observation(seat)
        if seat == search_seat:
            arrived = time.perf_counter()
            chosen = search_decide(obs, MoveClock(move_time_ms, 0, arrived))
            times.append((time.perf_counter() - arrived) * 1000)
            changed += len(obs.legal_actions) > 1 and chosen != heuristic_decide(obs)
        else:
            chosen = heuristic_decide(obs)
        game.apply(chosen)
    place = game.result().placements.index(search_seat) + 1
    return float(placement_score(place, TABLE_SIZE)), times, changed


def _play(task: tuple[str, int, int, int]) -> tuple[float, list[float], int]:
    return play(*task)


def measure(game_name: str, deals: int, move_time_ms: int, jobs: int) -> None:
    tasks = [(game_name, FIRST_SEED + deal, seat, move_time_ms) for deal in range(deals) for seat in range(TABLE_SIZE)]
    with ProcessPoolExecutor(jobs) as pool:
        results = list(pool.map(_play, tasks, chunksize=1))
    scores = [score for score, _, _ in results]
    per_deal = [statistics.mean(scores[deal * TABLE_SIZE : (deal + 1) * TABLE_SIZE]) for deal in range(deals)]
    mean = statistics.mean(per_deal)
    half = 1.96 * statistics.stdev(per_deal) / math.sqrt(deals) if deals > 1 else float("nan")
    times = sorted(ms for _, decision_times, _ in results for ms in decision_times)
    changed = sum(count for _, _, count in results)
    print(
        f"{game_name}: score {mean:.3f} [{mean - half:.3f}, {mean + half:.3f}] over {len(scores)} games "
        f"({deals} deals; elo {elo_from_score(mean):+.0f} [{elo_from_score(mean - half):+.0f}, {elo_from_score(mean + half):+.0f}])"
    )
    print(
        f"  decisions: {len(times)}, the heuristic's choice changed in {changed} ({changed / len(times):.1%}); "
        f"ms mean {statistics.mean(times):.0f}, p99 {times[int(0.99 * (len(times) - 1))]:.0f}, "
        f"most {times[-1]:.0f} (move time {move_time_ms})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 deals a game")
    parser.add_argument("--deals", type=int, default=150, help="deals a game, each played in every seat (150)")
    parser.add_argument("--move-time-ms", type=int, default=1000, help="the search bot's move time (1000)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="games at once (the CPUs)")
    parser.add_argument("--game", choices=list(GAMES), action="append", help="one game (default: both)")
    args = parser.parse_args()
    deals = 20 if args.quick else args.deals
    print(
        f"search bot against the heuristic bot at tables of {TABLE_SIZE}, in process; {cpu_name()}, "
        f"{args.jobs} jobs, Python {platform.python_version()}"
    )
    for game_name in args.game or list(GAMES):
        measure(game_name, deals, args.move_time_ms, args.jobs)


if __name__ == "__main__":
    main()
