"""The league schedule: who meets whom, in which seats, with which deals, in which order.

The league file's ``format:`` key chooses how tables are made:

- ``round-robin`` (the default, :mod:`referee.leaguefile.schedule.round_robin`): every
  combination of bots, ``rounds`` times;
- ``sampled`` (:mod:`referee.leaguefile.schedule.sampled`): tables drawn so that each bot
  plays about ``games_per_bot`` games and pairs meet evenly;
- ``gauntlet`` (:mod:`referee.leaguefile.schedule.gauntlet`): each candidate plays the
  same tables of the rest of the field;
- ``sprt`` (:mod:`referee.leaguefile.schedule.sprt`): two candidates on the same deals,
  until a sequential test decides (the runner stops it: :mod:`referee.apps.duel`).

In every format a *table* (a set of bots) plays one game per seat rotation,
all on one seed, so each bot plays each seat's cards (duplicate deals); a
sampled table may play only some rotations, evenly spaced (``rotations``).
Every seed comes from the league seed (:func:`referee.engine.seeding.derive_seed`),
never from the order games run in. A schedule is lazy (:class:`Schedule`):
its size is a closed form and its games are made as they are reached, so a
schedule of any size answers at once and holds no list of games. The order
of games, and so each game's ``index`` and ``game_id``, is fixed by the
league file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from referee.leaguefile.schedule.gauntlet import Gauntlet, GauntletSchedule
from referee.leaguefile.schedule.round_robin import RoundRobin, RoundRobinSchedule, combination_at, table_seed
from referee.leaguefile.schedule.sampled import MAX_SAMPLED_BOTS, Sampled, SampledSchedule
from referee.leaguefile.schedule.scheduled_games import Schedule, ScheduledGame, game_id, rotate, tables_for_games
from referee.leaguefile.schedule.sprt import Sprt, SprtSchedule

Format = RoundRobin | Sampled | Gauntlet | Sprt
FORMATS: dict[str, type[RoundRobin | Sampled | Gauntlet | Sprt]] = {
    RoundRobin.type: RoundRobin,
    Sampled.type: Sampled,
    Gauntlet.type: Gauntlet,
    Sprt.type: Sprt,
}

__all__ = [
    "FORMATS",
    "MAX_SAMPLED_BOTS",
    "Format",
    "Gauntlet",
    "GauntletSchedule",
    "RoundRobin",
    "RoundRobinSchedule",
    "Sampled",
    "SampledSchedule",
    "Schedule",
    "ScheduledGame",
    "Sprt",
    "SprtSchedule",
    "combination_at",
    "game_id",
    "json_lines",
    "rotate",
    "schedule_games",
    "table_lines",
    "table_seed",
    "tables_for_games",
]


def schedule_games(bot_names: Sequence[str], table_size: int, rounds: int, league_seed: int) -> RoundRobinSchedule:
    """Return the round-robin where every ``table_size`` of ``bot_names`` meet in every rotation, ``rounds`` times."""
    return RoundRobinSchedule(bot_names, table_size, rounds, league_seed)


def table_lines(games: Schedule, *, seeds: bool = False) -> Iterator[str]:
    """Yield the schedule for people: a summary, then a table of every game, row by row (the seeds only if asked).

    Column widths come from what the schedule can hold (the largest index,
    round and table, the longest bot name), not from its rows, so the rows
    stream out however many there are.
    """
    yield games.summary()
    if not games.count:
        return
    names = _bot_names(games)
    last = games.count - 1
    headers = ["#", "game", "round", "table", "rotation", *(f"seat {seat}" for seat in range(games.table_size))]
    headers += (["seed"] if seeds else []) + (["candidate"] if isinstance(games, GauntletSchedule) else [])
    widths = [
        len(str(last)), len(game_id(games.rounds, games.tables, games.table_size - 1)), len(str(games.rounds)),
        len(str(games.tables)), len(str(games.table_size - 1)), *([max(map(len, names))] * games.table_size),
        *([20] if seeds else []),  # a 64-bit seed has at most 20 digits
    ]  # fmt: skip
    if isinstance(games, GauntletSchedule):
        widths.append(max(map(len, games.candidates)))
    widths = [max(width, len(header)) for width, header in zip(widths, headers, strict=True)]
    numeric = {0, 2, 3, 4, *([5 + games.table_size] if seeds else [])}  # right-aligned, like numbers in a table

    def row(cells: Sequence[object]) -> str:
        return "  ".join(
            str(cell).rjust(width) if column in numeric else str(cell).ljust(width)
            for column, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    yield ""
    yield row(headers)
    yield "  ".join("-" * width for width in widths)
    for game in games:
        cells = [
            game.index,
            game.game_id,
            game.round,
            game.table,
            game.rotation,
            *game.seats,
            *([game.seed] if seeds else []),
        ]
        if isinstance(games, GauntletSchedule):
            cells.append(game.candidate)
        yield row(cells)


def _bot_names(games: Schedule) -> tuple[str, ...]:
    if isinstance(games, GauntletSchedule):
        return games.candidates + games.field
    if isinstance(games, RoundRobinSchedule | SampledSchedule | SprtSchedule):
        return games.bot_names
    raise TypeError(f"a schedule of format {games.format} has no list of bots")
