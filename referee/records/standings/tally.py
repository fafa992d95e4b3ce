"""The standings' sufficient statistics, kept up as games are counted: every figure, in memory that does not grow
with the games.

Each game counted is folded into sums at once: each bot's counts and its
decision times' bins, each pair's deal totals (whole numbers, so nothing
depends on the order they come in), the finish orders as Plackett-Luce reads
them (:class:`referee.records.ranking.StageCounts`). Only the newest deals are kept
whole (``window``): a game of a deal still kept updates its pairs' totals
exactly, and while the league has at most :data:`BOOTSTRAP_DEALS` deals every
one is kept, so the rank ranges are the bootstrap's over deals, as for a
small league. Past that the ranges come from the fit's covariance, robust to
what ties a deal's games together (:func:`referee.records.ranking.sandwich`): each
deal that leaves the window adds its score at the fit made then, the
window's deals theirs at the fit of the moment. A game coming back to a deal
that left the window (a gauntlet's new candidate on the same field, a run
resumed far apart) has the deal's earlier games recalled (``recall``, a
reader of the file) so that its pairs count it as one deal.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from referee.records.ranking import (
    ELO_PER_NEPER,
    RESAMPLES,
    RankedBot,
    Ranking,
    StageCounts,
    deal_scores,
    fit_stages,
    information,
    rank_bots,
    rank_fitted,
    sandwich,
)
from referee.records.results import FAULT_KINDS, GameRecord, RecordError
from referee.records.standings.adjusted import LuckOf
from referee.records.standings.table import (
    BotStanding,
    History,
    LatencyHistogram,
    Standings,
    check_bots,
    version_lines,
)
from referee.records.stats import PairTally, mean_per_game

Deal = tuple[str, int]  # GameRecord.deal

GRID = 2520  # every score difference at tables of up to ten is a whole number of 1/2520 (the lcm of 1..9)
WINDOW_DEALS = 2_000  # deals kept whole
BOOTSTRAP_DEALS = 1_000  # up to this many deals the rank ranges are the bootstrap's, past it the covariance's
FOLD_DEALS = 2_000  # deals out of the window waiting for a fit to add their scores at, at most
HISTORY_POINTS = 60  # the most points of the strength over time


class Recall(Protocol):
    """Where earlier games are found again (a folder's ``games.jsonl``)."""

    def deal(self, key: Deal) -> list[GameRecord]:
        """The games of deal ``key`` counted so far."""

    def index(self, index: int) -> str | None:
        """The id of the game counted so far with place ``index`` in the schedule."""


def history_counts(total: int, points: int = HISTORY_POINTS) -> list[int]:
    """The numbers of counted games the chart is fitted after: every ``step`` games, and ``total``; at most ``points``.

    ``step`` is the smallest power of two that keeps to ``points``, so the
    counts of a league that grows stay counts as it grows (a step only ever
    doubles): a fit made after 512 games is still wanted after 20,000.
    """
    step = history_step(total, points)
    counts = list(range(step, total + 1, step))
    return counts if not total or counts[-1:] == [total] else [*counts, total]


def history_step(total: int, points: int = HISTORY_POINTS) -> int:
    step = 1
    while -(-total // step) > points:
        step *= 2
    return step


@dataclass
class _Bot:
    games: int = 0
    wins: int = 0
    last: int = 0  # games finished last
    placement_total: int = 0
    score: int = 0  # in 1/GRID: exact, so the figure cannot drift with summation order
    forfeits: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)


# A pair's contribution from one deal: games, above, ties, score difference in 1/GRID (the first bot's side).
Contribution = tuple[int, int, int, int]


class _Deal:
    """The counted games of one deal, and what they say about each pair of bots (:func:`_Deal.contribution`)."""

    __slots__ = ("direct", "orders", "paired", "tables")

    def __init__(self) -> None:
        self.orders: list[tuple[int, ...]] = []  # each game's bots in finish order, by number (StageCounts')
        self.direct: dict[tuple[str, str], list[int]] = {}  # games both sat in: games, above, difference
        # Only a gauntlet's candidates have them (most deals never do; thousands of deals are kept).
        self.paired: dict[tuple[str, str], list[int]] | None = None  # games, above, ties, difference
        self.tables: dict[tuple[int, tuple[str | None, ...]], dict[str, int]] | None = None  # (seat, others) -> place

    def contribution(self, pair: tuple[str, str]) -> Contribution | None:
        """The deal's outcome for ``pair``: of the games both sat in, else of their paired games, else None."""
        direct = self.direct.get(pair)
        if direct is not None:
            return (direct[0], direct[1], 0, direct[2])
        paired = self.paired.get(pair) if self.paired else None
        return None if paired is None else (paired[0], paired[1], paired[2], paired[3])

    def add(self, game: GameRecord, candidates: set[str]) -> dict[tuple[str, str], Contribution | None]:
        """Take one more game of the deal; return the pairs whose outcome it changes, each with its outcome before."""
        places = game.places()
        size = len(game.seats)
        unit = GRID // (size - 1)
        before: dict[tuple[str, str], Contribution | None] = {}
        for seat, name in enumerate(game.seats):
            for other_seat in range(seat + 1, size):
                other = game.seats[other_seat]
                first, second = (seat, other_seat) if name < other else (other_seat, seat)
                pair = (game.seats[first], game.seats[second])
                before.setdefault(pair, self.contribution(pair))
                totals = self.direct.setdefault(pair, [0, 0, 0])
                totals[0] += 1
                totals[1] += int(places[first] < places[second])
                totals[2] += (places[second] - places[first]) * unit
        # Candidates who never sit together are compared game against game: the same seat, the same opponents.
        here = [seat for seat, name in enumerate(game.seats) if name in candidates]
        if len(here) == 1:
            seat = here[0]
            bot = game.seats[seat]
            others = tuple(name if position != seat else None for position, name in enumerate(game.seats))
            self.tables = self.tables or {}
            self.paired = self.paired or {}
            table = self.tables.setdefault((seat, others), {})
            for other, other_place in table.items():
                if other == bot:
                    continue
                first_place, second_place = (places[seat], other_place) if bot < other else (other_place, places[seat])
                pair = (bot, other) if bot < other else (other, bot)
                before.setdefault(pair, self.contribution(pair))
                totals = self.paired.setdefault(pair, [0, 0, 0, 0])
                totals[0] += 1
                totals[1] += int(first_place < second_place)
                totals[2] += int(first_place == second_place)
                totals[3] += (second_place - first_place) * unit
            table[bot] = places[seat]
        return before


class _PairTotals:
    """Each pair's sums over deals, as :class:`referee.records.stats.PairTally` keeps them, but whole numbers: a deal's
    outcome can be taken back exactly when more of its games come."""

    def __init__(self) -> None:
        self.sums: dict[tuple[str, str], list[int]] = {}

    def replace(self, pair: tuple[str, str], old: Contribution | None, new: Contribution | None) -> None:
        sums = self.sums.setdefault(pair, [0] * 10)
        for sign, outcome in ((-1, old), (1, new)):
            if outcome is None:
                continue
            games, above, ties, difference = outcome
            points = 2 * above + ties  # twice the points: a tie counts half
            for position, value in enumerate(
                (1, games, above, ties, games * games, points * points, points * games, difference,
                 difference * difference, difference * games)
            ):  # fmt: skip
                sums[position] += sign * value
        if sums[0] == 0:
            del self.sums[pair]

    def tally(self, pair: tuple[str, str]) -> PairTally:
        deals, games, above, ties, games_squared, points_squared, points_games, total, squared, cross = self.sums[pair]
        return PairTally.of_totals(
            deals,
            games,
            above,
            ties,
            (
                games_squared,
                points_squared / 4,
                points_games / 2,
                total / GRID,
                squared / GRID**2,
                cross / GRID,
            ),
        )


class _FoldedSeeds:
    """The seeds of the deals folded into the covariance: 8 bytes a deal, to know a game coming back to one."""

    def __init__(self) -> None:
        self._sorted = np.zeros(0, dtype=np.uint64)
        self._recent: set[int] = set()

    def add(self, seed: int) -> None:
        self._recent.add(seed % 2**64)
        if len(self._recent) > max(4096, len(self._sorted) // 8):  # merged as they grow: a sort per eighth
            self._sorted = np.union1d(self._sorted, np.fromiter(self._recent, dtype=np.uint64))
            self._recent.clear()

    def __contains__(self, seed: int) -> bool:
        seed %= 2**64
        if seed in self._recent:
            return True
        where = int(np.searchsorted(self._sorted, np.uint64(seed)))
        return where < len(self._sorted) and int(self._sorted[where]) == seed


class Tally:
    """The standings of the games added so far (:meth:`add`), made at any time (:meth:`standings`).

    ``bots``: the league's bots (a record naming another is an error);
    ``disqualified``: bots whose games are left out; ``candidates``: a duel's
    or gauntlet's, ranked apart (records naming theirs add to them);
    ``luck_of``: each game's luck by seat, for the mean score less the luck;
    ``window``: the deals kept whole (None: every one, for records given in
    any order); ``recall``: where a deal's earlier games are found again once
    it has left the window; ``history``: fit the strengths after every
    :func:`history_counts` games too, at most that many points (0: none), for the chart of strength over time.
    """

    def __init__(
        self,
        bots: Sequence[str] | None = None,
        *,
        disqualified: frozenset[str] = frozenset(),
        candidates: Sequence[str] = (),
        luck_of: LuckOf | None = None,
        window: int | None = None,
        recall: Recall | None = None,
        history: int = 0,
    ) -> None:
        if window is not None and recall is None:
            raise ValueError("a tally that lets deals leave its window needs a recall to find their games again")
        self.league_bots = check_bots(bots) if bots is not None else None
        self.disqualified = disqualified
        self.bots: dict[str, _Bot] = {name: _Bot() for name in self.league_bots or ()}
        self.bots.update(
            (name, _Bot()) for name in disqualified if self.league_bots is None or name in self.league_bots
        )
        self.candidates = set(candidates)
        self.luck_of = luck_of
        self.window_size = window
        self.recall = recall
        self.counted = 0
        self.left_out = 0
        self.void: list[tuple[int, str, str]] = []  # index, game id, why
        self._indices: dict[int, str] | bytearray = {} if window is None else bytearray()
        self._stages = StageCounts()
        self._pairs = _PairTotals()
        self._window: OrderedDict[Deal, _Deal] = OrderedDict()
        self._waiting: dict[Deal, _Deal] = {}  # left the window, their scores not yet added
        self._folded = 0  # deals whose scores are added
        self._folded_seeds = _FoldedSeeds()
        self._meat = np.zeros((0, 0))  # sum over folded deals of score x score, by bot number
        self._score_sum = np.zeros(0)
        self._theta: np.ndarray = np.zeros(0)  # the last fit, by bot number
        self._luck: dict[str, dict[Deal, list[float]]] = {}  # bot -> deal -> games, score, score less luck
        self._history = history
        self._checkpoints: dict[int, dict[str, float]] = {}

    # ----- counting ----------------------------------------------------------------------------------------

    def take_bots(self, bots: Sequence[str] | None) -> bool:
        """Take the league's bots as they are now (a season's new versions get rows); False when a bot it had is
        no longer among them: what was counted must be read again, to name the record that seats it."""
        if bots is None or self.league_bots is None:
            return bots is None and self.league_bots is None
        names = check_bots(bots)
        if not self.league_bots <= names:
            return False
        for name in names - self.league_bots:
            self.bots.setdefault(name, _Bot())
        self.league_bots = names
        return True

    def add(self, data: Mapping[str, Any] | GameRecord) -> None:
        """Count one game's record (a ``games.jsonl`` object or a :class:`GameRecord`)."""
        game = GameRecord.of(data, latencies=True)
        if self.disqualified.intersection(game.seats):
            self.left_out += 1
            return
        for seat, name in enumerate(game.seats):
            if self.league_bots is not None and name not in self.league_bots:
                raise RecordError(
                    f"game record index {game.index} (game_id {game.game_id!r}): seats[{seat}] is {name!r}, which "
                    f"is not one of the league's bots {sorted(self.league_bots)}"
                )
        self._check_index(game)
        for seat, name in enumerate(game.seats):
            bot = self.bots.get(name) or self.bots.setdefault(name, _Bot())
            for kind, count in (game.faults[seat] if game.faults else {}).items():
                bot.faults[kind] += count
            if game.latency_bins is not None:
                bot.latency.add_bins(game.latency_bins[seat])
        if game.void:  # it ranks nobody and counts no game; its faults still show who failed
            self.void.append((game.index, game.game_id, game.void))
            return
        if game.candidate:
            self.candidates.add(game.candidate)
        self._count(game.without_latencies())

    def _check_index(self, game: GameRecord) -> None:
        index = game.index
        if isinstance(self._indices, dict):
            first: str | None = self._indices.setdefault(index, game.game_id)
            if first is game.game_id:
                return
        else:
            byte, bit = divmod(index, 8)
            if byte >= len(self._indices):
                self._indices.extend(bytes(byte + 1 - len(self._indices) + len(self._indices) // 2))
            if not self._indices[byte] >> bit & 1:
                self._indices[byte] |= 1 << bit
                return
            first = self.recall.index(index) if self.recall is not None else None
        raise RecordError(
            f"two game records have index {index} (game_ids {first!r} and {game.game_id!r}); each scheduled game "
            "must be recorded once"
        )

    def _count(self, game: GameRecord) -> None:
        places = game.places()
        size = len(game.seats)
        luck = self.luck_of(game) if self.luck_of is not None else None
        for seat, name in enumerate(game.seats):
            bot = self.bots[name]
            place = places[seat]
            bot.games += 1
            bot.wins += int(place == 1)
            bot.last += int(place == size)
            bot.placement_total += place
            bot.score += (size - place) * (GRID // (size - 1))
            bot.forfeits += int(seat in game.forfeits)
            if luck is not None:
                score = (size - place) / (size - 1)
                deal = self._luck.setdefault(name, {}).setdefault(game.deal, [0, 0.0, 0.0])
                deal[0] += 1
                deal[1] += score
                deal[2] += score - luck[seat]
        order = tuple(self._stages.bot_id(name) for name in game.bots_in_finish_order())
        self._stages.add(order)
        self._add_to_deal(game, order)
        self.counted += 1
        if self._history and self.counted % history_step(self.counted, self._history) == 0:
            self._checkpoint()

    def _add_to_deal(self, game: GameRecord, order: tuple[int, ...]) -> None:
        key = game.deal
        deal = self._window.pop(key, None) or self._waiting.pop(key, None) or self._recalled(key, game.game_id)
        self._window[key] = deal  # the newest, last
        deal.orders.append(order)
        for pair, before in deal.add(game, self.candidates).items():
            self._pairs.replace(pair, before, deal.contribution(pair))
        while self.window_size is not None and len(self._window) > self.window_size:
            left, kept = self._window.popitem(last=False)
            self._waiting[left] = kept
            if len(self._waiting) >= FOLD_DEALS:
                self._fold(self._fit())

    def _recalled(self, key: Deal, adding: str) -> _Deal:
        """A deal not kept: new, or folded (its earlier games found again, its score taken back out); ``adding`` is
        the game about to join it."""
        deal = _Deal()
        if key[0] != "seed" or key[1] not in self._folded_seeds or self.recall is None:
            return deal
        earlier = [
            game
            for game in self.recall.deal(key)
            if not game.void and not self.disqualified.intersection(game.seats) and game.game_id != adding
        ]
        for game in earlier:
            deal.add(game, self.candidates)
            deal.orders.append(tuple(self._stages.bot_ids[name] for name in game.bots_in_finish_order()))
        if earlier:  # its score was added at the fit of its time: taken out at this one's, as near as can be
            scores = self._scores([deal], self._theta_now())
            self._add_meat(scores, sign=-1)
        return deal

    # ----- the fit -----------------------------------------------------------------------------------------

    def _theta_now(self) -> np.ndarray:
        """The last fit, for every bot counted so far (a bot new since: 0, the field's mean)."""
        bots = len(self._stages.bot_ids)
        theta = np.zeros(bots)
        theta[: len(self._theta)] = self._theta[:bots]
        return theta

    def _fit(self) -> np.ndarray:
        """The fit of every game counted, from the last fit; kept as the start of the next."""
        bots = list(range(len(self._stages.bot_ids)))
        members, counts, wins = self._stages.arrays(bots)
        self._theta = fit_stages(members, counts, wins, start=self._theta_now())
        return self._theta

    def _checkpoint(self) -> None:
        theta = self._fit()
        self._fold(theta)
        names = list(self._stages.bot_ids)
        self._checkpoints[self.counted] = {
            name: float(theta[number] * ELO_PER_NEPER) for number, name in enumerate(names)
        }
        step = history_step(self.counted, self._history)
        for count in [count for count in self._checkpoints if count % step]:
            del self._checkpoints[count]

    def _scores(self, deals: Sequence[_Deal], theta: np.ndarray) -> np.ndarray:
        """Each deal's score at ``theta`` (deals x bots), from its games' finish orders."""
        bots = len(theta)
        width = max((len(order) for deal in deals for order in deal.orders), default=0)
        orders = np.array(
            [order + (bots,) * (width - len(order)) for deal in deals for order in deal.orders], dtype=np.int64
        ).reshape(-1, width)
        deal_of_game = np.repeat(np.arange(len(deals)), [len(deal.orders) for deal in deals])
        return deal_scores(orders, deal_of_game, len(deals), theta)

    def _grow_meat(self, bots: int) -> None:
        """The folded deals' sums as wide as ``bots`` (a new version's row and column: zeros)."""
        if len(self._score_sum) < bots:
            grown = np.zeros((bots, bots))
            grown[: len(self._meat), : len(self._meat)] = self._meat
            self._meat = grown
            self._score_sum = np.concatenate([self._score_sum, np.zeros(bots - len(self._score_sum))])

    def _add_meat(self, scores: np.ndarray, sign: int = 1) -> None:
        bots = scores.shape[1]
        self._grow_meat(bots)
        self._meat[:bots, :bots] += sign * (scores.T @ scores)
        self._score_sum[:bots] += sign * scores.sum(axis=0)
        self._folded += sign * len(scores)

    def _fold(self, theta: np.ndarray) -> None:
        """Add the scores of the deals out of the window at ``theta``: they are not scored again."""
        if not self._waiting:
            return
        self._add_meat(self._scores(list(self._waiting.values()), theta))
        for key in self._waiting:
            if key[0] == "seed":
                self._folded_seeds.add(key[1])
        self._waiting.clear()

    @property
    def deals(self) -> int:
        """Deals of the games counted: the ranking's samples."""
        return len(self._window) + len(self._waiting) + self._folded

    @property
    def bootstraps(self) -> bool:
        """Whether the rank ranges are the bootstrap's: every deal kept, and at most :data:`BOOTSTRAP_DEALS`."""
        return self.deals <= BOOTSTRAP_DEALS and not self._waiting and not self._folded

    def _ranking(self, ranked: list[str], groups: list[list[str]] | None, seed: int, resamples: int) -> Ranking:
        """The bootstrap's ranking while every deal is kept and there are few; past that, the covariance's."""
        if self.bootstraps:
            names = list(self._stages.bot_ids)
            games = [
                (key, [names[bot] for bot in order]) for key, deal in self._window.items() for order in deal.orders
            ]
            return rank_bots(games, ranked, seed=seed, groups=groups, resamples=resamples)
        theta = self._fit()
        self._fold(theta)
        names = list(self._stages.bot_ids)
        bots = len(names)
        window = self._scores(list(self._window.values()), theta)
        self._grow_meat(bots)
        meat = self._meat[:bots, :bots] + window.T @ window
        total = self._score_sum[:bots] + window.sum(axis=0)
        deals = self.deals
        meat = (meat - np.outer(total, total) / deals) * deals / max(deals - 1, 1)
        members, counts, _ = self._stages.arrays(list(range(bots)))
        covariance = sandwich(information(members, counts, theta), meat)
        unbounded = {
            name: (self.bots[name].last == self.bots[name].games, self.bots[name].wins == self.bots[name].games)
            for name in names
        }
        return rank_fitted(
            dict(zip(names, theta.tolist(), strict=True)),
            covariance,
            deals if resamples else 1,  # no resamples asked for: no ranges, as the bootstrap gives none
            ranked,
            unbounded,
            groups=groups,
        )

    # ----- the standings -----------------------------------------------------------------------------------

    def standings(
        self,
        *,
        seed: int,
        resamples: int = RESAMPLES,
        entries: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Standings:
        """The standings of the games counted so far; ``seed`` seeds the bootstrap (``bootstrap_seed``)."""
        entries = entries or {}
        names = sorted(self.bots)
        candidate_names = tuple(name for name in names if name in self.candidates)
        ranked = [name for name in names if name not in self.disqualified]
        field_names = [name for name in ranked if name not in candidate_names]
        groups = [[name for name in candidate_names if name in ranked], field_names] if candidate_names else None
        bootstrap = self.bootstraps
        ranking = self._ranking(ranked, groups, seed, resamples)
        unranked = RankedBot("", None, None, None, len(ranked) + 1, (len(ranked) + 1, len(ranked) + 1))
        rows = [
            self._row(name, ranking.bots.get(name, unranked), name in candidate_names, entries.get(name, {}))
            for name in names
        ]
        rows.sort(key=lambda row: (row.disqualified, not row.candidate, row.rank, row.bot))
        return Standings(
            rows=rows,
            head_to_head=self._head_to_head(rows),
            games=self.counted,
            void_games=[(game_id, why) for _, game_id, why in sorted(self.void)],
            candidates=candidate_names,
            resamples=resamples if bootstrap else 0,
            left_out=self.left_out,
            versions=version_lines(entries, names),
            deals=self.deals,
            covariance="bootstrap" if bootstrap else "sandwich",
            history=self._history_of(rows) if self._history else None,
        )

    def _row(self, name: str, ranked: RankedBot, candidate: bool, entry: Mapping[str, Any]) -> BotStanding:
        tally = self.bots[name]
        games = tally.games
        luck = self._luck.get(name, {}) if self.luck_of is not None else None
        deals = [luck[key] for key in sorted(luck)] if luck is not None else []
        return BotStanding(
            rank=ranked.rank,
            rank_range=ranked.rank_range,
            bot=name,
            strength=ranked.strength,
            strength_low=ranked.strength_low,
            strength_high=ranked.strength_high,
            games=games,
            wins=tally.wins,
            win_rate=tally.wins / games if games else None,
            average_placement=tally.placement_total / games if games else None,
            score=float(Fraction(tally.score, GRID)),
            mean_score=float(Fraction(tally.score, GRID * games)) if games else None,
            faults=dict(tally.faults),
            forfeits=tally.forfeits,
            decisions=tally.latency.count,
            median_ms=tally.latency.quantile(0.5),
            p99_ms=tally.latency.quantile(0.99),
            candidate=candidate,
            status=str(entry.get("status", "active")),
            status_reason=str(entry.get("reason", "")),
            score_interval=mean_per_game([(int(games), raw) for games, raw, _ in deals]) if luck is not None else None,
            adjusted_score=mean_per_game([(int(games), less) for games, _, less in deals])
            if luck is not None
            else None,
        )

    def _head_to_head(self, rows: list[BotStanding]) -> dict[str, dict[str, Any]]:
        unpaired = PairTally().comparison()
        compared = {pair: self._pairs.tally(pair).comparison() for pair in self._pairs.sums}

        def comparison(bot: str, other: str) -> Any:
            if bot < other:
                return compared.get((bot, other), unpaired)
            return compared.get((other, bot), unpaired).swapped()

        return {
            row.bot: {other.bot: comparison(row.bot, other.bot) for other in rows if other is not row} for row in rows
        }

    def _history_of(self, rows: list[BotStanding]) -> History:
        """The fits after each of :func:`history_counts`, the last the standings' own strengths."""
        counts = history_counts(self.counted, self._history)
        now = {row.bot: row.strength for row in rows if row.strength is not None}
        return History(
            tuple(counts), tuple(now if count == self.counted else self._checkpoints[count] for count in counts)
        )
