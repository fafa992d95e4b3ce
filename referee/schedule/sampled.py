"""The sampled format: drawn tables, so that a big field plays a chosen number of games.

``format: {type: sampled, games_per_bot: N, rotations: R}``. A *table* is a
set of ``table_size`` bots; it plays ``R`` of its seat rotations, all on one
seed (duplicate deals), so a table gives each of its bots ``R`` games. ``R``
is 1 to ``table_size``, or ``auto`` (the default, below). The ``R``
rotations are spread evenly round the table: shifts ``k x table_size // R``
for ``k`` from 0 (:func:`referee.schedule.base.spaced_shifts`; at tables of
6, 3 rotations are shifts 0, 2, 4, and 2 are 0, 3). A bot plays
``T = N / R`` tables, rounded to the nearest whole table (halves up, at least
one): 30 games at 6 rotations are 5 tables, 31 are 5 tables too, 33 are 6.

The draw guarantees:

- **Games per bot.** ``tables = ceil(bots x T / table_size)``. When
  ``bots x T`` is a multiple of ``table_size`` every bot sits at exactly ``T``
  tables; otherwise the seats left over in the last table go to a few bots
  (fewer than ``table_size``), who sit at ``T + 1``. So every bot plays
  ``T x R`` games, a few bots ``R`` more, none fewer.
- **Meetings.** Two bots *meet* when they sit at the same table (and so play
  its ``R`` games together). A bot has ``T x (table_size - 1)`` opponents'
  seats for ``bots - 1`` opponents, so pairs meet
  ``average = T x (table_size - 1) / (bots - 1)`` times on average, and every
  pair can meet only when that is at least 1. The draw spreads meetings
  evenly: the numbers of times any two pairs meet differ by at most 2; and
  when the average is COVER_FROM (1.5) or more, every pair meets. Both are
  for tables of 2 to 6: the tests check them on every league of up to 30 bots
  with 1 to 8 tables per bot, and ``bench/schedule.py`` on random leagues of
  up to 60 bots. With tables of 7 to 10 the draw aims for the same, but a
  tight league (few bots for the table size) can end with counts 3 to 5
  apart: each swap there moves so many meetings at once that the search
  stalls short of the band.
- **Seats.** With fewer rotations than seats, the order a table seats its
  bots in decides which seats each gets; :mod:`referee.schedule.seating`
  chooses it so that every bot sits in every seat as evenly as its games
  allow (exactly, to within one game, when ``R`` divides ``table_size``).

``rotations: auto`` (:func:`auto_rotations`) trades rotations for tables, and
so for meetings: every rotation when that makes every pair meet (an average
of COVER_FROM or more, or one table holding every bot); otherwise the most
rotations that do; otherwise (no number does) every rotation. 30 bots at
tables of 6 with 30 games each: 6 rotations are 5 tables (an average of
0.86), 5 are 6 (1.03), 4 are 8 (1.38), 3 are 10 (1.72): 3 rotations. The
schedule's :attr:`SampledSchedule.note` then says so in one line, which
``referee validate`` and ``referee run`` print.

How: the draw works in *blocks* of about 4,096 seats (a small league is one
block); in a block each bot has a quota of tables. Tables are first filled
greedily: each seat goes to the bot, among those with the most tables still
to play, that has met the bots already at the table least often (ties broken
by a seeded order). Then a seeded annealing search improves the block with
two moves that keep every quota: a *swap* of two bots at different tables,
and a *handover* of an extra table from one bot to another. It first brings
every pair's count towards the average (weighing a count by the cube of its
distance from it); if counts still spread by more than 2 it pulls every pair
into a band of three counts (an annealing aimed at the pairs outside it,
then a tabu search for small blocks), and when the average allows, into the
band that starts at 1; a step that leaves the draw worse is undone. A block
that still breaks a guarantee is drawn again, at most three times, and the
best kept. Meetings carry over to the next block, so the draw holds one
block and one count per pair (at most 2,000 bots) whatever its length. The
draw knows nothing of rotations: only how many tables each bot sits at.

Seeds, all from the league seed (:func:`referee.seeding.derive_seed` and
:class:`referee.seeding.SeedStream`):

- block ``b`` (from 0) draws from ``SeedStream.derive(league_seed, "sampled", "block", b)``;
- table ``t`` (from 1) plays on ``derive_seed(league_seed, "sampled", "table", t)``.

The draw sees the bots sorted by name, so the order of the bots in the
league file changes nothing; with every rotation, shift 0 seats a table's
bots in name order. Games are numbered by table, then rotation, as one
round: game ids read ``r1-t<table>-s<rotation>``, where a game's
``rotation`` is its shift (a table of 3 rotations of 6 plays ``-s0``,
``-s2``, ``-s4``), so ``seats`` is always the table's order shifted by
``rotation``. Blocks before the last are the same whatever
``games_per_bot``, so a longer league of the same bots and rotations starts
with the same tables, seated alike, as a shorter one, up to the shorter
one's last block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from referee.schedule.base import (
    Schedule, ScheduledGame, check_bots, plural, rotation_group, spaced_shifts, tables_for_games,
)  # fmt: skip
from referee.schedule.seating import Seating
from referee.seeding import SeedStream, derive_seed

MAX_SAMPLED_BOTS = 2000  # the draw keeps one count per pair of bots
MAX_SPREAD = 2  # the most two pairs' meeting counts may differ
COVER_FROM = 1.5  # the average meetings a pair from which every pair meets
BLOCK_SEATS = 4096  # seats drawn and improved together (a block holds at most 65,536: see _anneal)
CANDIDATES = 64  # bots weighed for a seat by the greedy fill, at most (a seeded sample when more could take it)
SEARCH_STEPS_PER_SEAT = 300  # annealing steps, per seat of the block ...
MIN_SEARCH_STEPS = 50_000  # ... and at least this many: small blocks are cheap, so search them thoroughly
REPAIR_STEPS_PER_SEAT = 1000  # annealing steps of a repair, per seat (only tight blocks need one)
REPAIR_BANDS = 2  # bands of counts each attempt tries to pull every pair into
ATTEMPTS = 3  # draws of a block whose pairs still spread too far
TABU_MAX_SEATS = 1200  # the tabu search weighs every move of a seat: small blocks only
TABU_STEPS = 200
TABU_MOVERS = 8  # seats whose moves a tabu step weighs
TABU_WEIGHINGS = 1_000_000  # moves a tabu search weighs, at most (about a second)
TABU_TENURE = 7  # steps a moved bot stays put
_START_TEMPERATURE = 1.0
_REPAIR_TEMPERATURE = 1.0
_AIM_SCAN = 32  # seats a repair step looks through for a bot of a pair outside the band
_CHANCE_UNIT = 2.0**-29  # 29 bits of a draw make a number in [0, 1)

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
            bot_names, table_size, tables_for_games(self.games_per_bot, rotations), league_seed, rotations,
            chosen=self.rotations is None,
        )  # fmt: skip

    def written(self) -> dict:
        return {
            "type": self.type, "games_per_bot": self.games_per_bot,
            "rotations": "auto" if self.rotations is None else self.rotations,
        }  # fmt: skip


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
        self, bot_names: Sequence[str], table_size: int, tables_per_bot: int, league_seed: int,
        rotations: int | None = None, *, chosen: bool = False,
    ) -> None:  # fmt: skip
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


def draw_tables(
    bots: int, table_size: int, table_count: int, league_seed: int, label: str = "sampled"
) -> Iterator[list[int]]:
    """Yield ``table_count`` tables of bot numbers (0 to ``bots - 1``), block by block (see :func:`draw_blocks`)."""
    for block in draw_blocks(bots, table_size, table_count, league_seed, label):
        yield from block


def draw_blocks(
    bots: int, table_size: int, table_count: int, league_seed: int, label: str = "sampled"
) -> Iterator[list[list[int]]]:
    """Yield the blocks of a draw of ``table_count`` tables of bot numbers (0 to ``bots - 1``), each a list of tables.

    Each bot sits at ``table_count x table_size // bots`` tables, and the
    seats left over go one each to as many bots. Block ``b`` draws from
    ``SeedStream.derive(league_seed, label, "block", b)``.
    """
    draw = _Draw(bots, table_size)
    tables_per_bot, extra_seats = divmod(table_count * table_size, bots)
    for block, (block_tables_per_bot, block_extra) in enumerate(
        block_plan(bots, table_size, tables_per_bot, extra_seats)
    ):
        rng = SeedStream.derive(league_seed, label, "block", block)
        yield draw.block(rng, block_tables_per_bot, block_extra)


def block_plan(bots: int, table_size: int, tables_per_bot: int, extra_seats: int) -> Iterator[tuple[int, int]]:
    """Split the draw into blocks: yield (tables per bot in the block, seats left over for extra tables).

    Every block but the last gives each bot the same number of tables, a
    multiple of ``table_size / gcd(bots, table_size)`` so that its seats fill
    whole tables; the last takes the rest, and the leftover seats.
    """
    step = table_size // math.gcd(bots, table_size)
    per_block = step * max(1, BLOCK_SEATS // (bots * step))
    full_blocks = max(0, (tables_per_bot - 1) // per_block)
    for _ in range(full_blocks):
        yield per_block, 0
    yield tables_per_bot - full_blocks * per_block, extra_seats


class _Draw:
    """The state the draw carries from block to block: how often each pair has met."""

    def __init__(self, bots: int, table_size: int) -> None:
        self.bots = bots
        self.table_size = table_size
        self.met = [[0] * bots for _ in range(bots)]
        self.tables_so_far = 0  # per bot, not counting extra tables

    def block(self, rng: SeedStream, tables_per_bot: int, extra_seats: int) -> list[list[int]]:
        """Draw one block's tables: filled greedily, improved by a seeded search, repaired if need be.

        When the guarantees do not hold yet (pair counts more than MAX_SPREAD
        apart, or a pair that never met although the average is COVER_FROM or
        more), the block is drawn again, up to ATTEMPTS times, the stream going
        on, and the best attempt is kept.
        """
        self.tables_so_far += tables_per_bot
        if self.table_size < 2 or self.table_size == self.bots:  # no choice of who meets whom: fill only
            return _Block(self, rng, tables_per_bot, extra_seats).tables()
        before = [row[:] for row in self.met]
        best: tuple[tuple[bool, int, int], list[int], list[list[int]]] | None = None
        for _ in range(ATTEMPTS):
            seats = _Block(self, rng, tables_per_bot, extra_seats).search()
            score = self.score()
            if best is None or score < best[0]:
                best = (score, seats, [row[:] for row in self.met])
            if not score[0]:
                break
            self.met = [row[:] for row in before]
        _, seats, self.met = best
        return _tables(seats, self.table_size)

    @property
    def average(self) -> float:
        """How many times a pair has met on average (not counting extra tables)."""
        return self.tables_so_far * (self.table_size - 1) / max(1, self.bots - 1)

    def histogram(self) -> dict[int, int]:
        """How many pairs have met how many times."""
        histogram: dict[int, int] = {}
        for first in range(self.bots):
            row = self.met[first]
            for second in range(first):
                histogram[row[second]] = histogram.get(row[second], 0) + 1
        return histogram

    def score(self) -> tuple[bool, int, int]:
        """How far the draw is from its guarantees, lower is better: whether it breaks one, the spread of the
        pair counts, and how many pairs lie outside the best band."""
        histogram = self.histogram()
        spread = max(histogram) - min(histogram)
        uncovered = self.average >= COVER_FROM and min(histogram) == 0
        if spread <= MAX_SPREAD:
            return uncovered, spread, histogram.get(0, 0) if uncovered else 0
        bottom = bands(histogram)[0]
        return True, spread, sum(n for count, n in histogram.items() if not bottom <= count <= bottom + MAX_SPREAD)


def bands(histogram: dict[int, int]) -> list[int]:
    """Bands of MAX_SPREAD + 1 counts (by their lowest count) to pull every pair into, the most promising first.

    The band that leaves the fewest pairs outside (each weighed by its squared
    distance) comes first; of equals, the higher (more pairs meet).
    """
    low, high = min(histogram), max(histogram)

    def cost(bottom: int) -> int:
        return sum(n * max(0, bottom - count, count - bottom - MAX_SPREAD) ** 2 for count, n in histogram.items())

    return sorted(range(low, max(low, high - MAX_SPREAD) + 1), key=lambda bottom: (cost(bottom), -bottom))


class _Block:
    """One attempt at a block: its seats (a table per ``table_size`` of them) and the moves that improve them.

    Two moves keep every bot's number of tables: a *swap* exchanges the bots
    of two seats at different tables; a *handover* gives the seat of a bot
    with an extra table to a bot without one (so who plays the extra tables
    is part of the search too).
    """

    def __init__(self, draw: _Draw, rng: SeedStream, tables_per_bot: int, extra_seats: int) -> None:
        self.draw = draw
        self.rng = rng
        self.size = draw.table_size
        self.met = draw.met
        self.tables_per_bot = tables_per_bot
        self.extra_seats = extra_seats
        self.seats = [bot for table in self._fill() for bot in table]
        self.tables_of = [0] * draw.bots
        for bot in self.seats:
            self.tables_of[bot] += 1

    def tables(self) -> list[list[int]]:
        return _tables(self.seats, self.size)

    def search(self) -> list[int]:
        """Improve the seats towards even pair counts, then repair a spread wider than MAX_SPREAD, and make every
        pair meet where the average allows."""
        draw, seats = self.draw, self.seats
        if len(seats) == self.size:
            return seats
        average = draw.average
        cube = [abs(count - average) ** 3 for count in range(draw.tables_so_far + 4)]
        self._anneal(cube, max(MIN_SEARCH_STEPS, SEARCH_STEPS_PER_SEAT * len(seats)), _START_TEMPERATURE)
        for band in bands(draw.histogram())[:REPAIR_BANDS]:
            if draw.score()[1] <= MAX_SPREAD:
                break
            self._keeping_the_better(lambda band=band: self._pull_into_band(band, len(cube)))
        if average >= COVER_FROM and draw.score()[0] and draw.score()[1] <= MAX_SPREAD:
            self._keeping_the_better(lambda: self._pull_into_band(1, len(cube)))  # make every pair meet
        return seats

    def _keeping_the_better(self, search: Callable[[], None]) -> None:
        """Run ``search``; if it leaves the draw further from its guarantees than before, undo it."""
        draw = self.draw
        before = (draw.score(), self.seats[:], [row[:] for row in self.met], self.tables_of[:])
        search()
        if draw.score() > before[0]:
            self.seats[:], self.tables_of[:] = before[1], before[3]
            for row, saved in zip(self.met, before[2], strict=True):
                row[:] = saved

    def _pull_into_band(self, band: int, top: int) -> None:
        """Pull every pair's count into ``band`` to ``band + MAX_SPREAD``: an aimed annealing, then a tabu search.

        Only pairs outside the band weigh, so the search roams freely inside it.
        """
        outside = [max(0, band - count, count - band - MAX_SPREAD) ** 2 for count in range(top)]
        self._repair(outside, max(MIN_SEARCH_STEPS, REPAIR_STEPS_PER_SEAT * len(self.seats)), _REPAIR_TEMPERATURE)
        if len(self.seats) <= TABU_MAX_SEATS:
            self._tabu(outside)

    # ----- the greedy fill --------------------------------------------------------

    def _fill(self) -> list[list[int]]:
        """Fill the block's tables one by one, each seat with the bot that has the most tables left, then has met
        the table's bots least (ties broken by a seeded order)."""
        bots, size, met, rng = self.draw.bots, self.size, self.met, self.rng
        order = _permutation(bots, rng)
        quota = [self.tables_per_bot] * bots
        for bot in order[: self.extra_seats]:
            quota[bot] += 1
        table_count = (bots * self.tables_per_bot + self.extra_seats) // size
        by_quota: dict[int, list[int]] = {}
        for bot in order:
            by_quota.setdefault(quota[bot], []).append(bot)
        tables = []
        for number in range(table_count):
            left = table_count - number
            table = list(by_quota.get(left, ()))  # bots who must sit at every table still to come
            while len(table) < size:
                table.append(self._candidate(table, by_quota))
            for bot in table:
                by_quota[quota[bot]].remove(bot)
                quota[bot] -= 1
                if quota[bot]:
                    by_quota.setdefault(quota[bot], []).append(bot)
            for i, first in enumerate(table):
                for second in table[i + 1 :]:
                    met[first][second] += 1
                    met[second][first] += 1
            tables.append(table)
        return tables

    def _candidate(self, table: list[int], by_quota: dict[int, list[int]]) -> int:
        met, rng = self.met, self.rng
        for level in sorted((level for level, bots in by_quota.items() if bots and level > 0), reverse=True):
            candidates = [bot for bot in by_quota[level] if bot not in table]
            if not candidates:
                continue
            if len(candidates) > CANDIDATES:
                candidates = [candidates[rng.randbelow(len(candidates))] for _ in range(CANDIDATES)]
            start = rng.randbelow(len(candidates))  # seeded tie-break: the first found of the least met
            best, best_cost = -1, -1
            for offset in range(len(candidates)):
                bot = candidates[(start + offset) % len(candidates)]
                row = met[bot]
                cost = sum(row[other] for other in table)
                if best < 0 or cost < best_cost:
                    best, best_cost = bot, cost
            return best
        raise AssertionError("the quotas always leave enough bots to fill a table")

    # ----- moves ------------------------------------------------------------------

    def _others(self, seat: int) -> list[int]:
        """The bots at the other seats of ``seat``'s table."""
        table = seat - seat % self.size
        return [self.seats[i] for i in range(table, table + self.size) if i != seat]

    def _swap_change(self, first: int, second: int, up: list, down: list) -> float | None:
        """What swapping two seats' bots adds to the weight; None when it cannot be done."""
        if first - first % self.size == second - second % self.size:
            return None
        mover, other = self.seats[first], self.seats[second]
        first_others, second_others = self._others(first), self._others(second)
        if mover in second_others or other in first_others:
            return None
        mover_met, other_met = self.met[mover], self.met[other]
        change = 0
        for bot in first_others:
            change += down[mover_met[bot]] + up[other_met[bot]]
        for bot in second_others:
            change += down[other_met[bot]] + up[mover_met[bot]]
        return change

    def _handover_change(self, seat: int, taker: int, up: list, down: list) -> float | None:
        """What handing ``seat`` (of a bot with an extra table) to ``taker`` adds; None when it cannot be done."""
        giver = self.seats[seat]
        if self.tables_of[giver] <= self.tables_per_bot or self.tables_of[taker] != self.tables_per_bot:
            return None
        others = self._others(seat)
        if taker in others:
            return None
        giver_met, taker_met = self.met[giver], self.met[taker]
        return sum(down[giver_met[bot]] + up[taker_met[bot]] for bot in others)

    def _move_out(self, seat: int, bot: int) -> None:
        met = self.met
        for other in self._others(seat):
            met[bot][other] -= 1
            met[other][bot] -= 1

    def _move_in(self, seat: int, bot: int) -> None:
        met = self.met
        for other in self._others(seat):
            met[bot][other] += 1
            met[other][bot] += 1
        self.seats[seat] = bot

    def _swap(self, first: int, second: int) -> None:
        mover, other = self.seats[first], self.seats[second]
        self._move_out(first, mover)
        self._move_out(second, other)
        self._move_in(first, other)
        self._move_in(second, mover)

    def _handover(self, seat: int, taker: int) -> None:
        giver = self.seats[seat]
        self._move_out(seat, giver)
        self._move_in(seat, taker)
        self.tables_of[giver] -= 1
        self.tables_of[taker] += 1

    # ----- searches ---------------------------------------------------------------

    def _anneal(self, weight: list[float], steps: int, start: float) -> None:
        """Simulated annealing over swaps and handovers, lowering the sum of ``weight[count]`` over all pairs.

        A move that lowers the total is made; one that raises it by ``d``, with
        probability ``exp(-d / temperature)``, the temperature cooling from
        ``start`` to a hundredth of it. One proposal in eight is a handover
        when the block has extra tables.
        """
        up, down = _differences(weight)
        rng, seats, met, size = self.rng, self.seats, self.met, self.size
        seat_count, bots = len(seats), self.draw.bots
        handovers = self.extra_seats > 0
        temperature = start
        cooling = 0.01 ** (1 / steps)
        for _ in range(steps):
            temperature *= cooling
            # One number a step: bits 0-2 pick the kind of move, 3-34 the seats, 35-63 the chance to take a worse one.
            draw = rng.next_u64()
            chance = (draw >> 35) * _CHANCE_UNIT
            if handovers and draw & 7 == 0:
                draw = (draw >> 3) & 0xFFFFFFFF
                seat, taker = draw % seat_count, (draw // seat_count) % bots
                change = self._handover_change(seat, taker, up, down)
                if change is not None and (change <= 0 or chance < math.exp(-change / temperature)):
                    self._handover(seat, taker)
                continue
            # A swap, weighed inline: this loop is the draw's hot path.
            draw = (draw >> 3) & 0xFFFFFFFF
            first, second = draw % seat_count, (draw // seat_count) % seat_count
            first_table, second_table = first - first % size, second - second % size
            if first_table == second_table:
                continue
            mover, other = seats[first], seats[second]
            first_others = [seats[i] for i in range(first_table, first_table + size) if i != first]
            second_others = [seats[i] for i in range(second_table, second_table + size) if i != second]
            if mover in second_others or other in first_others:
                continue
            mover_met, other_met = met[mover], met[other]
            change = 0.0
            for bot in first_others:
                change += down[mover_met[bot]] + up[other_met[bot]]
            for bot in second_others:
                change += down[other_met[bot]] + up[mover_met[bot]]
            if change > 0 and chance >= math.exp(-change / temperature):
                continue
            for bot in first_others:
                mover_met[bot] -= 1
                met[bot][mover] -= 1
                other_met[bot] += 1
                met[bot][other] += 1
            for bot in second_others:
                other_met[bot] -= 1
                met[bot][other] -= 1
                mover_met[bot] += 1
                met[bot][mover] += 1
            seats[first], seats[second] = other, mover

    def _repair(self, weight: list[int], steps: int, start: float) -> None:
        """Anneal like :meth:`_anneal`, but aim the moves at the bots of pairs outside the band (``weight`` > 0).

        Half the steps start from a seat of such a bot (the first found from
        a random seat on), so the search works where the band is broken
        instead of roaming the much larger rest. Moves are swaps only.
        """
        up, down = _differences(weight)
        rng, seats, met, size = self.rng, self.seats, self.met, self.size
        seat_count = len(seats)
        outside = self._outside_counts(weight)
        temperature = start
        cooling = 0.01 ** (1 / steps)
        for _ in range(steps):
            temperature *= cooling
            draw = rng.next_u64()
            chance = (draw >> 35) * _CHANCE_UNIT
            aimed = draw & 1
            draw = (draw >> 3) & 0xFFFFFFFF
            first, second = draw % seat_count, (draw // seat_count) % seat_count
            if aimed:
                for offset in range(_AIM_SCAN):
                    if outside[seats[(first + offset) % seat_count]]:
                        first = (first + offset) % seat_count
                        break
                else:
                    if not any(outside):
                        return
            first_table, second_table = first - first % size, second - second % size
            if first_table == second_table:
                continue
            mover, other = seats[first], seats[second]
            first_others = [seats[i] for i in range(first_table, first_table + size) if i != first]
            second_others = [seats[i] for i in range(second_table, second_table + size) if i != second]
            if mover in second_others or other in first_others:
                continue
            mover_met, other_met = met[mover], met[other]
            change = 0
            for bot in first_others:
                change += down[mover_met[bot]] + up[other_met[bot]]
            for bot in second_others:
                change += down[other_met[bot]] + up[mover_met[bot]]
            if change > 0 and chance >= math.exp(-change / temperature):
                continue
            pairs = [(moved, mate) for moved in (mover, other) for mate in first_others + second_others]
            was = [bool(weight[met[moved][mate]]) for moved, mate in pairs]
            self._swap(first, second)
            for (moved, mate), before in zip(pairs, was, strict=True):
                now = bool(weight[met[moved][mate]]) - before
                outside[moved] += now
                outside[mate] += now

    def _outside_counts(self, weight: list[int]) -> list[int]:
        """How many pairs with a weight (outside the band) each bot is in."""
        outside = [0] * self.draw.bots
        for first in range(self.draw.bots):
            row = self.met[first]
            for second in range(first):
                if weight[row[second]]:
                    outside[first] += 1
                    outside[second] += 1
        return outside

    def _tabu(self, weight: list[int]) -> None:
        """Make the best move of a bot of a pair outside the band, even a worse one, until no pair is outside.

        A tabu search for the tight cases the annealing leaves a few pairs out
        of the band: the swaps and handovers that move a bot of an outside
        pair (TABU_MOVERS of its seats a step, in turn) are weighed, the best
        is made, and the bots it moved stay put for a while so that the
        search cannot undo it at once. It stops after TABU_STEPS steps or
        TABU_WEIGHINGS moves weighed. Deterministic: of equal moves, the
        first found.
        """
        up, down = _differences(weight)
        bots, met, seats = self.draw.bots, self.met, self.seats
        seat_count = len(seats)
        frozen_until = [0] * bots
        outside = self._outside_counts(weight)
        weighings = 0
        for step in range(1, TABU_STEPS + 1):
            if not any(outside) or weighings > TABU_WEIGHINGS:
                return
            best: tuple[float, int, int, bool] | None = None

            def weigh(change: float | None, seat: int, target: int, handover: bool) -> None:
                nonlocal best
                if change is not None and (best is None or change < best[0]):
                    best = (change, seat, target, handover)

            movers = [seat for seat in range(seat_count) if outside[seats[seat]] and frozen_until[seats[seat]] < step]
            for seat in _in_turn(movers, step):
                for other_seat in range(seat_count):
                    if frozen_until[seats[other_seat]] < step:
                        weigh(self._swap_change(seat, other_seat, up, down), seat, other_seat, False)
                weighings += seat_count
                if self.tables_of[seats[seat]] > self.tables_per_bot:  # it may hand its seat over
                    for taker in range(bots):
                        if frozen_until[taker] < step:
                            weigh(self._handover_change(seat, taker, up, down), seat, taker, True)
                    weighings += bots
            if self.extra_seats:  # or it may take the seat of a bot with an extra table
                takers = [bot for bot in range(bots) if outside[bot] and self.tables_of[bot] == self.tables_per_bot]
                for taker in _in_turn([bot for bot in takers if frozen_until[bot] < step], step):
                    for seat in range(seat_count):
                        if frozen_until[seats[seat]] < step:
                            weigh(self._handover_change(seat, taker, up, down), seat, taker, True)
                    weighings += seat_count
            if best is None:
                return
            _, seat, target, handover = best
            moved = (seats[seat], target) if handover else (seats[seat], seats[target])
            # The pairs the move changes: the moved bots with the others at both tables.
            table_mates = set(self._others(seat)) | set(self._others(seat if handover else target))
            pairs = {(bot, mate) for bot in moved for mate in table_mates if bot != mate}
            before = {pair: bool(weight[met[pair[0]][pair[1]]]) for pair in pairs}
            if handover:
                self._handover(seat, target)
            else:
                self._swap(seat, target)
            for (bot, mate), was_outside in before.items():
                change = bool(weight[met[bot][mate]]) - was_outside
                outside[bot] += change
                outside[mate] += change
            for bot in moved:
                frozen_until[bot] = step + TABU_TENURE


def _in_turn(items: list[int], step: int) -> list[int]:
    """TABU_MOVERS of ``items``, a different window each step, so every one gets its turn."""
    if len(items) <= TABU_MOVERS:
        return items
    start = step * TABU_MOVERS % len(items)
    return (items[start:] + items[:start])[:TABU_MOVERS]


def _tables(seats: list[int], size: int) -> list[list[int]]:
    return [seats[start : start + size] for start in range(0, len(seats), size)]


def _differences(weight: list[float]) -> tuple[list[float], list[float]]:
    """What one more meeting (``up[count]``) and one fewer (``down[count]``) add to a pair's weight."""
    up = [weight[count + 1] - weight[count] for count in range(len(weight) - 1)]
    down = [0.0] + [weight[count - 1] - weight[count] for count in range(1, len(weight) - 1)]
    return up, down


def _permutation(count: int, rng: SeedStream) -> list[int]:
    """A seeded shuffle of ``range(count)`` (Fisher-Yates, from the last place down)."""
    items = list(range(count))
    for last in range(count - 1, 0, -1):
        pick = rng.randbelow(last + 1)
        items[last], items[pick] = items[pick], items[last]
    return items
