"""One block of a sampled draw: seats filled greedily, then improved by a seeded search (annealing, repair, tabu)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from referee.engine.seeding import SeedStream
from referee.leaguefile.schedule.meetings import COVER_FROM, MAX_SPREAD, Meetings, bands

CANDIDATES = 64  # bots weighed for a seat by the greedy fill, at most (a seeded sample when more could take it)
SEARCH_STEPS_PER_SEAT = 300  # annealing steps, per seat of the block ...
MIN_SEARCH_STEPS = 50_000  # ... and at least this many: small blocks are cheap, so search them thoroughly
REPAIR_STEPS_PER_SEAT = 1000  # annealing steps of a repair, per seat (only tight blocks need one)
REPAIR_BANDS = 2  # bands of counts each attempt tries to pull every pair into
TABU_MAX_SEATS = 1200  # the tabu search weighs every move of a seat: small blocks only
TABU_STEPS = 200
TABU_MOVERS = 8  # seats whose moves a tabu step weighs
TABU_WEIGHINGS = 1_000_000  # moves a tabu search weighs, at most (about a second)
TABU_TENURE = 7  # steps a moved bot stays put
_START_TEMPERATURE = 1.0
_REPAIR_TEMPERATURE = 1.0
_AIM_SCAN = 32  # seats a repair step looks through for a bot of a pair outside the band
_CHANCE_UNIT = 2.0**-29  # 29 bits of a draw make a number in [0, 1)


class Block:
    """One attempt at a block: its seats (a table per ``table_size`` of them) and the moves that improve them.

    Two moves keep every bot's number of tables: a *swap* exchanges the bots
    of two seats at different tables; a *handover* gives the seat of a bot
    with an extra table to a bot without one (so who plays the extra tables
    is part of the search too).
    """

    def __init__(self, draw: Meetings, rng: SeedStream, tables_per_bot: int, extra_seats: int) -> None:
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
        return seat_tables(self.seats, self.size)

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
            self._keeping_the_better(functools.partial(self._pull_into_band, band, len(cube)))
        if average >= COVER_FROM and draw.score()[0] and draw.score()[1] <= MAX_SPREAD:
            self._keeping_the_better(functools.partial(self._pull_into_band, 1, len(cube)))  # make every pair meet
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

    def _swap_change(self, first: int, second: int, up: list[float], down: list[float]) -> float | None:
        """What swapping two seats' bots adds to the weight; None when it cannot be done."""
        if first - first % self.size == second - second % self.size:
            return None
        mover, other = self.seats[first], self.seats[second]
        first_others, second_others = self._others(first), self._others(second)
        if mover in second_others or other in first_others:
            return None
        mover_met, other_met = self.met[mover], self.met[other]
        change = 0.0
        for bot in first_others:
            change += down[mover_met[bot]] + up[other_met[bot]]
        for bot in second_others:
            change += down[other_met[bot]] + up[mover_met[bot]]
        return change

    def _handover_change(self, seat: int, taker: int, up: list[float], down: list[float]) -> float | None:
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
            change = 0.0
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


def seat_tables(seats: list[int], size: int) -> list[list[int]]:
    return [seats[start : start + size] for start in range(0, len(seats), size)]


def _differences(weight: Sequence[float]) -> tuple[list[float], list[float]]:
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
