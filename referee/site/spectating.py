"""The pages of games in play: ``/live/`` lists them, ``/live/GAME`` shows one move by move, fed by
``/live/GAME/feed`` (server-sent events, one per line of the game's feed: :mod:`referee.publish.spectators`).

Everything here is public and comes from the feeds alone, which hold only what anyone watching may know. The
feed's events, for a third-party viewer (docs/viewing.md): ``start`` (who plays), ``frame`` (the moves since
the last frame and the table after them), ``end`` (the places), each with the line's number as its ``id`` (a
viewer that reconnects is sent only what it missed), and ``gone`` when the game is no longer in play.
"""

from __future__ import annotations

import asyncio
import html
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from referee.publish.replay_page import ASSETS, compact_source, page_script
from referee.publish.spectators import FINISHED_KEPT_S, LIVE_DIR
from referee.site.records import plain_name

FEED_POLL_S = 0.1  # how often a feed's file is looked at: with the referee's own 0.1 s, a move is shown within 0.2 s
KEEPALIVE_S = 15.0  # a comment line now and then keeps proxies and browsers from closing the stream
NOT_IN_PLAY = "no game of that name is in play (finished games are on the leaderboard, with their replays)\n"
NO_STORE = {"Cache-Control": "no-store"}


def live_routes(output: Path) -> list[Route]:
    """The routes of the live pages of the league in ``output``."""
    folder = output / LIVE_DIR

    def feed_of(game: str) -> Path | None:
        path = folder / f"{game}.jsonl"
        return path if plain_name(game) and path.is_file() else None

    async def games(request: Request) -> Response:
        return JSONResponse(games_in_play(folder), headers=NO_STORE)

    async def listing(request: Request) -> Response:
        return HTMLResponse(live_page("list", "", "Games in play"), headers=NO_STORE)

    async def watch(request: Request) -> Response:
        game = request.path_params["game"]
        if feed_of(game) is None:
            return PlainTextResponse(NOT_IN_PLAY, status_code=404)
        return HTMLResponse(live_page("game", game, f"{game}, live"), headers=NO_STORE)

    async def feed(request: Request) -> Response:
        path = feed_of(request.path_params["game"])
        if path is None:
            return PlainTextResponse(NOT_IN_PLAY, status_code=404)
        seen = _last_event_id(request)
        return StreamingResponse(
            _stream(path, seen, request),
            media_type="text/event-stream",
            headers={**NO_STORE, "X-Accel-Buffering": "no"},
        )

    async def to_listing(request: Request) -> Response:
        return Response(status_code=307, headers={"Location": "live/"})

    return [
        Route("/live", to_listing),
        Route("/live/", listing),
        Route("/live/games.json", games),
        Route("/live/{game}", watch),
        Route("/live/{game}/feed", feed),
    ]


def games_in_play(folder: Path) -> list[dict[str, Any]]:
    """Each game with a feed: its id, game, players, and whether it is over (a finished game is listed for
    :data:`FINISHED_KEPT_S` seconds after its end, for those watching it)."""
    found = []
    now = time.time()
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
            start = json.loads(lines[0])["start"]
            over = lines[-1].startswith('{"end"')
            if over and path.stat().st_mtime < now - FINISHED_KEPT_S:
                continue
        except (OSError, ValueError, IndexError, KeyError):
            continue  # just created, or just removed
        found.append({"game_id": start["game_id"], "game": start["game"], "players": start["players"], "over": over})
    return found


def live_page(page: str, game: str, heading: str) -> str:
    """A live page: the list of games in play (``page`` "list") or one game (``page`` "game")."""
    template = (ASSETS / "live.html").read_text(encoding="utf-8")
    return (
        template.replace("{{title}}", html.escape(heading))
        .replace("{{heading}}", html.escape(heading))
        .replace("{{page}}", page)
        .replace("{{game}}", html.escape(game))
        .replace("{{root}}", "../")
        .replace("/*{{style}}*/", compact_source(ASSETS / "replay.css"))
        .replace("/*{{script}}*/", page_script("live.js"))
    )


def _last_event_id(request: Request) -> int:
    """The last line a reconnecting viewer had (the browser sends it back), or 0."""
    text = request.headers.get("last-event-id", "")
    return int(text) if text.isdigit() and len(text) < 10 else 0


async def _stream(path: Path, seen: int, request: Request) -> AsyncIterator[str]:
    """The feed's lines as server-sent events, from line ``seen + 1``, as the referee writes them."""
    yield "retry: 2000\n\n"
    offset, number, partial, quiet = 0, 0, b"", 0.0
    while not await request.is_disconnected():
        try:
            with path.open("rb") as feed:
                feed.seek(offset)
                chunk = feed.read()
        except FileNotFoundError:
            yield "event: gone\ndata: {}\n\n"
            return
        offset += len(chunk)
        *lines, partial = (partial + chunk).split(b"\n")
        for line in lines:
            number += 1
            if number <= seen or not line:
                continue
            text = line.decode("utf-8")
            kind = "start" if text.startswith('{"start"') else "end" if text.startswith('{"end"') else "frame"
            yield f"id: {number}\nevent: {kind}\ndata: {text}\n\n"
            if kind == "end":
                return
        if lines:
            quiet = 0.0
        elif quiet >= KEEPALIVE_S:
            quiet = 0.0
            yield ": still here\n\n"
        await asyncio.sleep(FEED_POLL_S)
        quiet += FEED_POLL_S
