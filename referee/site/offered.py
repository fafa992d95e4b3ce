"""``referee serve DIR --offer-play``: a page where a league's visitors play its game against the sample bots.

An organiser who offers it (it is off by default) gives anyone who opens
``/play/`` a game of the league's game at the league's table size: the
person in a seat of their own, the other seats played by the heuristic and
random sample bots inside the server (no process is started for a visitor).
The person's seat is the one ``referee play --human SEAT --browser`` gives
(:mod:`referee.human_browser`, the terminal's seat): the same screen, the
legal actions as buttons. Each game has its own address and token; at most
:data:`MOST_GAMES` are played at once (a visitor beyond that is told to come
back), and a person who makes no move for :data:`MOVE_TIME_S` seconds
forfeits, which frees the table. Nothing of these games is written to the
league's folder: they are not the league's games.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from referee.clock import Timing
from referee.games import game_class
from referee.human_browser import BrowserTable, choose_on, page_of, screen_of
from referee.inprocess import sample_opponents
from referee.match import Match

MOST_GAMES = 4  # games offered at once: each is played in the server's own event loop
MOVE_TIME_S = 600  # a person's time for a move before it counts as gone (a forfeit frees the table)
KEPT_S = 600.0  # a finished game's page stays this long, for its last screen
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


class OfferedGames:
    """The games visitors play on this site, by id: each with its seat's table and the task that plays it."""

    def __init__(self, game: str, players: int) -> None:
        self.game = game_class(game).name
        self.players = players
        self.tables: dict[str, BrowserTable] = {}
        self.playing = 0  # games not yet over
        self._tasks: set[asyncio.Task[None]] = set()  # kept, so that a game is not collected while it is played

    def start(self) -> tuple[str, BrowserTable] | None:
        """A new game, its person in a random seat; None when :data:`MOST_GAMES` are being played."""
        if self.playing >= MOST_GAMES:
            return None
        game_id = secrets.token_hex(8)
        table = BrowserTable(on_clock=True)
        self.tables[game_id] = table
        self.playing += 1
        task = asyncio.get_running_loop().create_task(self._play(game_id, table))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
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
        try:
            await match.play()
        finally:
            table.ended()
            self.playing -= 1
        await asyncio.sleep(KEPT_S)  # the last screen stays a while for its page
        self.tables.pop(game_id, None)


def offered_routes(game: str, players: int, same_origin: Callable[[Request], bool]) -> list[Route]:
    """The routes of ``/play/``: the offer, a new game (posted from this site's own page: ``same_origin``), and each
    game's page, screen and clicks."""
    offered = OfferedGames(game, players)

    def table_of(request: Request) -> BrowserTable | None:
        return offered.tables.get(request.path_params["game"])

    async def offer(request: Request) -> Response:
        page = (
            OFFER_PAGE.replace("{game}", offered.game.replace("_", " "))
            .replace("{players}", str(players))
            .replace("{minutes}", str(MOVE_TIME_S // 60))
        )
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def new(request: Request) -> Response:
        if not same_origin(request):
            return PlainTextResponse("a game is started from this site's own page\n", 403)
        started = offered.start()
        if started is None:
            return PlainTextResponse(f"all {MOST_GAMES} tables are taken: try again in a few minutes\n", 503)
        game_id, table = started
        return RedirectResponse(f"{game_id}/?token={table.token}", status_code=303)

    def per_game(handler: Any) -> Any:
        async def route(request: Request) -> Response:
            table = table_of(request)
            if table is None:
                return PlainTextResponse("no such game (a finished game's page is kept a while, then goes)\n", 404)
            response: Response = await handler(table, request)
            return response

        return route

    return [
        Route("/play/", offer),
        Route("/play/new", new, methods=["POST"]),
        Route("/play/{game}/", per_game(page_of)),
        Route("/play/{game}/screen", per_game(screen_of)),
        Route("/play/{game}/choose", per_game(choose_on), methods=["POST"]),
    ]
