"""Tests of the statistics: deal outcomes, comparisons and the sequential test.

The calibration tests play simulated bots of known strength in-process
(tests/simulated_bots.py), so every interval and every verdict can be
checked against the true value. Their tolerances are stated where they are
used; bench/calibration.py runs the same simulations at a larger scale.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.leaguefile.duel_state import DuelState
from referee.leaguefile.schedule import Sprt
from referee.publish.text import duel_lines
from referee.records.sequential import MIN_ADJUSTED_DEALS, Measure, SequentialTest, Verdict
from referee.records.standings import compute_standings
from referee.records.standings import tally as standings_tally
from referee.records.stats import (
    DealOutcome,
    PairTally,
    StatisticsError,
    deal_outcome,
    deal_outcomes,
    elo_from_score,
    interval_multiplier,
    normal_cdf,
    placement_score,
    score_from_elo,
)
from tests.simulated_bots import (
    above_probability,
    expected_score,
    league_records,
    planted_difference,
    run_sequential_test,
    strengths_from_elo,
)

# ----- small functions -------------------------------------------------------------


@pytest.mark.parametrize(
    ("degrees_of_freedom", "expected"),
    # Student's t, two-sided 95%, from printed tables; None is the normal quantile.
    [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980), (None, 1.960)],
)
def test_interval_multipliers_match_printed_tables(degrees_of_freedom, expected):
    assert interval_multiplier(0.95, degrees_of_freedom) == pytest.approx(expected, abs=6e-4)


def test_t_multiplier_at_other_levels_and_beyond_the_table():
    assert interval_multiplier(0.99, 4) == pytest.approx(4.604, abs=1e-3)
    assert interval_multiplier(0.90, 7) == pytest.approx(1.895, abs=1e-3)
    assert interval_multiplier(0.95, 5000) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(StatisticsError, match="degrees of freedom"):
        interval_multiplier(0.95, 0)
    with pytest.raises(StatisticsError, match=r"outside 0\.\.1"):
        interval_multiplier(1.0)


@given(st.floats(min_value=1e-9, max_value=1 - 1e-9))
def test_elo_and_score_are_inverses(score):
    assert score_from_elo(elo_from_score(score)) == pytest.approx(score, rel=1e-9, abs=1e-12)


def test_elo_scale_points():
    assert elo_from_score(0.5) == 0.0
    assert score_from_elo(400) == pytest.approx(10 / 11)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    assert normal_cdf(1.959964) == pytest.approx(0.975, abs=1e-6)


def test_placement_score_first_one_last_zero():
    assert [placement_score(place, 4) for place in (1, 2, 3, 4)] == [1, Fraction(2, 3), Fraction(1, 3), 0]
    with pytest.raises(StatisticsError, match="place 5 of a table of 4"):
        placement_score(5, 4)


# ----- deal outcomes -------------------------------------------------------------------

# One deal at a table of three (ann, bob, cat), every rotation, plus a game of another deal's kind
# that bob did not play. Placements list seats from first to last.
DEAL = [
    (["ann", "bob", "cat"], [0, 2, 1]),  # ann 1st, cat 2nd, bob 3rd
    (["cat", "ann", "bob"], [2, 0, 1]),  # bob 1st, cat 2nd, ann 3rd
    (["bob", "cat", "ann"], [1, 2, 0]),  # cat 1st, ann 2nd, bob 3rd
    (["ann", "cat"], [1, 0]),  # cat 1st, ann 2nd: bob not seated
]


def test_deal_outcome_counts_the_games_both_bots_played():
    outcome = deal_outcome(DEAL, "ann", "bob")
    # ann above bob in games 1 and 3, below in game 2; scores (n - place) / (n - 1):
    # game 1: 1 - 0, game 2: 0 - 1, game 3: 1/2 - 0.
    assert outcome == DealOutcome(games=3, above=2, score_difference=0.5)
    assert outcome.below == 1
    assert deal_outcome(DEAL, "bob", "ann") == DealOutcome(3, 1, -0.5)
    # ann and cat met in all four games: cat above in games 1? no (ann 1st); 2, 3 and 4 yes.
    assert deal_outcome(DEAL, "cat", "ann") == DealOutcome(4, 3, 0.5 + 0.5 + 1.0 - 0.5)
    assert deal_outcome(DEAL, "ann", "dan") is None
    with pytest.raises(StatisticsError, match="itself"):
        deal_outcome(DEAL, "ann", "ann")


@st.composite
def deals(draw):
    """A deal: a few games, each a random seating of 2-6 of eight bots and a random finishing order."""
    bots = [f"bot{number}" for number in range(8)]
    games = []
    for _ in range(draw(st.integers(1, 6))):
        seats = draw(st.permutations(bots))[: draw(st.integers(2, 6))]
        placements = draw(st.permutations(range(len(seats))))
        games.append((list(seats), list(placements)))
    return games


def naive_outcome(games, bot, other):
    """The definition, written out plainly: places from each game's placements, scores as fractions."""
    shared, above, difference = 0, 0, Fraction(0)
    for seats, placements in games:
        if bot in seats and other in seats:
            bot_place = placements.index(seats.index(bot)) + 1
            other_place = placements.index(seats.index(other)) + 1
            shared += 1
            above += bot_place < other_place
            difference += placement_score(bot_place, len(seats)) - placement_score(other_place, len(seats))
    return shared, above, difference


@settings(deadline=None)  # timing is not what these check; a busy machine must not fail them
@given(deals())
def test_deal_outcomes_agree_with_the_definition_from_either_side(games):
    outcomes = deal_outcomes(games)
    names = sorted({name for seats, _ in games for name in seats})
    for bot, other in itertools.permutations(names, 2):
        shared, above, difference = naive_outcome(games, bot, other)
        outcome = deal_outcome(games, bot, other)
        if shared == 0:
            assert outcome is None and (min(bot, other), max(bot, other)) not in outcomes
            continue
        assert (outcome.games, outcome.above) == (shared, above)
        assert outcome.score_difference == pytest.approx(float(difference), abs=1e-12)
        assert deal_outcome(games, other, bot) == outcome.swapped()


def test_deal_outcome_rejects_impossible_counts():
    with pytest.raises(StatisticsError, match="1 or more games"):
        DealOutcome(0, 0, 0.0)
    with pytest.raises(StatisticsError, match=r"0\.\.games above"):
        DealOutcome(2, 3, 0.0)
    with pytest.raises(StatisticsError, match=r"score difference 2\.5"):
        DealOutcome(2, 1, 2.5)


# ----- comparisons ------------------------------------------------------------------------


def tally_of(outcomes):
    tally = PairTally()
    for outcome in outcomes:
        tally.add(outcome)
    return tally


def test_comparison_without_deals_has_no_figures():
    comparison = PairTally().comparison()
    assert (comparison.games, comparison.deals, comparison.above) == (0, 0, 0)
    assert comparison.above_rate is None and comparison.elo is None and comparison.los is None
    assert comparison.swapped() == comparison


def test_one_deal_gives_the_whole_range():
    comparison = tally_of([DealOutcome(3, 2, 0.5)]).comparison()
    assert comparison.above_rate.estimate == pytest.approx(2 / 3)
    assert (comparison.above_rate.low, comparison.above_rate.high) == (0.0, 1.0)
    assert (comparison.score_difference.low, comparison.score_difference.high) == (-1.0, 1.0)
    assert (comparison.elo.low, comparison.elo.high) == (-math.inf, math.inf)


def test_estimates_are_per_game_means_over_all_shared_games():
    comparison = tally_of([DealOutcome(3, 3, 2.0), DealOutcome(2, 0, -1.0), DealOutcome(3, 1, 0.0)]).comparison()
    assert (comparison.games, comparison.deals, comparison.above, comparison.below) == (8, 3, 4, 4)
    assert comparison.above_rate.estimate == pytest.approx(0.5)
    assert comparison.score_difference.estimate == pytest.approx(1 / 8)
    assert comparison.elo.estimate == pytest.approx(0.0)


def test_a_few_one_sided_deals_do_not_claim_certainty():
    # Two deals, every game won by A: the share above is 1, but two deals prove little.
    comparison = tally_of([DealOutcome(3, 3, 3.0)] * 2).comparison()
    assert comparison.above_rate.estimate == 1.0 and comparison.elo.estimate == math.inf
    assert comparison.above_rate.low < 0.5 < comparison.los < 0.99
    # Forty such deals do.
    comparison = tally_of([DealOutcome(3, 3, 3.0)] * 40).comparison()
    assert comparison.above_rate.low > 0.8 and comparison.los > 0.9999
    assert comparison.elo.high == math.inf and comparison.elo.low > 200


def test_more_deals_of_the_same_mix_narrow_the_interval():
    mix = [DealOutcome(3, 2, 0.5), DealOutcome(3, 1, -0.5), DealOutcome(3, 3, 1.5), DealOutcome(3, 2, 0.0)]
    widths = []
    for repeat in (2, 8, 32, 128):
        interval = tally_of(mix * repeat).comparison().score_difference
        assert interval.low < interval.estimate < interval.high
        widths.append(interval.high - interval.low)
    assert widths[0] > widths[1] > widths[2] > widths[3]
    # Once the deals are many, 1 / sqrt(deals): four times the deals, half the width.
    assert widths[2] / widths[3] == pytest.approx(2.0, rel=0.1)


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6), st.integers(-6, 6)), min_size=1, max_size=30))
def test_comparison_from_the_other_side_mirrors_every_figure(rows):
    outcomes = [
        DealOutcome(games, min(above, games), max(-games, min(games, difference))) for games, above, difference in rows
    ]
    forward = tally_of(outcomes).comparison()
    backward = tally_of([outcome.swapped() for outcome in outcomes]).comparison()
    assert backward.above == forward.below
    assert backward.los == pytest.approx(1.0 - forward.los, abs=1e-12)
    for ours, theirs in [(forward.score_difference, backward.score_difference), (forward.elo, backward.elo)]:
        assert (theirs.estimate, theirs.low, theirs.high) == pytest.approx((-ours.estimate, -ours.high, -ours.low))
    assert forward.swapped().score_difference == pytest.approx(backward.score_difference)
    for interval in (forward.above_rate, forward.score_difference, forward.elo):
        assert interval.low <= interval.estimate <= interval.high


def test_with_one_game_per_deal_the_comparison_matches_the_classic_formulas():
    # Independent games: the interval is the binomial one and LOS is cutechess's (W - L) / sqrt(2 (W + L)) form.
    wins, losses = 230, 190
    comparison = tally_of([DealOutcome(1, 1, 1.0)] * wins + [DealOutcome(1, 0, -1.0)] * losses).comparison()
    share = wins / (wins + losses)
    half_width = 1.96 * math.sqrt(share * (1 - share) / (wins + losses))
    assert comparison.above_rate.low == pytest.approx(share - half_width, abs=0.002)
    assert comparison.above_rate.high == pytest.approx(share + half_width, abs=0.002)
    cutechess_los = 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))
    assert comparison.los == pytest.approx(cutechess_los, abs=0.005)


# ----- calibration: comparisons and ratings against known strengths --------------------------

# An interval at 95% over N independent trials covers 95% +- sqrt(0.95 * 0.05 / N) * 4 with all
# but a 1-in-15,000 chance. The pairs of one league share games, so their hits are not quite
# independent: 4 standard errors leave room for that.


def coverage_tolerance(trials: int) -> float:
    return 4 * math.sqrt(0.95 * 0.05 / trials)


def test_pairwise_intervals_cover_the_true_values_at_the_stated_level():
    # 6 bots at 3-seat tables, 10 rounds: every pair shares 40 deals (120 games). Luck decides 30% of games.
    luck = 0.3
    hits = {"above rate": 0, "elo": 0, "score difference": 0}
    trials = 0
    for league in range(40):
        rng = random.Random(league)
        elos = {f"bot{number}": rng.gauss(0, 100) for number in range(6)}
        strengths = strengths_from_elo(elos)
        records = league_records(rng, strengths, table_size=3, rounds=10, luck=luck)
        standings = compute_standings(records)
        true_differences: dict[tuple[str, str], list[float]] = {}
        for record in records:
            for bot, other in itertools.permutations(record["seats"], 2):
                true_differences.setdefault((bot, other), []).append(
                    expected_score(strengths, bot, record["seats"], luck)
                    - expected_score(strengths, other, record["seats"], luck)
                )
        for (bot, other), differences in true_differences.items():
            comparison = standings.comparison(bot, other)
            assert comparison.deals == 40 and comparison.games == 120
            true_above = above_probability(strengths, bot, other, luck)
            hits["above rate"] += true_above in comparison.above_rate
            hits["elo"] += elo_from_score(true_above) in comparison.elo
            hits["score difference"] += statistics.fmean(differences) in comparison.score_difference
            trials += 1
    tolerance = coverage_tolerance(trials)
    for figure, hit_count in hits.items():
        # Nominal 95%; the pseudo-deals make the score difference a little conservative, never narrow.
        assert 0.95 - tolerance <= hit_count / trials <= 0.95 + tolerance, (figure, hit_count / trials)


def test_rank_ranges_and_strength_intervals_hold_the_planted_truth():
    # Strengths planted in Elo, games drawn from Plackett-Luce: the rank range should hold each bot's true
    # rank (here with the deal's luck deciding 30% of games, shared by a deal's rotations), and without luck
    # the strength interval its planted Elo from the field's mean, in about 95% of cases or more.
    assert_ranges_hold_the_planted_truth()


def test_past_the_bootstraps_size_the_covariances_ranges_hold_the_planted_truth_as_often(monkeypatch):
    # The same leagues, their ranges from the fit's covariance over deals, as the standings take them past
    # BOOTSTRAP_DEALS deals: they hold the truth as often as the bootstrap's.
    monkeypatch.setattr(standings_tally, "BOOTSTRAP_DEALS", 0)
    assert_ranges_hold_the_planted_truth("sandwich")


def test_the_covariances_intervals_are_the_bootstraps_width():
    # 6 bots at 3-seat tables, 10 rounds (200 deals), luck deciding 30% of games: each strength interval from the
    # covariance is within a sixth of the bootstrap's (200 resamples, itself some 5% off its own limit), and no
    # wider or narrower on the whole.
    ratios = []
    for league in range(8):
        rng = random.Random(100 + league)
        planted = {f"bot{number}": rng.gauss(0, 120) for number in range(6)}
        records = league_records(rng, strengths_from_elo(planted), 3, 10, 0.3)
        bootstrap = compute_standings(records)
        standings_tally.BOOTSTRAP_DEALS, kept = 0, standings_tally.BOOTSTRAP_DEALS
        try:
            covariance = compute_standings(records)
        finally:
            standings_tally.BOOTSTRAP_DEALS = kept
        assert (bootstrap.covariance, covariance.covariance) == ("bootstrap", "sandwich")
        for one, other in zip(bootstrap.rows, covariance.rows, strict=True):
            assert one.bot == other.bot and one.strength == pytest.approx(other.strength, abs=1e-6)
            ratios.append((other.strength_high - other.strength) / (one.strength_high - one.strength))
    assert 0.95 <= statistics.fmean(ratios) <= 1.05 and min(ratios) >= 5 / 6 and max(ratios) <= 7 / 6, ratios


def assert_ranges_hold_the_planted_truth(covariance: str = "bootstrap") -> None:
    rank_hits = strength_hits = trials = 0
    for league in range(60):
        rng = random.Random(league)
        planted = {f"bot{number}": rng.gauss(0, 120) for number in range(6)}
        luck = 0.3 if league % 2 else 0.0
        standings = compute_standings(league_records(rng, strengths_from_elo(planted), 3, 3, luck), resamples=100)
        assert standings.covariance == covariance
        ordered = sorted(planted, key=planted.get, reverse=True)
        mean = statistics.fmean(planted.values())
        for row in standings.rows:
            best, worst = row.rank_range
            rank_hits += best <= ordered.index(row.bot) + 1 <= worst
            strength_hits += luck == 0.0 and row.strength_low <= planted[row.bot] - mean <= row.strength_high
            trials += 1
    assert rank_hits / trials >= 0.95 - coverage_tolerance(trials), rank_hits / trials
    half = trials / 2
    assert abs(strength_hits / half - 0.95) <= coverage_tolerance(int(half)) + 0.02, strength_hits / half


def test_a_planted_difference_shows_in_the_league_comparison():
    # A is 150 Elo stronger than B (after luck); three field bots of equal strength. 4-seat tables, 10 rounds.
    luck = 0.3
    for league in range(5):
        rng = random.Random(league)
        elos = {"A": planted_difference(150, luck), "B": 0.0, "field-1": 0.0, "field-2": 0.0, "field-3": 0.0}
        standings = compute_standings(league_records(rng, strengths_from_elo(elos), 4, 10, luck))
        comparison = standings.comparison("A", "B")
        assert comparison.deals == 30
        assert comparison.score_difference.low > 0 and comparison.elo.low > 0, comparison
        assert comparison.los > 0.975  # what an interval excluding 0 at 95% means
        assert standings.comparison("B", "A").score_difference.high < 0
        rows = {row.bot: row for row in standings.rows}
        assert rows["A"].strength > rows["B"].strength and rows["A"].rank == 1


# ----- the sequential test: exact properties ---------------------------------------------------------


def test_bounds_are_walds():
    test = SequentialTest.for_elo(0, 10, alpha=0.05, beta=0.1)
    assert test.bounds == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    assert test.llr == 0.0 and test.verdict is Verdict.CONTINUE and test.deals == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ((Measure.ELO, 5, 5, 0.05, 0.05), "elo0 5 must be below elo1 5"),
        ((Measure.ELO, 0, 5, 0.0, 0.05), "alpha 0.0 must lie strictly between 0 and 1"),
        ((Measure.ELO, 0, 5, 0.05, 1.2), "beta 1.2"),
        ((Measure.ELO, 0, 5, 0.6, 0.5), "alpha 0.6 plus beta 0.5 must be below 1"),
        ((Measure.ELO, 0, math.inf, 0.05, 0.05), "must be finite"),
        ((Measure.SCORE_DIFFERENCE, 0, 1.0, 0.05, 0.05), "strictly between -1 and 1"),
        ((Measure.SCORE_DIFFERENCE, 0.2, 0.1, 0.05, 0.05), "difference0 0.2 must be below difference1 0.1"),
    ],
)
def test_bad_settings_are_refused_with_the_bad_value(settings, message):
    with pytest.raises(StatisticsError, match=message):
        SequentialTest(*settings)


@settings(deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.floats(-200, 150), st.floats(1, 100))
def test_with_single_game_deals_the_test_is_walds_bernoulli_sprt(wins, losses, elo0, width):
    # Values 0 and 1 only: the most likely distribution with mean s is the Bernoulli(s), exactly.
    test = SequentialTest.for_elo(elo0, elo0 + width, alpha=1e-9, beta=1e-9)  # bounds far away: keep adding
    for outcome in [DealOutcome(1, 1, 1.0)] * wins + [DealOutcome(1, 0, -1.0)] * losses:
        test.add(outcome)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo0 + width)
    wald = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
    assert test.llr == pytest.approx(wald, rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4)), min_size=2, max_size=60), st.randoms())
def test_the_ratio_depends_on_the_deals_not_their_order(rows, shuffler):
    outcomes = [DealOutcome(games, min(above, games), 0.0) for games, above in rows]
    forward = SequentialTest.for_elo(-20, 20, alpha=1e-9, beta=1e-9)
    shuffled = SequentialTest.for_elo(-20, 20, alpha=1e-9, beta=1e-9)
    for outcome in outcomes:
        forward.add(outcome)
    shuffler.shuffle(outcomes)
    for outcome in outcomes:
        shuffled.add(outcome)
    assert shuffled.llr == pytest.approx(forward.llr, rel=1e-7, abs=1e-9)


def test_data_exactly_at_a_hypothesis_favour_it():
    at_h0 = SequentialTest.for_score_difference(0.0, 0.2, alpha=1e-6, beta=1e-6)
    at_h1 = SequentialTest.for_score_difference(-0.2, 0.0, alpha=1e-6, beta=1e-6)
    for outcome in [DealOutcome(3, 2, 1.0), DealOutcome(3, 1, -1.0), DealOutcome(3, 2, 0.5), DealOutcome(3, 1, -0.5)]:
        at_h0.add(outcome)
        at_h1.add(outcome)
    assert at_h0.llr < 0 < at_h1.llr


def test_the_ratio_matches_the_normal_approximation_for_small_differences():
    # Fishtest's approximation: LLR ~ N (s1 - s0) (2 mean - s0 - s1) / (2 variance), good for small differences.
    rng = random.Random(3)
    test = SequentialTest.for_elo(0, 10, alpha=1e-9, beta=1e-9)
    values = []
    for _ in range(3000):
        games = 4
        above = sum(rng.random() < 0.52 for _ in range(games))
        test.add(DealOutcome(games, above, 0.0))
        values.append(above / games)
    s0, s1 = score_from_elo(0), score_from_elo(10)
    mean, variance = statistics.fmean(values), statistics.pvariance(values)
    approximation = len(values) * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert test.llr == pytest.approx(approximation, rel=0.02)


def test_the_verdict_is_fixed_at_the_first_crossing():
    test = SequentialTest.for_elo(0, 50)
    while test.verdict is Verdict.CONTINUE:
        test.add(DealOutcome(4, 4, 2.0))
    decided = test.deals
    assert test.verdict is Verdict.ACCEPT_H1 and test.decided_after == decided and test.llr >= test.bounds[1]
    for _ in range(40):  # games still running when it stopped, all lost
        test.add(DealOutcome(4, 0, -2.0))
    assert test.llr < test.bounds[1]
    assert test.verdict is Verdict.ACCEPT_H1 and test.decided_after == decided and test.deals == decided + 40


def duel_of(measure: Measure, h0: float, h1: float, alice_wins) -> DuelState:
    """A duel of alice and bob at two-seat tables, dealt until its test decides; ``alice_wins(deal, rotation)``
    says who finishes first in each game."""
    state = DuelState(Sprt(("alice", "bob"), measure, h0, h1, max_games=400), 2)
    deal = 0
    while not state.decided:
        deal += 1
        for rotation, seats in enumerate((["alice", "bob"], ["bob", "alice"])):
            first, second = ("alice", "bob") if alice_wins(deal, rotation) else ("bob", "alice")
            state.add(
                {
                    "index": state.records,
                    "game_id": f"d{deal}-s{rotation}",
                    "table": deal,
                    "rotation": rotation,
                    "seats": seats,
                    "finish_order": [seats.index(first), seats.index(second)],
                }
            )
    return state


def test_a_duels_lines_say_the_verdict_which_bot_is_stronger_and_how_sure():
    undecided = DuelState(Sprt(("alice", "bob"), Measure.ELO, 0.0, 50.0, max_games=400), 2)
    assert duel_lines(undecided)[1] == "  no verdict yet after 0 deals (0 games) of at most 200 deals"
    winning = duel_of(Measure.ELO, 0.0, 50.0, lambda deal, rotation: rotation == 0 or deal % 2 == 0)
    lines = duel_lines(winning)
    assert lines[1] == (
        f"  H1 accepted after {winning.deals} deals ({winning.games_counted} games): alice is stronger than bob"
    )
    text = "\n".join(lines)
    assert f"alice against bob: {winning.test.games} shared games on {winning.test.deals} deals" in text
    assert "favour elo +50 over elo 0" in text and "at most 5%" in text
    assert "alice is the stronger bot with likelihood" in text
    losing = duel_of(Measure.SCORE_DIFFERENCE, 0.0, 0.1, lambda deal, rotation: False)
    text = "\n".join(duel_lines(losing))
    assert "H0 accepted" in text and "favour score difference 0 over score difference +0.1" in text
    assert "bob is the stronger bot" in text


# ----- the sequential test against simulated bots ---------------------------------------------------


def binomial_tail(trials: int, probability: float, at_least: int) -> float:
    """P(X >= at_least) for X ~ Binomial(trials, probability)."""
    return sum(
        math.comb(trials, count) * probability**count * (1 - probability) ** (trials - count)
        for count in range(at_least, trials + 1)
    )


def assert_rate_within(errors: int, runs: int, stated: float) -> None:
    """Fail when ``errors`` in ``runs`` is too many for a true rate at most ``stated`` (1-in-1,000 chance)."""
    assert binomial_tail(runs, stated, errors) > 0.001, f"{errors} errors in {runs} runs: the stated rate is {stated}"


def sprt_runs(runs, make_test, elos, table_size, luck, seed):
    strengths = strengths_from_elo(elos)
    tests = [
        run_sequential_test(make_test(), random.Random(seed + run), strengths, table_size, luck) for run in range(runs)
    ]
    assert all(test.verdict is not Verdict.CONTINUE for test in tests), "a run hit the deal limit"
    return tests


FIELD = {"field-1": -100.0, "field-2": 0.0, "field-3": 100.0, "field-4": 0.0}


def test_sprt_without_a_difference_stops_at_h0_within_alpha():
    # A and B equally strong, tested for elo 0 against 60 at 4-seat tables: a false H1 at most 5% of the time.
    luck = 0.3
    tests = sprt_runs(400, lambda: SequentialTest.for_elo(0, 60), {"A": 0.0, "B": 0.0, **FIELD}, 4, luck, seed=0)
    false_positives = sum(test.verdict is Verdict.ACCEPT_H1 for test in tests)
    assert_rate_within(false_positives, len(tests), 0.05)
    assert statistics.fmean(test.deals for test in tests) < 100


def test_sprt_with_a_planted_difference_finds_it():
    # A 60 Elo stronger than B after luck (elo1 exactly): H1 in at least 1 - beta of runs.
    luck = 0.3
    elos = {"A": planted_difference(60, luck), "B": 0.0, **FIELD}
    tests = sprt_runs(200, lambda: SequentialTest.for_elo(0, 60), elos, 4, luck, seed=10_000)
    false_negatives = sum(test.verdict is Verdict.ACCEPT_H0 for test in tests)
    assert_rate_within(false_negatives, len(tests), 0.05)
    for test in tests:
        if test.verdict is Verdict.ACCEPT_H1:
            assert test.comparison().los > 0.5


def test_sprt_on_score_difference_keeps_both_error_rates():
    # 3-seat tables; H0: mean score difference 0, H1: 0.1. The field is as strong as B.
    luck = 0.3
    field = {"field-1": 0.0}
    null = sprt_runs(
        200, lambda: SequentialTest.for_score_difference(0.0, 0.1), {"A": 0.0, "B": 0.0, **field}, 3, luck, seed=20_000
    )
    assert_rate_within(sum(test.verdict is Verdict.ACCEPT_H1 for test in null), len(null), 0.05)
    # A's planted strength for a true difference of 0.1 (solved on the exact expected scores).
    strengths = {"B": 1.0, "field-1": 1.0}
    low, high = 0.0, 1000.0
    for _ in range(100):
        elo = (low + high) / 2
        strengths["A"] = 10 ** (elo / 400)
        difference = expected_score(strengths, "A", ["A", "B", "field-1"], luck) - expected_score(
            strengths, "B", ["A", "B", "field-1"], luck
        )
        low, high = (elo, high) if difference < 0.1 else (low, elo)
    planted = sprt_runs(
        200, lambda: SequentialTest.for_score_difference(0.0, 0.1), {"A": low, "B": 0.0, **field}, 3, luck, seed=30_000
    )
    assert_rate_within(sum(test.verdict is Verdict.ACCEPT_H0 for test in planted), len(planted), 0.05)


# ----- the test on luck-adjusted values ---------------------------------------------------------------------------


def _with_value(value: float, games: int = 3) -> DealOutcome:
    """A deal of ``games`` games whose luck-adjusted share above is ``value`` (its raw share one in three)."""
    return DealOutcome(games, 1, 0.0, above_luck=1 - games * value)


def test_the_adjusted_test_uses_the_values_less_their_luck_and_the_normal_ratio():
    """The ratio is n/2 log(var0/var1) over the adjusted values (each deal's share above less its luck), and no
    verdict comes before MIN_ADJUSTED_DEALS deals, however one-sided."""
    rng = random.Random(5)
    values = [0.62 + rng.gauss(0, 0.2) for _ in range(40)]
    test = SequentialTest.for_elo(0, 100)
    adjusted = SequentialTest(test.measure, 0, 100, adjusted=True)
    for index, value in enumerate(values, start=1):
        adjusted.add(_with_value(value))
        if index == 20:
            means = [score_from_elo(0), score_from_elo(100)]
            variances = [statistics.fmean((v - mean) ** 2 for v in values[:20]) for mean in means]
            assert adjusted.llr == pytest.approx(10 * math.log(variances[0] / variances[1]))
    one_sided = SequentialTest(test.measure, 0, 100, adjusted=True)
    for index in range(1, MIN_ADJUSTED_DEALS):
        assert one_sided.add(_with_value(1.0 + 0.01 * index)) is Verdict.CONTINUE
    assert one_sided.add(_with_value(1.0)) is Verdict.ACCEPT_H1
    interval = adjusted.adjusted_difference()
    assert interval is not None and adjusted.comparison().score_difference is not None


@pytest.mark.parametrize("true_elo, wrong", [(0.0, Verdict.ACCEPT_H1), (30.0, Verdict.ACCEPT_H0)])
def test_the_adjusted_test_keeps_its_error_rates(true_elo, wrong):
    """Deals whose adjusted share is normal around the truth (sd 0.3, a duel's): at elo0 H1 comes in at most about
    alpha of the runs, at elo1 H0 in at most about beta (400 runs: 5% plus three binomial deviations)."""
    rng = random.Random(int(true_elo) + 7)
    mean = score_from_elo(true_elo)
    wrong_verdicts = 0
    runs = 400
    for _ in range(runs):
        test = SequentialTest(SequentialTest.for_elo(0, 30).measure, 0, 30, adjusted=True)
        while test.verdict is Verdict.CONTINUE and test.deals < 20_000:
            test.add(_with_value(mean + rng.gauss(0, 0.3)))
        wrong_verdicts += test.verdict is wrong
    assert wrong_verdicts / runs < 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
