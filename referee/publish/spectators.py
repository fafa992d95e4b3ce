"""What a spectator of a running league receives: each game in play, move by move, from its public view only.

While a league, duel or ladder plays, each game in play has a *feed*: a file
``live/GAME_ID.jsonl`` in the league's folder, one JSON object per line,
which ``referee serve`` streams to spectators (``/live/GAME_ID/feed``, see
docs/viewing.md). The lines:

- the first, ``{"start": {"game_id", "game", "players"}}``;
- then *frames*, each ``{"n", "time", "events", "view"}``: the public events
  since the frame before (``events``, as :func:`event_json` writes them,
  each hand's showdown with every hand it revealed), and the table as anyone
  watching sees it after them (``view``: :func:`view_json` of
  :meth:`Game.spectator_view`, the engine's one function for a view that
  holds no cards);
- the last, ``{"end": {"placements": [...]}}`` once the game is over (its
  replay is then one click away).

Nothing here reads a seat's cards: a frame is made from the spectator's view
and the public events alone, and a hand's cards appear only in the showdown
that revealed them (``tests/test_spectating.py`` checks every byte a
spectator received during a league against the game logs).

The feeds are kept off the referee's hot path: nothing is done per decision.
A task of the league runner looks at the games in play every
:data:`POLL_S` seconds and writes a frame for each game that moved; a frame
is written ``delay_s`` seconds after it was seen (``spectator_delay_s``, for
competitions that want one). A finished game's feed is removed
:data:`FINISHED_KEPT_S` seconds after its end line is written (itself written
once the delay has passed): ``referee serve``'s watcher reads every feed
anyone watches ten times a second and keeps what it read for its viewers, so
they see the end however soon the file goes. At a run's normal end the runner
waits out that short grace for its last games (:meth:`SpectatorFeeds.settle`)
and no feed is left in ``live/``; a run stopped removes them all at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.engine.cards import format_cards
from referee.engine.games import (
    SPECTATOR,
    BastardBragObservation,
    Event,
    EventKind,
    Game,
    HandResult,
    Observation,
    StopTheBusObservation,
)
from referee.records.visibility import DealsInPlay, GameProgress

LIVE_DIR = "live"  # OUTPUT/live/GAME_ID.jsonl: the feeds of the games in play
POLL_S = 0.1  # how often the games in play are looked at: a move reaches a spectator within about this
# A finished game's feed stays this long after its end line is written: ten looks of referee serve's watcher
# (referee.apps.site.spectating.FEED_POLL_S), so that those watching it read the end (tests/test_spectating.py).
FINISHED_KEPT_S = 1.0


def event_json(event: Event, results: dict[int, HandResult]) -> dict[str, Any]:
    """A public event as a spectator receives it; a showdown with the hands it revealed (``results`` by hand)."""
    data: dict[str, Any] = {"kind": event.kind.value, "hand": event.hand_number}
    for name in ("seat", "slot", "count"):
        value = getattr(event, name)
        if value is not None:
            data[name] = value
    if event.card is not None:
        data["card"] = str(event.card)
    if event.taken is not None:
        data["taken"] = str(event.taken)
    if event.kind is EventKind.SHOWDOWN and event.hand_number in results:
        result = results[event.hand_number]
        data["hands"] = {str(seat): format_cards(cards) for seat, cards in sorted(result.hands.items())}
        data["ranks"] = {str(seat): str(rank) for seat, rank in sorted(result.ranks.items())}
        data["ended_by"] = result.ended_by.value
    return data


def view_json(view: Observation) -> dict[str, Any]:
    """The table as anyone watching sees it (a :meth:`Game.spectator_view`)."""
    if view.seat != SPECTATOR or view.hand:
        raise ValueError(f"view_json: a spectator's view holds no cards and no seat; got seat {view.seat}")
    data: dict[str, Any] = {
        "hand": view.hand_number,
        "phase": view.phase.value,
        "dealer": view.dealer,
        "current_seat": view.current_seat,
        "ender": view.ender,
        "turns": view.turns_this_hand,
        "lives": list(view.lives),
        "floating": [int(flag) for flag in view.floating],
        "in_game": [int(flag) for flag in view.in_game],
        "in_hand": [int(flag) for flag in view.in_hand],
    }
    if isinstance(view, BastardBragObservation):
        data["centre"] = [None if card is None else str(card) for card in view.centre]
    elif isinstance(view, StopTheBusObservation):
        data["discard_top"] = None if view.discard_top is None else str(view.discard_top)
        data["stock_count"] = view.stock_count
        data["discard_count"] = view.discard_count
    return data


@dataclass
class _Watched:
    """A game in play and how much of it its feed has told."""

    game: Game
    path: Path
    progress: GameProgress  # its deal's, which says when each hand may be shown
    events_told: int = 0
    frames: int = 0
    # Lines made, not yet written: (the hand they show, when they were seen, the line), in order.
    waiting: deque[tuple[int, float, str]] = field(default_factory=deque)
    over: bool = False
    given_up: bool = False  # its file could not be written (a full disk): no line more, and none half shown


class SpectatorFeeds:
    """The feeds of a league's games in play (see the module's docstring); a backend tells it of each game.

    :meth:`started`, :meth:`finished` and :meth:`stopped` are called by the
    backend that plays the game, in the league runner's event loop;
    :meth:`run` is the task that writes the frames. When a line may be written
    is the run's :class:`referee.records.visibility.DealsInPlay`'s to say: a hand's
    frames once every game on its deals has passed it, and the delay after.
    """

    def __init__(self, output: Path, deals: DealsInPlay) -> None:
        self.folder = output / LIVE_DIR
        self.deals = deals
        self._games: dict[str, _Watched] = {}
        self._removals: deque[tuple[float, Path]] = deque()
        # Feeds left by a league that was stopped: those games are played again, with feeds of their own.
        if self.folder.is_dir():
            for stale in self.folder.glob("*.jsonl"):
                stale.unlink(missing_ok=True)

    def started(self, game_id: str, game: Game, players: Sequence[str]) -> None:
        """A game began: its feed will start with who plays (written with its first frame, when that is due)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        watched = _Watched(game, self.folder / f"{game_id}.jsonl", self.deals.progress(game_id))
        watched.path.unlink(missing_ok=True)  # a feed of an earlier play of this game: it starts afresh
        self._games[game_id] = watched
        start = {"start": {"game_id": game_id, "game": game.name, "players": list(players)}}
        watched.waiting.append((1, time.time(), _line(start)))
        self._look(game_id, watched)

    def finished(self, game_id: str) -> None:
        """A game ended: its last moves and its end go out when their hand may be shown; its feed is removed
        :data:`FINISHED_KEPT_S` seconds after its end is written."""
        watched = self._games.get(game_id)
        if watched is None:
            return
        self._look(game_id, watched)
        game = watched.game
        if game.is_over:  # else void (its record says why): its feed ends without places
            end = {"end": {"placements": list(game.result().placements)}}
            watched.waiting.append((game.hand_number, time.time(), _line(end)))
        watched.over = True
        self._write_due(watched)

    def stopped(self, game_id: str) -> None:
        """A game was stopped before its end (the run is stopping): its feed goes, with nothing more written; the
        game is played again from its start, with a feed of its own."""
        watched = self._games.pop(game_id, None)
        self.deals.stopped(game_id)
        if watched is not None:
            watched.path.unlink(missing_ok=True)

    async def run(self) -> None:
        """Write the frames of the games in play until cancelled (the league runner's task)."""
        while True:
            await asyncio.sleep(POLL_S)
            self.poll()

    def poll(self) -> None:
        """Look at every game in play once (a frame for each that moved), then write what is due; remove old
        feeds."""
        for game_id, watched in self._games.items():
            if not watched.over:
                self._look(game_id, watched)
        now = time.time()
        for game_id, watched in list(self._games.items()):
            self._write_due(watched)
            if watched.over and not watched.waiting:
                del self._games[game_id]
                self._removals.append((now + FINISHED_KEPT_S, watched.path))
        while self._removals and self._removals[0][0] <= now:
            self._removals.popleft()[1].unlink(missing_ok=True)

    async def settle(self) -> None:
        """Wait until every finished game's feed is written as far as it may be (at a run's end: the delay), then
        its :data:`FINISHED_KEPT_S` after its end, and remove it. Called once no game is in play: a line waiting for
        a game dealt alike that this run will not play (a duel decided, a ladder stopped after so many games) never
        comes due, and is not waited for."""
        while any(self._next_due(watched) is not None for watched in self._games.values()):
            await asyncio.sleep(POLL_S)
        self.poll()  # the feeds written to their end join the removals
        while self._removals:
            await asyncio.sleep(max(0.0, min(POLL_S, self._removals[-1][0] - time.time())))
            self.poll()

    @staticmethod
    def _next_due(watched: _Watched) -> float | None:
        """When the first line a feed holds back may be written (None: nothing waits, or not while no game plays)."""
        if not watched.waiting:
            return None
        hand, seen, _ = watched.waiting[0]
        return watched.progress.hand_due(hand, seen)

    def close(self) -> None:
        """The league is over or stopped: nothing more is written (what is not due yet never is), and every feed
        left is removed (after :meth:`settle`, at a normal end, none is)."""
        for watched in self._games.values():
            watched.path.unlink(missing_ok=True)
        self._games.clear()
        while self._removals:
            self._removals.popleft()[1].unlink(missing_ok=True)

    def _look(self, game_id: str, watched: _Watched) -> None:
        game = watched.game
        self.deals.hand_passed(game_id, len(game.hand_results))  # the other feeds dealt alike wait on it
        if watched.given_up:
            return
        events = game.events
        if len(events) == watched.events_told:
            return
        results = {result.hand_number: result for result in game.hand_results}
        new = [event_json(event, results) for event in events[watched.events_told :]]
        watched.events_told = len(events)
        watched.frames += 1
        seen = time.time()
        view = view_json(game.spectator_view())
        frame = {"n": watched.frames, "time": round(seen, 3), "events": new, "view": view}
        # The hand it shows: its table's (a new hand's deal shows a card of it) and its events' (a showdown's).
        hand = max([view["hand"], *(event["hand"] for event in new)])
        watched.waiting.append((hand, seen, _line(frame)))

    def _write_due(self, watched: _Watched) -> None:
        due: list[str] = []
        waiting = watched.waiting
        now = time.time()
        while waiting:
            when = self._next_due(watched)
            if when is None or when > now:
                break
            due.append(waiting.popleft()[2])
        if due:
            try:
                with watched.path.open("a", encoding="utf-8") as feed:
                    feed.write("".join(due))
            except OSError:  # a full disk, say: the results file meets it too, and the run says so; the feed goes
                watched.given_up = True
                waiting.clear()
                with contextlib.suppress(OSError):
                    watched.path.unlink(missing_ok=True)


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":")) + "\n"
