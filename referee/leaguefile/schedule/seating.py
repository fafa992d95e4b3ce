"""Where the bots of drawn tables sit: each bot in every seat about as often, when tables play some rotations.

A table that plays every seat rotation seats each of its bots once in each
seat, whatever order its bots come in. A table that plays ``rotations`` of
its ``n`` seat rotations, shifted by ``shifts`` (:func:`referee.leaguefile.schedule.scheduled_games.spaced_shifts`),
does not: the bot at *place* ``p`` of the table's order (its seat in the
game of shift 0) sits in seat ``(p - shift) % n`` in each game, so its place
decides which seats it gets. :class:`Seating` chooses every table's order so
that, over its tables, each bot gets each seat as evenly as it can.

Places that give the same seats form a *class*. With ``g = gcd(n, rotations)``
the shifts repeat every ``n / g`` seats, so places ``p`` and ``p + n / g``
give the same seats: there are ``m = n / g`` classes of ``g`` places each (6
seats, 3 rotations: shifts 0, 2, 4, two classes, the even places and the odd
ones; 6 seats, 1 rotation: six classes, one place each).

Choosing orders is colouring the edges of a bipartite graph (bots on one
side, tables on the other, an edge where a bot sits at a table) with the
``m`` classes, so that each table has ``g`` edges of each class and each bot
about as many of each: an *equitable edge colouring*, which a bipartite graph
always has (de Werra, 1971). Every bot then sits in each class ``floor(T / m)``
or ``ceil(T / m)`` times, ``T`` its tables (of the block: see below). The colouring starts from every
table's bots in name order (place ``p`` is class ``p % m``) and, while some
bot has two classes two or more apart, recolours the edges of that pair of
classes: along Euler circuits of their subgraph (every vertex made of even
degree by a dummy vertex on each side), alternately one class and the other,
so every vertex ends with the two within one of each other (a circuit of a
bipartite graph is even, so its colours alternate all the way round) and each
table keeps its ``g`` of each. Each recolouring lowers the sum of squares of
the bots' class counts, so it ends.

The draw comes in blocks (:func:`referee.leaguefile.schedule.sampled_draw.draw_blocks`), and
each block is coloured on its own, so a bot's counts could drift a little
apart from block to block. So then, while a bot has, counting its earlier
blocks, two classes two or more apart, one of its tables moves from the fuller
class to the other along an alternating path (a Kempe chain: a table of the
fuller class, a bot there of the other class, a table where that bot has the
fuller class, ...) that ends at a bot with more of the other class; the
tables on the way keep their classes and the bots along it keep their counts.
Nothing proves this reaches the bound across blocks, but it nearly always
does (the tests check leagues of 4 and 5 blocks made small for them).

When the rotations divide the seats (``g = rotations``) a class is a set of
seats, so in a league of one block (up to about 4,096 seats) a bot sits in
every seat ``floor(G / n)`` or ``ceil(G / n)`` times, ``G`` its games: as
evenly as can be (the tests check it on the leagues they draw,
``bench/schedule.py`` on random ones). Otherwise a seat's count sums several
classes (6 seats, 4 rotations: shifts 0, 1, 3, 4, and place 0 gives seats 0,
5, 3, 2); so, last, two bots of a table swap places while that lowers the sum
over bots and seats of the squared number of games there, counted from the
first table on. Seat counts then end within 2 of each other (the tests and
``bench/schedule.py`` check it).

One count per bot and seat is kept, the block's tables are held anyway; bots
take places in name order among equals, so nothing here is random and the
same tables always get the same orders.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


class Seating:
    """Order the bots of each block of tables, remembering how often each bot sat in each seat."""

    def __init__(self, bots: int, table_size: int, shifts: Sequence[int]) -> None:
        self.size = table_size
        self.full = len(shifts) == table_size  # every order gives every bot every seat once: nothing to choose
        self.classes = table_size // math.gcd(table_size, len(shifts))
        self.seats_of_place = [[(place - shift) % table_size for shift in shifts] for place in range(table_size)]
        self.sat = [[0] * table_size for _ in range(0 if self.full else bots)]  # bot -> seat -> games there
        self.tables_in = [[0] * self.classes for _ in range(0 if self.full else bots)]  # bot -> class -> tables

    def order(self, block: Sequence[Sequence[int]]) -> list[list[int]]:
        """Return each table's bots in the order its first game seats them, and count them as seated."""
        tables = [sorted(members) for members in block]
        if self.full:
            return tables
        colours = _Colouring(tables, self.classes)
        colours.balance()
        colours.even_out(self.tables_in)
        orders = [colours.order(number) for number in range(len(tables))]
        for order in orders:
            for place, bot in enumerate(order):
                for seat in self.seats_of_place[place]:
                    self.sat[bot][seat] += 1
        self._swap_while_better(orders)
        for order in orders:
            for place, bot in enumerate(order):
                self.tables_in[bot][place % self.classes] += 1
        return orders

    def _swap_while_better(self, orders: list[list[int]]) -> None:
        """Swap two bots' places at a table while that lowers the sum of squared seat counts."""
        sat, seats_of_place = self.sat, self.seats_of_place
        pairs = [
            (
                first,
                second,
                [s for s in seats_of_place[first] if s not in seats_of_place[second]],
                [s for s in seats_of_place[second] if s not in seats_of_place[first]],
            )
            for first, second in itertools.combinations(range(self.size), 2)
        ]
        improved = True
        while improved:  # each swap lowers a whole number that cannot go below 0: it ends
            improved = False
            for order in orders:
                for first, second, only_first, only_second in pairs:
                    one, other = sat[order[first]], sat[order[second]]
                    # ``one`` leaves the seats only ``first`` gives and takes those only ``second`` gives; ``other``
                    # the reverse. A count going from c to c + 1 adds 2c + 1 to the sum of squares, to c - 1 takes
                    # 2c - 1 off.
                    change = sum(2 * (other[s] - one[s]) + 2 for s in only_first)
                    change += sum(2 * (one[s] - other[s]) + 2 for s in only_second)
                    if change < 0:
                        for s in only_first:
                            one[s] -= 1
                            other[s] += 1
                        for s in only_second:
                            one[s] += 1
                            other[s] -= 1
                        order[first], order[second] = order[second], order[first]
                        improved = True


class _Colouring:
    """Which class each bot takes at each table of a block, balanced (an equitable edge colouring)."""

    def __init__(self, tables: list[list[int]], classes: int) -> None:
        self.tables = tables
        self.classes = classes
        # Every table starts in name order: place p is class p % classes.
        self.colour = [[place % classes for place in range(len(table))] for table in tables]
        self.counts: dict[int, list[int]] = {}  # bot -> class -> tables of the block where it takes it
        self.places: dict[int, list[tuple[int, int]]] = {}  # bot -> (table, place) of each of its tables
        for number, (table, colours) in enumerate(zip(tables, self.colour, strict=True)):
            for place, (bot, colour) in enumerate(zip(table, colours, strict=True)):
                self.counts.setdefault(bot, [0] * classes)[colour] += 1
                self.places.setdefault(bot, []).append((number, place))

    def balance(self) -> None:
        """Recolour pairs of classes until no bot has two classes two or more apart."""
        unbalanced = True
        while unbalanced:
            unbalanced = False
            for first, second in itertools.combinations(range(self.classes), 2):
                if any(abs(counts[first] - counts[second]) > 1 for counts in self.counts.values()):
                    self._recolour(first, second)
                    unbalanced = True

    def even_out(self, before: list[list[int]]) -> None:
        """Even out what earlier blocks left: while a bot has, counting ``before`` (bot -> class -> tables), two
        classes two or more apart, move one of its tables from the fuller class to the other along an alternating
        path that ends at a bot better off for it (a Kempe chain: the tables on the way keep their classes)."""
        improved = True
        while improved:
            improved = False
            for bot in sorted(self.counts):
                total = [earlier + now for earlier, now in zip(before[bot], self.counts[bot], strict=True)]
                fuller, emptier = total.index(max(total)), total.index(min(total))
                if total[fuller] - total[emptier] >= 2 and self._move(bot, fuller, emptier, before):
                    improved = True

    def _move(self, start: int, fuller: int, emptier: int, before: list[list[int]]) -> bool:
        """Find a path from ``start`` by an edge of ``fuller``, then one of ``emptier``, and so on, to a bot with
        more of ``emptier`` than of ``fuller``; swap the two classes along it. Return whether there was one."""
        colour = self.colour
        came_from: dict[int, tuple[int, int, int, int]] = {start: (-1, -1, -1, -1)}  # bot -> (bot, table, places)
        frontier = [start]
        while frontier:
            following = []
            for bot in frontier:
                for number, place in self.places[bot]:
                    if colour[number][place] != fuller:
                        continue
                    for other_place, other in enumerate(self.tables[number]):
                        if colour[number][other_place] != emptier or other in came_from:
                            continue
                        came_from[other] = (bot, number, place, other_place)
                        counts = self.counts[other]
                        if before[other][emptier] + counts[emptier] > before[other][fuller] + counts[fuller]:
                            self._swap_along(other, came_from, fuller, emptier)
                            return True
                        following.append(other)
            frontier = following
        return False

    def _swap_along(self, end: int, came_from: dict[int, tuple[int, int, int, int]], fuller: int, emptier: int) -> None:
        bot = end
        while came_from[bot][0] >= 0:
            previous, number, place, other_place = came_from[bot]
            self.colour[number][place] = emptier  # previous leaves fuller here ...
            self.colour[number][other_place] = fuller  # ... and bot takes it
            self.counts[previous][fuller] -= 1
            self.counts[previous][emptier] += 1
            self.counts[bot][emptier] -= 1
            self.counts[bot][fuller] += 1
            bot = previous

    def order(self, number: int) -> list[int]:
        """Table ``number``'s bots by place: class ``c`` fills places ``c``, ``c + classes``, ... in name order."""
        table, colours, classes = self.tables[number], self.colour[number], self.classes
        order = [0] * len(table)
        taken = [0] * classes
        for bot, colour in zip(table, colours, strict=True):  # the table is in name order
            order[colour + taken[colour] * classes] = bot
            taken[colour] += 1
        return order

    def _recolour(self, first: int, second: int) -> None:
        """Colour the edges of classes ``first`` and ``second`` alternately along Euler circuits of their subgraph."""
        # Vertices: bots as they are numbered, tables after them, then a dummy table and a dummy bot.
        bots = 1 + max(self.counts)
        dummy_table, dummy_bot = bots + len(self.tables), bots + len(self.tables) + 1
        ends: list[tuple[int, int]] = []  # edge -> (bot side, table side)
        places: list[tuple[int, int] | None] = []  # edge -> (table, place in the table), None for a dummy edge
        for number, (table, colours) in enumerate(zip(self.tables, self.colour, strict=True)):
            for place, (bot, colour) in enumerate(zip(table, colours, strict=True)):
                if colour in (first, second):
                    ends.append((bot, bots + number))
                    places.append((number, place))
        degree: dict[int, int] = {}
        for bot, table_vertex in ends:
            degree[bot] = degree.get(bot, 0) + 1
            degree[table_vertex] = degree.get(table_vertex, 0) + 1
        for vertex, count in sorted(degree.items()):
            if count % 2:  # a bot of odd degree joins the dummy table, a table the dummy bot
                ends.append((vertex, dummy_table) if vertex < bots else (dummy_bot, vertex))
                places.append(None)
        if sum(1 for end in ends if end[1] == dummy_table) % 2:
            ends.append((dummy_bot, dummy_table))
            places.append(None)
        incident: dict[int, list[int]] = {}
        for edge, (bot, table_vertex) in enumerate(ends):
            incident.setdefault(bot, []).append(edge)
            incident.setdefault(table_vertex, []).append(edge)
        used = [False] * len(ends)
        next_edge = dict.fromkeys(incident, 0)
        for start in sorted(incident):
            circuit = _circuit(start, incident, ends, used, next_edge)
            for position, edge in enumerate(circuit):
                spot = places[edge]
                if spot is not None:
                    number, place = spot
                    bot = self.tables[number][place]
                    colour = first if position % 2 == 0 else second
                    self.counts[bot][self.colour[number][place]] -= 1
                    self.counts[bot][colour] += 1
                    self.colour[number][place] = colour


def _circuit(
    start: int, incident: dict[int, list[int]], ends: list[tuple[int, int]], used: list[bool], next_edge: dict[int, int]
) -> list[int]:
    """The unused edges reachable from ``start`` as one closed trail (Hierholzer's algorithm), in order."""
    circuit: list[int] = []
    stack: list[tuple[int, int | None]] = [(start, None)]
    while stack:
        vertex, arrived_by = stack[-1]
        edges = incident[vertex]
        while next_edge[vertex] < len(edges) and used[edges[next_edge[vertex]]]:
            next_edge[vertex] += 1
        if next_edge[vertex] < len(edges):
            edge = edges[next_edge[vertex]]
            used[edge] = True
            bot, table = ends[edge]
            stack.append((table if vertex == bot else bot, edge))
        else:
            stack.pop()
            if arrived_by is not None:
                circuit.append(arrived_by)
    return circuit
