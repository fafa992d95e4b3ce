"""When a ladder rests: its standings settled as its file's ``rest:`` asks, it starts no new table until the field
changes.

The ladder asks before drawing each table (:meth:`referee.apps.ladder.run.LadderGames.settled`).
Settled is whichever of ``rest:``'s keys is met first: every active
version's rank range, in the standings last published (``leaderboard.json``),
at most ``rank_range`` places wide; or every active version with ``games``
games after its placement in the tables drawn. A resting ladder waits, its
bots' processes idle, for a version to arrive, to be reinstated or to be
withdrawn, and asks again then (and whenever the standings are published
anew, its judge looking at the file's time every ``poll_s``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from referee.apps.ladder.file import Rest
from referee.apps.ladder.table_draw import Place, Played


def settled(
    rest: Rest, active: Sequence[str], played: Played, placement_games: int, places: Mapping[str, Place]
) -> str | None:
    """Why the standings of ``active`` are settled enough to rest, in a few words; None while they are not."""
    if not active:
        return None
    if rest.games is not None and all(played.games.get(bot, 0) >= placement_games + rest.games for bot in active):
        return f"every active version has played {rest.games} games after its placement (rest: games)"
    if rest.rank_range is not None and all(
        bot in places and places[bot].worst - places[bot].best + 1 <= rest.rank_range for bot in active
    ):
        wide = "its rank known" if rest.rank_range == 1 else f"its rank range at most {rest.rank_range} places wide"
        return f"every active version has {wide} (rest: rank_range)"
    return None
