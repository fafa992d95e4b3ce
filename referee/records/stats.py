"""The statistics of results: two bots compared deal by deal.

Pure functions and values: no I/O, no clock, no random state. Numbers and
records only: what a person reads of them (an interval as text, which bot
the games put first) is :mod:`referee.publish.text`'s. The sequential test
that takes the same deal outcomes one at a time is
:mod:`referee.records.sequential`'s. The figures and why they are computed
this way are explained in ``docs/statistics.md``.

The words used here:

- A game's **score** for a bot is ``(n - place) / (n - 1)`` at a table of
  ``n``: first 1, last 0.
- A **deal** is the set of games played on one seed. The games of one
  rotation group share their seed, so the same cards are dealt to every
  seat in each rotation. Games on one deal share their luck; games on
  different deals are independent. Every interval and test therefore
  counts deals, not games, as its independent samples.
- A **deal outcome** is what one deal says about bot A against bot B: of
  the deal's games where both sat, how many there were, in how many A
  finished above B, and the sum over them of ``score(A) - score(B)``
  (:class:`DealOutcome`, made by :func:`deal_outcome`).
- A **comparison** of A with B sums the deal outcomes of every deal they
  shared (:class:`PairTally`, :class:`Comparison`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

from referee.common.errors import RefereeError

CONFIDENCE = 0.95  # the level of every interval shown
ELO_SCALE = 400.0  # logistic Elo: a difference of 400 means odds of 10 to 1

# A comparison's standard error counts this much of an average deal at each end of the range, so
# that a few deals that all went one way cannot claim certainty (with Student's t for few deals,
# two one-sided deals give a likelihood of superiority near the 87.5% of a uniform prior).
_PSEUDO_DEAL_WEIGHT = 0.25


class StatisticsError(RefereeError, ValueError):
    """A statistic was asked for with settings or data it cannot use; the message says what is allowed."""


# ----- small functions ------------------------------------------------------------


def placement_score(place: int, table_size: int) -> Fraction:
    """A game's score for the bot that finished ``place`` (1 is first) of ``table_size``: first 1, last 0."""
    if table_size < 2 or not 1 <= place <= table_size:
        raise StatisticsError(f"place {place} of a table of {table_size}: expected a table of 2 or more, place 1..n")
    return Fraction(table_size - place, table_size - 1)


def elo_from_score(score: float) -> float:
    """The logistic Elo difference for an expected score (0..1); -inf and inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -ELO_SCALE * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score (chance of finishing above) for a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / ELO_SCALE))


def normal_cdf(z: float) -> float:
    """The standard normal distribution function; 0 and 1 at -inf and inf."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def interval_multiplier(level: float = CONFIDENCE, degrees_of_freedom: int | None = None) -> float:
    """How many standard errors either side of an estimate make a two-sided interval at ``level``.

    The normal quantile without ``degrees_of_freedom``; otherwise Student's t
    quantile, for an estimate whose standard error comes from that many
    degrees of freedom (deals - 1), so that few deals give wide intervals.
    """
    if not 0.0 < level < 1.0:
        raise StatisticsError(f"confidence level {level!r} is outside 0..1 (exclusive)")
    if degrees_of_freedom is None:
        return NormalDist().inv_cdf(0.5 + level / 2.0)
    if degrees_of_freedom < 1:
        raise StatisticsError(f"{degrees_of_freedom} degrees of freedom: Student's t needs 1 or more")
    return _student_t_multiplier(level, degrees_of_freedom)


@functools.lru_cache(maxsize=4096)  # every pair of a league's bots asks for its deals' (a thousand at most)
def _student_t_multiplier(level: float, degrees_of_freedom: int) -> float:
    # Newton's method on the exact central probability, from the normal quantile (a few steps, each of the
    # density in closed form): the first thousand t values are as good as a table, and beyond that t is the
    # normal quantile.
    normal = NormalDist().inv_cdf(0.5 + level / 2.0)
    if degrees_of_freedom > 1000:
        return normal
    half = (degrees_of_freedom + 1) / 2.0
    log_scale = math.lgamma(half) - math.lgamma(degrees_of_freedom / 2.0) - 0.5 * math.log(degrees_of_freedom * math.pi)

    def step(t: float) -> float:
        density = 2.0 * math.exp(log_scale - half * math.log1p(t * t / degrees_of_freedom))
        return (_t_central_probability(t, degrees_of_freedom) - level) / density

    t = normal
    for _ in range(100):
        change = step(t)
        t -= change
        if abs(change) <= 1e-12 * t:
            return t - step(t)  # one step more: the error squared, to the last digits the probability has
    raise AssertionError(f"Student's t at {level} with {degrees_of_freedom} degrees of freedom did not settle")


def _t_central_probability(t: float, degrees_of_freedom: int) -> float:
    """P(-t < T < t) for Student's t with whole degrees of freedom (Abramowitz and Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(degrees_of_freedom))
    cos2 = math.cos(theta) ** 2
    if degrees_of_freedom % 2 == 0:
        term = total = 1.0
        for k in range(1, degrees_of_freedom // 2):
            term *= cos2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if degrees_of_freedom == 1:
        return 2.0 * theta / math.pi
    term = total = 1.0
    for k in range(1, (degrees_of_freedom - 1) // 2):
        term *= cos2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


# ----- intervals ---------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """An estimate and its two-sided interval at ``CONFIDENCE`` (ends may be infinite for Elo)."""

    estimate: float
    low: float
    high: float

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    def __neg__(self) -> Interval:
        return Interval(-self.estimate, -self.high, -self.low)


# ----- two bots on one deal ---------------------------------------------------------

#: A game of a deal: the bot at each seat, the seats in finishing order, and (optionally) each seat's luck.
DealGame = tuple[Sequence[str], Sequence[int]] | tuple[Sequence[str], Sequence[int], Sequence[float]]


@dataclass(frozen=True)
class DealOutcome:
    """Bot A against bot B on one deal: the games of the deal where both sat.

    ``games`` counts them, ``above`` counts those where A finished above B,
    and ``score_difference`` is the sum over them of ``score(A) - score(B)``
    (each game's term lies in -1..1). B's view is :meth:`swapped`.

    Two bots compared on *paired* games instead (a gauntlet's candidates,
    each in the same seat of the same deal against the same field, never at
    one table) may take the same place: ``ties`` counts those, and a tie
    counts half a game above.
    """

    games: int
    above: int
    score_difference: float
    ties: int = 0
    # The luck of the cards in those games (referee.records.luck): the sum of ``luck(A) - luck(B)`` in score units, and
    # the same scaled to the share of games above (:func:`above_luck_scale`). A luck-adjusted figure subtracts it.
    luck: float = 0.0
    above_luck: float = 0.0

    def __post_init__(self) -> None:
        if self.games < 1 or not 0 <= self.above <= self.games - self.ties or self.ties < 0:
            raise StatisticsError(
                f"a deal outcome of {self.games} games with {self.above} above and {self.ties} tied: expected 1 or "
                "more games and 0..games above (with the ties)"
            )
        if not -self.games <= self.score_difference <= self.games:
            raise StatisticsError(
                f"a deal outcome of {self.games} games with score difference {self.score_difference}: "
                f"expected -{self.games}..{self.games} (each game's difference lies in -1..1)"
            )

    @property
    def below(self) -> int:
        """Games of the deal where A finished below B."""
        return self.games - self.above - self.ties

    @property
    def points(self) -> float:
        """Games above, a tie counting half."""
        return self.above + self.ties / 2

    def swapped(self) -> DealOutcome:
        """The same deal seen from B's side."""
        return DealOutcome(self.games, self.below, -self.score_difference, self.ties, -self.luck, -self.above_luck)


def above_luck_scale(table_size: int) -> float:
    """What a unit of luck in score difference is worth in the share of games above, at a table of ``table_size``.

    Two distinct places at a table of n differ in score by ``(n + 1) / (3 (n - 1))`` on average, and A finishing
    above B moves the share by 1 where it moves the score difference by that much either way: so the share's
    luck is the score's times ``3 (n - 1) / (2 (n + 1))`` (1/2 at a table of two, where the two are one). Any
    fixed scale keeps the adjusted share's mean; this one makes it follow the share."""
    return 3 * (table_size - 1) / (2 * (table_size + 1))


def deal_outcomes(games: Iterable[DealGame]) -> dict[tuple[str, str], DealOutcome]:
    """What the games of one deal say about every pair of bots that shared one of them.

    Each game is ``(seats, finish_order)`` as in ``games.jsonl``: the bot
    name at each seat, and the seats from first place to last; or
    ``(seats, finish_order, luck)`` with each seat's luck (:mod:`referee.records.luck`),
    for the outcomes' luck-adjusted figures. The result is
    keyed ``(bot, other)`` with ``bot`` before ``other`` by name, from
    ``bot``'s side; games are read in the order given.
    """
    totals: dict[tuple[str, str], list[float]] = {}  # games, above, score difference, luck, luck in the share
    for game in games:
        seats, placements = game[0], game[1]
        luck: Sequence[float] | None = game[2] if len(game) > 2 else None
        place_of_seat = [0] * len(seats)
        for place, seat in enumerate(placements):
            place_of_seat[seat] = place
        steps = len(seats) - 1
        scale = above_luck_scale(len(seats))
        for seat, name in enumerate(seats):
            for other_seat in range(seat + 1, len(seats)):
                other = seats[other_seat]
                first, second = (seat, other_seat) if name < other else (other_seat, seat)
                total = totals.setdefault((seats[first], seats[second]), [0, 0, 0.0, 0.0, 0.0])
                total[0] += 1
                total[1] += int(place_of_seat[first] < place_of_seat[second])
                total[2] += (place_of_seat[second] - place_of_seat[first]) / steps
                if luck is not None:
                    total[3] += luck[first] - luck[second]
                    total[4] += (luck[first] - luck[second]) * scale
    return {
        pair: DealOutcome(int(games), int(above), difference, luck=luck, above_luck=above_luck)
        for pair, (games, above, difference, luck, above_luck) in totals.items()
    }


def deal_outcome(games: Iterable[DealGame], bot: str, other: str) -> DealOutcome | None:
    """What the games of one deal say about ``bot`` against ``other``; None if they shared none of them.

    Games are ``(seats, finish_order)`` as for :func:`deal_outcomes`. For the
    league runner: collect the finished games of one rotation group (one
    seed), then ``deal_outcome([(record["seats"], record["finish_order"]) for
    record in group], "A", "B")`` is what :meth:`referee.records.sequential.SequentialTest.add` takes.
    """
    if bot == other:
        raise StatisticsError(f"cannot compare bot {bot!r} with itself; name two different bots")
    if bot < other:
        return deal_outcomes(games).get((bot, other))
    outcome = deal_outcomes(games).get((other, bot))
    return None if outcome is None else outcome.swapped()


# ----- a comparison over many deals ------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Bot A against bot B over the deals they shared.

    ``above_rate`` is the share of shared games A finished above B;
    ``score_difference`` the mean over shared games of ``score(A) -
    score(B)``; ``elo`` the logistic Elo difference matching ``above_rate``
    (its ends are infinite when the data cannot bound it); ``los`` the
    likelihood of superiority, the probability that A's true above rate is
    over one half. Intervals and ``los`` treat deals as the independent
    samples. Every figure is None when the bots shared no game. ``ties``
    counts paired games (see :class:`DealOutcome`) where the two took the
    same place; each counts half above.
    """

    games: int
    deals: int
    above: int
    above_rate: Interval | None
    score_difference: Interval | None
    elo: Interval | None
    los: float | None
    ties: int = 0

    @property
    def below(self) -> int:
        """Shared games where A finished below B."""
        return self.games - self.above - self.ties

    def swapped(self) -> Comparison:
        """The same comparison from B's side."""
        rate, elo, difference, los = self.above_rate, self.elo, self.score_difference, self.los
        if rate is None or elo is None or difference is None or los is None:
            return self  # no shared game: every figure is None
        return Comparison(
            games=self.games,
            deals=self.deals,
            above=self.below,
            above_rate=Interval(1.0 - rate.estimate, 1.0 - rate.high, 1.0 - rate.low),
            score_difference=-difference,
            elo=-elo,
            los=1.0 - los,
            ties=self.ties,
        )


class PairTally:
    """Running sums over the deal outcomes of one pair of bots, from which a :class:`Comparison` is made.

    Only sums are kept, so memory does not grow with the league; add deals
    in a fixed order (the schedule's) for figures identical to the last bit.
    """

    def __init__(self) -> None:
        self.deals = 0
        self.games = 0
        self.above = 0
        self.ties = 0
        self._games_squared = 0
        self._above_squared: float = 0  # a tie counts half
        self._above_games: float = 0
        self._difference_total = 0.0
        self._difference_squared = 0.0
        self._difference_games = 0.0

    @classmethod
    def of_totals(
        cls,
        deals: int,
        games: int,
        above: int,
        ties: int,
        sums: tuple[int, float, float, float, float, float],
    ) -> PairTally:
        """A tally of sums made elsewhere: ``sums`` are over deals of games², points², points x games, score
        difference, its square, and it x games (points: above, a tie counting half)."""
        tally = cls()
        tally.deals, tally.games, tally.above, tally.ties = deals, games, above, ties
        (
            tally._games_squared,
            tally._above_squared,
            tally._above_games,
            tally._difference_total,
            tally._difference_squared,
            tally._difference_games,
        ) = sums
        return tally

    def add(self, outcome: DealOutcome) -> None:
        """Count one deal's outcome."""
        self.deals += 1
        self.games += outcome.games
        self.above += outcome.above
        self.ties += outcome.ties
        self._games_squared += outcome.games**2
        self._above_squared += outcome.points**2
        self._above_games += outcome.points * outcome.games
        self._difference_total += outcome.score_difference
        self._difference_squared += outcome.score_difference**2
        self._difference_games += outcome.score_difference * outcome.games

    def comparison(self, level: float = CONFIDENCE) -> Comparison:
        """The comparison of the deals added so far, intervals at ``level``."""
        if self.deals == 0:
            return Comparison(0, 0, 0, None, None, None, None)
        above_rate, above_error = self._ratio(
            self.above + self.ties / 2, self._above_squared, self._above_games, low=0.0, high=1.0
        )
        difference, difference_error = self._ratio(
            self._difference_total, self._difference_squared, self._difference_games, low=-1.0, high=1.0
        )
        rate_interval = _interval(above_rate, above_error, self.deals, level, 0.0, 1.0)
        elo = Interval(
            elo_from_score(above_rate), elo_from_score(rate_interval.low), elo_from_score(rate_interval.high)
        )
        return Comparison(
            games=self.games,
            deals=self.deals,
            above=self.above,
            above_rate=rate_interval,
            score_difference=_interval(difference, difference_error, self.deals, level, -1.0, 1.0),
            elo=elo,
            los=_likelihood_of_superiority(above_rate - 0.5, above_error, self.deals),
            ties=self.ties,
        )

    def _ratio(self, total: float, squared: float, cross: float, low: float, high: float) -> tuple[float, float]:
        """A per-game mean of a deal total, and its standard error with deals as the samples.

        The error is the usual one for a ratio of sums over clusters (deals),
        after adding a quarter of an average deal at each end of the range
        (every game ``low``, every game ``high``): otherwise a few deals
        that all went one way would claim certainty.
        """
        estimate = total / self.games
        size = self.games / self.deals
        weight = _PSEUDO_DEAL_WEIGHT
        deals = self.deals + 2 * weight
        games = self.games + 2 * weight * size
        total += weight * (low + high) * size
        squared += weight * (low**2 + high**2) * size**2
        cross += weight * (low + high) * size**2
        games_squared = self._games_squared + 2 * weight * size**2
        adjusted = total / games
        residuals = squared - 2 * adjusted * cross + adjusted**2 * games_squared
        variance = deals / (deals - 1) * max(residuals, 0.0) / games**2
        return estimate, math.sqrt(variance)


def _interval(estimate: float, error: float, deals: int, level: float, low: float, high: float) -> Interval:
    if deals < 2:  # one deal says nothing about how much deals vary
        return Interval(estimate, low, high)
    half_width = interval_multiplier(level, deals - 1) * error
    return Interval(estimate, max(low, estimate - half_width), min(high, estimate + half_width))


def mean_per_game(deals: Sequence[tuple[int, float]], level: float = CONFIDENCE) -> Interval | None:
    """The mean per game of deal totals (``(games, total)`` for each deal), with deals as the samples: the ratio
    estimator and its cluster standard error, a Student's t interval; None without a game. Unbounded values (a
    luck-adjusted score) are taken as they are: no range to pad, unlike :class:`PairTally`'s."""
    games = sum(count for count, _ in deals)
    if games == 0:
        return None
    estimate = sum(total for _, total in deals) / games
    if len(deals) < 2:
        return Interval(estimate, -math.inf, math.inf)
    residuals = sum((total - estimate * count) ** 2 for count, total in deals)
    error = math.sqrt(len(deals) / (len(deals) - 1) * residuals) / games
    half_width = interval_multiplier(level, len(deals) - 1) * error
    return Interval(estimate, estimate - half_width, estimate + half_width)


def _likelihood_of_superiority(margin: float, error: float, deals: int) -> float:
    """P(true margin > 0): Student's t with deals - 1 degrees of freedom (normal beyond 1000), as intervals use."""
    if error == 0.0:
        return 0.5 if margin == 0.0 else float(margin > 0.0)
    ratio = margin / error
    degrees_of_freedom = max(deals - 1, 1)
    if degrees_of_freedom > 1000:
        return normal_cdf(ratio)
    return 0.5 + math.copysign(0.5 * _t_central_probability(abs(ratio), degrees_of_freedom), ratio)
