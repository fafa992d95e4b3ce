"""The published ranking: one Plackett-Luce fit of every finish order, and rank ranges from a bootstrap over deals.

Pure computation (numpy), no I/O, no clock; the bootstrap's random draws
come from the seed it is given, so the same games give the same figures to
the last digit, in whatever order they arrive. docs/statistics.md explains
each figure; bench/calibration.py measures how often the ranges hold the
true ranks.

- **Strength.** Under Plackett-Luce a game's finish order is drawn by
  picking the winner with probability proportional to each bot's strength
  ``w``, then second place from the rest, and so on. The fit is the
  maximum of the likelihood of every counted game's finish order, times a
  weak prior: each bot is given one virtual win and one virtual loss
  against a bot of the field's (geometric) mean strength, so that a bot
  that won every game still has a finite strength. It is computed with
  Hunter's MM algorithm (2004), each step recentred on the field's mean,
  and reported as Elo relative to that mean, ``400 log10(w / mean)``: the
  chance that A finishes above B is ``1 / (1 + 10^((B - A) / 400))`` at any
  table. Nothing depends on the order the games are given in, unlike a
  rating updated game by game.
- **Intervals and rank ranges.** Deals (the games of one seed: a table's
  rotations, and in a gauntlet every candidate's table on the same field
  and cards) are resampled with replacement, ``resamples`` times, and the
  fit repeated on each resample; the spread of a figure over the
  resamples is its standard error. An interval is the estimate plus or
  minus Student's t for deals - 1 degrees of freedom times that error (as
  :mod:`referee.records.stats` counts deals), so that a handful of deals cannot
  claim certainty. Bot B is *established above* bot A when B's strength
  minus A's exceeds t times the error of that difference. A bot's range is
  ``[1 + bots established above it, n - bots established below it]``
  among the ``n`` bots it is ranked with: bots whose order the games do
  not establish share ranks. ``rank`` is the competition ranking by
  strength (ties share the best place: 1, 2, 2, 4).
- **Unbounded ends.** A bot that finished first in every game it played
  could be any stronger than the fit says (the likelihood rises without
  end; only the prior stops it), and one last in every game any weaker:
  that end of its interval is infinite.
- **Past the bootstrap's size** (the standings' choice: more than a
  thousand deals), the same fit from the games' stage counts
  (:class:`StageCounts`, :func:`fit_stages`: how often each set of bots was
  left to pick a place from, whatever the number of games) and the errors
  from its covariance, robust to the deals as the bootstrap is
  (:func:`sandwich` of the :func:`information` and the deals' scores,
  :func:`deal_scores`), ranked by :func:`rank_fitted` with the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from referee.records.stats import CONFIDENCE, interval_multiplier

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison  # a deal: any key that sorts

RESAMPLES = 200  # bootstrap resamples of the deals
PRIOR_GAMES = 1.0  # virtual wins (and as many losses) of each bot against the field's mean
ELO_PER_NEPER = 400.0 / math.log(10.0)
STRENGTH_DIGITS = 2  # Elo; strengths equal at this rounding are tied
FIT_TOLERANCE = 1e-11  # the largest change of any log strength at which the fit stops
RESAMPLE_TOLERANCE = 1e-6
MAX_STEPS = 100_000
_CHUNK_CELLS = 2_000_000  # games x seats x resamples fitted at once: bounds the memory a chunk takes


@dataclass(frozen=True)
class RankedBot:
    """One bot's place: its fitted strength with a 95% interval, its rank and the 95% range of its rank."""

    bot: str
    strength: float | None  # Elo relative to the field's mean; None for a bot without a counted game
    strength_low: float | None
    strength_high: float | None
    rank: int  # competition ranking among the bots it is ranked with
    rank_range: tuple[int, int]  # best and worst rank the games allow (95%)


@dataclass(frozen=True)
class Ranking:
    """Every bot's place, by bot name; ``groups`` are the sets of bots ranked among themselves."""

    bots: dict[str, RankedBot]
    resamples: int
    level: float


def rank_bots(
    games: Sequence[tuple[SupportsRichComparison, Sequence[str]]],
    bots: Sequence[str],
    *,
    seed: int,
    groups: Sequence[Sequence[str]] | None = None,
    resamples: int = RESAMPLES,
    level: float = CONFIDENCE,
) -> Ranking:
    """Fit the strengths of ``bots`` from ``games`` and rank them, within each of ``groups`` (default: all together).

    ``games`` are ``(deal, bots in finish order)``: ``deal`` (any sortable
    key) says which games share their cards and so are resampled together.
    ``seed`` (an unsigned 64-bit number) seeds the bootstrap. Neither the
    order of the games nor of the deals changes a digit.
    """
    names = sorted(bots)
    played = sorted({name for _, order in games for name in order})
    unknown = [name for name in played if name not in set(names)]
    if unknown:
        raise ValueError(f"games name bots that are not ranked: {', '.join(unknown)}")
    groups = [list(names)] if groups is None else [sorted(group) for group in groups]
    position = {name: number for number, name in enumerate(played)}
    finish = _finish_array([order for _, order in games], position)
    # Deals numbered in the order of their keys, not of the games: renumbering the games changes no draw.
    deal_numbers = {deal: number for number, deal in enumerate(sorted({deal for deal, _ in games}))}
    deal_of_game = np.array([deal_numbers[deal] for deal, _ in games], dtype=np.int64)
    strengths = np.zeros(len(played))
    replicates = np.zeros((0, len(played)))
    if played:
        orders, which, strengths = _point_fit(finish, len(played))
        if resamples:
            generator = np.random.Generator(np.random.PCG64(seed))
            weights = np.empty((resamples, len(orders)))
            for resample in range(resamples):  # one at a time: memory of one resample's draws, not of all
                draw = generator.integers(0, len(deal_numbers), size=len(deal_numbers))
                times = np.bincount(draw, minlength=len(deal_numbers)).astype(float)
                weights[resample] = np.bincount(which, weights=times[deal_of_game], minlength=len(orders))
            replicates = fit(orders, len(played), weights, RESAMPLE_TOLERANCE, start=strengths)
    multiplier = interval_multiplier(level, len(deal_numbers) - 1) if len(deal_numbers) > 1 else math.inf
    sizes = (finish < len(played)).sum(axis=1)
    seated = np.bincount(finish[finish < len(played)], minlength=len(played))
    first = np.bincount(finish[:, 0], minlength=len(played) + 1)[: len(played)] if len(finish) else seated * 0
    last = np.bincount(finish[np.arange(len(finish)), sizes - 1], minlength=len(played)) if len(finish) else seated * 0
    unbounded = {
        name: (bool(last[number] == seated[number]), bool(first[number] == seated[number]))
        for name, number in position.items()
    }
    ranked: dict[str, RankedBot] = {}
    for group in groups:
        ranked.update(_rank_group(group, position, strengths, replicates, multiplier, unbounded))
    return Ranking(ranked, resamples, level)


def _point_fit(finish: np.ndarray, bots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct finish orders of ``finish``, each game's order among them, and the fitted log strengths.

    Games with the same finish order are fitted as one, weighted by their
    count (in a small field most games repeat an order), in an order of
    their own: the order games come in cannot change a digit.
    """
    orders, which = np.unique(finish, axis=0, return_inverse=True)
    which = which.reshape(-1)
    once = np.bincount(which, minlength=len(orders)).astype(float)[None, :]
    return orders, which, fit(orders, bots, once, FIT_TOLERANCE)[0]


def _finish_array(orders: Sequence[Sequence[str]], position: dict[str, int]) -> np.ndarray:
    """Each game's bots (their positions) in finish order, padded with ``len(position)`` (a bot of strength 0)."""
    width = max((len(order) for order in orders), default=0)
    finish = np.full((len(orders), width), len(position), dtype=np.int64)
    for number, order in enumerate(orders):
        finish[number, : len(order)] = [position[name] for name in order]
    return finish


def fit(
    orders: np.ndarray, bots: int, weights: np.ndarray, tolerance: float, start: np.ndarray | None = None
) -> np.ndarray:
    """Log strengths (natural, mean 0) maximising the weighted Plackett-Luce likelihood with the prior; one row per weighting.

    ``orders`` is finish orders x places (bot numbers, padded with
    ``bots``); ``weights`` is resamples x orders: how often each order
    counts in each resample. Resamples are fitted in chunks (bounding the
    memory one takes), each by MM steps until no log strength moves by more
    than ``tolerance``.
    """
    width = orders.shape[1]
    chunk = max(1, _CHUNK_CELLS // max(1, len(orders) * width))
    rows = []
    for first in range(0, len(weights), chunk):
        part = weights[first : first + chunk]
        initial = np.zeros((len(part), bots)) if start is None else np.broadcast_to(start, (len(part), bots)).copy()
        rows.append(_mm(orders, bots, part, tolerance, initial))
    return np.concatenate(rows)


def _mm(finish: np.ndarray, bots: int, weights: np.ndarray, tolerance: float, theta: np.ndarray) -> np.ndarray:
    """Hunter's MM for Plackett-Luce, resamples side by side: ``w <- wins / sum over stages of 1 / (strength left)``.

    Worked a place at a time (a table has at most ten), each over every
    resample and game at once: the strength not yet placed is summed from
    the last place up, each bot's exposure (the sum of ``1 / strength
    left`` over the stages it was still in) from the first place down.
    """
    resamples = len(weights)
    games, width = finish.shape
    places = np.ascontiguousarray(finish.T)  # places x games
    sizes = (finish < bots).sum(axis=1)
    columns = bots + 1  # the padding's column last
    offsets = (np.arange(resamples) * columns)[:, None]
    flat = [(places[place][None, :] + offsets).ravel() for place in range(width)]
    # Stage j of a game picks place j from the bots not yet placed; a game of n has stages 0..n-2.
    stage_weights = [weights * (place < sizes - 1)[None, :] for place in range(width)]
    wins = np.full((resamples, columns), PRIOR_GAMES)
    for place in range(width):
        placed = np.bincount(flat[place], weights=stage_weights[place].ravel(), minlength=resamples * columns)
        wins += placed.reshape(resamples, columns)
    wins = wins[:, :bots]
    strengths = np.exp(theta)
    padded = np.zeros((resamples, columns))
    inverse = [np.empty((resamples, games)) for _ in range(width)]
    for _ in range(MAX_STEPS):
        padded[:, :bots] = strengths
        left = np.zeros((resamples, games))
        for place in range(width - 1, -1, -1):  # the strength of the bots not yet placed, last place first
            left += padded[:, places[place]]
            np.divide(stage_weights[place], np.maximum(left, 1e-300), out=inverse[place])
        denominators = np.zeros(resamples * columns)
        exposure = np.zeros((resamples, games))
        for place in range(width):
            exposure += inverse[place]
            denominators += np.bincount(flat[place], weights=exposure.ravel(), minlength=resamples * columns)
        denominators = denominators.reshape(resamples, columns)[:, :bots]
        # The prior: PRIOR_GAMES won and lost against a bot of the field's mean strength (1, after recentring).
        denominators += 2.0 * PRIOR_GAMES / (strengths + 1.0)
        updated = np.log(wins / denominators)
        updated -= updated.mean(axis=1, keepdims=True)
        change = np.max(np.abs(updated - theta)) if updated.size else 0.0
        theta = updated
        strengths = np.exp(theta)
        if change <= tolerance:
            break
    return theta


def _rank_group(
    group: Sequence[str],
    position: dict[str, int],
    strengths: np.ndarray,
    spread: np.ndarray,
    multiplier: float,
    unbounded: dict[str, tuple[bool, bool]],
    *,
    covariance: bool = False,
) -> dict[str, RankedBot]:
    """Rank, strength interval and rank range of each bot of ``group`` among the group.

    ``spread`` is the bootstrap's replicates (resamples x bots), or with ``covariance`` the fit's covariance.
    """
    fitted = [name for name in group if name in position]
    columns = [position[name] for name in fitted]
    elo = {name: float(strengths[position[name]] * ELO_PER_NEPER) for name in fitted}
    ordered = sorted(fitted, key=lambda name: (-round(elo[name], STRENGTH_DIGITS), name))
    rank: dict[str, int] = {}
    for place, name in enumerate(ordered, start=1):
        previous = ordered[place - 2] if place > 1 else None
        if previous is not None and round(elo[previous], STRENGTH_DIGITS) == round(elo[name], STRENGTH_DIGITS):
            rank[name] = rank[previous]  # tied
        else:
            rank[name] = place
    above = np.zeros(len(fitted), dtype=np.int64)  # bots established above each bot
    below = np.zeros(len(fitted), dtype=np.int64)
    errors = np.full(len(fitted), math.inf)
    if (covariance or len(spread) > 1) and fitted and math.isfinite(multiplier):
        estimates = np.array([elo[name] for name in fitted])
        if covariance:
            block = spread[np.ix_(columns, columns)] * ELO_PER_NEPER**2
            variances = np.diag(block)
            errors = np.sqrt(np.maximum(variances, 0.0))
        else:
            sample = spread[:, columns] * ELO_PER_NEPER
            errors = sample.std(axis=0, ddof=1)
        least = 10.0**-STRENGTH_DIGITS  # strengths closer than the shown digits are tied, whatever the error
        for number in range(len(fitted)):
            gap = estimates - estimates[number]  # each other bot's strength minus this one's
            if covariance:
                error = np.sqrt(np.maximum(variances + variances[number] - 2.0 * block[number], 0.0))
            else:
                error = (sample - sample[:, number : number + 1]).std(axis=0, ddof=1)
            established = np.abs(gap) > np.maximum(multiplier * error, least)
            above[number] = int((established & (gap > 0)).sum())
            below[number] = int((established & (gap < 0)).sum())
    ranked = {}
    for number, name in enumerate(fitted):
        best, worst = 1 + int(above[number]), len(group) - int(below[number])
        half = multiplier * float(errors[number])
        no_floor, no_ceiling = unbounded[name]
        ranked[name] = RankedBot(
            bot=name,
            strength=elo[name],
            strength_low=(-math.inf if no_floor else elo[name] - half) if math.isfinite(half) else None,
            strength_high=(math.inf if no_ceiling else elo[name] + half) if math.isfinite(half) else None,
            rank=rank[name],
            rank_range=(min(best, rank[name]), max(worst, rank[name])),
        )
    unplaced = len(fitted) + 1
    for name in group:
        if name not in position:
            ranked[name] = RankedBot(name, None, None, None, unplaced, (1, len(group)))
    return ranked


# ----- the fit on aggregated games, and its covariance past the bootstrap's size ------------------------------


class StageCounts:
    """Finish orders as Plackett-Luce reads them: how often each set of bots was left to pick from, each bot's wins.

    A game of ``n`` has ``n - 1`` stages, stage ``j`` picking place ``j``
    from the bots not yet placed; the likelihood depends on the games only
    through how many stages each set of bots had, and how many each bot won.
    So the counts are the fit's whole data, and they grow with the sets of
    bots that met, not with the games: a field of a few dozen bots at tables
    of 3 and 4 has at most a few tens of thousands. Bots are numbered as
    they are first seen (``bot_ids``); a set is keyed by its bots' bits.
    """

    def __init__(self) -> None:
        self.bot_ids: dict[str, int] = {}
        self._rows: dict[int, int] = {}  # a set's bits -> its row
        self._members = np.full((64, 2), -1, dtype=np.int64)  # row -> its bots, padded with -1
        self._counts = np.zeros(64)
        self._wins = np.zeros(8)
        self.games = 0

    def bot_id(self, name: str) -> int:
        """``name``'s number, given the first time it is asked for."""
        number = self.bot_ids.get(name)
        if number is None:
            number = self.bot_ids[name] = len(self.bot_ids)
            if number >= len(self._wins):
                self._wins = np.concatenate([self._wins, np.zeros(len(self._wins))])
        return number

    def add(self, order: Sequence[int], times: int = 1) -> None:
        """Count a game of bots (numbers) in finish order ``times`` times (a negative number takes games away)."""
        left = 0
        for bot in order:
            left |= 1 << bot
        for place, bot in enumerate(order[:-1]):
            row = self._rows.get(left)
            if row is None:
                row = self._new_row(left, order[place:])
            self._counts[row] += times
            self._wins[bot] += times
            left ^= 1 << bot
        self.games += times

    def _new_row(self, bits: int, members: Sequence[int]) -> int:
        row = len(self._rows)
        if row >= len(self._counts):
            self._counts = np.concatenate([self._counts, np.zeros(len(self._counts))])
            self._members = np.concatenate([self._members, np.full_like(self._members, -1)])
        if len(members) > self._members.shape[1]:
            wider = np.full((len(self._members), len(members)), -1, dtype=np.int64)
            wider[:, : self._members.shape[1]] = self._members
            self._members = wider
        self._members[row, : len(members)] = sorted(members)
        self._rows[bits] = row
        return row

    @property
    def sets(self) -> int:
        return len(self._rows)

    def arrays(self, bots: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sets of bots (renumbered 0..len(bots) - 1 in the order of ``bots``, padded with ``len(bots)``), their
        stage counts and each bot's wins, for the sets whose bots are all of ``bots`` and that were counted."""
        renumber = np.full(len(self.bot_ids) + 1, -1, dtype=np.int64)
        renumber[np.asarray(bots, dtype=np.int64)] = np.arange(len(bots))
        members = self._members[: self.sets]
        counts = self._counts[: self.sets]
        mapped = np.where(members >= 0, renumber[members], len(bots))
        keep = (counts > 0) & ~(mapped < 0).any(axis=1)
        return mapped[keep], counts[keep], self._wins[np.asarray(bots, dtype=np.int64)]


def fit_stages(
    members: np.ndarray, counts: np.ndarray, wins: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """The log strengths (mean 0) :func:`rank_bots` fits, from the stage counts of the games (:class:`StageCounts`).

    The fit is the fixed point of Hunter's MM step recentred on the field's
    mean (what :func:`fit` iterates to), found by Newton's method on the
    fixed-point equations, from ``start`` (the last fit, as the games grow)
    or from 0: a few steps, each over the sets once, where MM takes hundreds.
    A step that does not bring the equations nearer is replaced by an MM step,
    which always does; it stops once no log strength moves by more than
    :data:`FIT_TOLERANCE`.
    """
    bots = len(wins)
    if bots == 0:
        return np.zeros(0)
    theta = np.zeros(bots) if start is None else np.asarray(start, dtype=float) - np.mean(start)
    wins = wins + PRIOR_GAMES
    width = members.shape[1] if members.size else 0
    pairs = [(first, second) for first in range(width) for second in range(width)]
    for _ in range(MAX_STEPS):
        residual, jacobian = _fixed_point(members, counts, wins, theta, pairs)
        bordered = np.zeros((bots + 1, bots + 1))
        bordered[:bots, :bots] = jacobian
        bordered[:bots, bots] = 1.0
        bordered[bots, :bots] = 1.0
        try:
            step = np.linalg.solve(bordered, np.concatenate([-residual, [0.0]]))[:bots]
        except np.linalg.LinAlgError:
            step = np.full(bots, np.inf)
        norm = np.max(np.abs(residual - residual.mean()))
        if not np.all(np.isfinite(step)) or np.max(np.abs(step)) > 1.0:
            step = _mm_step(members, counts, wins, theta) - theta  # far from the answer: MM's sure step
        else:
            trial, _ = _fixed_point(members, counts, wins, theta + step, None)
            if np.max(np.abs(trial - trial.mean())) > norm:
                step = _mm_step(members, counts, wins, theta) - theta
        theta = theta + step
        theta -= theta.mean()
        if np.max(np.abs(step)) <= FIT_TOLERANCE:
            break
    return theta


def _set_totals(members: np.ndarray, strengths: np.ndarray) -> np.ndarray:
    padded = np.concatenate([strengths, [0.0]])
    totals: np.ndarray = padded[members].sum(axis=1)
    return totals


def _denominators(members: np.ndarray, counts: np.ndarray, strengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MM's denominators (each bot's exposure to the sets it was in, and the prior's), and each set's strength."""
    bots = len(strengths)
    totals = _set_totals(members, strengths)
    shares = np.repeat(counts / totals, members.shape[1]) if members.size else np.zeros(0)
    exposure = np.bincount(members.ravel(), weights=shares, minlength=bots + 1)[:bots]
    return exposure + 2.0 * PRIOR_GAMES / (strengths + 1.0), totals


def _mm_step(members: np.ndarray, counts: np.ndarray, wins: np.ndarray, theta: np.ndarray) -> np.ndarray:
    denominators, _ = _denominators(members, counts, np.exp(theta))
    updated: np.ndarray = np.log(wins / denominators)
    updated -= updated.mean()
    return updated


def _fixed_point(
    members: np.ndarray,
    counts: np.ndarray,
    wins: np.ndarray,
    theta: np.ndarray,
    pairs: list[tuple[int, int]] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """MM's fixed-point equations at ``theta`` (``log wins - log denominator - theta``, all equal at the fit) and,
    given the places' ``pairs``, their Jacobian."""
    bots = len(theta)
    strengths = np.exp(theta)
    denominators, totals = _denominators(members, counts, strengths)
    residual = np.log(wins) - np.log(denominators) - theta
    jacobian = np.zeros((bots, bots))
    if pairs is not None:
        # d denominator_i / d theta_j = -sum over sets holding both of count w_j / total^2, less the prior's.
        inverse_square = counts / totals**2
        padded = np.concatenate([strengths, [0.0]])
        flat = np.zeros((bots + 1) * (bots + 1))
        for first, second in pairs:
            rows, columns = members[:, first], members[:, second]
            flat += np.bincount(
                rows * (bots + 1) + columns, weights=inverse_square * padded[columns], minlength=flat.size
            )
        derivative = -flat.reshape(bots + 1, bots + 1)[:bots, :bots]
        derivative[np.diag_indices(bots)] -= 2.0 * PRIOR_GAMES * strengths / (strengths + 1.0) ** 2
        jacobian = -derivative / denominators[:, None] - np.eye(bots)
    return residual, jacobian


def deal_scores(orders: np.ndarray, deal_of_game: np.ndarray, deals: int, theta: np.ndarray) -> np.ndarray:
    """Each deal's score at ``theta``: the gradient of its games' log-likelihood, deals x bots.

    ``orders`` is games x places (bot numbers, padded with ``len(theta)``),
    ``deal_of_game`` each game's deal (0..deals - 1). A game's score for the
    bot in place ``l`` is ``[l < n - 1] - w_l sum over stages j <= l of 1 /
    (the strength left at stage j)``: its stage wins less its expected ones.
    """
    bots = len(theta)
    strengths = np.concatenate([np.exp(theta), [0.0]])[orders]
    sizes = (orders < bots).sum(axis=1)
    left = np.cumsum(strengths[:, ::-1], axis=1)[:, ::-1]
    stages = np.arange(orders.shape[1])[None, :] < (sizes - 1)[:, None]
    inverse = np.where(stages, 1.0 / np.maximum(left, 1e-300), 0.0)
    scores = stages - strengths * np.cumsum(inverse, axis=1)
    flat = (deal_of_game[:, None] * (bots + 1) + orders).ravel()
    summed = np.bincount(flat, weights=scores.ravel(), minlength=deals * (bots + 1))
    return summed.reshape(deals, bots + 1)[:, :bots]


def information(members: np.ndarray, counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The observed information of the fit at ``theta`` (minus the Hessian of the log-likelihood and the prior)."""
    bots = len(theta)
    strengths = np.exp(theta)
    padded = np.concatenate([strengths, [0.0]])
    totals = _set_totals(members, strengths)
    shares = padded[members] / totals[:, None]  # each set's chance of each of its bots picked first
    flat = np.zeros((bots + 1) * (bots + 1))
    width = members.shape[1] if members.size else 0
    for first in range(width):
        diagonal = members[:, first] * (bots + 2)  # (i, i) in the flat (bots + 1) x (bots + 1) matrix
        flat += np.bincount(diagonal, weights=counts * shares[:, first], minlength=flat.size)
        for second in range(width):
            cells = members[:, first] * (bots + 1) + members[:, second]
            flat -= np.bincount(cells, weights=counts * shares[:, first] * shares[:, second], minlength=flat.size)
    matrix = flat.reshape(bots + 1, bots + 1)[:bots, :bots]
    matrix[np.diag_indices(bots)] += 2.0 * PRIOR_GAMES * strengths / (strengths + 1.0) ** 2
    return matrix


def sandwich(information_matrix: np.ndarray, meat: np.ndarray) -> np.ndarray:
    """The covariance of the log strengths (mean 0) from the information and the deals' scores' spread (``meat``).

    The information is inverted on the strengths of mean 0 (the fit's
    constraint), bordered by the constraint's row: ``K meat K``, ``K`` that
    inverse. With the deals' scores as the meat the covariance is robust to
    whatever ties the games of one deal together, as the bootstrap over deals
    is.
    """
    bots = len(information_matrix)
    bordered = np.zeros((bots + 1, bots + 1))
    bordered[:bots, :bots] = information_matrix
    bordered[:bots, bots] = 1.0
    bordered[bots, :bots] = 1.0
    inverse = np.linalg.pinv(bordered)[:bots, :bots]
    covariance: np.ndarray = inverse @ meat @ inverse
    covariance += covariance.T
    covariance /= 2.0
    return covariance


def rank_fitted(
    theta: Mapping[str, float],
    covariance: np.ndarray,
    deals: int,
    bots: Sequence[str],
    unbounded: Mapping[str, tuple[bool, bool]],
    *,
    groups: Sequence[Sequence[str]] | None = None,
    level: float = CONFIDENCE,
) -> Ranking:
    """Rank ``bots`` from a fit (``theta``: log strengths by bot, mean 0) and its covariance (in ``theta``'s order).

    What :func:`rank_bots` does with its bootstrap's replicates, done with the
    covariance: a strength's error is the root of its variance, a difference's
    of ``var_i + var_j - 2 cov_ij``. ``unbounded`` says, by bot, whether it was
    last (no floor) or first (no ceiling) in every game it played.
    """
    played = list(theta)
    position = {name: number for number, name in enumerate(played)}
    strengths = np.array([theta[name] for name in played])
    groups = [sorted(bots)] if groups is None else [sorted(group) for group in groups]
    multiplier = interval_multiplier(level, deals - 1) if deals > 1 else math.inf
    ranked: dict[str, RankedBot] = {}
    for group in groups:
        ranked.update(_rank_group(group, position, strengths, covariance, multiplier, dict(unbounded), covariance=True))
    return Ranking(ranked, 0, level)
