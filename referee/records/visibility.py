"""When anything of a league's games may be shown: the one owner of that decision, for every page, feed and file.

Games on one seed are dealt alike (a table's seat rotations, a gauntlet's
field table across its candidates, a duel's pair of games): whatever of one
of them is shown tells the cards of the others. So nothing of a deal is shown
before every game dealt alike has passed that point, and the spectator delay
(``spectator_delay_s``) after it is over:

- **a hand's feed frames** (a game's moves and table in hand ``h``, as
  :mod:`referee.publish.spectators` writes them): once every other game on
  its deals has passed hand ``h`` (its showdown seen) or ended, and the delay
  has passed since then and since the frame was seen;
- **a finished game** (its record in ``games.jsonl``, its seed, log and
  replay, its place in the standings and on the league's page, its fault
  details, its bots' output on their authors' pages): once every game on its
  deals has ended, and the delay has passed since the last of them ended.

Two faces, one rule:

- :class:`DealsInPlay`, the league runner's and the ladder's. Made from the
  schedule and the results when a run starts (never empty while a game is
  held back), it follows each game in play hand by hand, tells the feeds
  when a frame is due (:meth:`GameProgress.hand_due`), and keeps
  ``visibility.json`` in the league's folder, replaced in one step by a task
  of its own, off the event loop.
- :class:`Shown`, every reader's (``referee serve``, the league's page and
  leaderboards, the authors' pages): what ``visibility.json`` lets be shown
  at one moment.

``visibility.json`` holds ``{"accounted": BYTES, "held": {GAME_ID: TIME or
null}}``: how much of ``games.jsonl`` it speaks for (the runner appends a
game's record, then writes this file, so a record past ``accounted`` is held),
and each finished game not yet shown with the time it may be (Unix seconds),
or null while a game on its deals is still to end. A folder without the file
holds nothing back (a league played to its end by a referee that wrote none);
a file that cannot be read holds everything back.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.common.atomic import replace_file
from referee.records.results import RESULTS_FILE, GameRecord, scan_results

VISIBILITY_FILE = "visibility.json"
OLDER_FILE = "held_back.json"  # what a referee before visibility.json wrote: its games are held until rewritten
LONG_AGO = -math.inf  # when a game that ended before this run (or will never be played) passed every point


# ----- every reader's face ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """What of a league's finished games may be shown at ``at`` (Unix seconds), as ``visibility.json`` says."""

    at: float
    accounted: int | None = None  # the bytes of games.jsonl the file speaks for; None: all of it
    held: Mapping[str, float | None] = field(default_factory=dict)
    everything_held: bool = False  # the file could not be read

    @classmethod
    def read(cls, output: Path, at: float | None = None) -> Shown:
        """The folder ``output``'s rule as of now (or ``at``); read before ``games.jsonl`` (see the module's doc)."""
        now = time.time() if at is None else at
        try:
            data = json.loads((output / VISIBILITY_FILE).read_bytes())
            held = {str(game): None if when is None else float(when) for game, when in data["held"].items()}
            accounted = data["accounted"]
            if not isinstance(accounted, int) or isinstance(accounted, bool) or accounted < 0:
                raise ValueError(f"accounted: {accounted!r}")
            return cls(now, accounted, held)
        except FileNotFoundError:
            return cls._older(output, now)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return cls(now, 0, {}, everything_held=True)  # being written by hand, or damaged: never shown too soon

    @classmethod
    def _older(cls, output: Path, now: float) -> Shown:
        try:
            games = json.loads((output / OLDER_FILE).read_bytes())["games"]
            return cls(now, None, dict.fromkeys(map(str, games)))
        except FileNotFoundError:
            return cls(now)
        except (OSError, ValueError, KeyError, TypeError):
            return cls(now, 0, {}, everything_held=True)

    def game(self, game_id: str) -> bool:
        """Whether finished game ``game_id`` may be shown, its record being within what the file accounts for."""
        if self.everything_held:
            return False
        if game_id not in self.held:
            return True
        when = self.held[game_id]
        return when is not None and when <= self.at

    def due(self, game_id: str) -> float | None:
        """When ``game_id`` may be shown: a time, or None while a game on its deals is still to end."""
        if self.game(game_id):
            return self.at
        return None if self.everything_held else self.held.get(game_id)

    def records(self, output: Path) -> Iterator[dict[str, Any]]:
        """The records of ``output``'s ``games.jsonl`` that may be shown, in the file's order."""
        for _, _, record in scan_results(output / RESULTS_FILE, limit=self.accounted):
            if self.game(record["game_id"]):
                yield record

    def games(self, output: Path, *, latencies: bool = True) -> Iterator[GameRecord]:
        """:meth:`records`, each as a :class:`GameRecord` (without each decision's time unless ``latencies``)."""
        for record in self.records(output):
            yield GameRecord.of(record, latencies=latencies)


def shown_now(output: Path) -> Shown:
    """:meth:`Shown.read` of ``output`` now."""
    return Shown.read(output)


# ----- the runner's face ----------------------------------------------------------------------------------------


class GameProgress:
    """One game of a deal, as its run follows it: the hands it has passed and when it ended."""

    __slots__ = ("deal", "ended_at", "game_id", "passed")

    def __init__(self, game_id: str, deal: _Deal) -> None:
        self.game_id = game_id
        self.deal = deal
        self.passed: list[float] = []  # passed[h - 1]: when hand h's showdown was seen
        self.ended_at: float | None = None  # LONG_AGO: over before this run, or never to be played

    def passed_at(self, hand: int) -> float | None:
        """When this game passed hand ``hand`` (its showdown, or its end before it); None while it has not."""
        if hand <= len(self.passed):
            return self.passed[hand - 1]
        return self.ended_at

    def hand_due(self, hand: int, seen_at: float) -> float | None:
        """When a frame of this game's hand ``hand``, seen at ``seen_at``, may be shown; None while another game on
        its deals has not passed that hand (or not even started)."""
        due = seen_at
        for other in self.deal.games:
            if other is not self:
                passed = other.passed_at(hand)
                if passed is None:
                    return None
                due = max(due, passed)
        return due + self.deal.delay_s


class _Deal:
    """The games on one seed: their finished games are shown once every one has ended, and the delay after."""

    __slots__ = ("closed_at_change", "delay_s", "games", "shown_at")

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.games: list[GameProgress] = []
        self.shown_at: float | None = None  # once every game has ended
        self.closed_at_change = 0  # the change of DealsInPlay that closed it: the file must hold it before it is told

    def is_over(self) -> bool:
        return all(game.ended_at is not None for game in self.games)

    def last_end(self) -> float:
        return max(game.ended_at if game.ended_at is not None else math.inf for game in self.games)


# A game that no deal knows: its frames are never due. Every run registers its games before they start, so only a
# mistake meets it, and then nothing is shown rather than something too soon.
NEVER = GameProgress("", _Deal(math.inf))
NEVER.deal.games.append(GameProgress("", NEVER.deal))


class DealsInPlay:
    """A run's deals: when each feed frame and each finished game may be shown, and ``visibility.json`` saying so.

    :meth:`deal` registers each group of games dealt alike before any of them
    starts (the league runner: every deal of its schedule; a ladder: its
    tables drawn before, then each as it is drawn). The run tells of each
    game's hands (:meth:`hand_passed`: the feeds, which watch every game in
    play) and end (:meth:`ended`, once its record is appended). :meth:`run`,
    a task of the run's, keeps ``visibility.json`` current and calls
    ``on_shown`` with the finished games that may be shown from then on (their
    replays, the league's page); :meth:`settle` waits for the last of them.
    """

    def __init__(
        self,
        output: Path,
        delay_s: float = 0.0,
        *,
        accounted: int = 0,
        on_shown: Callable[[list[str]], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``accounted``: the length of ``games.jsonl`` as the run starts."""
        self.path = output / VISIBILITY_FILE
        self.delay_s = delay_s
        self.on_shown = on_shown
        self.clock = clock
        self._accounted = accounted
        self._games: dict[str, GameProgress] = {}  # the games of deals not yet shown
        self._held: dict[str, _Deal] = {}  # finished games not yet shown, with the deal they wait for
        self._closing: list[_Deal] = []  # deals over, whose games are told to on_shown when their time comes
        self._changes = 0  # how many changes were made to what the file says ...
        self._written = 0  # ... and how many of them the file on disk holds
        self._changed = asyncio.Event()
        # What an earlier run held of deals that are over now: held until the time it gave, or the delay from now.
        previous = Shown.read(output, at=self.clock())
        self._carried = {} if previous.everything_held else dict(previous.held)

    # ----- what the run tells it ----------------------------------------------------------------------------

    def deal(self, game_ids: Iterable[str], finished: Iterable[str] = (), unplayed: Iterable[str] = ()) -> None:
        """Games ``game_ids`` are dealt alike; those of ``finished`` are over (their records are written), those of
        ``unplayed`` will not be played (they seat a bot that plays no more)."""
        game_ids, recorded, never = list(game_ids), set(finished), set(unplayed)
        over = recorded | never
        if all(game_id in over and game_id not in self._carried for game_id in game_ids):
            return  # every game over before this run, and shown: nothing to hold, nothing to tell
        deal = _Deal(self.delay_s)
        for game_id in game_ids:
            if game_id in self._games:
                raise ValueError(f"DealsInPlay.deal: game {game_id} is on a deal registered already")
            progress = GameProgress(game_id, deal)
            if game_id in recorded or game_id in never:
                progress.ended_at = LONG_AGO
            if game_id in recorded:
                self._held[game_id] = deal
            deal.games.append(progress)
            self._games[game_id] = progress
        if deal.is_over():
            # Over before this run: shown now, or when an earlier run said (None: its end was never written down).
            carried = [self._carried.get(progress.game_id, LONG_AGO) for progress in deal.games]
            latest = max((when for when in carried if when is not None), default=LONG_AGO)
            self._close(deal, self.clock() + self.delay_s if None in carried else latest)
        self._change()

    def progress(self, game_id: str) -> GameProgress:
        """Game ``game_id``'s progress, for its feed (a game no deal knows: :data:`NEVER`, never shown)."""
        return self._games.get(game_id, NEVER)

    def hand_passed(self, game_id: str, hand: int) -> None:
        """Game ``game_id`` has passed hand ``hand``: its showdown is seen (told by the feeds, which see it)."""
        progress = self._games.get(game_id)
        if progress is not None and progress.ended_at is None and len(progress.passed) < hand:
            now = self.clock()
            progress.passed.extend([now] * (hand - len(progress.passed)))

    def ended(self, game_id: str, accounted: int) -> None:
        """Game ``game_id`` ended and its record is appended to ``games.jsonl``, now ``accounted`` bytes long."""
        self._accounted = max(self._accounted, accounted)
        progress = self._games.get(game_id)
        if progress is not None and progress.ended_at is None:
            progress.ended_at = self.clock()
            self._held[game_id] = progress.deal
            if progress.deal.is_over() and progress.deal.shown_at is None:
                self._close(progress.deal, progress.deal.last_end() + self.delay_s)
        self._change()

    def unplayed(self, game_ids: Iterable[str]) -> None:
        """Games ``game_ids``, not started, never will be (they seat a version disqualified meanwhile)."""
        for game_id in game_ids:
            progress = self._games.get(game_id)
            if progress is not None and progress.ended_at is None:
                progress.ended_at = LONG_AGO
                if progress.deal.is_over() and progress.deal.shown_at is None:
                    self._close(progress.deal, progress.deal.last_end() + self.delay_s)
        self._change()

    def stopped(self, game_id: str) -> None:
        """Game ``game_id`` was stopped before its end: played again from its start, by this run or another."""
        progress = self._games.get(game_id)
        if progress is not None and progress.ended_at is None:
            progress.passed.clear()

    def _close(self, deal: _Deal, shown_at: float) -> None:
        deal.shown_at = shown_at
        deal.closed_at_change = self._changes + 1  # the change about to be made
        self._closing.append(deal)

    def _change(self) -> None:
        self._changes += 1
        self._changed.set()

    # ----- the file ------------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """What ``visibility.json`` says now: how much of ``games.jsonl`` it speaks for, and the games held."""
        now = self.clock()
        held = {
            game_id: deal.shown_at
            for game_id, deal in self._held.items()
            if deal.shown_at is None or deal.shown_at > now
        }
        return {"accounted": self._accounted, "held": held}

    def write(self) -> None:
        """Write ``visibility.json`` now, in this thread: as a run starts, before any game, and as it ends."""
        changes = self._changes
        _write_file(self.path, self.snapshot())
        self._written = max(self._written, changes)

    async def run(self) -> None:
        """Keep ``visibility.json`` current, written off the event loop, and tell ``on_shown`` of each finished game
        as its time comes, until cancelled."""
        while True:
            self._changed.clear()
            if self._written < self._changes:
                changes = self._changes
                try:
                    await asyncio.to_thread(_write_file, self.path, self.snapshot())
                except OSError:  # a full disk: the results file meets it too; what is on disk holds more back
                    await asyncio.sleep(1.0)
                    continue
                self._written = max(self._written, changes)
            self._release()
            if self._written < self._changes:
                continue
            wake = min((deal.shown_at for deal in self._closing if deal.shown_at is not None), default=None)
            timeout = None if wake is None else max(0.0, wake - self.clock()) + 0.005
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                pass

    def _release(self) -> None:
        """Tell ``on_shown`` of the finished games of each deal over whose time has come, the file saying so."""
        now = self.clock()
        shown: list[str] = []
        for deal in list(self._closing):
            if deal.shown_at is not None and deal.shown_at <= now and deal.closed_at_change <= self._written:
                self._closing.remove(deal)
                for progress in deal.games:
                    self._games.pop(progress.game_id, None)
                    if self._held.pop(progress.game_id, None) is not None:
                        shown.append(progress.game_id)
        if shown and self.on_shown is not None:
            self.on_shown(shown)

    async def settle(self) -> None:
        """Wait until every finished game of a deal that is over has been shown (at a run's end: the delay)."""
        while self._closing or self._written < self._changes:
            latest = max((deal.shown_at or 0.0 for deal in self._closing), default=0.0)
            await asyncio.sleep(min(0.05, max(0.005, latest - self.clock())))

    def held(self) -> list[str]:
        """The finished games held now."""
        return sorted(self.snapshot()["held"])


def _write_file(path: Path, snapshot: dict[str, Any]) -> None:
    replace_file(path, json.dumps(snapshot, separators=(",", ":")) + "\n")
