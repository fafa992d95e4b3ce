"""The sampled draw: tables of bot numbers, block by block, each bot at the same number of tables (docs/scheduling.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from referee.engine.seeding import SeedStream
from referee.leaguefile.schedule.block_search import Block, seat_tables
from referee.leaguefile.schedule.meetings import Meetings

BLOCK_SEATS = 4096  # seats drawn and improved together (a block holds at most 65,536: see Block._anneal)
ATTEMPTS = 3  # draws of a block whose pairs still spread too far


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
    meetings = Meetings(bots, table_size)
    tables_per_bot, extra_seats = divmod(table_count * table_size, bots)
    for block, (block_tables_per_bot, block_extra) in enumerate(
        block_plan(bots, table_size, tables_per_bot, extra_seats)
    ):
        rng = SeedStream.derive(league_seed, label, "block", block)
        yield draw_block(meetings, rng, block_tables_per_bot, block_extra)


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


def draw_block(meetings: Meetings, rng: SeedStream, tables_per_bot: int, extra_seats: int) -> list[list[int]]:
    """Draw one block's tables: filled greedily, improved by a seeded search, repaired if need be.

    When the guarantees do not hold yet (pair counts more than MAX_SPREAD
    apart, or a pair that never met although the average is COVER_FROM or
    more), the block is drawn again, up to ATTEMPTS times, the stream going
    on, and the best attempt is kept.
    """
    meetings.tables_so_far += tables_per_bot
    if meetings.table_size < 2 or meetings.table_size == meetings.bots:  # no choice of who meets whom: fill only
        return Block(meetings, rng, tables_per_bot, extra_seats).tables()
    before = [row[:] for row in meetings.met]
    best: tuple[tuple[bool, int, int], list[int], list[list[int]]] | None = None
    for _ in range(ATTEMPTS):
        seats = Block(meetings, rng, tables_per_bot, extra_seats).search()
        score = meetings.score()
        if best is None or score < best[0]:
            best = (score, seats, [row[:] for row in meetings.met])
        if not score[0]:
            break
        meetings.met = [row[:] for row in before]
    assert best is not None  # ATTEMPTS >= 1
    _, seats, meetings.met = best
    return seat_tables(seats, meetings.table_size)
