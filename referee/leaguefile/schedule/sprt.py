"""The sequential test (SPRT): two candidates on the same deals, until the evidence is clear.

``format: {type: sprt, candidates: [A, B], elo0: 0, elo1: 10, alpha: 0.05,
beta: 0.05, max_games: N}`` (or ``difference0`` and ``difference1`` for a
test on the mean score difference; ``alpha`` and ``beta`` default to 0.05,
``max_games`` to :data:`DEFAULT_MAX_GAMES`). The test itself is
:class:`referee.records.sequential.SequentialTest`; this module says which games feed it.

A *deal* is one table of A, B and ``table_size - 2`` field bots (every bot
that is not a candidate, in the league file's order; at a table of two, A
and B alone), played in every seat rotation on one seed, so A and B each
play every seat's cards against the same opponents. Deal ``d`` (from 1):

- plays on ``derive_seed(league_seed, "sprt", "deal", d)``: the deals do not
  depend on the bots' names, so a duel of A with C plays the same cards as
  one of A with B;
- seats A in seat 0 of rotation 0 and B ``o = 1 + (d - 1) mod (table_size -
  1)`` seats after it, so over ``table_size - 1`` deals B sits at every
  distance from A (who plays just after whom matters at a table of three
  or more);
- fills the other seats, in order, with field bots ``s x k`` to ``s x k + k
  - 1`` (``k = table_size - 2``, ``s = (d - 1) div (table_size - 1)``) of
  the field taken round and round: a field table is played at each of B's
  distances in turn, and every field bot sits at as many field tables as
  any other, give or take one.

Deals come in order, one round: deal ``d`` is games ``(d - 1) x table_size``
to ``d x table_size - 1``, with game ids ``r1-t<deal>-s<rotation>``. The
schedule holds ``max_games // table_size`` deals; the runner stops as soon
as the test decides (``referee.apps.duel``), so most of them are never played.
Deal ``d`` is the same whatever ``max_games``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.engine.seeding import derive_seed
from referee.leaguefile.schedule.scheduled_games import Schedule, ScheduledGame, check_bots, plural, rotation_group
from referee.records.luck import MODEL as LUCK_MODEL
from referee.records.sequential import Measure, SequentialTest, describe_hypothesis

DEFAULT_MAX_GAMES = 10_000  # a duel's bound when the league file sets none: about an hour of the sample bots
DEFAULT_ERROR_RATE = 0.05  # alpha and beta when the league file sets none, as fastchess's examples use
MAX_ELO = 1000.0  # an Elo hypothesis beyond this means a share above outside 0.3%..99.7%: no useful test
# The league file's names of H0 and H1 for each measure.
HYPOTHESIS_KEYS = {Measure.ELO: ("elo0", "elo1"), Measure.SCORE_DIFFERENCE: ("difference0", "difference1")}


@dataclass(frozen=True)
class Sprt:
    """``format: {type: sprt, ...}``: the candidates, the hypotheses and error rates, and the bound on games."""

    type: ClassVar[str] = "sprt"
    candidates: tuple[str, str]
    measure: Measure
    h0: float  # elo0 or difference0: A's advantage under H0
    h1: float  # elo1 or difference1: under H1
    alpha: float = DEFAULT_ERROR_RATE
    beta: float = DEFAULT_ERROR_RATE
    max_games: int = DEFAULT_MAX_GAMES
    adjust_for_luck: bool = False  # test on each deal's scores less their luck (referee.records.luck)

    def deals(self, table_size: int) -> int:
        """How many deals the schedule holds: as many whole deals as ``max_games`` allows, at least one."""
        return max(1, self.max_games // table_size)

    def sequential_test(self) -> SequentialTest:
        """A fresh test with this format's hypotheses and error rates."""
        return SequentialTest(self.measure, self.h0, self.h1, self.alpha, self.beta, adjusted=self.adjust_for_luck)

    def schedule(self, bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> SprtSchedule:
        if rounds != 1:
            raise ValueError(f"a duel has one round (max_games sets its length), got {rounds}")
        return SprtSchedule(bot_names, self.candidates, table_size, self.deals(table_size), league_seed, self)

    def written(self) -> dict[str, Any]:
        first, second = HYPOTHESIS_KEYS[self.measure]
        return {  # from_written reads it back
            "type": self.type,
            "candidates": list(self.candidates),
            first: self.h0,
            second: self.h1,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_games": self.max_games,
            # The value function the luck is measured with: another would change the verdict on the same games.
            **({"adjust_for_luck": True, "luck_model": LUCK_MODEL.describe()} if self.adjust_for_luck else {}),
        }

    @classmethod
    def from_written(cls, written: Mapping[str, Any]) -> Sprt | None:
        """The format :meth:`written` wrote (``league.json`` keeps it); None for another format."""
        if written.get("type") != cls.type:
            return None
        measure = Measure.ELO if "elo0" in written else Measure.SCORE_DIFFERENCE
        first, second = HYPOTHESIS_KEYS[measure]
        bot, other = written["candidates"]
        return cls(
            (str(bot), str(other)),
            measure,
            float(written[first]),
            float(written[second]),
            float(written["alpha"]),
            float(written["beta"]),
            int(written["max_games"]),
            bool(written.get("adjust_for_luck", False)),
        )

    def hypotheses(self) -> str:
        """``elo 0 against elo +10, alpha 0.05, beta 0.05``: the test in one phrase."""
        return (
            f"{describe_hypothesis(self.measure, self.h0)} against {describe_hypothesis(self.measure, self.h1)}, "
            f"alpha {self.alpha:g}, beta {self.beta:g}" + (", the luck taken out" if self.adjust_for_luck else "")
        )


class SprtSchedule(Schedule):
    """Deals of the two candidates with field bots, in order; see the module's doc."""

    format = Sprt.type
    rounds = 1

    def __init__(
        self,
        bot_names: Sequence[str],
        candidates: Sequence[str],
        table_size: int,
        deals: int,
        league_seed: int,
        test: Sprt | None = None,
    ) -> None:
        check_bots(bot_names, table_size, 1)
        if table_size < 2:
            raise ValueError(f"a duel seats both candidates, so it needs tables of 2 or more, got {table_size}")
        unknown = [name for name in candidates if name not in bot_names]
        if unknown:
            raise ValueError(f"candidates must be bots of the league; not a bot: {', '.join(unknown)}")
        if len(candidates) != 2 or candidates[0] == candidates[1]:
            raise ValueError(f"a duel has two different candidates, got {', '.join(candidates) or 'none'}")
        if deals < 1:
            raise ValueError(f"a duel needs at least one deal, got {deals}")
        self.candidates = (candidates[0], candidates[1])
        self.field = tuple(name for name in bot_names if name not in self.candidates)
        if len(self.field) < table_size - 2:
            raise ValueError(
                f"each table seats both candidates and {table_size - 2} field bots, "
                f"but the field (the bots that are not candidates) has {len(self.field)}"
            )
        self.bot_names = tuple(bot_names)
        self.table_size = table_size
        self.league_seed = league_seed
        self.deals = deals
        self.test = test

    @property
    def tables(self) -> int:
        return self.deals

    @property
    def count(self) -> int:
        return self.deals * self.table_size

    def deal_bots(self, deal: int) -> tuple[str, ...]:
        """Rotation 0's seats of deal ``deal`` (from 1): A in seat 0, B ``o`` seats after it, the field around."""
        steps = self.table_size - 1
        distance = 1 + (deal - 1) % steps
        fill = self.table_size - 2
        start = (deal - 1) // steps * fill
        field = iter([self.field[(start + place) % len(self.field)] for place in range(fill)])
        first, second = self.candidates
        return tuple(
            first if seat == 0 else second if seat == distance else next(field) for seat in range(self.table_size)
        )

    def deal_seed(self, deal: int) -> int:
        return derive_seed(self.league_seed, "sprt", "deal", deal)

    def __iter__(self) -> Iterator[ScheduledGame]:
        for deal in range(1, self.deals + 1):
            yield from self._group(deal)

    def game(self, index: int) -> ScheduledGame:
        self._check_index(index)
        deal, rotation = divmod(index, self.table_size)
        return next(itertools.islice(self._group(deal + 1), rotation, None))

    def _group(self, deal: int) -> Iterator[ScheduledGame]:
        first_index = (deal - 1) * self.table_size
        return rotation_group(first_index, 1, deal, self.deal_bots(deal), self.deal_seed(deal))

    def summary(self) -> str:
        first, second = self.candidates
        field = f" with {self.table_size - 2} of a field of {len(self.field)}" if self.table_size > 2 else ""
        until = f" ({self.test.hypotheses()})" if self.test is not None else ""
        return (
            f"at most {plural(self.count, 'game')}: {plural(self.deals, 'deal')} of {first} and {second}{field} "
            f"x {plural(self.table_size, 'rotation')}, until the sequential test decides{until}"
        )
