"""League standings from finished games: results, faults, decision times, ratings and head-to-head.

The input is the runner's ``games.jsonl`` records, one per finished game.
Records may arrive in any order (parallel workers append them as they
finish), so every figure is computed from the records sorted by their
``"index"``, the game's place in the schedule: the same records in any order
give identical standings.

Ratings come from openskill's Plackett-Luce model (default prior mu 25,
sigma 25/3), one update per game in index order, each bot its own team,
ranked by its placement. Bots are ranked by the conservative estimate
``mu - 3 * sigma``, ties broken by mean score, then by name. Each rating
comes with its interval, and each pair of bots with a comparison over the
deals they shared (``referee.stats``; docs/statistics.md).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from openskill.models import PlackettLuce

from referee.errors import RefereeError
from referee.faults import FaultKind
from referee.stats import Comparison, PairTally, StatisticsError, deal_outcomes, placement_score, rating_interval

FAULT_KINDS: tuple[str, ...] = tuple(kind.value for kind in FaultKind)

LATENCY_MIN_MS = 0.01
LATENCY_MAX_MS = 100_000.0
LATENCY_BIN_RATIO = 1.01
# A value inside [LATENCY_MIN_MS, LATENCY_MAX_MS] is reported as its bin's geometric
# midpoint, at most a factor sqrt(1.01) away: within 0.5% of the exact value.
LATENCY_RELATIVE_ERROR = 0.005
_LATENCY_BIN_COUNT = math.ceil(math.log(LATENCY_MAX_MS / LATENCY_MIN_MS) / math.log(LATENCY_BIN_RATIO))
_LOG_BIN_RATIO = math.log(LATENCY_BIN_RATIO)


class RecordError(RefereeError, ValueError):
    """A game record is not in the ``games.jsonl`` format, or does not fit the league."""


class UnknownBotError(RefereeError, ValueError):
    """A bot was named that the standings do not hold."""


class LatencyHistogram:
    """Decision times in fixed log-scale bins, so a bot's memory stays bounded however long the league.

    Bins are 1% wide (each edge 1.01 times the last) from 0.01 ms to 100 s,
    1,620 bins in all. A quantile is read by interpolating between the two
    nearest ranks, as ``statistics.quantiles(method="inclusive")`` and
    ``statistics.median`` do, with each ranked value taken as its bin's
    geometric midpoint: within 0.5% of the exact figure for values between
    0.01 ms and 100 s. Values outside that range are counted in the first
    or last bin.
    """

    def __init__(self) -> None:
        self.counts = [0] * _LATENCY_BIN_COUNT
        self.count = 0

    def add(self, latency_ms: float) -> None:
        """Count one decision time, in milliseconds."""
        self.counts[_bin_of(latency_ms)] += 1
        self.count += 1

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0 to 1) of the times counted, or None when there are none."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile {q!r} is outside 0..1")
        if self.count == 0:
            return None
        position = q * (self.count - 1)
        lower_rank = math.floor(position)
        upper_rank = min(lower_rank + 1, self.count - 1)
        lower = self._value_at_rank(lower_rank)
        upper = self._value_at_rank(upper_rank)
        return lower + (position - lower_rank) * (upper - lower)

    def _value_at_rank(self, rank: int) -> float:
        """The midpoint of the bin holding the ``rank``-th smallest time (0-based)."""
        seen = 0
        for bin_index, bin_count in enumerate(self.counts):
            seen += bin_count
            if seen > rank:
                return LATENCY_MIN_MS * LATENCY_BIN_RATIO ** (bin_index + 0.5)
        raise AssertionError(f"rank {rank} beyond the {self.count} times counted")


def _bin_of(latency_ms: float) -> int:
    if not latency_ms > LATENCY_MIN_MS:  # also catches NaN
        return 0
    bin_index = int(math.log(latency_ms / LATENCY_MIN_MS) / _LOG_BIN_RATIO)
    return min(bin_index, _LATENCY_BIN_COUNT - 1)


@dataclass(frozen=True)
class BotStanding:
    """One bot's line on the leaderboard. Figures that need a game (or a decision) are None without one."""

    rank: int  # 1 is top
    bot: str
    mu: float
    sigma: float
    mu_low: float  # mu_low..mu_high: the interval of mu at stats.CONFIDENCE (mu -/+ 1.96 sigma)
    mu_high: float
    conservative: float  # mu - 3 * sigma: the rating the ranking uses
    games: int
    wins: int  # games finished first
    win_rate: float | None
    average_placement: float | None  # 1 is first
    score: float  # sum over games of (n - place) / (n - 1): first 1, last 0
    mean_score: float | None
    faults: dict[str, int]  # every kind in FAULT_KINDS, zeros included
    forfeits: int  # games the bot forfeited
    decisions: int  # decision times counted
    median_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class Standings:
    """The league table: rows in rank order, and each bot compared with each other (``[bot][opponent]``)."""

    rows: list[BotStanding]
    head_to_head: dict[str, dict[str, Comparison]]
    games: int  # game records counted (void games excepted)
    void_games: list[tuple[str, str]] = field(default_factory=list)  # (game_id, why): they count for nobody

    def comparison(self, bot: str, other: str) -> Comparison:
        """``bot`` against ``other`` over the deals they shared."""
        for name in (bot, other):
            if name not in self.head_to_head:
                raise UnknownBotError(
                    f"no bot named {name!r} in these results; the bots are {', '.join(sorted(self.head_to_head))}"
                )
        if bot == other:
            raise StatisticsError(f"cannot compare bot {bot!r} with itself; name two different bots")
        return self.head_to_head[bot][other]


@dataclass(frozen=True)
class _GameSummary:
    """What standings need from one record, without the per-decision times."""

    index: int
    game_id: str
    deal: tuple  # the games of one deal share their luck: ("seed", seed), or ("game", index) without a seed
    seats: tuple[str, ...]
    placements: tuple[int, ...]
    faults: tuple[Mapping[str, int], ...]
    forfeit_seats: frozenset[int]
    void_reason: str | None = None  # set for a game that counts for nobody


@dataclass
class _Tally:
    games: int = 0
    wins: int = 0
    placement_total: int = 0
    score: Fraction = Fraction(0)  # exact, so the figure cannot drift with summation order
    forfeits: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)


def compute_standings(records: Iterable[Mapping], bots: Sequence[str] | None = None) -> Standings:
    """Compute the standings from ``games.jsonl`` records, in any order.

    ``bots`` is the league's bot list, so that a bot without a finished game
    still gets a row; a record naming another bot is an error. Without it,
    the bots are those the records name.
    """
    league_bots = _check_bots(bots) if bots is not None else None
    tallies: dict[str, _Tally] = {name: _Tally() for name in league_bots or ()}
    summaries: list[_GameSummary] = []
    for record in records:
        summary = _summarise(record)
        for seat, name in enumerate(summary.seats):
            if league_bots is not None and name not in league_bots:
                raise RecordError(
                    f"{_where(record)}: seats[{seat}] is {name!r}, which is not one of the league's bots "
                    f"{sorted(league_bots)}"
                )
            tallies.setdefault(name, _Tally())
        # Times are folded into bounded histograms now, so only the small summaries are kept.
        for name, latencies in zip(summary.seats, _latencies(record, len(summary.seats)), strict=True):
            for latency_ms in latencies:
                tallies[name].latency.add(latency_ms)
        summaries.append(summary)

    summaries.sort(key=lambda summary: summary.index)
    for earlier, later in itertools.pairwise(summaries):
        if earlier.index == later.index:
            raise RecordError(
                f"two game records have index {later.index} (game_ids {earlier.game_id!r} and "
                f"{later.game_id!r}); each scheduled game must be recorded once"
            )

    names = sorted(tallies)
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}

    void_games = [(summary.game_id, summary.void_reason) for summary in summaries if summary.void_reason]
    for summary in summaries:
        if summary.void_reason:
            # A void game rates nobody and counts no game; its faults still show who failed.
            for seat, name in enumerate(summary.seats):
                for kind, count in summary.faults[seat].items():
                    tallies[name].faults[kind] += count
            continue
        table_size = len(summary.seats)
        place_of_seat = {seat: place for place, seat in enumerate(summary.placements, start=1)}
        for seat, name in enumerate(summary.seats):
            tally = tallies[name]
            place = place_of_seat[seat]
            tally.games += 1
            tally.wins += int(place == 1)
            tally.placement_total += place
            tally.score += placement_score(place, table_size)
            tally.forfeits += int(seat in summary.forfeit_seats)
            for kind, count in summary.faults[seat].items():
                tally.faults[kind] += count
        teams = [[ratings[name]] for name in summary.seats]
        ranks = [place_of_seat[seat] for seat in range(table_size)]
        for name, (rated,) in zip(summary.seats, model.rate(teams, ranks=ranks), strict=True):
            ratings[name] = rated

    rows = [_row(name, tallies[name], ratings[name].mu, ratings[name].sigma) for name in names]
    rows.sort(key=lambda row: (-row.conservative, -(row.mean_score if row.mean_score is not None else -1.0), row.bot))
    ranked = [replace(row, rank=rank) for rank, row in enumerate(rows, start=1)]
    counted = [summary for summary in summaries if not summary.void_reason]
    return Standings(
        rows=ranked, head_to_head=_head_to_head(counted, ranked), games=len(counted), void_games=void_games
    )


def _head_to_head(summaries: list[_GameSummary], ranked: list[BotStanding]) -> dict[str, dict[str, Comparison]]:
    """Every ordered pair of bots compared over the deals they shared, deals in order of their first game."""
    deals: dict[tuple, list[_GameSummary]] = {}
    for summary in summaries:
        deals.setdefault(summary.deal, []).append(summary)
    pairs: dict[tuple[str, str], PairTally] = {}
    for games in deals.values():
        outcomes = deal_outcomes((game.seats, game.placements) for game in games)
        for pair in sorted(outcomes):
            pairs.setdefault(pair, PairTally()).add(outcomes[pair])
    unpaired = PairTally().comparison()
    compared = {pair: tally.comparison() for pair, tally in pairs.items()}

    def comparison(bot: str, other: str) -> Comparison:
        if bot < other:
            return compared.get((bot, other), unpaired)
        return compared.get((other, bot), unpaired).swapped()

    return {
        row.bot: {other.bot: comparison(row.bot, other.bot) for other in ranked if other is not row} for row in ranked
    }


def _check_bots(bots: Sequence[str]) -> set[str]:
    if isinstance(bots, str):
        raise TypeError(f"bots must be a sequence of bot names, not the string {bots!r}")
    seen: set[str] = set()
    for position, name in enumerate(bots):
        if not isinstance(name, str):
            raise TypeError(f"bots[{position}] is {name!r}; bot names are strings")
        if name in seen:
            raise ValueError(f"bots[{position}] repeats the name {name!r}; each bot is named once")
        seen.add(name)
    return seen


def _row(name: str, tally: _Tally, mu: float, sigma: float) -> BotStanding:
    games = tally.games
    interval = rating_interval(mu, sigma)
    return BotStanding(
        rank=0,
        bot=name,
        mu=mu,
        sigma=sigma,
        mu_low=interval.low,
        mu_high=interval.high,
        conservative=mu - 3 * sigma,
        games=games,
        wins=tally.wins,
        win_rate=tally.wins / games if games else None,
        average_placement=tally.placement_total / games if games else None,
        score=float(tally.score),
        mean_score=float(tally.score / games) if games else None,
        faults=dict(tally.faults),
        forfeits=tally.forfeits,
        decisions=tally.latency.count,
        median_ms=tally.latency.quantile(0.5),
        p99_ms=tally.latency.quantile(0.99),
    )


def _where(record: Mapping) -> str:
    return f"game record index {record.get('index')!r} (game_id {record.get('game_id')!r})"


def _summarise(record: Mapping) -> _GameSummary:
    """Check one record's shape and keep what the standings need."""
    if not isinstance(record, Mapping):
        raise RecordError(f"a game record must be a JSON object, not {type(record).__name__}: {record!r:.80}")
    where = _where(record)
    index = record.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise RecordError(f"{where}: index must be a whole number 0 or more, the game's place in the schedule")
    seats = record.get("seats")
    if not isinstance(seats, list) or len(seats) < 2 or not all(isinstance(name, str) for name in seats):
        raise RecordError(f"{where}: seats is {seats!r}; expected a list of two or more bot names")
    if len(set(seats)) != len(seats):
        raise RecordError(f"{where}: seats {seats!r} name a bot twice; a bot plays one seat per game")
    table_size = len(seats)
    # Seats in finishing order; files written before it had its name hold it as "placements".
    order_key = "finish_order" if "finish_order" in record else "placements"
    placements = record.get(order_key)
    if not isinstance(placements, list) or sorted(placements) != list(range(table_size)):
        raise RecordError(
            f"{where}: {order_key} is {placements!r}; expected every seat 0..{table_size - 1} once, first place first"
        )
    faults = record.get("faults", [{}] * table_size)
    if not isinstance(faults, list) or len(faults) != table_size:
        raise RecordError(f"{where}: faults is {faults!r}; expected one object per seat ({table_size})")
    for seat, seat_faults in enumerate(faults):
        if not isinstance(seat_faults, Mapping):
            raise RecordError(f"{where}: faults[{seat}] is {seat_faults!r}; expected an object of kind -> count")
        for kind, count in seat_faults.items():
            if kind not in FAULT_KINDS:
                raise RecordError(f"{where}: faults[{seat}] has kind {kind!r}; the kinds are {', '.join(FAULT_KINDS)}")
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise RecordError(f"{where}: faults[{seat}][{kind!r}] is {count!r}; expected a count 0 or more")
    seed = record.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise RecordError(f"{where}: seed is {seed!r}; expected a whole number, the seed of the game's deal")
    forfeits = record.get("forfeits", {})
    if not isinstance(forfeits, Mapping):
        raise RecordError(f"{where}: forfeits is {forfeits!r}; expected an object of seat -> reason")
    forfeit_seats = set()
    for key in forfeits:
        seat = int(key) if isinstance(key, str) and key.isdecimal() else None
        if seat is None or seat >= table_size:
            raise RecordError(f"{where}: forfeits has seat {key!r}; expected a seat number '0'..'{table_size - 1}'")
        forfeit_seats.add(seat)
    void = record.get("void")
    if void is not None and not isinstance(void, str):
        raise RecordError(f"{where}: void is {void!r}; expected the reason the game does not count, or no field")
    return _GameSummary(
        void_reason=void or None,
        index=index,
        game_id=str(record.get("game_id", "")),
        deal=("game", index) if seed is None else ("seed", seed),
        seats=tuple(seats),
        placements=tuple(placements),
        faults=tuple(faults),
        forfeit_seats=frozenset(forfeit_seats),
    )


def _latencies(record: Mapping, table_size: int) -> list[list[float]]:
    timing = record.get("timing", {})
    latency_ms = timing.get("latency_ms") if isinstance(timing, Mapping) else None
    if latency_ms is None:
        return [[] for _ in range(table_size)]
    if not isinstance(latency_ms, list) or len(latency_ms) != table_size:
        raise RecordError(
            f"{_where(record)}: timing.latency_ms is {latency_ms!r:.80}; expected one list of times per seat ({table_size})"
        )
    for seat, times in enumerate(latency_ms):
        if not isinstance(times, list) or not all(
            isinstance(time, int | float) and not isinstance(time, bool) for time in times
        ):
            raise RecordError(f"{_where(record)}: timing.latency_ms[{seat}] must be a list of milliseconds")
    return latency_ms
