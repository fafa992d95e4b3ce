"""Finished games whose deals are still being played: kept from the public until every game on them is over.

Games on one seed share their deals (duplicate deals: a table's seat
rotations, a gauntlet's field table across its candidates). While one of
them is still to be played, a finished game's log and replay page (every
hand as dealt, the stock's order), its seed and a fault's detail (an illegal
move's lists the seat's cards) would tell anyone who reads them the hidden
cards of a game in play or to come, and a spectator who can reach a bot
would be a channel to it. So the league runner records those games in
``held_back.json`` in the league's folder, replaced in one step each time
the set changes, and ``referee serve`` and the league's page keep them back
until their deals are done. A folder without the file holds nothing back:
its league played every game (or was written before the file was).

The order makes it safe without a lock: the runner holds a game back before
its record is appended to ``games.jsonl``, so a reader that finds a game's
record and then reads the list sees it held back if its deals are not done
(``referee serve`` reads the records first, then the list).
"""

from __future__ import annotations

import json
from pathlib import Path

from referee.atomic import replace_file

HELD_BACK_FILE = "held_back.json"


class DealsInPlay:
    """The runner's view of the deals whose games are not all over; writes :data:`HELD_BACK_FILE`.

    Every schedule (and a ladder's tables) lists the games on one seed one
    after the other, and the runner reaches them in that order: a seed's
    games are all known once a game on another seed is reached, or the
    schedule runs out. So only the deals under way are kept, whatever the
    schedule's size.
    """

    def __init__(self, output: Path) -> None:
        self.path = output / HELD_BACK_FILE
        self._open: dict[int, _Deal] = {}  # seeds with a game reached, not all of their games over
        self._current: int | None = None  # the seed whose games may still be reached
        self._write()

    def reached(self, game_id: str, seed: int, finished: bool) -> None:
        """The runner reached game ``game_id`` of the schedule (``finished`` already, on a resumed run)."""
        if seed != self._current:
            previous, self._current = self._current, seed
            if previous is not None and self._close(previous):
                self._write()
        deal = self._open.setdefault(seed, _Deal())
        if game_id in deal.playing or game_id in deal.over:
            return  # reached again (a ladder looks at its unfinished games at each start)
        if finished:
            deal.over.append(game_id)
            self._write()
        else:
            deal.playing.add(game_id)

    def finished(self, game_id: str, seed: int) -> None:
        """Game ``game_id`` ended: held back until every game on its seed has ended too."""
        deal = self._open.get(seed)
        if deal is None or game_id not in deal.playing:
            return
        deal.playing.discard(game_id)
        deal.over.append(game_id)
        self._close(seed)
        self._write()

    def all_reached(self) -> None:
        """No more games on the seeds reached so far will come (the schedule ran out; a ladder's table is all
        reached)."""
        previous, self._current = self._current, None
        if previous is not None and self._close(previous):
            self._write()

    def _close(self, seed: int) -> bool:
        """Forget ``seed``'s deal if every game on it is over and none is still to come; whether it was."""
        deal = self._open.get(seed)
        if deal is None or seed == self._current or deal.playing:
            return False
        del self._open[seed]
        return True

    def _write(self) -> None:
        held = sorted(game for deal in self._open.values() for game in deal.over)
        if held:
            replace_file(self.path, json.dumps({"games": held}) + "\n")
        else:
            self.path.unlink(missing_ok=True)


class _Deal:
    """The games reached on one seed: those still to end, and those over (held back)."""

    def __init__(self) -> None:
        self.playing: set[str] = set()
        self.over: list[str] = []


def held_back(output: Path) -> frozenset[str]:
    """The finished games of the league in ``output`` that must not be shown yet (see the module's docstring)."""
    try:
        games = json.loads((output / HELD_BACK_FILE).read_text(encoding="utf-8"))["games"]
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError, KeyError, TypeError):
        # Being replaced, or damaged: hold back every game rather than show one too soon.
        return EVERY_GAME
    return frozenset(str(game) for game in games)


class _Everything(frozenset[str]):
    """Holds every game back (a file that cannot be read)."""

    def __contains__(self, item: object) -> bool:
        return True


EVERY_GAME: frozenset[str] = _Everything()
