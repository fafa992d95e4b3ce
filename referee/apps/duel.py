"""A duel: a league played as a sequential test of two of its bots, stopped as soon as the test decides.

``format: {type: sprt, ...}`` (:mod:`referee.leaguefile.schedule.sprt`) schedules deals
of the two candidates; :func:`duel_league` makes such a league of a league
file's bots and settings, and :class:`DuelWatch` is the runner's ``stop``,
feeding the test (:class:`referee.leaguefile.duel_state.DuelState`) from ``games.jsonl``
before each game starts. A duel ends in one of three ways: H1 accepted, H0
accepted, or *inconclusive* when every scheduled deal (``max_games``) is
played with the log-likelihood ratio still between the bounds
(docs/statistics.md, "How the league runner feeds it").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from referee.common.errors import LeagueError
from referee.leaguefile.duel_state import DuelState, duel_report
from referee.leaguefile.schedule.sprt import Sprt
from referee.protocol.standing import ACTIVE, DISQUALIFIED
from referee.records.results import games_after

if TYPE_CHECKING:
    from referee.leaguefile.config import League

__all__ = ["DuelState", "DuelWatch", "duel_league", "duel_output", "duel_report"]


class DuelWatch:
    """The runner's ``stop``: reads what ``games.jsonl`` gained since the last call and says if the test decided.

    It reads the file from its start on its first call, so a resumed duel
    starts from every game finished before, and a decided one plays nothing
    more.
    """

    def __init__(self, results: Path, state: DuelState) -> None:
        self.results = results
        self.state = state
        self._offset = 0

    def update(self) -> None:
        """Feed the state every whole line added to the results file since the last call."""
        games, self._offset = games_after(self.results, self._offset)
        for game in games:
            self.state.add(game)

    def __call__(self) -> bool:
        self.update()
        return self.state.decided


def duel_league(league: League, sprt: Sprt) -> League:
    """``league`` played as a duel: its bots and settings, ``sprt`` as its format, one round, a name of its own.

    The duel is a league of its own, and a season's edits of the league file
    are that league's: A and B may be any of its bots but a disqualified one
    (a new version against the version it replaced, say), the field is the
    other bots that still play there (neither withdrawn, disqualified nor
    replaced), and every bot of the duel is active and replaces none.
    """
    first, second = sprt.candidates
    for name in sprt.candidates:
        if name not in league.bot_names:
            raise LeagueError(
                f"{league.source}: no bot {name!r} in the league; the bots are: " + ", ".join(league.bot_names)
            )
        bot = league.bot(name)
        if bot.status == DISQUALIFIED:
            raise LeagueError(
                f"{bot.declared_at}: {name} is disqualified"
                + (f" ({bot.status_reason})" if bot.status_reason else "")
                + f" in league {league.name}, and a duel plays no disqualified bot; name another"
            )
    bots = tuple(
        dataclasses.replace(bot, status=ACTIVE, status_reason="", replaces=None)
        for bot in league.bots
        if bot.name in sprt.candidates or bot.plays
    )
    duel = dataclasses.replace(league, bots=bots, format=sprt, rounds=1, name=f"{league.name}-duel-{first}-{second}")
    try:
        sprt.schedule(duel.bot_names, duel.table_size, 1, duel.seed)
    except ValueError as error:
        raise LeagueError(f"{league.source}: no duel can be made: {error}") from None
    return duel


def duel_output(duel: League) -> Path:
    """Where ``referee duel`` writes by default: beside the league file's output, in a folder named for the duel."""
    return duel.output.parent / duel.name
