"""Which bots a ladder's next table seats: new versions first, then where the ranking is unsure, every pair meeting.

A ladder never has a whole schedule: its field changes as authors submit.
Each table is drawn when it is reached, from what was drawn before it (each
bot's games, each pair's meetings and the table at which they last met,
counting the tables still in play), and, for the *unsure* draw, from each
bot's place in the standings as the ladder last published them (its rank and
rank range, :class:`Place`), so that:

- a bot still in its *placement* (fewer games than the ladder's
  ``placement_games``) sits at every table drawn until it has them, the
  fewest-played first when more are placing than a table seats;
- a pair that has not met for :func:`meeting_interval` tables (or since the
  later of the two first sat) is *overdue*: the longest-waiting overdue pair
  is seated next, and the seats left go to the bots that complete the most
  overdue pairs with those seated, so every pair keeps meeting, at least once
  every ``meeting_interval + pairs`` tables;
- the other seats go where the ranking is unsure: first the bot whose rank
  range is widest for the games it has (the width over its games plus one
  table's: a range narrows about as one over the games, so that is where one
  more table narrows the ranges most), then the bots ranked nearest those
  seated, the ones that met them least among equals. bench/ladder_draw.py
  measures what this saves (docs/statistics.md);
- the *even* draw (the ladder file's ``draw: even``, or an unsure one before
  the standings place anyone) gives those seats to the bots with the fewest
  games, and among those to the ones that have met the bots already seated
  least often;
- ties are broken by a stream derived from the ladder's seed and the table's
  number, so the same history (and the same places) draws the same table.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from referee.engine.seeding import SeedStream

UNSURE = "unsure"
EVEN = "even"
DRAWS = (UNSURE, EVEN)

#: A pair is overdue once it has not met for this many times the tables an even draw takes to seat every pair.
MEETING_ROUNDS = 8


@dataclass(frozen=True)
class Place:
    """A bot's place in the standings a table was drawn from: its rank and the best and worst rank it may have."""

    rank: int
    best: int
    worst: int

    def to_json(self) -> list[int]:
        return [self.rank, self.best, self.worst]

    @classmethod
    def of(cls, value: Sequence[int]) -> Place:
        rank, best, worst = (int(number) for number in value)
        return cls(rank, best, worst)


@dataclass(frozen=True)
class Played:
    """What a ladder's tables so far add up to (tables in play count): games per bot, meetings per pair, and when.

    ``last_met`` is the number of the table at which a pair last met;
    ``first_table`` the number of the table at which a bot first sat.
    """

    games: Mapping[str, int] = field(default_factory=dict)
    meetings: Mapping[frozenset[str], int] = field(default_factory=dict)
    tables: int = 0
    last_met: Mapping[frozenset[str], int] = field(default_factory=dict)
    first_table: Mapping[str, int] = field(default_factory=dict)

    def with_table(self, bots: Sequence[str], count: int) -> Played:
        """These figures with one more table (the next number) of ``bots``, ``count`` games."""
        number = self.tables + 1
        games = dict(self.games)
        meetings = dict(self.meetings)
        last_met = dict(self.last_met)
        first_table = dict(self.first_table)
        for bot in bots:
            games[bot] = games.get(bot, 0) + count
            first_table.setdefault(bot, number)
        for pair in itertools.combinations(sorted(set(bots)), 2):
            key = frozenset(pair)
            meetings[key] = meetings.get(key, 0) + count
            last_met[key] = number
        return Played(games, meetings, number, last_met, first_table)

    def waiting(self, pair: frozenset[str], table_number: int) -> int:
        """Tables since the pair last met, or since the later of the two first sat (0 while one never has)."""
        since = self.last_met.get(pair)
        if since is None:
            since = max((self.first_table.get(bot, table_number) for bot in pair), default=table_number)
        return table_number - since


def meeting_interval(bots: int, table_size: int) -> int:
    """The tables after which a pair that has not met is overdue: :data:`MEETING_ROUNDS` times the tables it takes
    to seat every pair of ``bots`` once (each table seats ``table_size`` choose 2)."""
    return MEETING_ROUNDS * math.ceil(math.comb(bots, 2) / math.comb(table_size, 2))


def draw_table(
    active: Sequence[str],
    played: Played,
    table_size: int,
    placement_games: int,
    seed: int,
    table_number: int,
    places: Mapping[str, Place] | None = None,
) -> tuple[str, ...]:
    """The bots of table ``table_number``, in seat order, drawn from ``active`` (see the module's docstring).

    ``active`` are the bots that may play now, in the order they entered the
    ladder; it must hold at least ``table_size`` bots. ``places`` (each bot's
    place in the standings the ladder last published) makes the draw unsure;
    without it, or with no active bot placed, the draw is even.
    """
    if table_size < 2 or len(set(active)) < table_size:
        raise ValueError(f"a table of {table_size} needs as many bots; the ladder has {len(set(active))}")
    stream = SeedStream.derive(seed, "ladder-draw", table_number)
    tiebreak = {bot: stream.next_u64() for bot in active}

    def games(bot: str) -> int:
        return played.games.get(bot, 0)

    placing = sorted(
        (bot for bot in active if games(bot) < placement_games), key=lambda bot: (games(bot), tiebreak[bot])
    )
    chosen = placing[:table_size]
    rest = [bot for bot in active if bot not in chosen]
    placed = {bot: place for bot, place in (places or {}).items() if bot in tiebreak}
    if placed:
        chosen += overdue_seats(rest, chosen, table_size, played, table_number, tiebreak)
        rest = [bot for bot in rest if bot not in chosen]
        chosen += unsure_seats(rest, chosen, table_size - len(chosen), played, placed, tiebreak)
    while len(chosen) < table_size:

        def fit(bot: str) -> tuple[int, int, int]:
            met = sum(played.meetings.get(frozenset((bot, other)), 0) for other in chosen)
            return games(bot), met, tiebreak[bot]

        best = min(rest, key=fit)
        chosen.append(best)
        rest.remove(best)
    return tuple(sorted(chosen, key=lambda bot: stream_order(seed, table_number, bot)))


def overdue_seats(
    candidates: Sequence[str],
    chosen: Sequence[str],
    table_size: int,
    played: Played,
    table_number: int,
    tiebreak: Mapping[str, int],
) -> list[str]:
    """Bots of ``candidates`` for a table that seats ``chosen``, so that overdue pairs meet (none: no pair is).

    The longest-waiting overdue pair that fits at the table comes first;
    each next bot completes the most overdue pairs with those seated, then
    the longest total wait, until the table is full or no candidate
    completes an overdue pair.
    """
    bots = sorted({*candidates, *chosen})
    interval = meeting_interval(len(bots), table_size)
    wait = {
        pair: played.waiting(pair, table_number) for pair in (frozenset(two) for two in itertools.combinations(bots, 2))
    }
    overdue = {pair for pair, tables in wait.items() if tables > interval}
    seats = table_size - len(chosen)
    fitting = [pair for pair in overdue if len(pair - set(chosen)) <= seats and not pair <= set(chosen)]
    if not fitting:
        return []
    first = max(fitting, key=lambda pair: (wait[pair], max(tiebreak[bot] for bot in pair)))
    found = sorted(first - set(chosen), key=lambda bot: tiebreak[bot])
    seated = [*chosen, *found]
    rest = [bot for bot in candidates if bot not in seated]
    while len(seated) < table_size and rest:

        def completes(bot: str) -> tuple[int, int, int]:
            pairs = [frozenset((bot, other)) for other in seated]
            return -sum(pair in overdue for pair in pairs), -sum(wait[pair] for pair in pairs), tiebreak[bot]

        best = min(rest, key=completes)
        if completes(best)[0] == 0:
            break
        found.append(best)
        seated.append(best)
        rest.remove(best)
    return found


def unsure_seats(
    candidates: Sequence[str],
    chosen: Sequence[str],
    seats: int,
    played: Played,
    places: Mapping[str, Place],
    tiebreak: Mapping[str, int],
) -> list[str]:
    """``seats`` bots of ``candidates`` for a table that already seats ``chosen``, where the ranking is unsure.

    Without a bot seated yet, the first is the bot whose rank range is
    widest for its games (its width over its games plus one table's);
    each next one is the bot ranked nearest a bot seated, then the one
    that met those seated least. A bot not placed yet (the standings last
    published are older than its entry) counts as ranked in the middle, its
    range the whole field.
    """
    field_size = max([len(candidates) + len(chosen), *(place.worst for place in places.values())])
    unplaced = Place((field_size + 1) // 2, 1, field_size)

    def place(bot: str) -> Place:
        return places.get(bot, unplaced)

    seated = list(chosen)
    rest = list(candidates)
    found: list[str] = []
    table_size = len(chosen) + seats
    while len(found) < seats and rest:
        if not seated:

            def gain(bot: str) -> tuple[float, int]:
                width = place(bot).worst - place(bot).best
                return -width / (played.games.get(bot, 0) + table_size), tiebreak[bot]

            best = min(rest, key=gain)
        else:

            def nearest(bot: str) -> tuple[int, int, int]:
                distance = min(abs(place(bot).rank - place(other).rank) for other in seated)
                met = sum(played.meetings.get(frozenset((bot, other)), 0) for other in seated)
                return distance, met, tiebreak[bot]

            best = min(rest, key=nearest)
        found.append(best)
        seated.append(best)
        rest.remove(best)
    return found


def stream_order(seed: int, table_number: int, bot: str) -> int:
    """Where ``bot`` sits at table ``table_number`` before the rotations: a number drawn for it, lowest first."""
    return SeedStream.derive(seed, "ladder-seats", table_number, bot).next_u64()
