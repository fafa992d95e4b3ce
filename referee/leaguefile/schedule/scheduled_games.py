"""What every format's schedule shares: the scheduled game, the lazy schedule, seats and game ids."""

from __future__ import annotations

import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.records.results import seed_text


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule: its place, its identity, who sits where, and its seed."""

    index: int  # position in the schedule, from 0: the canonical order of results
    game_id: str
    round: int  # from 1
    table: int  # from 1: which table of the round (a set of bots and, in a gauntlet, a candidate)
    rotation: int  # from 0: how far the table's bots are shifted round the seats
    seats: tuple[str, ...]  # bot name by seat
    seed: int
    candidate: str | None = None  # a gauntlet's candidate at this table; None in other formats
    # Where the game falls among the games on its seed (which game it is does not depend on it: not compared).
    # place: from 0, among its table's games (its rotation, when every rotation is played); deal_offset: the games
    # on this seed before the table's own, in the order of the schedule (a gauntlet's field tables play theirs once
    # per candidate, so a field bot plays place p of candidate c's table as its (c x table_size + p)-th).
    place: int = field(default=0, compare=False)
    deal_offset: int = field(default=0, compare=False)
    # Where its log and notes go, inside the league's output folder: None, the league's own games/ and notes/; an
    # author's test on a ladder (referee.apps.ladder.author_tests) keeps its games in a folder of its own.
    folder: str | None = field(default=None, compare=False)

    def lane(self, bot: str) -> int:
        """Which of its games on this game's seed ``bot`` plays here, from 0: a process plays one lane only.

        The games a bot plays on one seed (the same deals) have different
        lanes, so a process that plays the games of one lane never sees a
        deal twice (referee.backends.pool).
        """
        return self.place if bot == self.candidate else self.deal_offset + self.place

    def record(self) -> dict[str, Any]:
        """The schedule's part of the game's ``games.jsonl`` record."""
        record = {
            "index": self.index,
            "game_id": self.game_id,
            "round": self.round,
            "table": self.table,
            "rotation": self.rotation,
            "seed": self.seed,
            "seats": list(self.seats),
        }
        if self.candidate is not None:
            record["candidate"] = self.candidate
        return record


class Schedule(ABC):
    """The games of a league in their canonical order, made on demand.

    A schedule never holds its games: ``count`` (and ``len``) is a closed
    form, iteration makes each game as it is reached, and :meth:`game` finds
    one game by its index. So a schedule of any size costs the same memory.
    """

    format: str  # the format's name, as the league file writes it
    table_size: int
    rounds: int

    @property
    @abstractmethod
    def count(self) -> int:
        """How many games the schedule holds (any size: ``len`` stops at ``sys.maxsize``)."""

    @property
    @abstractmethod
    def tables(self) -> int:
        """How many tables (rotation groups) a round holds."""

    @abstractmethod
    def __iter__(self) -> Iterator[ScheduledGame]:
        """Yield every game in order of ``index``."""

    @abstractmethod
    def summary(self) -> str:
        """One line for people: how many games, and how they are made up."""

    @property
    def note(self) -> str | None:
        """One line for people about a choice the referee made for the league (`validate` and `run` print it)."""
        return None

    def lanes(self, bot: str) -> int:
        """How many lanes ``bot`` plays in: the most games it plays on one seed (see :meth:`ScheduledGame.lane`)."""
        return self.table_size

    def __len__(self) -> int:
        return self.count

    def game(self, index: int) -> ScheduledGame:
        """Return the game at ``index``; formats that can compute it directly do so, others count up to it."""
        self._check_index(index)
        return next(itertools.islice(iter(self), index, None))

    def __getitem__(self, index: int | slice) -> ScheduledGame | list[ScheduledGame]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self.count)
            if step > 0:
                return list(itertools.islice(iter(self), start, stop, step))
            return [self.game(position) for position in range(start, stop, step)]
        if index < 0:
            index += self.count
        return self.game(index)

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.count:
            raise IndexError(f"game {index} is outside the schedule of {self.count} games")


def rotate(table_bots: Sequence[str], rotation: int) -> tuple[str, ...]:
    """Seat the table's bots shifted by ``rotation``: seat ``i`` gets bot ``(i + rotation) % size``."""
    size = len(table_bots)
    return tuple(table_bots[(seat + rotation) % size] for seat in range(size))


def game_id(round_number: int, table_number: int, rotation: int) -> str:
    """The game's id: ``r<round>-t<table>-s<rotation>``, the table written with at least three digits."""
    return f"r{round_number}-t{table_number:03d}-s{rotation}"


def rotation_group(
    first_index: int,
    round_number: int,
    table_number: int,
    table_bots: Sequence[str],
    seed: int,
    candidate: str | None = None,
    shifts: Sequence[int] | None = None,
    deal_offset: int = 0,
) -> Iterator[ScheduledGame]:
    """Yield a table's games, all on the same seed (duplicate deals): one per seat rotation, or per shift of ``shifts``.

    A game's ``rotation`` is its shift (so ``shifts`` of 0, 2 and 4 make game ids ending in ``-s0``, ``-s2``
    and ``-s4``); its index counts the games of the group from ``first_index``, and its ``place`` from 0.
    ``deal_offset``: the games played on the same seed before this group (see :meth:`ScheduledGame.lane`).
    """
    for place, rotation in enumerate(range(len(table_bots)) if shifts is None else shifts):
        yield ScheduledGame(
            index=first_index + place,
            game_id=game_id(round_number, table_number, rotation),
            round=round_number,
            table=table_number,
            rotation=rotation,
            seats=rotate(table_bots, rotation),
            seed=seed,
            candidate=candidate,
            place=place,
            deal_offset=deal_offset,
        )


def spaced_shifts(table_size: int, rotations: int) -> tuple[int, ...]:
    """The shifts of ``rotations`` seat rotations spread evenly round a table: ``k x table_size // rotations``.

    6 seats: 3 rotations are shifts 0, 2, 4; 2 are 0, 3; 4 are 0, 1, 3, 4; 6 are every shift.
    """
    if not 1 <= rotations <= table_size:
        raise ValueError(f"a table of {table_size} has 1 to {table_size} seat rotations, got {rotations}")
    return tuple(k * table_size // rotations for k in range(rotations))


def tables_for_games(games: int, rotations: int) -> int:
    """How many tables give a bot ``games`` games: a table gives each of its bots one game per rotation it plays.

    Pass ``table_size`` when tables play every rotation. Rounded to the
    nearest whole table, halves up (31 games at 6 rotations are 5 tables,
    33 are 6), and at least one.
    """
    return max(1, (2 * games + rotations) // (2 * rotations))


def check_bots(bot_names: Sequence[str], table_size: int, rounds: int) -> None:
    """Raise ``ValueError`` when no schedule can be made: repeated names, too few bots, or no rounds."""
    if len(set(bot_names)) != len(bot_names):
        repeated = sorted({name for name in bot_names if list(bot_names).count(name) > 1})
        raise ValueError(f"bot names must be unique; repeated: {', '.join(repeated)}")
    if not 1 <= table_size <= len(bot_names):
        raise ValueError(f"a table of {table_size} cannot be filled from {len(bot_names)} bots")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")


def plural(number: int, noun: str) -> str:
    """``3 tables``, ``1 round``, ``1,200 games``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def schedule_json(game: ScheduledGame, *, seeds: bool) -> dict[str, Any]:
    """A scheduled game as ``referee schedule --json`` prints it: its record's schedule fields, the seed only if asked."""
    data = {
        "index": game.index,
        "game_id": game.game_id,
        "round": game.round,
        "table": game.table,
        "rotation": game.rotation,
    }
    if seeds:
        data["seed"] = seed_text(game.seed)
    data["seats"] = list(game.seats)
    if game.candidate is not None:
        data["candidate"] = game.candidate
    return data


def schedule_json_lines(games: Iterable[ScheduledGame], *, seeds: bool = False) -> Iterator[str]:
    """Yield one JSON object per game (its ``games.jsonl`` schedule fields), for ``referee schedule --json``.

    A game's seed gives away its every deal: it is printed only with ``seeds``, as a string of digits.
    """
    for game in games:
        yield json.dumps(schedule_json(game, seeds=seeds), separators=(",", ":"))
