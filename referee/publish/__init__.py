"""What the referee publishes: the leaderboards, the league's page, replay pages, and the words around their figures.

One module per output:

- ``console``: the leaderboard as a table for the terminal;
- ``files``: leaderboard.md, .csv, .json and .html, written together, each replaced in one step;
- ``text``: the sentences a person reads (two bots compared, a sequential test, a duel's verdict, a season);
- ``redaction``: what a published record shows (no path of the organiser's machine, no bot's own words);
- ``league_page`` and ``replay_page``: the HTML pages (``html/``: their templates, script and style); ``live``
  writes them while a league runs, ``spectators`` feeds the games in play;

and beside them ``table``, the leaderboard's columns the console and the files share, and ``rounding``, the
digits the files publish figures with. The names below are the package's face; each is defined, once, in the
module that owns it.
"""

from __future__ import annotations

from referee.publish.console import console_table
from referee.publish.files import (
    LEADERBOARD_FILES,
    comparison_data,
    csv_leaderboard,
    duel_data,
    html_leaderboard,
    leaderboard_data,
    markdown_leaderboard,
    write_leaderboards,
)
from referee.publish.redaction import public_submissions, public_text
from referee.publish.text import comparison_text, duel_lines, faults_text, luck_adjusted_text, season_lines

__all__ = [
    "LEADERBOARD_FILES",
    "comparison_data",
    "comparison_text",
    "console_table",
    "csv_leaderboard",
    "duel_data",
    "duel_lines",
    "faults_text",
    "html_leaderboard",
    "leaderboard_data",
    "luck_adjusted_text",
    "markdown_leaderboard",
    "public_submissions",
    "public_text",
    "season_lines",
    "write_leaderboards",
]
