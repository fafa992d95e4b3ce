"""The pages of games in play: ``/live/`` lists them, ``/live/GAME`` shows one move by move, fed by
``/live/GAME/feed`` (server-sent events, one per line of the game's feed: :mod:`referee.publish.spectators`).

Everything here is public and comes from the feeds alone, which hold only what anyone watching may know. The
feed's events, for a third-party viewer (docs/viewing.md): ``start`` (who plays), ``frame`` (the moves since
the last frame and the table after them), ``end`` (the places), each with the line's number as its ``id`` (a
viewer that reconnects is sent only what it missed), and ``gone`` when the game is no longer in play.

The feeds are read by one watcher (:class:`LiveGames`), not by each viewer: every :data:`FEED_POLL_S` seconds
it looks at the folder of feeds, reads what each feed gained, and publishes each line once to every stream of
that game (:mod:`referee.apps.site.streams`); the list of games in play is kept with them, so no request reads a
feed.
"""

from __future__ import annotations

import functools
import html
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from referee.apps.site.season_folder import plain_name
from referee.apps.site.streams import Broadcast, Watcher, event_stream
from referee.common.http_headers import NO_STORE
from referee.publish.replay_page import ASSETS, compact_source, page_script
from referee.publish.spectators import FINISHED_KEPT_S, LIVE_DIR

FEED_POLL_S = 0.1  # how often the feeds are looked at: with the referee's own 0.1 s, a move is shown within 0.2 s
NOT_IN_PLAY = "no game of that name is in play (finished games are on the leaderboard, with their replays)\n"
GONE = b"event: gone\ndata: {}\n\n"
FEED_SUFFIX = ".jsonl"


def live_routes(output: Path) -> list[Route]:
    """The routes of the live pages of the league in ``output``."""
    live = LiveGames(output / LIVE_DIR)

    async def games(request: Request) -> Response:
        return JSONResponse(live.listing(), headers=NO_STORE)

    async def listing(request: Request) -> Response:
        return HTMLResponse(live_page("list", "", "Games in play"), headers=NO_STORE)

    async def watch(request: Request) -> Response:
        game = request.path_params["game"]
        if live.feed(game) is None:
            return PlainTextResponse(NOT_IN_PLAY, status_code=404)
        return HTMLResponse(live_page("game", game, f"{game}, live"), headers=NO_STORE)

    async def feed(request: Request) -> Response:
        found = live.feed(request.path_params["game"])
        if found is None:
            return PlainTextResponse(NOT_IN_PLAY, status_code=404)
        seen = _last_event_id(request)
        if found.broadcast.ended and seen >= found.broadcast.last:
            return Response(status_code=204, headers=NO_STORE)  # seen to its end: a browser stops reconnecting
        return event_stream(request, found.broadcast, seen)

    async def to_listing(request: Request) -> Response:
        return Response(status_code=307, headers={"Location": "live/"})

    return [
        Route("/live", to_listing),
        Route("/live/", listing),
        Route("/live/games.json", games),
        Route("/live/{game}", watch),
        Route("/live/{game}/feed", feed),
    ]


@dataclass
class Feed:
    """A game's feed as read so far: where reading stopped, who plays, and its lines for every stream."""

    inode: int
    broadcast: Broadcast = field(default_factory=lambda: Broadcast(history=True))
    offset: int = 0
    partial: bytes = b""  # the start of a line still being written
    lines: int = 0
    start: dict[str, Any] | None = None
    ended_at: float | None = None  # the feed file's modification time once its end was read

    def read(self, path: Path, size: int, modified: float) -> None:
        """Read what the feed gained up to ``size`` bytes and publish each whole line."""
        with path.open("rb") as file:
            file.seek(self.offset)
            chunk = file.read(size - self.offset)
        self.offset += len(chunk)
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            self.lines += 1
            if not line or self.broadcast.ended:
                continue
            text = line.decode("utf-8", "replace")
            kind = "start" if text.startswith('{"start"') else "end" if text.startswith('{"end"') else "frame"
            if kind == "start" and self.start is None:
                self.start = _start_of(text)
            self.broadcast.publish(self.lines, f"id: {self.lines}\nevent: {kind}\ndata: {text}\n\n".encode())
            if kind == "end":
                self.ended_at = modified
                self.broadcast.end()


class LiveGames:
    """The feeds of the games in play, in ``folder``: read by one :class:`Watcher` while anyone watches or asks."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.feeds: dict[str, Feed] = {}
        self.watcher = Watcher(self.look, FEED_POLL_S, self._watched)

    def listing(self) -> list[dict[str, Any]]:
        """Each game with a feed: its id, game, players, and whether it is over (a finished game is listed for
        :data:`FINISHED_KEPT_S` seconds after its end, for those watching it); the games in play first."""
        self.watcher.wanted()
        shown = []
        now = time.time()
        for feed in self.feeds.values():
            start = feed.start
            if start is None or (feed.ended_at is not None and feed.ended_at < now - FINISHED_KEPT_S):
                continue
            shown.append({**start, "over": feed.ended_at is not None})
        return sorted(shown, key=lambda game: (game["over"], str(game["game_id"])))

    def feed(self, game: str) -> Feed | None:
        """The feed of ``game``, if it is in play (or just finished)."""
        if not plain_name(game):
            return None
        self.watcher.wanted()
        if game not in self.feeds and (self.folder / f"{game}{FEED_SUFFIX}").is_file():
            self.look()  # written since the watcher last looked
        return self.feeds.get(game)

    def look(self) -> None:
        """Read what every feed gained; a feed that is new starts a game, one removed (or replaced) ends it."""
        found: dict[str, os.stat_result] = {}
        try:
            with os.scandir(self.folder) as entries:
                for entry in entries:
                    game = entry.name.removesuffix(FEED_SUFFIX)
                    if entry.name.endswith(FEED_SUFFIX) and plain_name(game):
                        try:
                            found[game] = entry.stat()
                        except OSError:
                            continue  # removed meanwhile
        except OSError:
            pass  # no folder yet: no game in play
        for game in [game for game in self.feeds if game not in found]:
            self.feeds.pop(game).broadcast.end(GONE)
        for game, stat in found.items():
            feed = self.feeds.get(game)
            if feed is not None and (feed.inode != stat.st_ino or stat.st_size < feed.offset):
                feed.broadcast.end(GONE)  # removed and written again (a league resumed plays its game anew)
                feed = None
            if feed is None:
                feed = self.feeds[game] = Feed(stat.st_ino)
            if stat.st_size > feed.offset:
                try:
                    feed.read(self.folder / f"{game}{FEED_SUFFIX}", stat.st_size, stat.st_mtime)
                except OSError:
                    continue  # removed meanwhile: gone at the next look

    def _watched(self) -> bool:
        return any(feed.broadcast.listeners for feed in self.feeds.values())


def _start_of(text: str) -> dict[str, Any] | None:
    try:
        start = json.loads(text)["start"]
        return {"game_id": start["game_id"], "game": start["game"], "players": start["players"]}
    except (ValueError, KeyError, TypeError):
        return None


def live_page(page: str, game: str, heading: str) -> str:
    """A live page: the list of games in play (``page`` "list") or one game (``page`` "game")."""
    return (
        _live_template()
        .replace("{{title}}", html.escape(heading))
        .replace("{{heading}}", html.escape(heading))
        .replace("{{page}}", page)
        .replace("{{game}}", html.escape(game))
    )


@functools.cache
def _live_template() -> str:
    """The live pages' template with its style and script inlined: made once, as the files ship with the referee."""
    template = (ASSETS / "live.html").read_text(encoding="utf-8")
    return (
        template.replace("{{root}}", "../")
        .replace("/*{{style}}*/", compact_source(ASSETS / "replay.css"))
        .replace("/*{{script}}*/", page_script("live.js"))
    )


def _last_event_id(request: Request) -> int:
    """The last line a reconnecting viewer had (the browser sends it back), or 0."""
    text = request.headers.get("last-event-id", "")
    return int(text) if text.isdigit() and len(text) < 10 else 0
