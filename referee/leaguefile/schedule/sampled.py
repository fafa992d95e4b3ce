"""The sampled format: drawn tables, so that a big field plays a chosen number of games (docs/scheduling.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from referee.engine.seeding import derive_seed
from referee.leaguefile.schedule.meetings import COVER_FROM
from referee.leaguefile.schedule.sampled_draw import draw_blocks
from referee.leaguefile.schedule.scheduled_games import (
    Schedule,
    ScheduledGame,
    check_bots,
    plural,
    rotation_group,
    spaced_shifts,
    tables_for_games,
)
from referee.leaguefile.schedule.seating import Seating

MAX_SAMPLED_BOTS = 2000  # the draw keeps one count per pair of bots


@dataclass(frozen=True)
class Sampled:
    """``format: {type: sampled, games_per_bot: N, rotations: R}``: drawn tables, each bot about ``N`` games.

    ``rotations`` is how many seat rotations a table plays, 1 to ``table_size``; None is ``auto``.
    """

    type: ClassVar[str] = "sampled"
    games_per_bot: int
    rotations: int | None = None

    def rotations_for(self, bots: int, table_size: int) -> int:
        """How many seat rotations a table plays: as written, or as ``auto`` chooses (:func:`auto_rotations`)."""
        if self.rotations is not None:
            return self.rotations
        return auto_rotations(bots, table_size, self.games_per_bot)

    def schedule(self, bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> SampledSchedule:
        if rounds != 1:
            raise ValueError(f"a sampled schedule has one round (games_per_bot sets its length), got {rounds}")
        rotations = self.rotations_for(len(bot_names), table_size)
        return SampledSchedule(
            bot_names,
            table_size,
            tables_for_games(self.games_per_bot, rotations),
            league_seed,
            rotations,
            chosen=self.rotations is None,
        )

    def written(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "games_per_bot": self.games_per_bot,
            "rotations": "auto" if self.rotations is None else self.rotations,
        }


def auto_rotations(bots: int, table_size: int, games_per_bot: int) -> int:
    """``rotations: auto``: every rotation if every pair meets with them, else the most with which every pair
    meets, else (when no number does) every rotation."""
    for rotations in range(table_size, 0, -1):
        if every_pair_meets(bots, table_size, tables_for_games(games_per_bot, rotations)):
            return rotations
    return table_size


def every_pair_meets(bots: int, table_size: int, tables_per_bot: int) -> bool:
    """Whether the draw makes every pair of bots meet: a table holds them all, or pairs meet COVER_FROM times on
    average."""
    return table_size >= bots or tables_per_bot * (table_size - 1) / (bots - 1) >= COVER_FROM


class SampledSchedule(Schedule):
    """Tables drawn so that each bot sits at ``tables_per_bot`` of them and pairs meet evenly.

    Each table plays ``rotations`` seat rotations (all of them when None), evenly spaced; ``chosen`` says
    that ``rotations: auto`` chose them.
    """

    format = Sampled.type
    rounds = 1

    def __init__(
        self,
        bot_names: Sequence[str],
        table_size: int,
        tables_per_bot: int,
        league_seed: int,
        rotations: int | None = None,
        *,
        chosen: bool = False,
    ) -> None:
        check_bots(bot_names, table_size, 1)
        if len(bot_names) > MAX_SAMPLED_BOTS:
            raise ValueError(f"a sampled schedule takes at most {MAX_SAMPLED_BOTS} bots, got {len(bot_names)}")
        if tables_per_bot < 1:
            raise ValueError(f"each bot needs at least one table, got {tables_per_bot}")
        self.bot_names = tuple(sorted(bot_names))
        self.table_size = table_size
        self.tables_per_bot = tables_per_bot
        self.league_seed = league_seed
        self.shifts = spaced_shifts(table_size, table_size if rotations is None else rotations)
        self.chosen = chosen
        self._tables = -(-len(bot_names) * tables_per_bot // table_size)

    @property
    def rotations(self) -> int:
        """How many seat rotations (games) a table plays."""
        return len(self.shifts)

    @property
    def tables(self) -> int:
        return self._tables

    def lanes(self, bot: str) -> int:
        return self.rotations

    @property
    def count(self) -> int:
        return self._tables * self.rotations

    @property
    def extra_seats(self) -> int:
        """Seats of the last table left over once every bot has its ``tables_per_bot``: bots with one table more."""
        return self._tables * self.table_size - len(self.bot_names) * self.tables_per_bot

    def __iter__(self) -> Iterator[ScheduledGame]:
        index = 0
        seating = Seating(len(self.bot_names), self.table_size, self.shifts)
        blocks = draw_blocks(len(self.bot_names), self.table_size, self._tables, self.league_seed)
        orders = (order for block in blocks for order in seating.order(block))
        for table_number, order in enumerate(orders, 1):
            table_bots = tuple(self.bot_names[member] for member in order)
            seed = derive_seed(self.league_seed, "sampled", "table", table_number)
            yield from rotation_group(index, 1, table_number, table_bots, seed, shifts=self.shifts)
            index += self.rotations

    def summary(self) -> str:
        games = self.tables_per_bot * self.rotations
        rotations = plural(self.table_size, "rotation")
        if self.rotations < self.table_size:
            rotations = f"{self.rotations} of {rotations}"
        text = (
            f"{plural(self.count, 'game')}: {plural(self._tables, 'table')} x {rotations}; "
            f"each bot at {plural(self.tables_per_bot, 'table')} ({plural(games, 'game')})"
        )
        if self.extra_seats:
            text += f", {plural(self.extra_seats, 'bot')} at one more ({games + self.rotations} games)"
        return text

    @property
    def note(self) -> str | None:
        if not self.chosen or self.rotations == self.table_size:
            return None
        return (
            f"tables play {self.rotations} of {self.table_size} seat rotations so that every pair of bots meets "
            f"(rotations: {self.table_size} keeps full duplicate deals)"
        )


# ----- the draw ------------------------------------------------------------------------
