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
module that owns it, and imported from it when first asked for: a process
that needs one output does not load the others (the live helper, writing a
short league's replay pages, would load the standings' fit and numpy: 0.2 s
of CPU a league).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# The module that owns each name of the face.
_OWNERS = {
    "console_table": "console",
    **dict.fromkeys(
        (
            "LEADERBOARD_FILES",
            "comparison_data",
            "csv_leaderboard",
            "duel_data",
            "html_leaderboard",
            "leaderboard_data",
            "markdown_leaderboard",
            "write_leaderboards",
        ),
        "files",
    ),
    **dict.fromkeys(("public_submissions", "public_text"), "redaction"),
    **dict.fromkeys(("comparison_text", "duel_lines", "faults_text", "luck_adjusted_text", "season_lines"), "text"),
}


def __getattr__(name: str) -> Any:
    """A name of the face, from the module that owns it (PEP 562: asked only for names not defined here)."""
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{owner}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_OWNERS])


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
