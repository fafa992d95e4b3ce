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
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tabulate import tabulate

from referee.atomic import replace_file
from referee.faults import without_bot_words
from referee.luck import MODEL as LUCK_MODEL
from referee.results import REJECTED, RESULTS_FILE, read_games, read_league
from referee.standings import FAULT_KINDS, LATENCY_RELATIVE_ERROR, BotStanding, Standings
from referee.stats import (
    CONFIDENCE,
    Comparison,
    Interval,
    Verdict,
    describe_hypothesis,
    format_elo,
    format_interval,
    stronger_bot_sentence,
)

if TYPE_CHECKING:
    from referee.duel_state import DuelState
    from referee.standings import LuckAdjusted

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html")
STRENGTH_DIGITS = 1  # Elo
FRACTION_DIGITS = 4  # win rate, average placement, scores, likelihoods
ELO_DIGITS = 1
MS_DIGITS = 3
HEAD_TO_HEAD_SHOWN = 12  # bots in the Markdown head-to-head (the page shows as many, or one bot's row and column)

# (header, right-aligned, cell text) for the console, Markdown and HTML tables.
_COLUMNS: list[tuple[str, bool, Callable[[BotStanding], str]]] = [
    ("rank", True, lambda row: row.rank_text),
    ("bot", False, lambda row: row.bot + (f" ({row.status_text})" if row.status_text else "")),
    ("strength", True, lambda row: _optional(row.strength, "{:+.0f}")),
    ("95%", True, lambda row: _strength_interval(row)),  # noqa: PLW0108 - it is defined below
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
# With the luck measured (a duel that adjusts for it, `referee leaderboard --adjust-for-luck`): the mean score with
# its interval, raw and with the luck of the cards taken out, deals as the samples.
_LUCK_COLUMNS: list[tuple[str, bool, Callable[[BotStanding], str]]] = [
    ("mean score 95%", True, lambda row: _score_interval(row.score_interval)),
    ("less luck 95%", True, lambda row: _score_interval(row.adjusted_score)),
]


def _score_interval(interval: Interval | None) -> str:
    return "\u2014" if interval is None else format_interval(interval, "{:.3f}")


def _columns(standings: Standings) -> list[tuple[str, bool, Callable[[BotStanding], str]]]:
    """The table's columns: the luck's beside the mean score when the standings measured it."""
    if not any(row.adjusted_score is not None for row in standings.rows):
        return _COLUMNS
    at = COLUMN_HEADERS.index("mean score") + 1
    return [*_COLUMNS[:at], *_LUCK_COLUMNS, *_COLUMNS[at:]]


CSV_HEADERS: tuple[str, ...] = (
    "rank", "rank_best", "rank_worst", "bot", "candidate", "strength", "strength_low", "strength_high", "games", "wins", "win_rate", "average_placement",
    "score", "mean_score", *(f"faults_{kind}" for kind in FAULT_KINDS), "forfeits", "decisions", "median_ms", "p99_ms", "status", "status_reason",
)  # fmt: skip

RANKING_NOTE = (
    "rank: by strength, a Plackett-Luce fit of every game's finish order; a range such as 1–3 is where the "
    f"games put the bot at {CONFIDENCE:.0%} (a bootstrap over deals): bots whose order the games do not "
    "establish share ranks. strength: Elo relative to the field's mean, with its "
    f"{CONFIDENCE:.0%} interval; score: per game (n - place) / (n - 1), first 1 and last 0; "
    f"decision times within {LATENCY_RELATIVE_ERROR:.1%}."
)
_CANDIDATES_NOTE = "The candidates are ranked among themselves, on the same deals; the field apart."
_REJECTED_NOTE = (
    "Versions the ladder judged and did not enter, each author's newest first, with what rejected them; "
    "each author's own page (authors/AUTHOR/ on referee serve) has the whole reason and every check."
)
_HEAD_TO_HEAD_NOTE = (
    "Each cell: how often the row's bot finished above the column's bot, of the games they shared "
    "(two candidates of a gauntlet: of the deals both played in the same seat, a tie counting half). "
    "The JSON leaderboard and `referee compare` add intervals and the likelihood of superiority."
)


# A path of the machine that wrote a file: what follows a slash that starts a word, up to a space or punctuation.
ABSOLUTE_PATH = re.compile(r"(?<![\w.~-])/(?:[^\s/:;,'\"()\[\]]+/)*([^\s/:;,'\"()\[\]]+)")


def public_text(text: str, directory: Path | None) -> str:
    """``text`` with no path of the organiser's machine: paths inside ``directory`` relative to it, others by their last part."""
    if directory is not None:
        for root in {str(directory), str(Path(directory).resolve())}:
            text = text.replace(root.rstrip("/") + "/", "")
    return ABSOLUTE_PATH.sub(lambda match: "\u2026/" + match.group(1), text)


CONSOLE_WIDTH = 100

# The console's columns (the files hold every column): the main figures, then every fault kind
# and the forfeits folded into one column, shown only when some bot has a fault.
_CONSOLE_HEADERS = ("rank", "bot", "strength", "95%", "games", "mean score", "median ms")
# The standings shown while a league runs.
_COMPACT_HEADERS = ("rank", "bot", "strength", "games", "mean score")
_NARROWEST_FAULTS = 12
_NARROWEST_BOT = 12


def console_table(standings: Standings, compact: bool = False, width: int = CONSOLE_WIDTH) -> str:
    """The leaderboard as a plain-text table for the terminal, at most ``width`` columns wide for usual names.

    The fault kinds and forfeits are folded into one ``faults`` column
    (``crash 2, timeout 1; 1 forfeit``: only what happened), shown only when
    some bot has a fault. Fault lists, then bot names, too long for
    ``width`` are cut with "…": a fault list at its end, a name in its
    middle, so that its end (``-v2``: which version) still shows.
    ``compact`` keeps fewer figures, for the standings while a league runs.
    """
    every = _columns(standings)
    shown = {*(_COMPACT_HEADERS if compact else _CONSOLE_HEADERS), *(header for header, _, _ in _LUCK_COLUMNS)}
    columns = [(header, right) for header, right, _ in every if header in shown]
    table = [[_printable(cell(row)) for header, _, cell in every if header in shown] for row in standings.rows]
    cuttable = [(1, _NARROWEST_BOT, True)]
    if any(any(row.faults.values()) or row.forfeits for row in standings.rows):
        columns.append(("faults", False))
        for cells, row in zip(table, standings.rows, strict=True):
            cells.append(faults_text(row))
        cuttable.insert(0, (len(columns) - 1, _NARROWEST_FAULTS, False))
    headers = [header for header, _ in columns]
    widths = _fit(table, headers, width, cuttable)
    lines = [
        "  ".join(
            (text.rjust if right else text.ljust)(column_width)
            for text, column_width, (_, right) in zip(cells, widths, columns, strict=True)
        ).rstrip()
        for cells in [headers, ["-" * column_width for column_width in widths], *table]
    ]
    if standings.candidates:
        first_field = 2 + sum(row.candidate for row in standings.rows)
        lines.insert(first_field, f"the field (ranked apart from the {len(standings.candidates)} candidates):")
        lines.insert(2, "candidates:")
    return "\n".join(lines)


def faults_text(row: BotStanding) -> str:
    """``timeout 3, crash 1; 2 forfeits``: the kinds that happened, then the games forfeited."""
    text = ", ".join(f"{kind} {row.faults[kind]}" for kind in FAULT_KINDS if row.faults[kind])
    if row.forfeits:
        text += f"{'; ' if text else ''}{row.forfeits} forfeit{'s' if row.forfeits != 1 else ''}"
    return text


def _fit(table: list[list[str]], headers: list[str], width: int, cuttable: list[tuple[int, int, bool]]) -> list[int]:
    """Cut the cells of the ``cuttable`` columns with "…" until the table fits ``width``; return the column widths.

    ``cuttable`` lists (column, narrowest width, cut in the middle) in the
    order to cut: each column is cut down to its narrowest before the next
    is touched. A cell cut in the middle keeps its end (a name's version);
    another keeps its start. Columns are two spaces apart.
    """
    widths = [max([len(header), *(len(cells[index]) for cells in table)]) for index, header in enumerate(headers)]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for index, narrowest, middle in cuttable:
        cut = max(0, min(excess, widths[index] - max(narrowest, len(headers[index]))))
        widths[index] -= cut
        excess -= cut
        kept = widths[index] - 1
        for cells in table:
            if len(cells[index]) > widths[index]:
                text = cells[index]
                cells[index] = (
                    text[: kept // 2] + "…" + text[len(text) - (kept - kept // 2) :] if middle else text[:kept] + "…"
                )
    return widths


def write_leaderboards(
    standings: Standings,
    directory: str | os.PathLike[str],
    title: str,
    *,
    live: bool = False,
    scheduled: int | None = None,
) -> list[Path]:
    """Write leaderboard.md, .csv, .json and .html into ``directory``, each replaced atomically.

    The HTML page also lists the games of ``directory``'s ``games.jsonl``, their
    faults and replays (see :mod:`referee.publish.league_page`); ``live`` makes
    it refresh itself while a league runs, ``scheduled`` games in all.
    """
    from referee.duel_state import duel_report
    from referee.publish.league_page import page_data, render

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    league = read_league(directory) if (directory / "league.json").exists() else None
    records = list(read_games(directory / RESULTS_FILE, latencies=False))  # the standings hold the times
    if scheduled is None and league is not None:
        scheduled = league.scheduled  # `referee leaderboard --write`: the schedule as the last run knew it
    duel = duel_report(league, records, directory)  # a duel's verdict, from league.json's format
    submissions = public_submissions(league.submissions if league else (), directory)  # a ladder's verdicts
    board = leaderboard_data(standings, title, duel, directory, submissions)
    page = page_data(directory, board, records, live=live, scheduled=scheduled)
    contents = {
        "leaderboard.md": markdown_leaderboard(standings, title, duel, submissions),
        "leaderboard.csv": csv_leaderboard(standings),
        "leaderboard.json": _json_text(board),
        "leaderboard.html": render(page),
    }
    written = []
    for name in LEADERBOARD_FILES:
        path = directory / name
        replace_file(path, contents[name])
        written.append(path)
    return written


def leaderboard_data(
    standings: Standings,
    title: str,
    duel: DuelState | None = None,
    directory: Path | None = None,
    submissions: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The leaderboard as plain JSON-ready data, floats rounded to fixed digits; a duel's verdict under ``duel``.

    Void games' reasons name no path of the machine (:func:`public_text`, relative to ``directory``), and
    quote nothing a bot sent (:func:`referee.faults.without_bot_words`).
    A ladder's ``submissions`` (as :func:`public_submissions` gives them) go under ``submissions``.
    """
    data = {
        "title": title,
        "games": standings.games,
        "void_games": [
            {"game_id": game_id, "reason": without_bot_words(public_text(reason, directory))}
            for game_id, reason in standings.void_games
        ],
        "confidence_level": CONFIDENCE,
        "ranking": {"model": "plackett-luce", "resamples": standings.resamples, "unit": "deal"},
        "candidates": list(standings.candidates),
        "fault_kinds": list(FAULT_KINDS),
        "latency_relative_error": LATENCY_RELATIVE_ERROR,
        "rows": [
            {
                "rank": row.rank,
                "rank_range": list(row.rank_range),
                "bot": row.bot,
                "candidate": row.candidate,
                # An end the games cannot bound (a bot first, or last, in every game) is null.
                "strength": None
                if row.strength is None
                else {
                    "estimate": _round(row.strength, STRENGTH_DIGITS),
                    "low": _round_finite_or_none(row.strength_low, STRENGTH_DIGITS),
                    "high": _round_finite_or_none(row.strength_high, STRENGTH_DIGITS),
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
                "status": row.status,  # active, withdrawn (plays no more) or disqualified (unranked)
                "status_reason": public_text(row.status_reason, directory),
                # Only with the luck measured: the mean score's interval, raw and with the luck taken out.
                **(
                    {}
                    if row.adjusted_score is None
                    else {
                        "mean_score_interval": _interval_data(row.score_interval, FRACTION_DIGITS),
                        "adjusted_mean_score": _interval_data(row.adjusted_score, FRACTION_DIGITS),
                    }
                ),
            }
            for row in standings.rows
        ],
        "left_out_games": standings.left_out,  # games of disqualified bots: they count for no one
        "versions": [{"author": author, "bots": list(bots)} for author, bots in standings.versions],
        "head_to_head": {
            bot: {other: comparison_data(pair) for other, pair in opponents.items()}
            for bot, opponents in standings.head_to_head.items()
        },
    }
    if duel is not None:
        data["duel"] = duel_data(duel)
    if submissions:
        data["submissions"] = [dict(author) for author in submissions]
    return data


def public_submissions(submissions: Iterable[Mapping[str, Any]], directory: Path | None) -> list[dict[str, Any]]:
    """A ladder's submissions (``league.json``'s) as its pages show them: why a version was rejected in the
    referee's words alone (its ``summary``: never the build's output or the check's details, which are its author's).

    Each author's versions stay in the order judged; each author has a link to their own page, relative to the folder.
    """
    return [
        {
            "author": author["author"],
            "page": public_text(str(author.get("page") or ""), directory) or None,
            "versions": [
                {
                    "bot": version["bot"],
                    "version": version.get("version"),
                    "verdict": version["verdict"],
                    "status": version.get("status"),  # an accepted version's: active, withdrawn or disqualified
                    "at": version.get("at") or None,
                    "digest": version.get("digest") or None,
                    "reason": _public_reason(version),
                }
                for version in author["versions"]
            ],
        }
        for author in submissions
    ]


def _public_reason(version: Mapping[str, Any]) -> str:
    """Why a version was rejected, as everyone may read it (a ladder before summaries were kept: in two words)."""
    if version["verdict"] != REJECTED:
        return ""
    return str(version.get("summary") or "rejected: its author's page says why")


def comparison_data(comparison: Comparison) -> dict[str, Any]:
    """One cell of the pairwise matrix; infinite Elo ends (the data cannot bound them) are null."""
    return {
        "games": comparison.games,
        "above": comparison.above,
        "ties": comparison.ties,
        "deals": comparison.deals,
        "above_rate": _interval_data(comparison.above_rate, FRACTION_DIGITS),
        "score_difference": _interval_data(comparison.score_difference, FRACTION_DIGITS),
        "elo": _interval_data(comparison.elo, ELO_DIGITS),
        "los": _round(comparison.los, FRACTION_DIGITS),
    }


def _interval_data(interval: Interval | None, digits: int) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "estimate": _round_finite(interval.estimate, digits),
        "low": _round_finite(interval.low, digits),
        "high": _round_finite(interval.high, digits),
    }


def luck_adjusted_text(adjusted: LuckAdjusted) -> str:
    """The score difference with the luck of the cards taken out, beside the raw one, as lines for the terminal."""
    if adjusted.raw is None or adjusted.adjusted is None:
        return "  with the luck taken out: no shared game"
    level = f"{CONFIDENCE:.0%} interval, deals as the samples"
    ratio = adjusted.variance_ratio
    gain = "" if ratio is None else f"; as narrow as the raw one would be with {ratio:.2f} times the games"
    return "\n".join(
        [
            (
                f"  mean score difference with the luck taken out: {format_interval(adjusted.adjusted, '{:+.3f}')} "
                f"(raw, the same way: {format_interval(adjusted.raw, '{:+.3f}')}; {level}{gain})"
            ),
            f"  luck measured by the value function {adjusted.model.name} (digest {adjusted.model.digest})",
        ]
    )


def comparison_text(bot: str, other: str, comparison: Comparison) -> str:
    """Two bots compared on the deals they shared, as lines for the terminal."""
    bot_text, other_text = _printable(bot), _printable(other)
    if comparison.games == 0:
        return f"{bot_text} and {other_text} shared no game."
    above_rate, difference, elo = comparison.above_rate, comparison.score_difference, comparison.elo
    los = comparison.los
    assert above_rate is not None and difference is not None and elo is not None and los is not None  # games shared
    deals = f"{comparison.deals} deal{'s' if comparison.deals != 1 else ''}"
    level = f"{CONFIDENCE:.0%} interval"
    if comparison.ties:  # paired games: never at one table, so "above" is a better place in the same seat
        counts = (
            f"  better place: {comparison.above}, worse: {comparison.below}, the same: {comparison.ties} "
            f"({format_interval(above_rate, '{:.1%}')} better, a tie counting half; {level})"
        )
        games = f"{comparison.games} paired games (the same deal, seat and opponents) on {deals}"
    else:
        counts = (
            f"  finished above: {comparison.above}, below: {comparison.below} "
            f"({format_interval(above_rate, '{:.1%}')} above, {level})"
        )
        games = f"{comparison.games} shared games on {deals}"
    lines = [
        f"{bot_text} against {other_text}: {games}",
        counts,
        (
            f"  mean score difference: {format_interval(difference, '{:+.3f}')} ({level}; "
            "score per game (n - place) / (n - 1))"
        ),
        f"  {format_elo(elo)} ({level}; from the share of games above)",
        f"  likelihood of superiority: {los:.1%}; " + stronger_bot_sentence(bot_text, other_text, los),
    ]
    if comparison.deals < 2:
        lines.append("  one deal cannot show how results vary from deal to deal: the intervals are the whole range")
    return "\n".join(lines)


def duel_lines(state: DuelState) -> list[str]:
    """A duel's verdict as a block of lines for the terminal and the Markdown leaderboard."""
    first, second = state.sprt.candidates
    measure, lower_upper = state.sprt.measure, state.test.bounds
    h0, h1 = describe_hypothesis(measure, state.sprt.h0), describe_hypothesis(measure, state.sprt.h1)
    luck = ", on scores with the luck taken out" if state.sprt.adjust_for_luck else ""
    lines = [
        f"duel {first} against {second}: H0 {h0}, H1 {h1}, alpha {state.sprt.alpha:g}, beta {state.sprt.beta:g}{luck}",
        f"  {state.headline()}",
    ]
    lower, upper = lower_upper
    if state.test.verdict is Verdict.ACCEPT_H1:
        lines.append(
            f"  the results favour {h1} over {h0}: a true {h0} gives this verdict at most "
            f"{state.sprt.alpha:.0%} of the time"
        )
    elif state.test.verdict is Verdict.ACCEPT_H0:
        lines.append(
            f"  the results favour {h0} over {h1}: a true {h1} gives this verdict at most "
            f"{state.sprt.beta:.0%} of the time"
        )
    lines.append(
        f"  log-likelihood ratio {state.test.llr:+.2f}; bounds {lower:+.2f} (accept H0) and {upper:+.2f} (accept H1)"
    )
    comparison = comparison_text(first, second, state.test.comparison())
    lines.extend("  " + line for line in comparison.splitlines())
    adjusted = state.test.adjusted_difference()
    if adjusted is not None:
        lines.append(
            f"    mean score difference with the luck taken out: {format_interval(adjusted, '{:+.3f}')} "
            f"({CONFIDENCE:.0%} interval, deals as the samples; luck measured by {LUCK_MODEL.name}, "
            f"digest {LUCK_MODEL.digest})"
        )
    if state.games_not_counted:
        why = "running when the verdict came" if state.decided else "of deals not yet complete"
        lines.append(
            f"  {state.games_not_counted} more game{'s' if state.games_not_counted != 1 else ''} "
            f"recorded ({why}): in games.jsonl and the standings, not in the test"
        )
    return lines


def duel_data(state: DuelState) -> dict[str, Any]:
    """A duel's verdict as JSON-ready data: the ``duel`` object of ``leaderboard.json``."""
    lower, upper = state.test.bounds
    return {
        "candidates": list(state.sprt.candidates),
        "measure": state.sprt.measure.value,
        "h0": state.sprt.h0,
        "h1": state.sprt.h1,
        "alpha": state.sprt.alpha,
        "beta": state.sprt.beta,
        "max_games": state.sprt.max_games,
        "verdict": state.outcome,
        "headline": state.headline(),
        "deals": state.deals,
        "games": state.games_counted,
        "games_not_counted": state.games_not_counted,
        "scheduled_deals": state.scheduled_deals,
        "llr": round(state.test.llr, FRACTION_DIGITS),
        "bounds": [round(lower, FRACTION_DIGITS), round(upper, FRACTION_DIGITS)],
        "comparison": comparison_data(state.test.comparison()),
        **(_adjusted_data(state) if state.sprt.adjust_for_luck else {}),
    }


def _adjusted_data(state: DuelState) -> dict[str, Any]:
    adjusted = state.test.adjusted_difference()
    return {
        "adjust_for_luck": True,
        "luck_model": LUCK_MODEL.describe(),
        "adjusted_score_difference": _interval_data(adjusted, FRACTION_DIGITS),
    }


def json_leaderboard(standings: Standings, title: str, duel: DuelState | None = None) -> str:
    """The leaderboard as deterministic JSON: rows in rank order, every object's keys sorted."""
    return _json_text(leaderboard_data(standings, title, duel))


def _json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def csv_leaderboard(standings: Standings) -> str:
    """The leaderboard as CSV, one row per bot in rank order, numbers unformatted beyond rounding."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADERS)
    for row in standings.rows:
        writer.writerow(
            [
                row.rank,
                *row.rank_range,
                row.bot,
                int(row.candidate),
                _csv_cell(_round(row.strength, STRENGTH_DIGITS)),
                _csv_cell(_round(row.strength_low, STRENGTH_DIGITS)),  # -inf and inf as written by Python
                _csv_cell(_round(row.strength_high, STRENGTH_DIGITS)),
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
                row.status,
                row.status_reason,
            ]
        )
    return buffer.getvalue()


def markdown_leaderboard(
    standings: Standings,
    title: str,
    duel: DuelState | None = None,
    submissions: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The leaderboard and head-to-head table as Markdown, names escaped; a duel's verdict first.

    A gauntlet's or duel's candidates get a table of their own, before the field's. A ladder's rejected
    versions (of ``submissions``, as :func:`public_submissions` gives them) are listed last, each with why.
    """

    columns = _columns(standings)

    def rows_table(rows: list[BotStanding]) -> str:
        return tabulate(
            [[_markdown_text(cell(row)) for _, _, cell in columns] for row in rows],
            headers=[_markdown_text(header) for header, _, _ in columns],
            tablefmt="pipe",
            disable_numparse=True,
            colalign=[("right" if right else "left") for _, right, _ in columns],
        )

    if standings.candidates:
        table = (
            f"## Candidates\n\n{_CANDIDATES_NOTE}\n\n{rows_table([row for row in standings.rows if row.candidate])}"
            f"\n\n## Field\n\n{rows_table([row for row in standings.rows if not row.candidate])}"
        )
    else:
        table = rows_table(standings.rows)
    every_bot = [row.bot for row in standings.rows]
    bots = every_bot[:HEAD_TO_HEAD_SHOWN]  # a bigger matrix is no table a person reads
    cut = (
        f"\n\nThe top {len(bots)} of {len(every_bot)} bots; leaderboard.json and the league's page hold every pair."
        if len(bots) < len(every_bot)
        else ""
    )
    head_to_head = tabulate(
        [[_markdown_text(bot), *(_pair_text(standings, bot, other) for other in bots)] for bot in bots],
        headers=["", *(_markdown_text(bot) for bot in bots)],
        tablefmt="pipe",
        disable_numparse=True,
        colalign=["left", *(["right"] * len(bots))],
    )
    verdict = "" if duel is None else "## Sequential test\n\n```text\n" + "\n".join(duel_lines(duel)) + "\n```\n\n"
    season = "".join(f"{_markdown_text(line)}\n\n" for line in season_lines(standings))
    rejected = _markdown_rejected(submissions)
    return (
        f"# {_markdown_text(title)}\n\n{verdict}"
        f"{standings.games} games{_void_note(standings)}.\n\n{table}\n\n{season}{RANKING_NOTE}\n\n"
        f"## Head to head\n\n{_HEAD_TO_HEAD_NOTE}\n\n{head_to_head}{cut}\n"
        + (f"\n## Rejected submissions\n\n{_REJECTED_NOTE}\n\n{rejected}\n" if rejected else "")
    )


def _markdown_rejected(submissions: Sequence[Mapping[str, Any]]) -> str:
    """A list item per rejected version, each author's newest first: when, what rejected it, the author's page."""
    items = []
    for author in submissions:
        page = author.get("page")
        link = f" ([the author's page]({quote(page)}))" if page else ""
        for version in reversed(author["versions"]):
            if version["verdict"] != REJECTED:
                continue
            first, *more = (version["reason"] or "no reason recorded").splitlines()
            why = first + (" \u2026" if more else "")
            when = f" ({_markdown_text(_utc_minute(version['at']))})" if version.get("at") else ""
            items.append(f"- {_markdown_text(version['bot'])}{when}: {_markdown_text(why)}{link}")
    return "\n".join(items)


def html_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard as one self-contained HTML page (the standings alone: no games, faults or chart)."""
    from referee.publish.league_page import page_data, render

    return render(page_data(None, leaderboard_data(standings, title)))


def season_lines(standings: Standings) -> list[str]:
    """What a season changed, for people: the games left out with the disqualified bots, each author's versions."""
    lines = []
    disqualified = [row for row in standings.rows if row.disqualified]
    if disqualified:
        games = standings.left_out
        lines.append(
            f"Disqualified, unranked: {'; '.join(f'{row.bot} ({row.status_text})' for row in disqualified)}. "
            f"The {games} game{'' if games == 1 else 's'} they sat in count for no one."
        )
    rows = {row.bot: row for row in standings.rows}
    for author, bots in standings.versions:
        shown = [
            f"{bot} ({_optional(rows[bot].strength, '{:+.0f}')}"
            + (f", {rows[bot].status})" if rows[bot].status_text else ")")
            for bot in bots
            if bot in rows
        ]
        lines.append(f"Versions of {author}: " + " \u2192 ".join(shown))
    return lines


def _utc_minute(at: str) -> str:
    """A time as the ladder records it (ISO 8601, UTC) to the minute: ``2026-01-02 03:04 UTC``, as the page shows it."""
    return at[:16].replace("T", " ") + " UTC" if at.endswith(("+00:00", "Z")) else at


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


def _strength_interval(row: BotStanding) -> str:
    if row.strength_low is None or row.strength_high is None:
        return "-"
    return format_interval(Interval(row.strength or 0.0, row.strength_low, row.strength_high), "{:+.0f}").split(" ", 1)[
        1
    ]


def _optional(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)


def _round(value: float | None, digits: int) -> float | None:
    if value is None:
        return None
    return round(value, digits) or 0.0  # no "-0.0"


def _round_finite_or_none(value: float | None, digits: int) -> float | None:
    return None if value is None else _round_finite(value, digits)


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
