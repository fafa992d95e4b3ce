"""The league file: read it, check every key, and say what of it the results depend on.

Every problem raises :class:`LeagueError` with a message of the form
``FILE:LINE: KEY.PATH: what is wrong; what is allowed``, for example
``tournaments/x.yaml:14: bots[2].command: "pyhton bot.py" could not be
started (no such program: pyhton)``. The modules:

- :mod:`~referee.leaguefile.config.schema`: every key, its range, default and help, written once;
- :mod:`~referee.leaguefile.config.reader`: YAML read with line numbers, each value checked against its key;
- :mod:`~referee.leaguefile.config.formats`: ``format:`` and the league's size;
- :mod:`~referee.leaguefile.config.bot_entries`: the bots' entries, and what each one's sandbox hides;
- :mod:`~referee.leaguefile.config.manifest`: a submission's ``bot.yaml``;
- :mod:`~referee.leaguefile.config.loaded`: :func:`load_league`, the :class:`League`, what its results depend on;
- :mod:`~referee.leaguefile.config.findings`: what ``referee validate`` warns of in a valid league;
- :mod:`~referee.leaguefile.config.keys`: the key tables of docs/leagues.md and ``tournaments/league.example.yaml``.
"""

from referee.common.errors import LeagueError
from referee.leaguefile.commands import resolve_command
from referee.leaguefile.config.bot_entries import LeagueBot, address_problem
from referee.leaguefile.config.findings import unchecked_runs, unstartable_limits
from referee.leaguefile.config.loaded import (
    League,
    league_fingerprint,
    league_identity,
    league_without_sandbox,
    load_league,
)
from referee.leaguefile.config.manifest import Submission, load_submission
from referee.leaguefile.config.schema import (
    BOT_KEYS,
    LEAGUE_KEYS,
    MANIFEST_KEYS,
    MANIFEST_NAME,
    MANY_GAMES,
    MAX_CONCURRENCY,
    MAX_GAMES,
    NAME_PATTERN,
    NAME_RULE,
)

__all__ = [
    "BOT_KEYS",
    "LEAGUE_KEYS",
    "MANIFEST_KEYS",
    "MANIFEST_NAME",
    "MANY_GAMES",
    "MAX_CONCURRENCY",
    "MAX_GAMES",
    "NAME_PATTERN",
    "NAME_RULE",
    "League",
    "LeagueBot",
    "LeagueError",
    "Submission",
    "address_problem",
    "league_fingerprint",
    "league_identity",
    "league_without_sandbox",
    "load_league",
    "load_submission",
    "resolve_command",
    "unchecked_runs",
    "unstartable_limits",
]
