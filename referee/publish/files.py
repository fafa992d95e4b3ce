"""The leaderboard files: leaderboard.md, .csv, .json and .html, written together into a league's folder.

Every file is written to a temporary file in the same directory and then
moved over the old one with ``os.replace``, so a reader (a web server, a
watching user) never sees a half-written leaderboard. The JSON is
deterministic: the same standings give the same bytes (figures rounded as
:mod:`referee.publish.rounding` says). Its sentences are
:mod:`referee.publish.text`'s; what it leaves out of a record,
:mod:`referee.publish.redaction`'s.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tabulate import tabulate

from referee.common.atomic import replace_file
from referee.common.printable import printable_line
from referee.protocol.faults import without_bot_words
from referee.publish.columns import columns_of
from referee.publish.redaction import public_submissions, public_text
from referee.publish.rounding import (
    ELO_DIGITS,
    FRACTION_DIGITS,
    MS_DIGITS,
    STRENGTH_DIGITS,
    interval_data,
    rounded,
    rounded_finite_or_none,
)
from referee.publish.text import (
    CANDIDATES_NOTE,
    HEAD_TO_HEAD_NOTE,
    REJECTED_NOTE,
    duel_lines,
    ranking_note,
    season_lines,
    utc_minute,
    void_note,
)
from referee.records.luck import MODEL as LUCK_MODEL
from referee.records.results import REJECTED, RESULTS_FILE, read_league
from referee.records.standings import FAULT_KINDS, LATENCY_RELATIVE_ERROR, BotStanding, Standings
from referee.records.stats import CONFIDENCE, Comparison
from referee.records.visibility import Shown

if TYPE_CHECKING:
    from referee.leaguefile.duel_state import DuelState

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html")
HEAD_TO_HEAD_SHOWN = 12  # bots in the Markdown head-to-head (the page shows as many, or one bot's row and column)

CSV_HEADERS: tuple[str, ...] = (
    "rank", "rank_best", "rank_worst", "bot", "candidate", "strength", "strength_low", "strength_high", "games", "wins", "win_rate", "average_placement",
    "score", "mean_score", *(f"faults_{kind}" for kind in FAULT_KINDS), "forfeits", "decisions", "median_ms", "p99_ms", "status", "status_reason",
)  # fmt: skip


def write_leaderboards(
    standings: Standings,
    directory: str | os.PathLike[str],
    title: str,
    *,
    live: bool = False,
    scheduled: int | None = None,
    shown: Shown | None = None,
) -> list[Path]:
    """Write leaderboard.md, .csv, .json and .html into ``directory``, each replaced atomically, and in a league's
    folder (one with ``games.jsonl``) the page of each pair of bots that shared a game (``pairs/A/B.html``:
    :mod:`referee.publish.head_to_head`).

    The HTML page also lists the newest games of ``directory``'s ``games.jsonl``
    that may be shown (``shown``, the rule the standings were computed by; else
    as now: :mod:`referee.records.visibility`), their faults and replays, and the strength
    over time, as standings read from the folder hold them (``standings.shown``
    and ``standings.history``: :func:`referee.records.standings.folder_standings`); of
    standings made from records given, the folder is read for them (see
    :mod:`referee.publish.league_page`). ``live`` makes it refresh itself
    while a league runs, ``scheduled`` games in all.
    """
    from referee.leaguefile.duel_state import duel_report
    from referee.publish.head_to_head import write_pair_pages
    from referee.publish.league_page import page_data, render

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    league = read_league(directory) if (directory / "league.json").exists() else None
    shown = shown or Shown.read(directory)
    games, history = standings.shown, standings.history
    if games is None or history is None:
        from referee.records.standings import FolderStandings

        read, _ = FolderStandings(directory).update(shown)
        games, history = read.shown, read.history
    if scheduled is None and league is not None:
        scheduled = league.scheduled  # `referee leaderboard --write`: the schedule as the last run knew it
    # A duel's verdict, from league.json's format and every game shown (a duel's games are bounded: max_games).
    duel = duel_report(league, shown.games(directory, latencies=False), directory)
    submissions = public_submissions(league.submissions if league else (), directory)  # a ladder's verdicts
    board = leaderboard_data(standings, title, duel, directory, submissions)
    league_folder = (directory / RESULTS_FILE).is_file()  # its pairs' pages list their games
    page = page_data(directory, board, games, history, live=live, scheduled=scheduled, pair_pages=league_folder)
    if league_folder:  # each pair's page before the league's page that links to it, by the same rule of what is shown
        write_pair_pages(directory, board, {"name": page["league"]["name"], "game": page["league"]["game"]}, shown)
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
    quote nothing a bot sent (:func:`referee.protocol.faults.without_bot_words`).
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
        # How the rank ranges were made: a bootstrap of `resamples` over deals, or past its size the fit's
        # covariance over deals ("sandwich", resamples 0; docs/statistics.md).
        "ranking": {
            "model": "plackett-luce",
            "resamples": standings.resamples,
            "unit": "deal",
            "deals": standings.deals,
            "covariance": standings.covariance,
        },
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
                    "estimate": rounded(row.strength, STRENGTH_DIGITS),
                    "low": rounded_finite_or_none(row.strength_low, STRENGTH_DIGITS),
                    "high": rounded_finite_or_none(row.strength_high, STRENGTH_DIGITS),
                },
                "games": row.games,
                "wins": row.wins,
                "win_rate": rounded(row.win_rate, FRACTION_DIGITS),
                "average_placement": rounded(row.average_placement, FRACTION_DIGITS),
                "score": rounded(row.score, FRACTION_DIGITS),
                "mean_score": rounded(row.mean_score, FRACTION_DIGITS),
                "faults": dict(row.faults),
                "forfeits": row.forfeits,
                "decisions": row.decisions,
                "median_ms": rounded(row.median_ms, MS_DIGITS),
                "p99_ms": rounded(row.p99_ms, MS_DIGITS),
                "status": row.status,  # active, withdrawn (plays no more) or disqualified (unranked)
                "status_reason": public_text(row.status_reason, directory),
                # Only with the luck measured: the mean score's interval, raw and with the luck taken out.
                **(
                    {}
                    if row.adjusted_score is None
                    else {
                        "mean_score_interval": interval_data(row.score_interval, FRACTION_DIGITS),
                        "adjusted_mean_score": interval_data(row.adjusted_score, FRACTION_DIGITS),
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


def comparison_data(comparison: Comparison) -> dict[str, Any]:
    """One cell of the pairwise matrix; infinite Elo ends (the data cannot bound them) are null."""
    return {
        "games": comparison.games,
        "above": comparison.above,
        "ties": comparison.ties,
        "deals": comparison.deals,
        "above_rate": interval_data(comparison.above_rate, FRACTION_DIGITS),
        "score_difference": interval_data(comparison.score_difference, FRACTION_DIGITS),
        "elo": interval_data(comparison.elo, ELO_DIGITS),
        "los": rounded(comparison.los, FRACTION_DIGITS),
    }


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
        "adjusted_score_difference": interval_data(adjusted, FRACTION_DIGITS),
    }


def _json_text(data: dict[str, Any]) -> str:
    """Deterministic JSON (``leaderboard.json``): every object's keys sorted."""
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
                _csv_cell(rounded(row.strength, STRENGTH_DIGITS)),
                _csv_cell(rounded(row.strength_low, STRENGTH_DIGITS)),  # -inf and inf as written by Python
                _csv_cell(rounded(row.strength_high, STRENGTH_DIGITS)),
                row.games,
                row.wins,
                _csv_cell(rounded(row.win_rate, FRACTION_DIGITS)),
                _csv_cell(rounded(row.average_placement, FRACTION_DIGITS)),
                rounded(row.score, FRACTION_DIGITS),
                _csv_cell(rounded(row.mean_score, FRACTION_DIGITS)),
                *(row.faults[kind] for kind in FAULT_KINDS),
                row.forfeits,
                row.decisions,
                _csv_cell(rounded(row.median_ms, MS_DIGITS)),
                _csv_cell(rounded(row.p99_ms, MS_DIGITS)),
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

    columns = columns_of(standings)

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
            f"## Candidates\n\n{CANDIDATES_NOTE}\n\n{rows_table([row for row in standings.rows if row.candidate])}"
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
        f"{standings.games} games{void_note(standings)}.\n\n{table}\n\n{season}{ranking_note(standings)}\n\n"
        f"## Head to head\n\n{HEAD_TO_HEAD_NOTE}\n\n{head_to_head}{cut}\n"
        + (f"\n## Rejected submissions\n\n{REJECTED_NOTE}\n\n{rejected}\n" if rejected else "")
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
            when = f" ({_markdown_text(utc_minute(version['at']))})" if version.get("at") else ""
            items.append(f"- {_markdown_text(version['bot'])}{when}: {_markdown_text(why)}{link}")
    return "\n".join(items)


def html_leaderboard(standings: Standings, title: str) -> str:
    """The leaderboard as one self-contained HTML page (the standings alone: no games, faults or chart)."""
    from referee.publish.league_page import page_data, render

    return render(page_data(None, leaderboard_data(standings, title)))


def _pair_text(standings: Standings, bot: str, other: str) -> str:
    if bot == other:
        return "—"
    pair = standings.head_to_head[bot][other]
    return f"{pair.above}/{pair.games}"


def _csv_cell(value: float | None) -> float | str:
    return "" if value is None else value


_MARKDOWN_SPECIAL = set("\\`*_[]<>|~&#!")


def _markdown_text(text: str) -> str:
    return "".join("\\" + char if char in _MARKDOWN_SPECIAL else char for char in printable_line(text))
