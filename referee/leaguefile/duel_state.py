"""A duel's sequential test, fed from its game records deal by deal, and its verdict.

A duel is a league of ``format: {type: sprt, ...}`` (:mod:`referee.leaguefile.schedule.sprt`);
:class:`DuelState` turns its finished games into the test's evidence, in deal
order, whatever order they finished in (docs/statistics.md, "A duel"). The
runner that stops a duel once the test decides is :mod:`referee.apps.duel`; the
verdict's text and data for the leaderboards are :mod:`referee.publish`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from referee.leaguefile.schedule.sprt import Sprt
from referee.records.luck import LuckError
from referee.records.results import GameRecord, LeagueRecord
from referee.records.sequential import Measure, Verdict
from referee.records.standings import LuckOf, folder_luck
from referee.records.stats import DealGame, deal_outcome


class DuelState:
    """A duel's sequential test, fed with game records deal by deal, in deal order (see the module's doc)."""

    def __init__(self, sprt: Sprt, table_size: int, luck_of: LuckOf | None = None) -> None:
        if sprt.adjust_for_luck and luck_of is None:
            raise LuckError("a duel that adjusts for luck needs its games' luck: give the league's output folder")
        self.sprt = sprt
        self.table_size = table_size
        self.luck_of = luck_of if sprt.adjust_for_luck else None  # each game's luck by seat, from its log
        self.scheduled_deals = sprt.deals(table_size)
        self.test = sprt.sequential_test()
        self.deals = 0  # deals counted: each of deals 1..this one is complete and in the test
        self.decided_at: int | None = None  # the deal whose outcome crossed a bound
        self.records = 0  # game records seen, counted or not
        self._pending: dict[int, list[GameRecord]] = {}

    @classmethod
    def of(cls, sprt: Sprt, table_size: int, records: Iterable[GameRecord], luck_of: LuckOf | None = None) -> DuelState:
        state = cls(sprt, table_size, luck_of)
        for record in records:
            state.add(record)
        return state

    def add(self, record: GameRecord) -> None:
        """Take one game's record; count its deal, and any deals after it, once they are complete and due."""
        record = GameRecord.of(record, latencies=False)
        self.records += 1
        if self.decided_at is not None or record.table is None:
            return
        self._pending.setdefault(record.table, []).append(record)
        while len(self._pending.get(self.deals + 1, ())) == self.table_size:
            games = self._pending.pop(self.deals + 1)
            self.deals += 1
            first, second = self.sprt.candidates
            luck_of = self.luck_of
            counted: list[DealGame] = [
                (game.seats, game.finish_order) if luck_of is None else (game.seats, game.finish_order, luck_of(game))
                for game in games
                if not game.void
            ]
            outcome = deal_outcome(counted, first, second)
            if outcome is not None:  # None: every game of the deal was void
                self.test.add(outcome)
            if self.test.verdict is not Verdict.CONTINUE:
                self.decided_at = self.deals
                self._pending.clear()
                return

    @property
    def decided(self) -> bool:
        """Whether a bound has been crossed: the runner starts no more games."""
        return self.decided_at is not None

    @property
    def inconclusive(self) -> bool:
        """Every scheduled deal counted and no bound crossed."""
        return not self.decided and self.deals >= self.scheduled_deals

    @property
    def games_counted(self) -> int:
        return self.deals * self.table_size

    @property
    def games_not_counted(self) -> int:
        """Games recorded beyond the counted deals: running when the verdict came, or of deals not yet complete."""
        return self.records - self.games_counted

    @property
    def outcome(self) -> str | None:
        """``H1``, ``H0``, ``inconclusive``, or None while the duel goes on."""
        if self.test.verdict is Verdict.ACCEPT_H1:
            return "H1"
        if self.test.verdict is Verdict.ACCEPT_H0:
            return "H0"
        return "inconclusive" if self.inconclusive else None

    def headline(self) -> str:
        """The verdict in one line: which hypothesis, after how many deals, and what it says about the two bots."""
        progress = f"{self.deals} deal{'s' if self.deals != 1 else ''} ({self.games_counted} games)"
        if self.decided:
            return f"{self.outcome} accepted after {progress}: {self.claim()}"
        if self.inconclusive:
            return f"inconclusive: no verdict after all {progress} that max_games ({self.sprt.max_games}) allows"
        return f"no verdict yet after {progress} of at most {self.scheduled_deals} deals"

    def claim(self) -> str:
        """What the verdict says about A and B, no more than the test shows."""
        first, second = self.sprt.candidates
        h0, h1 = self.sprt.h0, self.sprt.h1
        if self.test.verdict is Verdict.ACCEPT_H1:
            if h0 >= 0:
                return f"{first} is stronger than {second}"
            return f"{first} is not weaker than {second} by {_amount(self.sprt.measure, -h0)} or more"
        if self.test.verdict is Verdict.ACCEPT_H0:
            if h1 <= 0:
                return f"{second} is stronger than {first}"
            return f"{first} is not stronger than {second} by {_amount(self.sprt.measure, h1)} or more"
        return "neither hypothesis yet"

    def status(self) -> str:
        """A short progress note: deals counted and the log-likelihood ratio between its bounds."""
        lower, upper = self.test.bounds
        return f"{self.deals} deals, LLR {self.test.llr:+.2f} ({lower:+.2f}, {upper:+.2f})"


def _amount(measure: Measure, value: float) -> str:
    return f"{value:g} Elo" if measure is Measure.ELO else f"a mean score difference of {value:g}"


def duel_report(
    league: LeagueRecord | None, records: Iterable[GameRecord], directory: Path | None = None
) -> DuelState | None:
    """The duel of a league (its ``league.json`` record) from its game ``records``; None when it is no duel. A duel
    that adjusts for luck reads its games' logs in the output folder ``directory``: None without it."""
    if league is None or league.format.get("type") != Sprt.type or league.table_size is None:
        return None
    try:
        sprt = Sprt.from_written(dict(league.format))
    except (ValueError, KeyError, TypeError):
        return None
    if sprt is None:
        return None
    if sprt.adjust_for_luck and directory is None:
        return None
    return DuelState.of(sprt, league.table_size, records, folder_luck(directory) if directory else None)
