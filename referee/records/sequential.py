"""The sequential test: bot A against bot B, one deal at a time, stopping once the evidence is strong enough.

A sequential probability ratio test (SPRT), as fishtest and fastchess run
one: it takes the deal outcomes of :mod:`referee.records.stats` one deal at a
time and says whether A's advantage is ``h0`` or ``h1``, at the error rates
asked for. Pure, like the statistics: numbers and records, never sentences
(a verdict in words is :mod:`referee.publish.text`'s); ``docs/statistics.md``
explains the test.
"""

from __future__ import annotations

import enum
import math
from collections import Counter

from referee.records.stats import (
    CONFIDENCE,
    Comparison,
    DealOutcome,
    Interval,
    PairTally,
    StatisticsError,
    mean_per_game,
    score_from_elo,
)

# An adjusted sequential test gives no verdict before this many deals: their variance must be known first.
MIN_ADJUSTED_DEALS = 10

# Unobserved extreme outcomes count this much in the sequential test's likelihoods, so that
# a few one-sided deals give a large but finite evidence (fastchess regularises the same way).
_PSEUDO_COUNT = 1e-3


class Measure(enum.Enum):
    """What a sequential test's hypotheses are about, and so what value each deal gives it."""

    ELO = "elo"  # each deal gives its share of games A finished above B; hypotheses are Elo differences
    SCORE_DIFFERENCE = "score difference"  # each deal gives its mean score(A) - score(B); hypotheses are those


class Verdict(enum.Enum):
    """Where a sequential test stands."""

    CONTINUE = "continue"
    ACCEPT_H0 = "accept H0"
    ACCEPT_H1 = "accept H1"


class SequentialTest:
    """A sequential probability ratio test of bot A against bot B, one deal at a time.

    H0 says A's advantage is ``h0``, H1 that it is ``h1`` (``h0 < h1``), in
    Elo or as a mean score difference (:class:`Measure`). Each deal the two
    bots shared gives one value (its share of games A finished above B, or
    its mean score difference, as a :class:`DealOutcome`), like a game pair
    in fastchess's pentanomial model. The log-likelihood ratio is the
    generalised one of fishtest and fastchess: for each hypothesis, the
    distribution over the values seen that is most likely given the data and
    has the hypothesis's mean. The test accepts H1 when the ratio reaches
    ``log((1 - beta) / alpha)`` and H0 when it falls to ``log(beta / (1 -
    alpha))``: the chance of accepting H1 when H0 holds is about ``alpha``
    (at most), of accepting H0 when H1 holds about ``beta``.

    The verdict is fixed by the first crossing of a bound; outcomes added
    after it (games that were still running) update the figures, not the
    verdict. For a stopping point that does not depend on the order games
    finish in, add deals in schedule order.

    ``adjusted``: each deal's value has its luck taken out (the outcome's
    ``luck`` or ``above_luck``, :mod:`referee.records.luck`). Its mean is the raw
    value's, so the hypotheses are the same; its values are no longer a few
    fractions but any real number, and the ratio is the generalised one of a
    normal law with unknown variance (fishtest's and fastchess's for
    normalised values): ``n/2 log(var0 / var1)``, ``var_h`` the mean squared
    distance of the values from hypothesis h's mean. No verdict comes before
    :data:`MIN_ADJUSTED_DEALS` deals, where a variance is not yet known.
    """

    def __init__(
        self,
        measure: Measure,
        h0: float,
        h1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        adjusted: bool = False,
    ) -> None:
        name = "elo" if measure is Measure.ELO else "difference"
        if not math.isfinite(h0) or not math.isfinite(h1):
            raise StatisticsError(f"{name}0 {h0!r} and {name}1 {h1!r} must be finite numbers")
        if not h0 < h1:
            raise StatisticsError(f"{name}0 {h0!r} must be below {name}1 {h1!r}")
        if measure is Measure.SCORE_DIFFERENCE and not -1.0 < h0 < h1 < 1.0:
            raise StatisticsError(f"score differences {h0!r} and {h1!r} must lie strictly between -1 and 1")
        for label, value in (("alpha", alpha), ("beta", beta)):
            if not 0.0 < value < 1.0:
                raise StatisticsError(f"{label} {value!r} must lie strictly between 0 and 1")
        if alpha + beta >= 1.0:
            raise StatisticsError(f"alpha {alpha!r} plus beta {beta!r} must be below 1")
        self.measure = measure
        self.h0 = h0
        self.h1 = h1
        self.alpha = alpha
        self.beta = beta
        self.adjusted = adjusted
        self._adjusted_deals: list[tuple[int, float]] = []  # games, score difference less luck: for the figures
        self._sums = [0.0, 0.0]  # of the adjusted values and of their squares
        self.bounds = (math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha))
        self._means = (self._mean_of(h0), self._mean_of(h1))
        self._values: Counter[float] = Counter()
        self._tally = PairTally()
        self._verdict = Verdict.CONTINUE
        self._decided_after: int | None = None
        self._llr = 0.0
        self._thetas = (0.0, 0.0)

    @classmethod
    def for_elo(cls, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> SequentialTest:
        """H0: A is ``elo0`` Elo stronger than B; H1: ``elo1`` (negative is weaker)."""
        return cls(Measure.ELO, elo0, elo1, alpha, beta)

    @classmethod
    def for_score_difference(
        cls, difference0: float, difference1: float, alpha: float = 0.05, beta: float = 0.05
    ) -> SequentialTest:
        """H0: A's mean score exceeds B's by ``difference0`` on shared games; H1: by ``difference1``."""
        return cls(Measure.SCORE_DIFFERENCE, difference0, difference1, alpha, beta)

    def add(self, outcome: DealOutcome) -> Verdict:
        """Count one deal's outcome (A's side); return the verdict."""
        self._tally.add(outcome)
        if self.adjusted:
            value = self._value_of(outcome)
            self._sums[0] += value
            self._sums[1] += value * value
            self._adjusted_deals.append((outcome.games, outcome.score_difference - outcome.luck))
            self._llr = _normal_llr(self._tally.deals, self._sums[0], self._sums[1], *self._means)
        else:
            self._values[self._value_of(outcome)] += 1
            self._llr, self._thetas = _generalised_llr(self._values, *self._means, self._thetas)
        if self._verdict is Verdict.CONTINUE and (not self.adjusted or self._tally.deals >= MIN_ADJUSTED_DEALS):
            lower, upper = self.bounds
            if self._llr >= upper:
                self._verdict = Verdict.ACCEPT_H1
            elif self._llr <= lower:
                self._verdict = Verdict.ACCEPT_H0
            if self._verdict is not Verdict.CONTINUE:
                self._decided_after = self._tally.deals
        return self._verdict

    @property
    def llr(self) -> float:
        """The log-likelihood ratio of H1 to H0 over the deals added so far (0 before any)."""
        return self._llr

    @property
    def verdict(self) -> Verdict:
        """Continue, accept H0 or accept H1: fixed once a bound has been crossed."""
        return self._verdict

    @property
    def deals(self) -> int:
        """Deals added so far."""
        return self._tally.deals

    @property
    def games(self) -> int:
        """Shared games in the deals added so far."""
        return self._tally.games

    @property
    def decided_after(self) -> int | None:
        """How many deals the verdict was reached after; None while the test continues."""
        return self._decided_after

    def comparison(self, level: float = CONFIDENCE) -> Comparison:
        """The comparison of A with B over the deals added so far."""
        return self._tally.comparison(level)

    def _mean_of(self, hypothesis: float) -> float:
        """A hypothesis as the mean of the per-deal value, which lies in 0..1."""
        if self.measure is Measure.ELO:
            return score_from_elo(hypothesis)
        return (1.0 + hypothesis) / 2.0

    def _value_of(self, outcome: DealOutcome) -> float:
        if self.measure is Measure.ELO:
            return (outcome.points - (outcome.above_luck if self.adjusted else 0.0)) / outcome.games
        difference = outcome.score_difference - (outcome.luck if self.adjusted else 0.0)
        return (1.0 + difference / outcome.games) / 2.0

    def adjusted_difference(self, level: float = CONFIDENCE) -> Interval | None:
        """The mean score difference per shared game with the luck taken out (an adjusted test only)."""
        return mean_per_game(self._adjusted_deals, level) if self.adjusted else None


def _normal_llr(count: int, total: float, squares: float, mean0: float, mean1: float) -> float:
    """The generalised log-likelihood ratio of mean ``mean1`` to ``mean0`` for ``count`` values of a normal law
    of unknown variance, from their sum and the sum of their squares (see :class:`SequentialTest`)."""
    if count < 2:
        return 0.0
    variances = [max(squares / count - 2 * mean * total / count + mean * mean, 1e-12) for mean in (mean0, mean1)]
    return count / 2 * math.log(variances[0] / variances[1])


def _generalised_llr(
    counts: Counter[float], mean0: float, mean1: float, start: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, tuple[float, float]]:
    """The generalised log-likelihood ratio of mean ``mean1`` to ``mean0`` for values in 0..1 seen ``counts`` times.

    For each mean, the most likely distribution on the values seen that has
    that mean is ``p_i = phat_i / (1 + theta (a_i - mean))`` with theta
    solving ``sum phat_i (a_i - mean) / (1 + theta (a_i - mean)) = 0``
    (M. Van den Bergh, "Comments on Normalized Elo", proposition 1.1; the
    method of fishtest and fastchess). Values 0 and 1 are always in the
    support, with a tiny weight when unseen, so both means can be reached.
    Returns the ratio and the two thetas, from which the next call (one
    more deal) starts.
    """
    total = sum(counts.values())
    if total == 0:
        return 0.0, (0.0, 0.0)
    weights: dict[float, float] = dict(counts)
    for extreme in (0.0, 1.0):
        weights.setdefault(extreme, _PSEUDO_COUNT)
    weight_total = sum(weights.values())
    values = list(weights)
    shares = [weights[value] / weight_total for value in values]
    theta0 = _solve_theta(values, shares, mean0, start[0])
    theta1 = _solve_theta(values, shares, mean1, start[1])
    llr = sum(
        count * (math.log1p(theta0 * (value - mean0)) - math.log1p(theta1 * (value - mean1)))
        for value, count in counts.items()
    )
    return llr, (theta0, theta1)


def _solve_theta(values: list[float], shares: list[float], mean: float, start: float = 0.0) -> float:
    """The theta of the most likely distribution with mean ``mean``: damped Newton on a concave function.

    Theta maximises ``sum share_i log(1 + theta d_i)`` (``d_i = value_i -
    mean``), whose derivative is the equation above; the function is
    concave and falls to minus infinity where some ``1 + theta d_i``
    reaches 0, so halving the Newton step until the function rises keeps
    every probability positive and converges from any start inside (else
    from theta 0, where the function is 0).
    """
    terms = [(share, value - mean) for share, value in zip(shares, values, strict=True)]

    def objective(theta: float) -> float:
        total = 0.0
        for share, deviation in terms:
            scale = 1.0 + theta * deviation
            if scale <= 0.0:
                return -math.inf
            total += share * math.log(scale)
        return total

    theta, current = start, objective(start)
    if current == -math.inf:
        theta, current = 0.0, 0.0
    for _ in range(100):
        gradient = 0.0
        curvature = 0.0
        for share, deviation in terms:
            ratio = deviation / (1.0 + theta * deviation)
            gradient += share * ratio
            curvature += share * ratio * ratio
        if gradient * gradient <= 1e-26 * curvature:  # the Newton decrement: converged
            break
        step = gradient / curvature
        for _ in range(100):
            candidate = theta + step
            value = objective(candidate)
            # Rising, or level within rounding: near the top a full step may not show a gain.
            if value >= current - 1e-14 * (1.0 + abs(current)):
                break
            step /= 2.0
        else:
            break
        theta, current = candidate, value
    return theta


# ----- a hypothesis's text form ----------------------------------------------------------------


def describe_hypothesis(measure: Measure, value: float) -> str:
    """A hypothesis of a sequential test in its text form: ``elo +10``, ``elo 0``, ``score difference -0.05``.

    The form a league file's duel and its verdict name it by; the sentences around the figures are
    :mod:`referee.publish.text`'s.
    """
    number = f"{value:+g}" if value else "0"
    return f"elo {number}" if measure is Measure.ELO else f"score difference {number}"
