"""Which games' logs a league or a season keeps (``keep_logs``): disk that stays bounded however long it runs.

A game's record in ``games.jsonl`` is kept for ever: the standings, the
statistics and the pages count every game. Its log (``games/ID.jsonl.zst``,
the moves that its replay, ``referee show``, the luck of its cards and the
author pages' fault excerpts are made from) is kept while the game is one of

- the last ``keep_logs`` games of one of the bots that played it (a version,
  in a ladder), or
- the last ``keep_logs`` games in which one of them faulted or forfeited
  (the author pages show the newest faults with the output around them);

once it is neither, its log goes (and its replay page, where the league
writes them, and its bots' private notes, :mod:`referee.records.notes`): its record says who played and how it ended, and ``referee
serve`` answers its log and replay with 404 "no longer kept". Without
``keep_logs`` (a league's default) every log is kept. A ladder keeps its
versions' last 1,000 games by default (docs/ladder.md), more than an author's
page links to (its version's newest 100 games).

:class:`Retention` is told of each game as it is recorded (:meth:`ended`) and
holds, for each bot, the ids of its games still kept, so deciding costs a few
dictionary operations a game; it is made from ``games.jsonl`` when a run
starts (:meth:`Retention.of`), and then removes, in one look at ``games/``,
what the records no longer keep (a lower ``keep_logs`` than the last run's).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.records.gamelog import GAME_LOG_DIR, log_files, log_game_id, remove_log
from referee.records.notes import NOTES_DIR, remove_notes
from referee.records.results import RESULTS_FILE, read_records

REPLAY_DIR = "replays"  # where static_replays pages are (referee.publish.league_page.REPLAY_DIR)


class Retention:
    """The logs kept of the games recorded so far in ``output``: each bot's last ``keep`` games, and its last ``keep``
    games with a fault (see the module's docstring)."""

    def __init__(self, output: Path, keep: int) -> None:
        if keep < 1:
            raise ValueError(f"keep_logs: {keep} games; a league keeps the logs of at least 1 game of each bot")
        self.output = Path(output)
        self.keep = keep
        self._recent: dict[str, deque[str]] = {}
        self._faulted: dict[str, deque[str]] = {}
        self._holders: Counter[str] = Counter()  # how many of the queues above hold each game
        self._removing = True  # whether a log pushed out is removed at once
        self.removed = 0  # logs removed since this was made

    @classmethod
    def of(cls, output: Path, keep: int | None) -> Retention | None:
        """The retention of the league in ``output`` (None: ``keep_logs`` not set, every log kept), from the records
        of its games so far; the logs they no longer keep are removed now."""
        if keep is None:
            return None
        retention = cls(output, keep)
        path = Path(output) / RESULTS_FILE
        if path.is_file():
            retention._removing = False  # one look at the folder afterwards, not a removal tried for every game
            for record in read_records(path):
                retention.ended(record)
            retention._removing = True
        for log in log_files(retention.output / GAME_LOG_DIR) + log_files(retention.output / NOTES_DIR):
            game_id = log_game_id(log)
            if not retention.kept(game_id):  # pushed out by the records, or a game not recorded (played again)
                retention._remove(game_id)
        return retention

    def ended(self, record: Mapping[str, Any]) -> None:
        """Game ``record`` (its ``games.jsonl`` line) is recorded: keep its log, and remove those it pushes out."""
        game_id = str(record.get("game_id"))
        seats = [str(bot) for bot in record.get("seats") or ()]
        faults = record.get("faults") or []
        forfeits = record.get("forfeits") or {}
        for seat, bot in enumerate(seats):
            if seats.index(bot) != seat:
                continue  # a bot seated twice keeps the game once
            self._push(self._recent, bot, game_id)
            seats_of_bot = [index for index, name in enumerate(seats) if name == bot]
            if any(_faulted(faults, index) or str(index) in forfeits for index in seats_of_bot):
                self._push(self._faulted, bot, game_id)

    def kept(self, game_id: str) -> bool:
        """Whether the log of recorded game ``game_id`` is kept."""
        return self._holders[game_id] > 0

    def _push(self, queues: dict[str, deque[str]], bot: str, game_id: str) -> None:
        queue = queues.setdefault(bot, deque())
        queue.append(game_id)
        self._holders[game_id] += 1
        if len(queue) > self.keep:
            self._release(queue.popleft())

    def _release(self, game_id: str) -> None:
        self._holders[game_id] -= 1
        if self._holders[game_id] > 0:
            return
        del self._holders[game_id]
        if self._removing:
            self._remove(game_id)

    def _remove(self, game_id: str) -> None:
        if remove_log(self.output / GAME_LOG_DIR, game_id):
            self.removed += 1
        (self.output / REPLAY_DIR / f"{game_id}.html").unlink(missing_ok=True)
        remove_notes(self.output / NOTES_DIR, game_id)


def _faulted(faults: Any, seat: int) -> bool:
    counts = faults[seat] if isinstance(faults, list) and seat < len(faults) else None
    return isinstance(counts, Mapping) and any(counts.values())
