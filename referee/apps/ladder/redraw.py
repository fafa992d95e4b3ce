"""A ladder's draws done again from its records alone: the register, ``tables.jsonl`` and the ladder's settings.

Each table is drawn again from the versions active when it was drawn
(:meth:`referee.apps.ladder.history.Register.statuses`), the tables before it,
and, for a table drawn where the ranking was unsure, the places recorded
with it: no game, leaderboard or clock is read. A table drawn again that is
not the table recorded shows a ladder's records were changed, or a draw that
depends on something it does not record.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from referee.apps.ladder.history import DrawnTable, Register
from referee.apps.ladder.table_draw import Played, draw_table
from referee.protocol.standing import ACTIVE


@dataclass(frozen=True)
class Redrawn:
    """A table as recorded, and its bots in seat order as they are drawn again."""

    recorded: DrawnTable
    bots: tuple[str, ...]

    @property
    def same(self) -> bool:
        return self.bots == self.recorded.bots


def redraw(
    tables: Sequence[DrawnTable], register: Register, table_size: int, placement_games: int, seed: int
) -> Iterator[Redrawn]:
    """Every table of ``tables`` (in order, from the first) drawn again; ``seed`` is the ladder's."""
    played = Played()
    for table in tables:
        active = [bot for bot, status in register.statuses(table.number).items() if status == ACTIVE]
        bots = draw_table(active, played, table_size, placement_games, seed, table.number, table.places)
        yield Redrawn(table, bots)
        played = played.with_table(table.bots, table_size)
