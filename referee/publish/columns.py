"""The leaderboard's columns, which the console, the Markdown leaderboard and the league's page share.

Each column is a header, whether it is aligned right, and its cell's text for a bot's row of the standings.
"""

from __future__ import annotations

from collections.abc import Callable

from referee.publish.text import format_interval, optional_text
from referee.records.standings import FAULT_KINDS, BotStanding, Standings
from referee.records.stats import Interval

Column = tuple[str, bool, Callable[[BotStanding], str]]


def _strength_interval(row: BotStanding) -> str:
    if row.strength_low is None or row.strength_high is None:
        return "-"
    interval = Interval(row.strength or 0.0, row.strength_low, row.strength_high)
    return format_interval(interval, "{:+.0f}").split(" ", 1)[1]


def _score_interval(interval: Interval | None) -> str:
    return "\u2014" if interval is None else format_interval(interval, "{:.3f}")


COLUMNS: list[Column] = [
    ("rank", True, lambda row: row.rank_text),
    ("bot", False, lambda row: row.bot + (f" ({row.status_text})" if row.status_text else "")),
    ("strength", True, lambda row: optional_text(row.strength, "{:+.0f}")),
    ("95%", True, _strength_interval),
    ("games", True, lambda row: str(row.games)),
    ("wins", True, lambda row: str(row.wins)),
    ("win rate", True, lambda row: optional_text(row.win_rate, "{:.1%}")),
    ("avg place", True, lambda row: optional_text(row.average_placement, "{:.2f}")),
    ("score", True, lambda row: f"{row.score:.2f}"),
    ("mean score", True, lambda row: optional_text(row.mean_score, "{:.3f}")),
    *((kind, True, (lambda row, kind=kind: str(row.faults[kind]))) for kind in FAULT_KINDS),
    ("forfeits", True, lambda row: str(row.forfeits)),
    ("median ms", True, lambda row: optional_text(row.median_ms, "{:.2f}")),
    ("p99 ms", True, lambda row: optional_text(row.p99_ms, "{:.2f}")),
]
COLUMN_HEADERS: tuple[str, ...] = tuple(header for header, _, _ in COLUMNS)
# With the luck measured (a duel that adjusts for it, `referee leaderboard --adjust-for-luck`): the mean score with
# its interval, raw and with the luck of the cards taken out, deals as the samples.
LUCK_COLUMNS: list[Column] = [
    ("mean score 95%", True, lambda row: _score_interval(row.score_interval)),
    ("less luck 95%", True, lambda row: _score_interval(row.adjusted_score)),
]


def columns_of(standings: Standings) -> list[Column]:
    """The table's columns: the luck's beside the mean score when the standings measured it."""
    if not any(row.adjusted_score is not None for row in standings.rows):
        return COLUMNS
    at = COLUMN_HEADERS.index("mean score") + 1
    return [*COLUMNS[:at], *LUCK_COLUMNS, *COLUMNS[at:]]
