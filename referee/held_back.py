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
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Container, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from referee.atomic import replace_file

if TYPE_CHECKING:
    from referee.schedule import ScheduledGame

HELD_BACK_FILE = "held_back.json"


class DealsInPlay:
    """The runner's count of the games still to be played on each seed; writes :data:`HELD_BACK_FILE`."""

    def __init__(self, output: Path) -> None:
        self.path = output / HELD_BACK_FILE
        self._left: Counter[int] = Counter()  # seed -> its games not finished
        self._held: dict[int, list[str]] = {}  # seed -> its finished games, while some of its games are not

    def scheduled(self, games: Iterable[ScheduledGame], finished: Container[str]) -> None:
        """Count ``games`` (the schedule, or a table just drawn), of which those in ``finished`` are over."""
        for game in games:
            if game.game_id in finished:
                self._held.setdefault(game.seed, []).append(game.game_id)
            else:
                self._left[game.seed] += 1
        for seed in [seed for seed in self._held if not self._left[seed]]:
            del self._held[seed]
        self._write()

    def finished(self, game_id: str, seed: int) -> None:
        """Game ``game_id`` on ``seed`` ended: it is held back until the last game on its seed ends too."""
        self._left[seed] -= 1
        if self._left[seed] > 0:
            self._held.setdefault(seed, []).append(game_id)
        else:
            del self._left[seed]
            self._held.pop(seed, None)
        self._write()

    def _write(self) -> None:
        held = sorted(game for games in self._held.values() for game in games)
        if held:
            replace_file(self.path, json.dumps({"games": held}) + "\n")
        else:
            self.path.unlink(missing_ok=True)


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
