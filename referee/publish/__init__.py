"""Leaderboards from standings: a console table and leaderboard files in Markdown, CSV, JSON and HTML.

Every file is written to a temporary file in the same directory and then
moved over the old one with ``os.replace``, so a reader (a web server, a
watching user) never sees a half-written leaderboard. The JSON is
deterministic: the same standings give the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tabulate import tabulate

from referee.standings import FAULT_KINDS, LATENCY_RELATIVE_ERROR, BotStanding, Standings
from referee.stats import CONFIDENCE, Comparison, Interval, format_elo, format_interval, stronger_bot_sentence

if TYPE_CHECKING:
    from referee.duel import DuelState

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html")
RATING_DIGITS = 3
FRACTION_DIGITS = 4  # win rate, average placement, scores, likelihoods
ELO_DIGITS = 1
MS_DIGITS = 3

# (header, right-aligned, cell text) for the console, Markdown and HTML tables.
_COLUMNS: list[tuple[str, bool, Callable[[BotStanding], str]]] = [
    ("rank", True, lambda row: str(row.rank)),
    ("bot", False, lambda row: row.bot),
    ("rating", True, lambda row: f"{row.conservative:.2f}"),
    ("mu ± 95%", True, lambda row: f"{row.mu:.2f} ± {row.mu_high - row.mu:.2f}"),
    ("games", True, lambda row: str(row.games)),
    ("wins", True, lambda row: str(row.wins)),
    ("win rate", True, lambda row: _optional(row.win_rate, "{:.1%}")),
    ("avg place", True, lambda row: _optional(row.average_placement, "{:.2f}")),
    ("score", True, lambda row: f"{row.score:.2f}"),
    ("mean score", True, lambda row: _optional(row.mean_score, "{:.3f}")),
    *((kind, True, (lambda row, kind=kind: str(row.faults[kind]))) for kind in FAULT_KINDS),
    ("forfeits", True, lambda row: str(row.forfeits)),
    ("median ms", True, lambda row: _optional(row.median_ms, "{:.2f}")),
    ("p99 ms", True, lambda row: _optional(row.p99_ms, "{:.2f}")),
]
COLUMN_HEADERS: tuple[str, ...] = tuple(header for header, _, _ in _COLUMNS)

CSV_HEADERS: tuple[str, ...] = (
    "rank", "bot", "rating", "mu", "sigma", "mu_low", "mu_high", "games", "wins", "win_rate", "average_placement",
    "score", "mean_score", *(f"faults_{kind}" for kind in FAULT_KINDS), "forfeits", "decisions", "median_ms", "p99_ms",
)  # fmt: skip

_RATING_NOTE = (
    "rating: mu - 3 sigma, the conservative estimate of an openskill Plackett-Luce rating; "
    f"mu ± {CONFIDENCE:.0%}: mu and its {CONFIDENCE:.0%} interval (mu ± 1.96 sigma), "
    "where the bot's strength relative to the field lies; "
    "score: per game (n - place) / (n - 1), first 1 and last 0; "
    f"decision times within {LATENCY_RELATIVE_ERROR:.1%}."
)
_HEAD_TO_HEAD_NOTE = (
    "Each cell: how often the row's bot finished above the column's bot, of the games they shared. "
    "The JSON leaderboard and `referee compare` add intervals and the likelihood of superiority."
)


CONSOLE_WIDTH = 100

# The console's columns (the files hold every column): the main figures, then every fault kind
# and the forfeits folded into one column, shown only when some bot has a fault.
_CONSOLE_HEADERS = ("rank", "bot", "rating", "mu ± 95%", "games", "mean score", "median ms")
# The standings shown while a league runs.
_COMPACT_HEADERS = ("rank", "bot", "rating", "mu ± 95%", "games", "mean score")
_NARROWEST_FAULTS = 12
_NARROWEST_BOT = 12


def console_table(standings: Standings, compact: bool = False, width: int = CONSOLE_WIDTH) -> str:
    """The leaderboard as a plain-text table for the terminal, at most ``width`` columns wide for usual names.

    The fault kinds and forfeits are folded into one ``faults`` column
    (``crash 2, timeout 1; 1 forfeit``: only what happened), shown only when
    some bot has a fault. Fault lists, then bot names, too long for
    ``width`` are cut with "…". ``compact`` keeps fewer figures, for the
    standings while a league runs.
    """
    shown = _COMPACT_HEADERS if compact else _CONSOLE_HEADERS
    columns = [(header, right) for header, right, _ in _COLUMNS if header in shown]
    table = [[_printable(cell(row)) for header, _, cell in _COLUMNS if header in shown] for row in standings.rows]
    cuttable = [(1, _NARROWEST_BOT)]
    if any(any(row.faults.values()) or row.forfeits for row in standings.rows):
        columns.append(("faults", False))
        for cells, row in zip(table, standings.rows, strict=True):
            cells.append(_faults_text(row))
        cuttable.insert(0, (len(columns) - 1, _NARROWEST_FAULTS))
    headers = [header for header, _ in columns]
    widths = _fit(table, headers, width, cuttable)
    lines = [headers, ["-" * column_width for column_width in widths], *table]
    return "\n".join(
        "  ".join(
            (text.rjust if right else text.ljust)(column_width)
            for text, column_width, (_, right) in zip(cells, widths, columns, strict=True)
        ).rstrip()
        for cells in lines
    )


def _faults_text(row: BotStanding) -> str:
    """``timeout 3, crash 1; 2 forfeits``: the kinds that happened, then the games forfeited."""
    text = ", ".join(f"{kind} {row.faults[kind]}" for kind in FAULT_KINDS if row.faults[kind])
    if row.forfeits:
        text += f"{'; ' if text else ''}{row.forfeits} forfeit{'s' if row.forfeits != 1 else ''}"
    return text


def _fit(table: list[list[str]], headers: list[str], width: int, cuttable: list[tuple[int, int]]) -> list[int]:
    """Cut the cells of the ``cuttable`` columns with "…" until the table fits ``width``; return the column widths.

    ``cuttable`` lists (column, narrowest width) in the order to cut: each
    column is cut down to its narrowest before the next is touched.
    Columns are two spaces apart.
    """
    widths = [max([len(header), *(len(cells[index]) for cells in table)]) for index, header in enumerate(headers)]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for index, narrowest in cuttable:
        cut = max(0, min(excess, widths[index] - max(narrowest, len(headers[index]))))
        widths[index] -= cut
        excess -= cut
        for cells in table:
            if len(cells[index]) > widths[index]:
                cells[index] = cells[index][: widths[index] - 1] + "…"
    return widths


def write_leaderboards(
    standings: Standings, directory: str | os.PathLike, title: str, *, live: bool = False, scheduled: int | None = None
) -> list[Path]:
    """Write leaderboard.md, .csv, .json and .html into ``directory``, each replaced atomically.

    The HTML page also lists the games of ``directory``'s ``games.jsonl``, their
    faults and replays (see :mod:`referee.publish.league_page`); ``live`` makes
    it refresh itself while a league runs, ``scheduled`` games in all.
    """
    from referee.duel import duel_report
    from referee.publish.league_page import page_data, render

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    records = _read_results(directory / "games.jsonl", latencies=False)  # the standings hold the times
    duel = duel_report(directory, records)  # a duel's verdict, from league.json's format
    page = page_data(directory, leaderboard_data(standings, title, duel), records, live=live, scheduled=scheduled)
    contents = {
        "leaderboard.md": markdown_leaderboard(standings, title, duel),
        "leaderboard.csv": csv_leaderboard(standings),
        "leaderboard.json": json_leaderboard(standings, title, duel),
        "leaderboard.html": render(page),
    }
    written = []
    for name in LEADERBOARD_FILES:
        path = directory / name
        _replace_atomically(path, contents[name])
        written.append(path)
    return written


def leaderboard_data(standings: Standings, title: str, duel: DuelState | None = None) -> dict:
    """The leaderboard as plain JSON-ready data, floats rounded to fixed digits; a duel's verdict under ``duel``."""
    data = {
        "title": title,
        "games": standings.games,
        "void_games": [{"game_id": game_id, "reason": reason} for game_id, reason in standings.void_games],
        "confidence_level": CONFIDENCE,
        "fault_kinds": list(FAULT_KINDS),
        "latency_relative_error": LATENCY_RELATIVE_ERROR,
        "rows": [
            {
                "rank": row.rank,
                "bot": row.bot,
                "rating": {
                    "mu": _round(row.mu, RATING_DIGITS),
                    "sigma": _round(row.sigma, RATING_DIGITS),
                    "low": _round(row.mu_low, RATING_DIGITS),
                    "high": _round(row.mu_high, RATING_DIGITS),
                    "conservative": _round(row.conservative, RATING_DIGITS),
                },
                "games": row.games,
                "wins": row.wins,
                "win_rate": _round(row.win_rate, FRACTION_DIGITS),
                "average_placement": _round(row.average_placement, FRACTION_DIGITS),
                "score": _round(row.score, FRACTION_DIGITS),
                "mean_score": _round(row.mean_score, FRACTION_DIGITS),
                "faults": dict(row.faults),
                "forfeits": row.forfeits,
                "decisions": row.decisions,
                "median_ms": _round(row.median_ms, MS_DIGITS),
                "p99_ms": _round(row.p99_ms, MS_DIGITS),
            }
            for row in standings.rows
        ],
        "head_to_head": {
            bot: {other: comparison_data(pair) for other, pair in opponents.items()}
            for bot, opponents in standings.head_to_head.items()
        },
    }
    if duel is not None:
        data["duel"] = duel.data()
    return data


def comparison_data(comparison: Comparison) -> dict:
    """One cell of the pairwise matrix; infinite Elo ends (the data cannot bound them) are null."""
    return {
        "games": comparison.games,
        "above": comparison.above,
        "deals": comparison.deals,
        "above_rate": _interval_data(comparison.above_rate, FRACTION_DIGITS),
        "score_difference": _interval_data(comparison.score_difference, FRACTION_DIGITS),
        "elo": _interval_data(comparison.elo, ELO_DIGITS),
        "los": _round(comparison.los, FRACTION_DIGITS),
    }


def _interval_data(interval: Interval | None, digits: int) -> dict | None:
    if interval is None:
        return None
    return {
        "estimate": _round_finite(interval.estimate, digits),
        "low": _round_finite(interval.low, digits),
        "high": _round_finite(interval.high, digits),
    }


def comparison_text(bot: str, other: str, comparison: Comparison) -> str:
    """Two bots compared on the deals they shared, as lines for the terminal."""
    bot_text, other_text = _printable(bot), _printable(other)
    if comparison.games == 0:
        return f"{bot_text} and {other_text} shared no game."
    deals = f"{comparison.deals} deal{'s' if comparison.deals != 1 else ''}"
    level = f"{CONFIDENCE:.0%} interval"
    lines = [
        f"{bot_text} against {other_text}: {comparison.games} shared games on {deals}",
        f"  finished above: {comparison.above}, below: {comparison.below} "
        f"({format_interval(comparison.above_rate, '{:.1%}')} above, {level})",
        f"  mean score difference: {format_interval(comparison.score_difference, '{:+.3f}')} ({level}; "
        "score per game (n - place) / (n - 1))",
        f"  {format_elo(comparison.elo)} ({level}; from the share of games above)",
        f"  likelihood of superiority: {comparison.los:.1%}; "
        + stronger_bot_sentence(bot_text, other_text, comparison.los),
    ]
    if comparison.deals < 2:
        lines.append("  one deal cannot show how results vary from deal to deal: the intervals are the whole range")
    return "\n".join(lines)


def json_leaderboard(standings: Standings, title: str, duel: DuelState | None = None) -> str:
    """The leaderboard as deterministic JSON: rows in rank order, every object's keys sorted."""
    return json.dumps(leaderboard_data(standings, title, duel), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def csv_leaderboard(standings: Standings) -> str:
    """The leaderboard as CSV, one row per bot in rank order, numbers unformatted beyond rounding."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADERS)
    for row in standings.rows:
        writer.writerow(
            [
                row.rank,
                row.bot,
                _round(row.conservative, RATING_DIGITS),
                _round(row.mu, RATING_DIGITS),
                _round(row.sigma, RATING_DIGITS),
                _round(row.mu_low, RATING_DIGITS),
                _round(row.mu_high, RATING_DIGITS),
                row.games,
                row.wins,
                _csv_cell(_round(row.win_rate, FRACTION_DIGITS)),
                _csv_cell(_round(row.average_placement, FRACTION_DIGITS)),
                _round(row.score, FRACTION_DIGITS),
                _csv_cell(_round(row.mean_score, FRACTION_DIGITS)),
                *(row.faults[kind] for kind in FAULT_KINDS),
                row.forfeits,
                row.decisions,
                _csv_cell(_round(row.median_ms, MS_DIGITS)),
                _csv_cell(_round(row.p99_ms, MS_DIGITS)),
            ]
        )
    return buffer.getvalue()


def markdown_leaderboard(standings: Standings, title: str, duel: DuelState | None = None) -> str:
    """The leaderboard and head-to-head table as Markdown, names escaped; a duel's verdict first."""
    table = tabulate(
        [[_markdown_text(cell(row)) for _, _, cell in _COLUMNS] for row in standings.rows],
        headers=[_markdown_text(header) for header in COLUMN_HEADERS],
        tablefmt="pipe",
        disable_numparse=True,
        colalign=[("right" if right else "left") for _, right, _ in _COLUMNS],
    )
    bots = [row.bot for row in standings.rows]
    head_to_head = tabulate(
        [[_markdown_text(bot), *(_pair_text(standings, bot, other) for other in bots)] for bot in bots],
        headers=["", *(_markdown_text(bot) for bot in bots)],
        tablefmt="pipe",
        disable_numparse=True,
        colalign=["left", *(["right"] * len(bots))],
    )
    verdict = "" if duel is None else "## Sequential test\n\n```text\n" + "\n".join(duel.lines()) + "\n```\n\n"
    return (
        f"# {_markdown_text(title)}\n\n{verdict}"
        f"{standings.games} games{_void_note(standings)}.\n\n{table}\n\n{_markdown_text(_RATING_NOTE)}\n\n"
        f"## Head to head\n\n{_markdown_text(_HEAD_TO_HEAD_NOTE)}\n\n{head_to_head}\n"
    )


def html_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard as one self-contained HTML page (the standings alone: no games, faults or chart)."""
    from referee.publish.league_page import page_data, render

    return render(page_data(None, leaderboard_data(standings, title)))


def _read_results(path: Path, *, latencies: bool = True) -> list[dict]:
    """The complete records of a ``games.jsonl`` (none when there is no such file).

    Without ``latencies``, each record is kept without its every decision's
    time (``timing.latency_ms``, most of a record): what the pages need of a
    league of many games then fits in memory.
    """
    records = []
    try:
        with open(path, "rb") as lines:
            for line in lines:
                if not line.endswith(b"\n"):
                    break  # a line still being written
                try:
                    record = json.loads(line)
                except ValueError:
                    break
                if not latencies and isinstance(timing := record.get("timing"), dict):
                    timing.pop("latency_ms", None)
                records.append(record)
    except FileNotFoundError:
        pass
    return records


def _replace_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then move it over ``path`` in one step."""
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, before the move
        "w", encoding="utf-8", newline="", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)  # mkstemp makes 0600; a leaderboard is for anyone to read
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _void_note(standings: Standings) -> str:
    """`` (and 3 void games, which count for nobody: r1-t001-s0 ...)``, or nothing."""
    void = standings.void_games
    if not void:
        return ""
    shown = ", ".join(game_id for game_id, _ in void[:10]) + (", ..." if len(void) > 10 else "")
    return f" (and {len(void)} void game{'s' if len(void) > 1 else ''}, which count for nobody: {shown})"


def _pair_text(standings: Standings, bot: str, other: str) -> str:
    if bot == other:
        return "—"
    pair = standings.head_to_head[bot][other]
    return f"{pair.above}/{pair.games}"


def _optional(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)


def _round(value: float | None, digits: int) -> float | None:
    if value is None:
        return None
    return round(value, digits) or 0.0  # no "-0.0"


def _round_finite(value: float, digits: int) -> float | None:
    return None if math.isinf(value) else _round(value, digits)


def _csv_cell(value: float | None) -> float | str:
    return "" if value is None else value


def _printable(text: str) -> str:
    """Show control characters as escapes, so a bot's name cannot drive the terminal."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


_MARKDOWN_SPECIAL = set("\\`*_[]<>|~&#!")


def _markdown_text(text: str) -> str:
    return "".join("\\" + char if char in _MARKDOWN_SPECIAL else char for char in _printable(text))
