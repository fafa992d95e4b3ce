"""League standings from finished games: the ranking, results, faults, decision times and head-to-head.

The input is the league's game records (:class:`referee.results.GameRecord`,
or their ``games.jsonl`` objects), one per finished game. Records may
arrive in any order (parallel workers append them as they finish), so every
figure is computed from the records sorted by their ``index``, the game's
place in the schedule: the same records in any order give identical
standings, to the last digit.

The ranking is one Plackett-Luce fit of every counted game's finish order,
with rank ranges from a bootstrap over deals (:mod:`referee.ranking`). In a
gauntlet or a duel the candidates are ranked among themselves, the field
apart. Each pair of bots comes with a comparison over the deals they shared
(``referee.stats``; docs/statistics.md); two candidates of a gauntlet, who
never sit at one table, are compared on the same deals in the same seats.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from referee.errors import OutputError, RefereeError
from referee.luck import MODEL, LuckModel, game_luck
from referee.ranking import RESAMPLES, RankedBot, rank_bots
from referee.results import (
    FAULT_KINDS,
    LEAGUE_FILE,
    GameRecord,
    LeagueRecord,
    RecordError,
    read_league,
)
from referee.season import DISQUALIFIED
from referee.seeding import SeedStream
from referee.stats import (
    Comparison,
    DealOutcome,
    Interval,
    PairTally,
    StatisticsError,
    deal_outcomes,
    mean_per_game,
    placement_score,
)
from referee.visibility import Shown

LuckOf = Callable[[GameRecord], Sequence[float]]  # a game's luck, by seat (referee.luck)

__all__ = [
    "FAULT_KINDS",
    "BotStanding",
    "LatencyHistogram",
    "RecordError",
    "Standings",
    "UnknownBotError",
    "compute_standings",
    "folder_standings",
]

LATENCY_MIN_MS = 0.01
LATENCY_MAX_MS = 100_000.0
LATENCY_BIN_RATIO = 1.01
# A value inside [LATENCY_MIN_MS, LATENCY_MAX_MS] is reported as its bin's geometric
# midpoint, at most a factor sqrt(1.01) away: within 0.5% of the exact value.
LATENCY_RELATIVE_ERROR = 0.005
_LATENCY_BIN_COUNT = math.ceil(math.log(LATENCY_MAX_MS / LATENCY_MIN_MS) / math.log(LATENCY_BIN_RATIO))
_LOG_BIN_RATIO = math.log(LATENCY_BIN_RATIO)


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
                return LATENCY_MIN_MS * math.pow(LATENCY_BIN_RATIO, bin_index + 0.5)
        raise AssertionError(f"rank {rank} beyond the {self.count} times counted")


def _bin_of(latency_ms: float) -> int:
    if not latency_ms > LATENCY_MIN_MS:  # also catches NaN
        return 0
    bin_index = int(math.log(latency_ms / LATENCY_MIN_MS) / _LOG_BIN_RATIO)
    return min(bin_index, _LATENCY_BIN_COUNT - 1)


@dataclass(frozen=True)
class BotStanding:
    """One bot's line on the leaderboard. Figures that need a game (or a decision) are None without one."""

    rank: int  # competition ranking (1 is top) among the bots it is ranked with
    rank_range: tuple[int, int]  # the best and worst rank the games allow, at stats.CONFIDENCE
    bot: str
    strength: float | None  # Plackett-Luce strength, Elo relative to the field's mean
    strength_low: float | None  # strength_low..strength_high: its interval at stats.CONFIDENCE
    strength_high: float | None
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
    candidate: bool = False  # a gauntlet's or duel's candidate: ranked among the candidates
    status: str = "active"  # or "withdrawn" (plays no more; its games count) or "disqualified" (they count for none)
    status_reason: str = ""
    # With the luck measured (compute_standings's luck_of): the mean score per game with deals as the samples,
    # raw and with each game's luck taken out (referee.luck), at stats.CONFIDENCE. None otherwise.
    score_interval: Interval | None = None
    adjusted_score: Interval | None = None

    @property
    def disqualified(self) -> bool:
        return self.status == DISQUALIFIED

    @property
    def status_text(self) -> str:
        """``withdrawn``, ``disqualified: REASON``; empty for an active bot."""
        if self.status == "active":
            return ""
        return self.status + (f": {self.status_reason}" if self.status_reason else "")

    @property
    def rank_text(self) -> str:
        """The rank as a page shows it: ``2``, or ``1–3`` when the games leave its place open that far; ``—`` unranked."""
        if self.disqualified:
            return "\u2014"
        best, worst = self.rank_range
        return str(best) if best == worst else f"{best}\u2013{worst}"


@dataclass(frozen=True)
class Standings:
    """The league table: rows in rank order (candidates first), and each bot compared with each other."""

    rows: list[BotStanding]
    head_to_head: dict[str, dict[str, Comparison]]  # [bot][opponent]
    games: int  # game records counted (void games excepted)
    void_games: list[tuple[str, str]] = field(default_factory=list)  # (game_id, why): they count for nobody
    candidates: tuple[str, ...] = ()  # a gauntlet's or duel's candidates, ranked apart from the field
    resamples: int = RESAMPLES  # of the bootstrap behind the rank ranges
    left_out: int = 0  # game records left out: each seats a disqualified bot
    versions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (author, bots oldest first): lines of two or more

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


@dataclass
class _Tally:
    games: int = 0
    wins: int = 0
    placement_total: int = 0
    score: Fraction = Fraction(0)  # exact, so the figure cannot drift with summation order
    forfeits: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)


def bootstrap_seed(league_seed: int | None) -> int:
    """The seed of the rank ranges' bootstrap: drawn from the league's seed, so anyone can recompute them."""
    return SeedStream.derive(league_seed if league_seed is not None else 0, "standings", "bootstrap").next_u64()


def compute_standings(
    records: Iterable[Mapping[str, Any] | GameRecord],
    bots: Sequence[str] | None = None,
    *,
    candidates: Sequence[str] = (),
    league_seed: int | None = None,
    resamples: int = RESAMPLES,
    entries: Mapping[str, Mapping[str, str]] | None = None,
    luck_of: LuckOf | None = None,
) -> Standings:
    """Compute the standings from game records, in any order.

    ``luck_of`` (a game's luck by seat, :mod:`referee.luck`): each bot's
    mean score is also given with its interval, raw and with the luck taken out.

    ``entries`` are ``league.json``'s season fields by bot: every game a
    disqualified bot sat in is left out (it counts for no one, as if never
    played), and the bot is listed after the ranked bots, unranked.

    ``bots`` is the league's bot list, so that a bot without a finished game
    still gets a row; a record naming another bot is an error. Without it,
    the bots are those the records name. ``candidates`` (a duel's; a
    gauntlet's are also read from its records) are ranked among themselves,
    apart from the field. ``league_seed`` seeds the bootstrap of the rank
    ranges (:func:`bootstrap_seed`).
    """
    league_bots = _check_bots(bots) if bots is not None else None
    tallies: dict[str, _Tally] = {name: _Tally() for name in league_bots or ()}
    entries = entries or {}
    disqualified = {name for name, entry in entries.items() if entry.get("status") == DISQUALIFIED}
    tallies.update((name, _Tally()) for name in disqualified if league_bots is None or name in league_bots)
    games: list[GameRecord] = []
    left_out = 0
    for data in records:
        game = GameRecord.of(data, latencies=True)
        if disqualified.intersection(game.seats):
            left_out += 1
            continue
        for seat, name in enumerate(game.seats):
            if league_bots is not None and name not in league_bots:
                raise RecordError(
                    f"game record index {game.index} (game_id {game.game_id!r}): seats[{seat}] is {name!r}, which "
                    f"is not one of the league's bots {sorted(league_bots)}"
                )
            tallies.setdefault(name, _Tally())
        # Times are folded into bounded histograms now, so only the records without them are kept.
        for name, latencies in zip(game.seats, game.latency_ms or [() for _ in game.seats], strict=True):
            for latency_ms in latencies:
                tallies[name].latency.add(latency_ms)
        games.append(game.without_latencies() if game.latency_ms is not None else game)

    games.sort(key=lambda game: game.index)
    for earlier, later in itertools.pairwise(games):
        if earlier.index == later.index:
            raise RecordError(
                f"two game records have index {later.index} (game_ids {earlier.game_id!r} and "
                f"{later.game_id!r}); each scheduled game must be recorded once"
            )

    names = sorted(tallies)
    chosen = {*candidates, *(game.candidate for game in games if game.candidate)}
    candidate_names = tuple(name for name in names if name in chosen)
    void_games = [(game.game_id, game.void) for game in games if game.void]
    counted = [game for game in games if not game.void]
    by_deal: dict[str, dict[tuple[str, int], list[float]]] = {}  # bot -> deal -> games, score, score less luck
    for game in games:
        # A void game ranks nobody and counts no game; its faults still show who failed.
        places = game.places()
        luck = luck_of(game) if luck_of is not None and not game.void else None
        for seat, name in enumerate(game.seats):
            tally = tallies[name]
            for kind, count in (game.faults[seat] if game.faults else {}).items():
                tally.faults[kind] += count
            if game.void:
                continue
            place = places[seat]
            tally.games += 1
            tally.wins += int(place == 1)
            tally.placement_total += place
            score = placement_score(place, len(game.seats))
            tally.score += score
            tally.forfeits += int(seat in game.forfeits)
            if luck is not None:
                deal = by_deal.setdefault(name, {}).setdefault(game.deal, [0, 0.0, 0.0])
                deal[0] += 1
                deal[1] += float(score)
                deal[2] += float(score) - luck[seat]

    ranked = [name for name in names if name not in disqualified]
    field_names = [name for name in ranked if name not in candidate_names]
    ranking = rank_bots(
        [(game.deal, game.bots_in_finish_order()) for game in counted],
        ranked,
        seed=bootstrap_seed(league_seed),
        groups=[[name for name in candidate_names if name in ranked], field_names] if candidate_names else None,
        resamples=resamples,
    )
    unranked = RankedBot("", None, None, None, len(ranked) + 1, (len(ranked) + 1, len(ranked) + 1))
    rows = [
        _row(name, tallies[name], ranking.bots.get(name, unranked), name in candidate_names, entries.get(name, {}))
        for name in names
    ]
    if luck_of is not None:
        rows = [_with_luck(row, list(by_deal.get(row.bot, {}).values())) for row in rows]
    rows.sort(key=lambda row: (row.disqualified, not row.candidate, row.rank, row.bot))
    return Standings(
        rows=rows,
        head_to_head=_head_to_head(counted, rows, candidate_names),
        games=len(counted),
        void_games=void_games,
        candidates=candidate_names,
        resamples=resamples,
        left_out=left_out,
        versions=version_lines(entries, names),
    )


def version_lines(
    entries: Mapping[str, Mapping[str, str]], bots: Sequence[str]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each author's line of versions, oldest first, from the ``replaces`` of ``entries``: lines of two or more.

    A line's author is its bots' ``author`` where given, else its first version's name.
    """
    replaced_by = {entry["replaces"]: name for name, entry in entries.items() if entry.get("replaces") in bots}
    lines = []
    for first in bots:
        if first in replaced_by.values() or first not in replaced_by:
            continue  # a later version, or a bot without one
        line = [first]
        while line[-1] in replaced_by and replaced_by[line[-1]] not in line:
            line.append(replaced_by[line[-1]])
        author = next((entries[name]["author"] for name in line if entries.get(name, {}).get("author")), first)
        lines.append((author, tuple(line)))
    return tuple(sorted(lines))


def folder_standings(
    directory: Path, *, adjust_for_luck: bool = False, shown: Shown | None = None
) -> tuple[Standings, LeagueRecord]:
    """The standings of a league's output folder (its ``league.json`` and the games of ``games.jsonl`` that may be
    shown: ``shown``, else as now, :mod:`referee.visibility`), and its league record; with each bot's mean score
    less the luck too when asked, or when the league is a duel that adjusts for it."""
    directory = Path(directory)
    if not directory.is_dir():
        what = "it is a file" if directory.exists() else "no such folder"
        raise OutputError(f"{directory}: no {LEAGUE_FILE} here ({what}); give the output folder of a league run")
    league = read_league(directory)
    if league is None:
        raise OutputError(f"{directory}: no {LEAGUE_FILE} here; give the output folder of a league run")
    standings = compute_standings(
        (shown or Shown.read(directory)).games(directory),
        bots=league.bots,
        candidates=league.candidates,
        league_seed=league.seed,
        entries=league.entries,
        luck_of=folder_luck(directory) if adjust_for_luck or adjusts_for_luck(league) else None,
    )
    return standings, league


def adjusts_for_luck(league: LeagueRecord | None) -> bool:
    """Whether ``league`` (its ``league.json`` record) is a duel that tests on scores less the luck."""
    return league is not None and bool(league.format.get("adjust_for_luck"))


def _head_to_head(
    games: list[GameRecord], rows: list[BotStanding], candidates: Sequence[str]
) -> dict[str, dict[str, Comparison]]:
    """Every ordered pair of bots compared over the deals they shared, deals in order of their first game.

    Candidates that never share a table (a gauntlet's) are compared on
    paired games instead: on the same deal, in the same seat, against the
    same bots in the same seats (:func:`_paired_outcomes`).
    """
    deals: dict[tuple[str, int], list[GameRecord]] = {}
    for game in games:
        deals.setdefault(game.deal, []).append(game)
    pairs: dict[tuple[str, str], PairTally] = {}
    for deal_games in deals.values():
        outcomes = deal_outcomes((game.seats, game.finish_order) for game in deal_games)
        if len(candidates) > 1:
            for pair, outcome in _paired_outcomes(deal_games, candidates).items():
                outcomes.setdefault(pair, outcome)
        for pair in sorted(outcomes):
            pairs.setdefault(pair, PairTally()).add(outcomes[pair])
    unpaired = PairTally().comparison()
    compared = {pair: tally.comparison() for pair, tally in pairs.items()}

    def comparison(bot: str, other: str) -> Comparison:
        if bot < other:
            return compared.get((bot, other), unpaired)
        return compared.get((other, bot), unpaired).swapped()

    return {row.bot: {other.bot: comparison(row.bot, other.bot) for other in rows if other is not row} for row in rows}


def _paired_outcomes(games: list[GameRecord], candidates: Sequence[str]) -> dict[tuple[str, str], DealOutcome]:
    """Candidates of one deal compared game against game: the same seat, the same opponents in the same seats.

    Keyed ``(bot, other)``, ``bot`` first by name; a pair that sat at one
    table is left to :func:`referee.stats.deal_outcomes`.
    """
    chosen = set(candidates)
    # (seat, the other seats) -> candidate -> (place, size)
    tables: dict[tuple[int, tuple[str | None, ...]], dict[str, tuple[int, int]]] = {}
    for game in games:
        here = [seat for seat, name in enumerate(game.seats) if name in chosen]
        if len(here) != 1:
            continue
        seat = here[0]
        others = tuple(name if position != seat else None for position, name in enumerate(game.seats))
        tables.setdefault((seat, others), {})[game.seats[seat]] = (game.places()[seat], len(game.seats))
    totals: dict[tuple[str, str], tuple[int, int, int, float]] = {}  # pair -> games, above, ties, difference
    for results in tables.values():
        for bot, other in itertools.combinations(sorted(results), 2):
            (place, size), (other_place, _) = results[bot], results[other]
            games_so_far, above, ties, difference = totals.get((bot, other), (0, 0, 0, 0.0))
            totals[bot, other] = (
                games_so_far + 1,
                above + int(place < other_place),
                ties + int(place == other_place),
                difference + (other_place - place) / (size - 1),
            )
    return {
        pair: DealOutcome(games, above, difference, ties) for pair, (games, above, ties, difference) in totals.items()
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


def _row(name: str, tally: _Tally, ranked: RankedBot, candidate: bool, entry: Mapping[str, str]) -> BotStanding:
    games = tally.games
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
        score=float(tally.score),
        mean_score=float(tally.score / games) if games else None,
        faults=dict(tally.faults),
        forfeits=tally.forfeits,
        decisions=tally.latency.count,
        median_ms=tally.latency.quantile(0.5),
        p99_ms=tally.latency.quantile(0.99),
        candidate=candidate,
        status=str(entry.get("status", "active")),
        status_reason=str(entry.get("reason", "")),
    )


def _with_luck(row: BotStanding, deals: list[list[float]]) -> BotStanding:
    """``row`` with its mean score's interval, raw and less the luck, over ``deals`` (games, score, adjusted)."""
    return dataclasses.replace(
        row,
        score_interval=mean_per_game([(int(games), raw) for games, raw, _ in deals]),
        adjusted_score=mean_per_game([(int(games), adjusted) for games, _, adjusted in deals]),
    )


# ----- two bots compared with the luck taken out ---------------------------------------------------------------


@dataclass(frozen=True)
class LuckAdjusted:
    """Bot A against bot B over the deals they shared: the mean score difference per shared game, raw and with
    each game's luck taken out, both with deals as the samples (the same estimator, so their widths compare)."""

    games: int
    deals: int
    raw: Interval | None
    adjusted: Interval | None
    model: LuckModel

    @property
    def variance_ratio(self) -> float | None:
        """How many times fewer games the adjusted figure needs for the same width (the squared width ratio)."""
        if self.raw is None or self.adjusted is None or self.deals < 2:
            return None
        adjusted = self.adjusted.high - self.adjusted.low
        return ((self.raw.high - self.raw.low) / adjusted) ** 2 if adjusted else None


def luck_adjusted(
    records: Iterable[GameRecord],
    bot: str,
    other: str,
    luck_of: LuckOf,
    model: LuckModel = MODEL,
) -> LuckAdjusted:
    """``bot`` against ``other`` on the games they shared (void games left out), each game's luck given by
    ``luck_of`` (by seat): the score difference ``score(bot) - score(other)`` raw and less the luck's."""
    raw: dict[tuple[str, int], list[float]] = {}
    adjusted: dict[tuple[str, int], list[float]] = {}
    for record in records:
        if record.void or bot not in record.seats or other not in record.seats:
            continue
        luck = luck_of(record)
        places = record.places()
        size = len(record.seats)
        for seat, name in enumerate(record.seats):
            for other_seat, other_name in enumerate(record.seats):
                if name != bot or other_name != other:
                    continue
                difference = float(placement_score(places[seat], size) - placement_score(places[other_seat], size))
                for totals, value in ((raw, difference), (adjusted, difference - luck[seat] + luck[other_seat])):
                    entry = totals.setdefault(record.deal, [0, 0.0])
                    entry[0] += 1
                    entry[1] += value
    deals_raw = [(int(games), total) for games, total in raw.values()]
    deals_adjusted = [(int(games), total) for games, total in adjusted.values()]
    return LuckAdjusted(
        games=sum(games for games, _ in deals_raw),
        deals=len(deals_raw),
        raw=mean_per_game(deals_raw),
        adjusted=mean_per_game(deals_adjusted),
        model=model,
    )


def folder_luck(directory: Path) -> LuckOf:
    """Each game's luck, by seat, from its log in the league output folder ``directory``."""
    return lambda record: game_luck(directory, record.game_id)
