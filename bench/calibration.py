"""Calibrate the statistics against simulated bots of known strength: SPRT error rates and sample sizes, coverage.

The bots are those of tests/simulated_bots.py: N-seat games played
in-process, decided by the deal's luck (shared by every rotation of a deal)
or by a Plackett-Luce draw from planted strengths, so every figure has an
exact true value. Three studies, each printed as a table:

1. The sequential test (``referee.records.sequential.SequentialTest``): A and B seated
   with a field on the same deals, every rotation played, until the test
   decides. For each true difference: how often it accepts H1 and H0, and
   the mean, 90th percentile and largest number of deals it needed. At the
   true difference elo0 the H1 share is the false-positive rate (stated:
   alpha); at elo1 the H0 share is the false-negative rate (stated: beta).
2. The pairwise intervals of ``referee compare`` and the JSON leaderboard:
   how often they hold the true share above, Elo and mean score difference,
   over many simulated leagues (stated: 95%).
3. The published ranking (``referee.records.ranking``): how often each bot's rank
   range holds its true rank (by planted strength), how wide the ranges
   are, how often a bot is placed exactly (a range of one, the right
   one), and, without luck, how often the strength interval holds the
   planted Elo from the field's mean. Stated: 95% or more.
4. The time the ranking takes on a big league.

Run from the repository root with the project installed (the virtual environment of `make test`):

    .venv/bin/python bench/calibration.py            # about 2 minutes of CPU
    .venv/bin/python bench/calibration.py --quick    # about 25 seconds of CPU, rougher figures
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.records.ranking import RESAMPLES  # noqa: E402
from referee.records.sequential import SequentialTest, Verdict  # noqa: E402
from referee.records.standings import compute_standings  # noqa: E402
from referee.records.standings import tally as standings_tally  # noqa: E402
from referee.records.stats import elo_from_score  # noqa: E402
from tests.simulated_bots import (  # noqa: E402
    above_probability,
    expected_score,
    league_records,
    planted_difference,
    run_sequential_test,
    strengths_from_elo,
)

LUCK = 0.3  # the share of games the deal's cards decide
FIELD = [-100.0, 0.0, 100.0, 0.0]  # Elo of the field bots that fill the other seats


def sequential_study(runs: int) -> None:
    print(f"1. Sequential test, alpha = beta = 0.05, luck {LUCK:.0%}, {runs} runs per line")
    print(
        f"{'seats':>5}  {'hypotheses':<27} {'true':>6}  {'H1':>6}  {'H0':>6}  {'mean deals':>10}  "
        f"{'p90':>5}  {'max':>5}  {'mean games':>10}"
    )
    cases = [
        (2, "elo", 0.0, 50.0, [0.0, 50.0, 100.0]),
        (4, "elo", 0.0, 50.0, [-50.0, 0.0, 25.0, 50.0, 100.0]),
        (6, "elo", 0.0, 30.0, [0.0, 30.0]),
        (4, "elo", -20.0, 20.0, [-20.0, 20.0]),
        (4, "score difference", 0.0, 0.05, [0.0, 0.05]),
    ]
    for seats, measure, h0, h1, truths in cases:
        for truth in truths:
            verdicts = []
            deals = []
            games = []
            for run in range(runs):
                rng = random.Random(run)
                strengths = strengths_from_elo({"B": 0.0, **_field(seats)})
                if measure == "elo":
                    strengths["A"] = 10 ** (planted_difference(truth, LUCK) / 400)
                    test = SequentialTest.for_elo(h0, h1)
                else:
                    strengths["A"] = _strength_for_score_difference(strengths, seats, truth)
                    test = SequentialTest.for_score_difference(h0, h1)
                run_sequential_test(test, rng, strengths, seats, LUCK)
                verdicts.append(test.verdict)
                deals.append(test.deals)
                games.append(test.games)
            accepted_h1 = sum(verdict is Verdict.ACCEPT_H1 for verdict in verdicts) / runs
            accepted_h0 = sum(verdict is Verdict.ACCEPT_H0 for verdict in verdicts) / runs
            deals.sort()
            label = f"{measure} [{h0:g}, {h1:g}]"
            print(
                f"{seats:>5}  {label:<27} {truth:>+6g}  {accepted_h1:>6.3f}  {accepted_h0:>6.3f}  "
                f"{statistics.fmean(deals):>10.1f}  {deals[int(0.9 * runs)]:>5}  {deals[-1]:>5}  "
                f"{statistics.fmean(games):>10.1f}"
            )
    print()


def _field(seats: int) -> dict[str, float]:
    return {f"field-{number}": FIELD[(number - 1) % len(FIELD)] for number in range(1, seats - 1)}


def _strength_for_score_difference(strengths: dict[str, float], seats: int, difference: float) -> float:
    """A's strength for a true mean score difference over the tables a duel seats (every field bot each time)."""
    table = ["A", "B", *(name for name in strengths if name.startswith("field-"))]
    low, high = -2000.0, 2000.0
    for _ in range(100):
        elo = (low + high) / 2
        trial = {**strengths, "A": 10 ** (elo / 400)}
        gap = expected_score(trial, "A", table, LUCK) - expected_score(trial, "B", table, LUCK)
        low, high = (elo, high) if gap < difference else (low, elo)
    return 10 ** (low / 400)


def pairwise_study(leagues: int) -> None:
    print(f"2. Pairwise intervals (95%), luck {LUCK:.0%}, planted Elo ~ N(0, 100), {leagues} leagues per line")
    print(
        f"{'bots':>4}  {'seats':>5}  {'rounds':>6}  {'deals per pair':>14}  {'above':>6}  {'elo':>6}  "
        f"{'score diff':>10}  {'mean width (score diff)':>23}"
    )
    for bots, seats, rounds in [(4, 3, 1), (5, 3, 2), (6, 3, 3), (6, 3, 10), (8, 4, 2), (4, 2, 40)]:
        hits = {"above": 0, "elo": 0, "difference": 0}
        trials = 0
        widths = []
        deals = 0
        for league in range(leagues):
            rng = random.Random(league)
            strengths = strengths_from_elo({f"bot{number}": rng.gauss(0, 100) for number in range(bots)})
            records = league_records(rng, strengths, seats, rounds, LUCK)
            standings = compute_standings(records, resamples=0)  # the comparisons need no rank ranges
            differences: dict[tuple[str, str], list[float]] = {}
            for record in records:
                for bot, other in itertools.combinations(record["seats"], 2):
                    differences.setdefault((bot, other), []).append(
                        expected_score(strengths, bot, record["seats"], LUCK)
                        - expected_score(strengths, other, record["seats"], LUCK)
                    )
            for (bot, other), values in differences.items():
                comparison = standings.comparison(bot, other)
                truth = above_probability(strengths, bot, other, LUCK)
                hits["above"] += truth in comparison.above_rate
                hits["elo"] += elo_from_score(truth) in comparison.elo
                hits["difference"] += statistics.fmean(values) in comparison.score_difference
                widths.append(comparison.score_difference.high - comparison.score_difference.low)
                deals = comparison.deals
                trials += 1
        print(
            f"{bots:>4}  {seats:>5}  {rounds:>6}  {deals:>14}  {hits['above'] / trials:>6.3f}  "
            f"{hits['elo'] / trials:>6.3f}  {hits['difference'] / trials:>10.3f}  "
            f"{statistics.fmean(widths):>23.3f}"
        )
    print()


def ranking_study(leagues: int) -> None:
    """How often the published rank ranges and strength intervals hold the truth, and how wide they are."""
    print(f"3. Rank ranges and strength intervals (95%), planted Elo ~ N(0, 120), {leagues} leagues per line")
    print(
        f"{'bots':>4}  {'seats':>5}  {'rounds':>6}  {'luck':>4}  {'games':>5}  {'rank range':>10}  "
        f"{'mean width':>10}  {'ranked right':>12}  {'strength':>8}  {'s per fit':>9}"
    )
    for bots, seats, rounds, luck in [
        (6, 3, 1, 0.3),
        (6, 3, 5, 0.3),
        (8, 4, 2, 0.3),
        (5, 2, 10, 0.3),
        (12, 3, 2, 0.3),
        (6, 3, 5, 0.0),
        (8, 2, 4, 0.0),
    ]:
        covered = width = trials = exact = strength_hits = 0
        games = 0
        seconds = 0.0
        for league in range(leagues):
            rng = random.Random(league)
            planted = {f"bot{number:02d}": rng.gauss(0, 120) for number in range(bots)}
            records = league_records(rng, strengths_from_elo(planted), seats, rounds, luck)
            started = time.perf_counter()
            rows = compute_standings(records, league_seed=league).rows
            seconds += time.perf_counter() - started
            truth = {bot: place for place, bot in enumerate(sorted(planted, key=planted.get, reverse=True), 1)}
            mean = statistics.fmean(planted.values())
            for row in rows:
                best, worst = row.rank_range
                covered += best <= truth[row.bot] <= worst
                width += worst - best + 1
                exact += best == worst == truth[row.bot]
                strength_hits += row.strength_low <= planted[row.bot] - mean <= row.strength_high
                trials += 1
            games = len(records)
        # With luck the fitted strengths shrink towards the mean (the luck evens results out), so only the
        # ranks are comparable with the planted truth; without it the strengths are too.
        strength = f"{strength_hits / trials:>8.3f}" if luck == 0 else f"{'-':>8}"
        print(
            f"{bots:>4}  {seats:>5}  {rounds:>6}  {luck:>4.1f}  {games:>5}  {covered / trials:>10.3f}  "
            f"{width / trials:>10.2f}  {exact / trials:>12.3f}  {strength}  {seconds / leagues:>9.3f}"
        )
    print()


def fit_time(games: int, bots: int, seats: int) -> None:
    """The time of the whole ranking on a big league of random finish orders: as the standings make it (past
    BOOTSTRAP_DEALS deals, the fit's covariance), and with the bootstrap they used to run at every size."""
    rng = random.Random(1)
    names = [f"bot-{number:03d}" for number in range(bots)]
    records = []
    for index in range(games):
        table = rng.sample(names, seats)
        records.append(
            {
                "index": index,
                "game_id": f"g{index}",
                "seed": str(index // seats),
                "seats": table,
                "finish_order": rng.sample(range(seats), seats),
            }
        )
    started = time.perf_counter()
    standings = compute_standings(records)
    took = time.perf_counter() - started
    kept, standings_tally.BOOTSTRAP_DEALS = standings_tally.BOOTSTRAP_DEALS, games
    try:
        started = time.perf_counter()
        compute_standings(records)
        bootstrap = time.perf_counter() - started
    finally:
        standings_tally.BOOTSTRAP_DEALS = kept
    print(
        f"4. The ranking of {games:,} games ({standings.deals:,} deals) of {bots} bots at tables of {seats}: "
        f"{took:.1f} s (the standings: {standings.covariance}), {bootstrap:.1f} s with the fit and {RESAMPLES} resamples"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and leagues: rougher figures")
    args = parser.parse_args()
    started = time.perf_counter()
    sequential_study(runs=200 if args.quick else 1000)
    pairwise_study(leagues=40 if args.quick else 200)
    ranking_study(leagues=40 if args.quick else 200)
    fit_time(5_000 if args.quick else 20_000, 40, 4)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
