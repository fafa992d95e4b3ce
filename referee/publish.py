"""Leaderboards from standings: a console table and leaderboard files in Markdown, CSV, JSON and HTML.

Every file is written to a temporary file in the same directory and then
moved over the old one with ``os.replace``, so a reader (a web server, a
watching user) never sees a half-written leaderboard. The JSON is
deterministic: the same standings give the same bytes.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

from referee.standings import FAULT_KINDS, LATENCY_RELATIVE_ERROR, BotStanding, Standings

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html")
RATING_DIGITS = 3
FRACTION_DIGITS = 4  # win rate, average placement, scores
MS_DIGITS = 3

# (header, right-aligned, cell text) for the console, Markdown and HTML tables.
_COLUMNS: list[tuple[str, bool, Callable[[BotStanding], str]]] = [
    ("rank", True, lambda row: str(row.rank)),
    ("bot", False, lambda row: row.bot),
    ("rating", True, lambda row: f"{row.conservative:.2f}"),
    ("mu ± sigma", True, lambda row: f"{row.mu:.2f} ± {row.sigma:.2f}"),
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
    "rank", "bot", "rating", "mu", "sigma", "games", "wins", "win_rate", "average_placement", "score",
    "mean_score", *(f"faults_{kind}" for kind in FAULT_KINDS), "forfeits", "decisions", "median_ms", "p99_ms",
)  # fmt: skip

_RATING_NOTE = (
    "rating: mu - 3 sigma, the conservative estimate of an openskill Plackett-Luce rating; "
    "score: per game (n - place) / (n - 1), first 1 and last 0; "
    f"decision times within {LATENCY_RELATIVE_ERROR:.1%}."
)
_HEAD_TO_HEAD_NOTE = "Each cell: how often the row's bot finished above the column's bot, of the games they shared."


# The columns of the standings shown while a league runs: narrow enough for a terminal.
_COMPACT_HEADERS = ("rank", "bot", "rating", "mu ± sigma", "games", "wins", "win rate", "avg place", "forfeits")


def console_table(standings: Standings, compact: bool = False) -> str:
    """The leaderboard as a plain-text table for the terminal; ``compact`` keeps the main columns."""
    columns = [column for column in _COLUMNS if not compact or column[0] in _COMPACT_HEADERS]
    rows = [[_printable(cell(row)) for _, _, cell in columns] for row in standings.rows]
    return tabulate(
        rows,
        headers=[header for header, _, _ in columns],
        tablefmt="simple",
        disable_numparse=True,  # a bot named "1e3" stays "1e3"
        colalign=[("right" if right else "left") for _, right, _ in columns],
    )


def write_leaderboards(standings: Standings, directory: str | os.PathLike, title: str) -> list[Path]:
    """Write leaderboard.md, .csv, .json and .html into ``directory``, each replaced atomically."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    contents = {
        "leaderboard.md": markdown_leaderboard(standings, title),
        "leaderboard.csv": csv_leaderboard(standings),
        "leaderboard.json": json_leaderboard(standings, title),
        "leaderboard.html": html_leaderboard(standings, title),
    }
    written = []
    for name in LEADERBOARD_FILES:
        path = directory / name
        _replace_atomically(path, contents[name])
        written.append(path)
    return written


def leaderboard_data(standings: Standings, title: str) -> dict:
    """The leaderboard as plain JSON-ready data, floats rounded to fixed digits."""
    return {
        "title": title,
        "games": standings.games,
        "fault_kinds": list(FAULT_KINDS),
        "latency_relative_error": LATENCY_RELATIVE_ERROR,
        "rows": [
            {
                "rank": row.rank,
                "bot": row.bot,
                "rating": {
                    "mu": _round(row.mu, RATING_DIGITS),
                    "sigma": _round(row.sigma, RATING_DIGITS),
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
            bot: {other: {"games": pair.games, "above": pair.above} for other, pair in opponents.items()}
            for bot, opponents in standings.head_to_head.items()
        },
    }


def json_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard as deterministic JSON: rows in rank order, every object's keys sorted."""
    return json.dumps(leaderboard_data(standings, title), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


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


def markdown_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard and head-to-head table as Markdown, names escaped."""
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
    return (
        f"# {_markdown_text(title)}\n\n"
        f"{standings.games} games.\n\n{table}\n\n{_markdown_text(_RATING_NOTE)}\n\n"
        f"## Head to head\n\n{_markdown_text(_HEAD_TO_HEAD_NOTE)}\n\n{head_to_head}\n"
    )


def html_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard and head-to-head table as one self-contained HTML page, names escaped."""
    header_cells = "".join(
        f'<th class="{"num" if right else "text"}">{_html_text(header)}</th>' for header, right, _ in _COLUMNS
    )
    body_rows = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if right else "text"}">{_html_text(cell(row))}</td>' for _, right, cell in _COLUMNS
        )
        + "</tr>"
        for row in standings.rows
    )
    bots = [row.bot for row in standings.rows]
    pair_header = "<th></th>" + "".join(f'<th class="num">{_html_text(bot)}</th>' for bot in bots)
    pair_rows = "\n".join(
        f'<tr><th class="text">{_html_text(bot)}</th>'
        + "".join(f'<td class="num">{_html_text(_pair_text(standings, bot, other))}</td>' for other in bots)
        + "</tr>"
        for bot in bots
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_html_text(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ padding: 0.3em 0.7em; border-bottom: 1px solid #ddd; white-space: nowrap; }}
thead th {{ background: #f3f3f3; }}
.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
.text {{ text-align: left; }}
tbody tr:hover {{ background: #fafafa; }}
p.note {{ color: #666; font-size: 0.9em; }}
</style>
</head>
<body>
<h1>{_html_text(title)}</h1>
<p>{standings.games} games.</p>
<table class="leaderboard">
<thead><tr>{header_cells}</tr></thead>
<tbody>
{body_rows}
</tbody>
</table>
<p class="note">{_html_text(_RATING_NOTE)}</p>
<h2>Head to head</h2>
<p class="note">{_html_text(_HEAD_TO_HEAD_NOTE)}</p>
<table class="head-to-head">
<thead><tr>{pair_header}</tr></thead>
<tbody>
{pair_rows}
</tbody>
</table>
</body>
</html>
"""


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


def _csv_cell(value: float | None) -> float | str:
    return "" if value is None else value


def _printable(text: str) -> str:
    """Show control characters as escapes, so a bot's name cannot drive the terminal."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


_MARKDOWN_SPECIAL = set("\\`*_[]<>|~&#!")


def _markdown_text(text: str) -> str:
    return "".join("\\" + char if char in _MARKDOWN_SPECIAL else char for char in _printable(text))


def _html_text(text: str) -> str:
    return html.escape(text, quote=True)
