"""``referee serve DIR --offer-play``: a page where a league's visitors play its game against the sample bots.

An organiser who offers it (it is off by default) gives anyone who opens
``/play/`` a game of the league's game at the league's table size: the
person in a seat of their own, the other seats played by the heuristic and
random sample bots inside the server (no process is started for a visitor).
The person's seat is the one ``referee play --human SEAT --browser`` gives
(:mod:`referee.apps.human.browser`, the terminal's seat): the same screen, the
legal actions as buttons. Each game has its own address and token.

A table is a share of the server's one event loop, so a stranger is held to
little: at most :data:`MOST_GAMES` games are played at once, and at most
:data:`MOST_GAMES_PER_CLIENT` for one client address (a visitor beyond
either is told to come back); every POST of ``/play/`` must come from this
site's own pages, as every request of the site that changes something must
(the site's one rule: :class:`referee.apps.site.app.SameOriginOnly`), and
carry a body of at most :data:`MOST_BODY_BYTES` (refused as it arrives,
whatever its ``Content-Length`` says); a person who
makes no move for :data:`MOVE_TIME_S` seconds forfeits. A table is given
back when its game's task is done, however it ends: played out, left, failed
or cancelled; its page is kept :data:`KEPT_S` for its last screen, and at
most :data:`MOST_KEPT` such pages. Nothing of these games is written to the
league's folder: they are not the league's games.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import secrets
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive

from referee.apps.human.browser import (
    MOST_BODY_BYTES,
    BrowserTable,
    body_within,
    choose_on,
    page_of,
    screen_of,
    too_large,
)
from referee.apps.human.terminal import LeftTheGame
from referee.common.errors import RefereeError
from referee.common.http_headers import NO_STORE
from referee.engine.games import game_class
from referee.play.inprocess import sample_opponents
from referee.play.match import Match
from referee.protocol.clock import Timing

MOST_GAMES = 4  # games offered at once: each is played in the server's own event loop
MOST_GAMES_PER_CLIENT = 1  # games in play at once from one client address, so that one visitor takes no more
MOVE_TIME_S = 600  # a person's time for a move before it counts as gone (a forfeit frees the table)
KEPT_S = 600.0  # a finished game's page stays this long (till a later game ends), for its last screen ...
MOST_KEPT = 100  # ... but no more finished pages than this: the oldest goes first (games a script starts and leaves)
log = logging.getLogger(__name__)
OFFER_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Play against the bots</title>
<style>body { font: 16px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 40em; padding: 0 1em; color: #1d232a; }
button { font: inherit; padding: 10px 16px; border-radius: 8px; border: 1px solid #2b6cb0; background: #2b6cb0;
color: #fff; min-height: 46px; cursor: pointer; } p { color: #444; }</style></head><body>
<h1>Play {game} against the bots</h1>
<p>A game of {players} players: you, and the sample bots in the other seats (the heuristic and the random bot).
You see what a bot in your seat would see, and nothing more. Take your time: {minutes} minutes a move.</p>
<form method="post" action="new"><button type="submit">Start a game</button></form>
</body></html>
"""


class NoTable(RefereeError):
    """No game for this visitor now: every table is taken (503), or the visitor's own share of them (429)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class OfferedGames:
    """The games visitors play on this site, by id: each with its seat's table and the task that plays it."""

    def __init__(self, game: str, players: int) -> None:
        self.game = game_class(game).name
        self.players = players
        self.tables: dict[str, BrowserTable] = {}  # games in play, and finished ones for KEPT_S
        self._clients: dict[str, str] = {}  # each game in play -> the client address that started it
        self._finished_games: collections.deque[tuple[float, str]] = collections.deque()  # (when, game), in order
        self._tasks: set[asyncio.Task[None]] = set()  # kept, so that a game is not collected while it is played

    @property
    def playing(self) -> int:
        """Games in play (each holds a table until its task is done)."""
        return len(self._clients)

    def start(self, client: str) -> tuple[str, BrowserTable]:
        """A new game for ``client`` (its address), its person in a random seat; :class:`NoTable` when its share
        or every table is taken."""
        mine = sum(1 for holder in self._clients.values() if holder == client)
        if mine >= MOST_GAMES_PER_CLIENT:
            raise NoTable(
                429,
                f"{client} has {mine} game{'s' * (mine != 1)} in play already, and one address may play "
                f"{MOST_GAMES_PER_CLIENT} at once: finish or leave it (its page's last button), or let its move time "
                f"({MOVE_TIME_S // 60} minutes) run out, then start another",
            )
        if self.playing >= MOST_GAMES:
            raise NoTable(503, f"all {MOST_GAMES} tables are taken: try again in a few minutes")
        game_id = secrets.token_hex(8)
        table = BrowserTable(on_clock=True)
        task = asyncio.get_running_loop().create_task(self._play(game_id, table))
        # Given back by the task's own end, whatever ends it: a task cancelled before it first runs never runs a
        # finally of its coroutine, and a game that fails does so wherever it likes.
        self.tables[game_id] = table
        self._clients[game_id] = client
        self._tasks.add(task)
        task.add_done_callback(partial(self._finished, game_id, table))
        return game_id, table

    async def _play(self, game_id: str, table: BrowserTable) -> None:
        seat = secrets.randbelow(self.players)
        opponents = sample_opponents(self.players - 1)
        players = [*opponents[:seat], table.seat, *opponents[seat:]]
        names = [player.name for player in players]
        names[seat] = "you"
        match = Match(
            self.game,
            players,
            seed=secrets.randbits(63),
            game_id=f"offered-{game_id}",
            timing=Timing(move_time_ms=MOVE_TIME_S * 1000, time_bank_ms=0),
            players=names,
        )
        await match.play()

    def _finished(self, game_id: str, table: BrowserTable, task: asyncio.Task[None]) -> None:
        """A game's task is done: its table is given back, its page shows the end, and goes after KEPT_S (or
        once MOST_KEPT later games have finished)."""
        self._clients.pop(game_id, None)
        self._tasks.discard(task)
        table.ended()  # the seat's thread, should it still wait for a click, is let go
        now = asyncio.get_running_loop().time()
        self._finished_games.append((now, game_id))
        while self._finished_games and (
            len(self._finished_games) > MOST_KEPT or self._finished_games[0][0] < now - KEPT_S
        ):
            self.tables.pop(self._finished_games.popleft()[1], None)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None and not isinstance(error, LeftTheGame):
            log.error("offered game %s failed; its table is free again", game_id, exc_info=error)


def offered_routes(game: str, players: int) -> list[Route]:
    """The routes of ``/play/``: the offer, a new game, and each game's page, screen and clicks."""
    offered = OfferedGames(game, players)

    async def offer(request: Request) -> Response:
        page = (
            OFFER_PAGE.replace("{game}", offered.game.replace("_", " "))
            .replace("{players}", str(players))
            .replace("{minutes}", str(MOVE_TIME_S // 60))
        )
        return HTMLResponse(page, headers=NO_STORE)

    async def new(request: Request) -> Response:
        try:
            game_id, table = offered.start(request.client.host if request.client else "unknown")
        except NoTable as refusal:
            return PlainTextResponse(f"{refusal}\n", refusal.status, headers=NO_STORE)
        return RedirectResponse(f"{game_id}/?token={table.token}", status_code=303)

    def per_game(handler: Any) -> Any:
        async def route(request: Request) -> Response:
            table = offered.tables.get(request.path_params["game"])
            if table is None:
                return PlainTextResponse("no such game (a finished game's page is kept a while, then goes)\n", 404)
            response: Response = await handler(table, request)
            return response

        return route

    return [
        Route("/play/", offer),
        Route("/play/new", posted(new), methods=["POST"]),
        Route("/play/{game}/", per_game(page_of)),
        Route("/play/{game}/screen", per_game(screen_of)),
        Route("/play/{game}/choose", posted(per_game(choose_on)), methods=["POST"]),
    ]


def posted(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` for a POST of ``/play/`` (from this site's own pages: the site refused any other before), its
    body read first, up to :data:`MOST_BODY_BYTES` (413 past that, the rest unread)."""

    async def route(request: Request) -> Response:
        body = await body_within(request, MOST_BODY_BYTES)
        if body is None:
            response: Response = too_large(MOST_BODY_BYTES)
            return response
        return await handler(Request(request.scope, _replayed(body, request.receive)))

    return route


def _replayed(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body already read given once more, whole, for the handler to read."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()  # past the body: the client's disconnect, when it comes
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
