"""The gauntlet: each candidate plays the same tables of the rest of the field.

``format: {type: gauntlet, candidates: [a, b]}`` and optionally
``games_per_candidate: N``. The *field* is every bot that is not a candidate,
in the league file's order. A *field table* is ``table_size - 1`` field bots;
each candidate joins each field table (seat 0 of rotation 0 is the
candidate's), and the table plays every seat rotation on one seed (duplicate
deals), so a field table gives each candidate ``table_size`` games.
Candidates never meet each other: the field is the yardstick they are
measured against, and standings are for the candidates (each game's record
names its ``candidate``).

The seed of a field table does not depend on the candidate, so every
candidate plays the same deals against the same opponents in the same seats:
two candidates are compared on identical games, as engine testers compare
two engines on the same openings.

Which field tables:

- without ``games_per_candidate``: every combination of ``table_size - 1``
  field bots, ``rounds`` times. A round holds
  ``C(field, table_size - 1) x candidates x table_size`` games. A field table
  of round ``r`` plays on
  ``derive_seed(league_seed, "gauntlet", "round", r, "field", ",".join(sorted(field bots)))``.
- with ``games_per_candidate: N``, for a field too big for every
  combination: ``T = N / table_size`` field tables, rounded to the nearest
  whole table (as in :mod:`referee.leaguefile.schedule.sampled`), drawn once for all
  candidates by the sampled format's draw over the field, with tables of
  ``table_size - 1``: each field bot sits at as many field tables as any
  other, give or take one, and field bots meet each other evenly. Field
  table ``t`` plays on ``derive_seed(league_seed, "gauntlet", "table", t)``;
  the draw's block ``b`` draws from
  ``SeedStream.derive(league_seed, "gauntlet", "block", b)``. One round only
  (``games_per_candidate`` sets the length): ``T x candidates x table_size``
  games.

Games are ordered by round, then field table, then candidate (in the order
of ``candidates``), then rotation, so that at any point of a run the
candidates have played the same field tables, give or take one. Table
numbers count (field table, candidate) pairs within a round:
``table = (field table - 1) x candidates + candidate's position + 1``;
game ids read ``r<round>-t<table>-s<rotation>``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.engine.seeding import derive_seed
from referee.leaguefile.schedule.round_robin import combination_at, tables
from referee.leaguefile.schedule.sampled import MAX_SAMPLED_BOTS
from referee.leaguefile.schedule.sampled_draw import draw_tables
from referee.leaguefile.schedule.scheduled_games import (
    Schedule,
    ScheduledGame,
    check_bots,
    plural,
    rotation_group,
    tables_for_games,
)


@dataclass(frozen=True)
class Gauntlet:
    """``format: {type: gauntlet, candidates: [...], games_per_candidate: N}`` (N optional)."""

    type: ClassVar[str] = "gauntlet"
    candidates: tuple[str, ...]
    games_per_candidate: int | None = None

    def field_tables(self, table_size: int) -> int | None:
        """How many field tables a drawn gauntlet has; None when it plays every combination."""
        if self.games_per_candidate is None:
            return None
        return tables_for_games(self.games_per_candidate, table_size)

    def schedule(self, bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> GauntletSchedule:
        return GauntletSchedule(
            bot_names, self.candidates, table_size, rounds, league_seed, self.field_tables(table_size)
        )

    def written(self) -> dict[str, Any]:
        written: dict[str, Any] = {"type": self.type, "candidates": list(self.candidates)}
        if self.games_per_candidate is not None:
            written["games_per_candidate"] = self.games_per_candidate
        return written


class GauntletSchedule(Schedule):
    """Each of ``candidates`` plays every field table (all combinations, or ``drawn_tables`` drawn ones)."""

    format = Gauntlet.type

    def __init__(
        self,
        bot_names: Sequence[str],
        candidates: Sequence[str],
        table_size: int,
        rounds: int,
        league_seed: int,
        drawn_tables: int | None = None,
    ) -> None:
        check_bots(bot_names, table_size, rounds)
        unknown = [name for name in candidates if name not in bot_names]
        if unknown:
            raise ValueError(f"candidates must be bots of the league; not a bot: {', '.join(unknown)}")
        if not candidates or len(set(candidates)) != len(candidates):
            raise ValueError("a gauntlet needs one or more candidates, each named once")
        self.candidates = tuple(candidates)
        self.field = tuple(name for name in bot_names if name not in self.candidates)
        if len(self.field) < table_size - 1:
            raise ValueError(
                f"each table seats a candidate and {table_size - 1} field bots, "
                f"but the field (the bots that are not candidates) has {len(self.field)}"
            )
        if drawn_tables is not None:
            if rounds != 1:
                raise ValueError(f"a drawn gauntlet has one round (games_per_candidate sets its length), got {rounds}")
            if len(self.field) > MAX_SAMPLED_BOTS:
                raise ValueError(f"a drawn field takes at most {MAX_SAMPLED_BOTS} bots, got {len(self.field)}")
            self.field = tuple(sorted(self.field))
        self.table_size = table_size
        self.rounds = rounds
        self.league_seed = league_seed
        self.drawn_tables = drawn_tables
        self.field_tables = math.comb(len(self.field), table_size - 1) if drawn_tables is None else drawn_tables

    @property
    def tables(self) -> int:
        return self.field_tables * len(self.candidates)

    @property
    def count(self) -> int:
        return self.tables * self.table_size * self.rounds

    def lanes(self, bot: str) -> int:
        """A candidate plays its own tables; a field bot every candidate's tables of its field tables, on one seed."""
        return self.table_size if bot in self.candidates else self.table_size * len(self.candidates)

    def __iter__(self) -> Iterator[ScheduledGame]:
        index = 0
        for round_number in range(1, self.rounds + 1):
            for field_number, field_bots in enumerate(self._field_tables(), 1):
                seed = self._seed(round_number, field_number, field_bots)
                for position, (table_number, candidate) in enumerate(self._seatings(field_number)):
                    table_bots = (candidate, *field_bots)
                    yield from rotation_group(
                        index,
                        round_number,
                        table_number,
                        table_bots,
                        seed,
                        candidate,
                        deal_offset=position * self.table_size,
                    )
                    index += self.table_size

    def game(self, index: int) -> ScheduledGame:
        if self.drawn_tables is not None:
            return super().game(index)  # a draw is made in order: count up to the game
        self._check_index(index)
        per_round = self.tables * self.table_size
        round_number = index // per_round + 1
        table_rank, rotation = divmod(index % per_round, self.table_size)
        field_rank, candidate_rank = divmod(table_rank, len(self.candidates))
        field_bots = combination_at(self.field, self.table_size - 1, field_rank)
        candidate = self.candidates[candidate_rank]
        seed = self._seed(round_number, field_rank + 1, field_bots)
        group = rotation_group(
            index - rotation,
            round_number,
            table_rank + 1,
            (candidate, *field_bots),
            seed,
            candidate,
            deal_offset=candidate_rank * self.table_size,
        )
        return next(itertools.islice(group, rotation, None))

    def summary(self) -> str:
        fill = "drawn field tables" if self.drawn_tables is not None else "field tables"
        return (
            f"{plural(self.count, 'game')}: {plural(self.tables, 'table')} "
            f"({plural(len(self.candidates), 'candidate')} x {self.field_tables:,} {fill} of "
            f"{self.table_size - 1} from a field of {len(self.field)}) x {plural(self.table_size, 'rotation')} x "
            f"{plural(self.rounds, 'round')}"
        )

    def _field_tables(self) -> Iterator[tuple[str, ...]]:
        if self.drawn_tables is None:
            yield from tables(self.field, self.table_size - 1)  # the order combination_at counts in
            return
        draw = draw_tables(len(self.field), self.table_size - 1, self.drawn_tables, self.league_seed, "gauntlet")
        for members in draw:
            yield tuple(self.field[member] for member in sorted(members))

    def _seatings(self, field_number: int) -> Iterator[tuple[int, str]]:
        first = (field_number - 1) * len(self.candidates) + 1
        return enumerate(self.candidates, first)

    def _seed(self, round_number: int, field_number: int, field_bots: Sequence[str]) -> int:
        if self.drawn_tables is None:
            names = ",".join(sorted(field_bots))
            return derive_seed(self.league_seed, "gauntlet", "round", round_number, "field", names)
        return derive_seed(self.league_seed, "gauntlet", "table", field_number)
