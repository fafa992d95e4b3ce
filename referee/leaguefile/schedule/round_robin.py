"""The round-robin: every combination of bots meets at a table, in every seat rotation.

Every combination of ``table_size`` bots is a *table*. Tables are numbered
in the order of :func:`tables`: by their last bot in the league file's
order, so that a bot appended to the file only appends tables, and every
earlier game keeps its game id (a finished league can grow, see
:mod:`referee.apps.league`). A table plays one game per
seat *rotation*: rotation ``r`` seats the table's bots shifted by ``r``
(seat ``i`` gets the table's bot ``(i + r) % table_size``), so each bot sits
in each seat exactly once. The whole schedule is played ``rounds`` times.

Duplicate deals: the games of one *rotation group* (one round, one table)
share one seed, and the engine derives every deck and the first dealer from
the seed (``docs/rules.md``, "Dealing from a seed"). So each hand number
starts with the same deck and the same dealer seat in every rotation: every
bot gets to play every seat's cards, and the luck of the deal evens out.

The seed of a rotation group is::

    derive_seed(league_seed, "round", round, "table", ",".join(sorted(bot names at the table)))

It depends only on the league seed, the round and which bots are at the
table: never on the order games are run, nor on the order of the bots in the
file. Reordering the bots renumbers tables (and so game ids) and changes
which rotation puts whom in seat 0, but every set of bots still plays the
same deals. Bot names cannot hold a comma (see :mod:`referee.leaguefile.config`), so
the joined names are unambiguous.

Games are ordered by round, then table, then rotation; ``index`` is the
position in that order. Game ids read ``r<round>-t<table>-s<rotation>``
(``r1-t003-s2``): rounds and tables count from 1, rotations from 0
(rotation 0 seats the table's bots in file order).

Nothing is listed: the count is ``C(bots, table_size) x table_size x
rounds``, iteration walks the combinations, and :meth:`RoundRobinSchedule.game`
finds the combination of any index directly (its rank in co-lexicographic
order, by the combinatorial number system).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.engine.seeding import derive_seed
from referee.leaguefile.schedule.scheduled_games import Schedule, ScheduledGame, check_bots, plural, rotation_group


@dataclass(frozen=True)
class RoundRobin:
    """``format: {type: round-robin}``, the default: every combination, every rotation, ``rounds`` times."""

    type: ClassVar[str] = "round-robin"

    def schedule(self, bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> RoundRobinSchedule:
        return RoundRobinSchedule(bot_names, table_size, rounds, league_seed)

    def written(self) -> dict[str, Any]:
        """The format as the league file writes it (for fingerprints and ``league.json``)."""
        return {"type": self.type}


class RoundRobinSchedule(Schedule):
    """Every ``table_size`` of ``bot_names`` meet in every rotation, ``rounds`` times."""

    format = RoundRobin.type

    def __init__(self, bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> None:
        check_bots(bot_names, table_size, rounds)
        self.bot_names = tuple(bot_names)
        self.table_size = table_size
        self.rounds = rounds
        self.league_seed = league_seed
        self._tables = math.comb(len(self.bot_names), table_size)

    @property
    def tables(self) -> int:
        return self._tables

    @property
    def count(self) -> int:
        return self._tables * self.table_size * self.rounds

    def __iter__(self) -> Iterator[ScheduledGame]:
        index = 0
        for round_number in range(1, self.rounds + 1):
            for table_number, table_bots in enumerate(tables(self.bot_names, self.table_size), 1):
                seed = table_seed(self.league_seed, round_number, table_bots)
                yield from rotation_group(index, round_number, table_number, table_bots, seed)
                index += self.table_size

    def game(self, index: int) -> ScheduledGame:
        self._check_index(index)
        per_round = self._tables * self.table_size
        round_number = index // per_round + 1
        table_rank, rotation = divmod(index % per_round, self.table_size)
        table_bots = combination_at(self.bot_names, self.table_size, table_rank)
        seed = table_seed(self.league_seed, round_number, table_bots)
        group = rotation_group(index - rotation, round_number, table_rank + 1, table_bots, seed)
        return next(itertools.islice(group, rotation, None))

    def summary(self) -> str:
        return (
            f"{plural(self.count, 'game')}: {plural(self._tables, 'table')} x "
            f"{plural(self.table_size, 'rotation')} x {plural(self.rounds, 'round')}"
        )


def table_seed(league_seed: int, round_number: int, table_bots: Sequence[str]) -> int:
    """Return the seed shared by a rotation group: a function of the round and the set of bots only."""
    return derive_seed(league_seed, "round", round_number, "table", ",".join(sorted(table_bots)))


def tables(bot_names: Sequence[str], table_size: int) -> Iterator[tuple[str, ...]]:
    """Yield every combination of ``table_size`` bots, each in file order, in an order that appending keeps.

    Combinations come in co-lexicographic order: by their last bot in file
    order, then by their second-last, and so on. So the tables of the first
    ``n`` bots come first, in the same order whatever bots follow them, and
    appending a bot to the league only appends tables (``itertools.combinations``
    would interleave them: a, b, c gives ab ac bc, and a, b, c, d gives ab ac
    ad bc bd cd).
    """
    for last in range(table_size - 1, len(bot_names)):
        for rest in tables(bot_names[:last], table_size - 1) if table_size > 1 else [()]:
            yield (*rest, bot_names[last])


def combination_at(items: Sequence[str], size: int, rank: int) -> tuple[str, ...]:
    """Return the ``rank``-th (from 0) of ``tables(items, size)`` without listing the others.

    In co-lexicographic order a combination of positions ``p1 < ... < pk`` has
    rank ``C(p1, 1) + C(p2, 2) + ... + C(pk, k)``; the positions are found
    from the last down, each the largest whose term still fits the rank left.
    """
    positions = []
    below = len(items)  # every position left to choose lies below this
    for place in range(size, 0, -1):
        low, high = place - 1, below - 1  # the largest position p < below with C(p, place) <= rank
        while low < high:
            middle = (low + high + 1) // 2
            if math.comb(middle, place) <= rank:
                low = middle
            else:
                high = middle - 1
        positions.append(low)
        rank -= math.comb(low, place)
        below = low
    return tuple(items[position] for position in reversed(positions))
