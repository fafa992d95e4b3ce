"""Simulate a ladder's draw: do tables drawn where the ranking is unsure narrow the rank ranges in fewer games?

A field of ``--bots`` bots of known strengths (planted Elo, ``--spacing`` apart) plays tables of
``--table-size`` drawn one at a time by ``referee.apps.ladder.table_draw.draw_table``, with no placement, each table
every seat rotation on one deal (tests/simulated_bots.py: a Plackett-Luce draw, the deal's cards deciding
``--luck`` of the games), in-process, no bot played:

- **even**: the even draw (``draw: even``), the fewest games and the fewest meetings first;
- **unsure**: the ladder's default draw, given each bot's place in the standings (its rank and rank range,
  from ``referee.records.ranking.rank_bots`` as the standings compute them, read again every ``--refresh`` tables as
  a ladder reads its published leaderboard): overdue pairs first, then the bot whose range is widest for its
  games and the bots ranked nearest it.

At each reading the mean rank-range width (places from best to worst rank, 1: placed exactly) is noted. The
table printed: for each width, the games each draw needed to reach it (mean over ``--runs`` fields, run r
on seed r, the same luck for both draws), and how many fewer games the unsure draw needed; then how often
the ranges held the true rank, the fewest meetings of a pair and the longest wait of a pair between two
meetings (in tables). docs/statistics.md ("The ladder's draw") gives the figures and the commands.

    .venv/bin/python bench/ladder_draw.py                        # 20 bots 30 Elo apart, 5 runs (about 10 minutes)
    .venv/bin/python bench/ladder_draw.py --spacing 60 --runs 3 --tables 400
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.apps.ladder.table_draw import EVEN, UNSURE, Place, Played, draw_table  # noqa: E402
from referee.records.ranking import rank_bots  # noqa: E402
from tests.simulated_bots import play_deal, strengths_from_elo  # noqa: E402

WIDTHS = (8.0, 6.0, 5.0, 4.0, 3.5, 3.0)


@dataclass
class Ladder:
    """One simulated ladder: at each reading (games played, mean rank-range width, share of ranges holding the
    true rank), and the pairs' meetings."""

    readings: list[tuple[int, float, float]]
    fewest_meetings: int
    longest_wait: int


def run(args: argparse.Namespace, draw: str, run_number: int) -> Ladder:
    bots = [f"b{index:02d}" for index in range(args.bots)]
    elos = {bot: args.spacing * (index - (args.bots - 1) / 2) for index, bot in enumerate(bots)}
    strengths = strengths_from_elo(elos)
    true_rank = {bot: args.bots - index for index, bot in enumerate(bots)}
    rng = random.Random(run_number)  # the same luck for both draws: only the draw differs
    played = Played()
    games: list[tuple[int, list[str]]] = []
    places: dict[str, Place] | None = None
    readings = []
    longest_wait = 0
    for number in range(1, args.tables + 1):
        table = draw_table(bots, played, args.table_size, 0, run_number, number, places if draw == UNSURE else None)
        for pair in itertools.combinations(sorted(table), 2):
            longest_wait = max(longest_wait, played.waiting(frozenset(pair), number))
        played = played.with_table(table, len(table))
        for seats, placements in play_deal(rng, strengths, table, args.luck):
            games.append((number, [seats[seat] for seat in placements]))
        if number % args.refresh == 0:
            ranking = rank_bots(games, bots, seed=run_number, resamples=args.resamples)
            places = {bot: Place(ranked.rank, *ranked.rank_range) for bot, ranked in ranking.bots.items()}
            width = statistics.mean(place.worst - place.best + 1 for place in places.values())
            held = statistics.mean(place.best <= true_rank[bot] <= place.worst for bot, place in places.items())
            readings.append((len(games), width, held))
    pairs = [frozenset(pair) for pair in itertools.combinations(bots, 2)]
    longest_wait = max([longest_wait, *(played.waiting(pair, args.tables + 1) - 1 for pair in pairs)])
    return Ladder(readings, min(played.meetings.get(pair, 0) for pair in pairs), longest_wait)


def games_to(width: float, ladder: Ladder) -> int | None:
    """The games after which the mean width first reached ``width`` (None: never in this run)."""
    return next((games for games, mean_width, _ in ladder.readings if mean_width <= width), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--spacing", type=float, default=30.0, help="Elo between neighbours")
    parser.add_argument("--table-size", type=int, default=4)
    parser.add_argument("--luck", type=float, default=0.3)
    parser.add_argument("--tables", type=int, default=700)
    parser.add_argument("--refresh", type=int, default=10, help="tables between two readings of the standings")
    parser.add_argument("--resamples", type=int, default=200, help="of the rank ranges' bootstrap")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{args.bots} bots {args.spacing:g} Elo apart, tables of {args.table_size}, luck {args.luck:.0%}, "
        f"{args.tables} tables, ranges read every {args.refresh} tables, {args.runs} runs"
    )
    results = {draw: [run(args, draw, number) for number in range(1, args.runs + 1)] for draw in (EVEN, UNSURE)}
    print("| mean rank-range width | games, even draw | games, unsure draw | fewer games | fewer, run by run |")
    print("|---:|---:|---:|---:|---|")
    for width in WIDTHS:
        reached = {draw: [games_to(width, ladder) for ladder in runs] for draw, runs in results.items()}
        even_games, unsure_games = reached[EVEN], reached[UNSURE]
        if None in even_games or None in unsure_games:
            print(f"| {width:g} | not reached in every run | | | |")
            continue
        even, unsure = statistics.mean(even_games), statistics.mean(unsure_games)  # type: ignore[arg-type]
        each = ", ".join(f"{1 - u / e:.0%}" for e, u in zip(even_games, unsure_games, strict=True))  # type: ignore[operator]
        print(f"| {width:g} | {even:,.0f} | {unsure:,.0f} | {1 - unsure / even:.0%} | {each} |")
    for draw, runs in results.items():
        held = statistics.mean(share for ladder in runs for _, _, share in ladder.readings)
        print(
            f"{draw}: the ranges held the true rank for {held:.1%} of bots at the readings; the fewest meetings of a "
            f"pair {min(ladder.fewest_meetings for ladder in runs)} games, the longest wait of a pair "
            f"{max(ladder.longest_wait for ladder in runs)} tables"
        )


if __name__ == "__main__":
    main()
