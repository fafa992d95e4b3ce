"""The league schedule: who meets whom, in which seats, with which deals.

Every combination of ``table_size`` bots (``itertools.combinations`` of the
bots in the league file's order) is a *table*. A table plays one game per
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
same deals. Bot names cannot hold a comma (see :mod:`referee.config`), so
the joined names are unambiguous.

Games are ordered by round, then table, then rotation; ``index`` is the
position in that order. Game ids read ``r<round>-t<table>-s<rotation>``
(``r1-t003-s2``): rounds and tables count from 1, rotations from 0
(rotation 0 seats the table's bots in file order).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate

from referee.config import League
from referee.seeding import derive_seed


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule: its place, its identity, who sits where, and its seed."""

    index: int  # position in the schedule, from 0: the canonical order of results
    game_id: str
    round: int  # from 1
    table: int  # from 1: which combination of bots
    rotation: int  # from 0: how far the table's bots are shifted round the seats
    seats: tuple[str, ...]  # bot name by seat
    seed: int

    def record(self) -> dict:
        """The schedule's part of the game's ``games.jsonl`` record."""
        return {
            "index": self.index,
            "game_id": self.game_id,
            "round": self.round,
            "table": self.table,
            "rotation": self.rotation,
            "seed": self.seed,
            "seats": list(self.seats),
        }


def schedule(league: League) -> list[ScheduledGame]:
    """Return every game of ``league`` in the canonical order."""
    return schedule_games(league.bot_names, league.table_size, league.rounds, league.seed)


def schedule_games(bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> list[ScheduledGame]:
    """Return the games where every ``table_size`` of ``bot_names`` meet in every rotation, ``rounds`` times."""
    if len(set(bot_names)) != len(bot_names):
        repeated = sorted({name for name in bot_names if list(bot_names).count(name) > 1})
        raise ValueError(f"bot names must be unique; repeated: {', '.join(repeated)}")
    if not 1 <= table_size <= len(bot_names):
        raise ValueError(f"a table of {table_size} cannot be filled from {len(bot_names)} bots")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    tables = list(itertools.combinations(bot_names, table_size))
    games: list[ScheduledGame] = []
    for round_number in range(1, rounds + 1):
        for table_number, table_bots in enumerate(tables, start=1):
            seed = table_seed(league_seed, round_number, table_bots)
            for rotation in range(table_size):
                games.append(
                    ScheduledGame(
                        index=len(games),
                        game_id=game_id(round_number, table_number, rotation),
                        round=round_number,
                        table=table_number,
                        rotation=rotation,
                        seats=rotate(table_bots, rotation),
                        seed=seed,
                    )
                )
    return games


def table_seed(league_seed: int, round_number: int, table_bots: Sequence[str]) -> int:
    """Return the seed shared by a rotation group: a function of the round and the set of bots only."""
    return derive_seed(league_seed, "round", round_number, "table", ",".join(sorted(table_bots)))


def rotate(table_bots: Sequence[str], rotation: int) -> tuple[str, ...]:
    """Seat the table's bots shifted by ``rotation``: seat ``i`` gets bot ``(i + rotation) % size``."""
    size = len(table_bots)
    return tuple(table_bots[(seat + rotation) % size] for seat in range(size))


def game_id(round_number: int, table_number: int, rotation: int) -> str:
    return f"r{round_number}-t{table_number:03d}-s{rotation}"


def format_schedule(games: Sequence[ScheduledGame]) -> str:
    """Return the schedule as a summary line and a table, for ``referee schedule``."""
    if not games:
        return "no games"
    tables = len({(game.round, game.table) for game in games}) // len({game.round for game in games})
    rotations = len({game.rotation for game in games})
    rounds = len({game.round for game in games})
    summary = (
        f"{len(games)} game{'s' if len(games) != 1 else ''}: "
        f"{_count(tables, 'table')} x {_count(rotations, 'rotation')} x {_count(rounds, 'round')}"
    )
    seat_count = max(len(game.seats) for game in games)
    headers = ["#", "game", "round", "table", "rotation", *(f"seat {seat}" for seat in range(seat_count)), "seed"]
    rows = [
        [game.index, game.game_id, game.round, game.table, game.rotation, *game.seats, game.seed] for game in games
    ]
    seat_columns = list(range(5, 5 + seat_count))  # a bot called "1e5" is a name, not a number
    return summary + "\n\n" + tabulate(rows, headers=headers, disable_numparse=seat_columns)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"
