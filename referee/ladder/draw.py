"""Which bots a ladder's next table seats: an even rate of play, pairs that keep meeting, new versions first.

A ladder never has a whole schedule: its field changes as authors submit.
Each table is drawn when it is reached, from what was drawn before it (each
bot's games and each pair's meetings, counting the tables still in play),
so that:

- a bot still in its *placement* (fewer games than the ladder's
  ``placement_games``) sits at every table drawn until it has them, the
  fewest-played first when more are placing than a table seats;
- the other seats go to the bots with the fewest games, and among those to
  the ones that have met the bots already seated least often, so every pair
  keeps meeting;
- ties are broken by a stream derived from the ladder's seed and the table's
  number, so the same history draws the same table.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from referee.seeding import SeedStream


@dataclass(frozen=True)
class Played:
    """What a ladder's tables so far add up to: games per bot and meetings per pair (tables in play count)."""

    games: Mapping[str, int] = field(default_factory=dict)
    meetings: Mapping[frozenset[str], int] = field(default_factory=dict)

    def with_table(self, bots: Sequence[str], count: int) -> Played:
        """These figures with one more table of ``bots``, ``count`` games."""
        games = dict(self.games)
        meetings = dict(self.meetings)
        for bot in bots:
            games[bot] = games.get(bot, 0) + count
        for pair in itertools.combinations(sorted(set(bots)), 2):
            key = frozenset(pair)
            meetings[key] = meetings.get(key, 0) + count
        return Played(games, meetings)


def draw_table(
    active: Sequence[str],
    played: Played,
    table_size: int,
    placement_games: int,
    seed: int,
    table_number: int,
) -> tuple[str, ...]:
    """The bots of table ``table_number``, in seat order, drawn from ``active`` (see the module's docstring).

    ``active`` are the bots that may play now, in the order they entered the
    ladder; it must hold at least ``table_size`` bots.
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
    while len(chosen) < table_size:

        def fit(bot: str) -> tuple[int, int, int]:
            met = sum(played.meetings.get(frozenset((bot, other)), 0) for other in chosen)
            return games(bot), met, tiebreak[bot]

        best = min(rest, key=fit)
        chosen.append(best)
        rest.remove(best)
    return tuple(sorted(chosen, key=lambda bot: stream_order(seed, table_number, bot)))


def stream_order(seed: int, table_number: int, bot: str) -> int:
    """Where ``bot`` sits at table ``table_number`` before the rotations: a number drawn for it, lowest first."""
    return SeedStream.derive(seed, "ladder-seats", table_number, bot).next_u64()
