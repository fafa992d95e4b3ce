"""The standings as a table: each bot's row, the league's figures, decision times in bounded histograms."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.common.errors import RefereeError
from referee.protocol.standing import DISQUALIFIED
from referee.records.ranking import RESAMPLES
from referee.records.results import LATENCY_MAX_MS, LATENCY_MIN_MS, bin_midpoint, latency_bin
from referee.records.stats import Comparison, Interval, StatisticsError

if TYPE_CHECKING:
    from referee.records.results import GameRecord

# A value inside [LATENCY_MIN_MS, LATENCY_MAX_MS] is reported as its bin's geometric
# midpoint, at most a factor sqrt(1.01) away: within 0.5% of the exact value.
LATENCY_RELATIVE_ERROR = 0.005

__all__ = ["LATENCY_MAX_MS", "LATENCY_MIN_MS", "LATENCY_RELATIVE_ERROR"]


class UnknownBotError(RefereeError, ValueError):
    """A bot was named that the standings do not hold."""


class LatencyHistogram:
    """Decision times in fixed log-scale bins (:func:`referee.records.results.latency_bin`), only the bins used kept.

    Bins are 1% wide (each edge 1.01 times the last) from 0.01 ms to 100 s,
    1,620 bins in all, so a bot's memory stays bounded however long the
    league; two histograms merge by adding their counts, as a record's bins
    add to a bot's. A quantile is read by interpolating between the two
    nearest ranks, as ``statistics.quantiles(method="inclusive")`` and
    ``statistics.median`` do, with each ranked value taken as its bin's
    geometric midpoint: within 0.5% of the exact figure for values between
    0.01 ms and 100 s. Values outside that range are counted in the first
    or last bin.
    """

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()  # bin -> decisions
        self.count = 0

    def add(self, latency_ms: float) -> None:
        """Count one decision time, in milliseconds."""
        self.counts[latency_bin(latency_ms)] += 1
        self.count += 1

    def add_bins(self, bins: Sequence[int]) -> None:
        """Count decisions by their bins (a record's)."""
        self.counts.update(bins)  # counted in C: a league's every decision passes here
        self.count += len(bins)

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
        for bin_index in sorted(self.counts):
            seen += self.counts[bin_index]
            if seen > rank:
                return bin_midpoint(bin_index)
        raise AssertionError(f"rank {rank} beyond the {self.count} times counted")


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
    # raw and with each game's luck taken out (referee.records.luck), at stats.CONFIDENCE. None otherwise.
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
class History:
    """Each bot's strength as counted games accumulated: the fit after each of ``counts`` games, Elo by bot."""

    counts: tuple[int, ...] = ()
    strengths: tuple[Mapping[str, float], ...] = ()


@dataclass(frozen=True)
class ShownGames:
    """What a page shows of the games a folder's standings were read from, in bounded memory.

    ``count`` games (void and left-out ones too), the ``newest`` of them in
    the order they were counted, when the first and the last began, the
    first (its log gives an old league's settings) and each bot's newest
    games with a fault of its.
    """

    count: int = 0
    newest: tuple[GameRecord, ...] = ()
    first: GameRecord | None = None
    first_started: str | None = None
    last_started: str | None = None
    with_faults: Mapping[str, tuple[GameRecord, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Standings:
    """The league table: rows in rank order (candidates first), and each bot compared with each other."""

    rows: list[BotStanding]
    head_to_head: dict[str, dict[str, Comparison]]  # [bot][opponent]
    games: int  # game records counted (void games excepted)
    void_games: list[tuple[str, str]] = field(default_factory=list)  # (game_id, why): they count for nobody
    candidates: tuple[str, ...] = ()  # a gauntlet's or duel's candidates, ranked apart from the field
    resamples: int = RESAMPLES  # of the bootstrap behind the rank ranges; 0 past it (covariance "sandwich")
    left_out: int = 0  # game records left out: each seats a disqualified bot
    versions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (author, bots oldest first): lines of two or more
    deals: int = 0  # deals of the counted games: the ranking's samples
    covariance: str = "bootstrap"  # of the strengths: "bootstrap" (over deals) or "sandwich" (past its size)
    # Read from a folder (folder_standings): the strength over time, and what its page shows of the games. They
    # depend on the order the games were counted in, which the figures above do not.
    history: History | None = field(default=None, compare=False, repr=False)
    shown: ShownGames | None = field(default=None, compare=False, repr=False)

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


def version_lines(
    entries: Mapping[str, Mapping[str, Any]], bots: Sequence[str]
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


def check_bots(bots: Sequence[str]) -> set[str]:
    """The league's bot list as a set, each name checked: a :class:`TypeError` or :class:`ValueError` names the bad one."""
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
