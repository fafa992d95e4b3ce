"""What anyone may read: the league's page and its changes (``/events``), the leaderboard files, the head-to-head
pages (``pairs/A/B.html``), ``games.jsonl``, each game's replay and log, and every game shown as one archive
(``games.tar.gz``), a finished game only once it may be shown (:mod:`referee.records.visibility`) and each record
as published (:mod:`referee.publish.redaction`)."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from referee.apps.site.author_page import held_back
from referee.apps.site.page_cache import PageCache
from referee.apps.site.season_folder import GAME_LOGS, plain_name
from referee.apps.site.served import Site, root_of, wants_html
from referee.apps.site.streams import FileChanges
from referee.common.errors import RefereeError
from referee.common.http_headers import NO_STORE
from referee.publish.archive import Archived, write_archive
from referee.publish.head_to_head import PAIRS_DIR
from referee.publish.league_page import ARCHIVE_NAME, REPLAY_DIR
from referee.publish.live import BACK_LINK
from referee.publish.redaction import public_game_record, public_log, public_log_record
from referee.publish.replay_page import replay_page
from referee.records.gamelog import find_log, log_text
from referee.records.results import RESULTS_FILE
from referee.records.transcript import read_game
from referee.records.visibility import Shown

PAGE = "leaderboard.html"
# The leaderboard files beside the page: written by the league runner with the games that may be shown alone.
LEADERBOARD_FILES = {"leaderboard.md": "text/markdown", "leaderboard.json": "application/json",
                     "leaderboard.csv": "text/csv"}  # fmt: skip
POLL_SECONDS = 0.5  # how often the league's page file is looked at, for /events
HELD_BACK = (
    "not yet: a game on the same deals is still being played, and this one would show its cards; it is published "
    "once the last game on its deals has ended and the league's spectator delay after it is over\n"
)
NOT_PUBLISHED = (
    "not published: referee serve shows a league's pages and what they link to (replays and game logs); a bot's "
    "output, checks and build log only to its author, on their page; never league.json (the seed), builds or "
    "other records\n"
)
ARCHIVE_AGAIN_S = 2.0  # the least time between two makings of games.tar.gz (and ten times what one took)
ARCHIVE_UNAVAILABLE = "the archive of the games could not be made just now; try again in a minute\n"
NO_LONGER_KEPT = (
    "no longer kept: the league keeps the logs of each bot's latest games (keep_logs, docs/leagues.md), and this "
    "game's log has been removed; its record is still in games.jsonl\n"
)
WAITING_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>waiting for the league</title>
<style>body { font: 16px/1.5 system-ui, sans-serif; margin: 2em; color: #1d232a; } p { color: #66707a; }</style>
</head><body data-waiting="1">
<h1>Waiting for the league</h1>
<p>No game has finished in this folder yet. This page turns into the league's page as soon as the referee
writes it (<code>referee run</code> with this folder as its output).</p>
<script>
// Asks every 2 s whether leaderboard.html is written yet: a poll, not a stream held open, lets a browser that
// waits for the network to go quiet (headless Chromium's --virtual-time-budget) finish with this page.
setInterval(() => fetch(location.pathname, { method: "HEAD", cache: "no-store" })
  .then((response) => { if (response.headers.get("x-referee-page") === "league") location.reload(); })
  .catch(() => {}), 2000);
</script>
</body></html>
"""


def not_published() -> Response:
    """404 for anything that is no page of the site: never a file of the folder."""
    return PlainTextResponse(NOT_PUBLISHED, status_code=404)


def events_route(page: Path, poll_seconds: float) -> Route:
    """``/events``: an event each time the league's page ``page`` is rewritten, for the open pages to reload."""
    changes = FileChanges(page, poll_seconds)  # one watcher of the page for every open page's stream

    async def events(request: Request) -> Response:
        return changes.stream(request)

    return Route("/events", events)


def page_routes(output: Path) -> list[Route]:
    """``/`` (to the league's page), the league's page (or a page that waits for it), the leaderboard files and the
    head-to-head pages: files the league's page writer writes with the games that may be shown alone."""
    page = output / PAGE

    async def home(request: Request) -> Response:
        return RedirectResponse(PAGE)

    async def league_page(request: Request) -> Response:
        if page.is_file():
            return FileResponse(page, headers={**NO_STORE, "X-Referee-Page": "league"})
        return HTMLResponse(WAITING_PAGE, headers={**NO_STORE, "X-Referee-Page": "waiting"})

    async def leaderboard_file(request: Request) -> Response:
        name = request.url.path.rsplit("/", 1)[-1]
        path = output / name
        if not path.is_file():
            return not_published()
        return FileResponse(path, media_type=LEADERBOARD_FILES[name], headers=NO_STORE)

    async def pair_page(request: Request) -> Response:
        """Two bots' page (:mod:`referee.publish.head_to_head`), the first named first in sorted order."""
        first, second = request.path_params["first"], request.path_params["second"]
        if not (plain_name(first) and plain_name(second) and first < second):
            return not_published()
        path = output / PAIRS_DIR / first / f"{second}.html"
        if not path.is_file():
            return not_published()
        return FileResponse(path, media_type="text/html", headers=NO_STORE)

    return [
        Route("/", home),
        Route(f"/{PAGE}", league_page, methods=["GET", "HEAD"]),
        *(Route(f"/{name}", leaderboard_file) for name in LEADERBOARD_FILES),
        Route(f"/{PAIRS_DIR}/{{first}}/{{second}}.html", pair_page),
    ]


class PublishedGames:
    """``games.jsonl``, each game's replay (``replays/GAME.html``) and its log (``games/GAME.jsonl``): a game only
    once it may be shown, each record as published."""

    def __init__(self, site: Site) -> None:
        self.output = site.output
        self.games = site.games
        self.replays = PageCache()
        self.archive = GamesArchive(site.output)

    def routes(self) -> list[Route]:
        return [
            Route(f"/{RESULTS_FILE}", self.results_records),
            Route(f"/{ARCHIVE_NAME}", self.games_archive),
            Route(f"/{REPLAY_DIR}/{{game}}.html", self.game_replay),
            Route(f"/{GAME_LOGS}/{{game}}.jsonl", self.game_log_records),
        ]

    def withheld(self, game: str, request: Request) -> Response | None:
        """404 for a game that is not a finished one that may be shown: a bad name, no record yet, or its deals
        still in play or within the spectator delay (:mod:`referee.records.visibility`); for a browser, a page
        that says what it waits for and looks again by itself."""
        if not plain_name(game):
            return not_published()
        if not self.games.recorded(game, self.games.shown()):
            if wants_html(request):
                return HTMLResponse(held_back(game, root_of(request)), status_code=404, headers=NO_STORE)
            return PlainTextResponse(HELD_BACK, status_code=404)
        return None

    async def results_records(self, request: Request) -> Response:
        """``games.jsonl``: each record that may be shown (:mod:`referee.records.visibility`), as published."""
        path = self.output / RESULTS_FILE
        if not path.is_file():
            return not_published()
        shown = Shown.read(self.output)  # the rule first, then the records it accounts for

        def public(record: dict[str, Any]) -> dict[str, Any] | None:
            return public_game_record(record) if shown.game(str(record.get("game_id"))) else None

        return StreamingResponse(
            _lines_shown(path, public, shown.accounted), media_type="application/x-ndjson", headers=NO_STORE
        )

    async def games_archive(self, request: Request) -> Response:
        """``games.tar.gz``: every game that may be shown, its record and log, with the league's public record
        (:mod:`referee.publish.archive`), as :class:`GamesArchive` keeps it."""
        if not (self.output / RESULTS_FILE).is_file():
            return not_published()
        try:
            archive, name = await self.archive.open()
        except (OSError, RefereeError):
            return PlainTextResponse(ARCHIVE_UNAVAILABLE, status_code=503, headers={"Retry-After": "30"})
        headers = {
            **NO_STORE,
            "Content-Length": str(os.fstat(archive.fileno()).st_size),
            "Content-Disposition": f'attachment; filename="{name}-games.tar.gz"',
        }
        return StreamingResponse(_chunks(archive), media_type="application/gzip", headers=headers)

    async def game_replay(self, request: Request) -> Response:
        """A game's replay page: its file where the league writes them (``static_replays``), else made now from the
        game's log, as published (:mod:`referee.publish.redaction`)."""
        game = request.path_params["game"]
        refusal = self.withheld(game, request)
        if refusal is not None:
            return refusal
        written, log_file = self.output / REPLAY_DIR / f"{game}.html", find_log(self.output / GAME_LOGS, game)
        if written.is_file():
            return FileResponse(written)
        if log_file is None:  # shown, so its log was written (before its record): the league's keep_logs pruned it
            return PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        try:
            stat = log_file.stat()
        except OSError:
            return not_published()

        async def make() -> bytes:
            start, steps = await asyncio.to_thread(read_game, log_file, public_log)
            return (await asyncio.to_thread(replay_page, start, steps, BACK_LINK)).encode("utf-8")

        # Made once for every visitor (and again if the log is written again): what passed withheld() alone.
        version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return HTMLResponse(await self.replays.get(game, version, make))

    async def game_log_records(self, request: Request) -> Response:
        """A game's log, each record as published (:mod:`referee.publish.redaction`)."""
        game = request.path_params["game"]
        refusal = self.withheld(game, request)
        path = None if refusal else find_log(self.output / GAME_LOGS, game)
        if refusal is not None or path is None:
            return refusal or PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        # Stored compressed, answered as JSON lines: unpacked in a worker thread, a log being some 20 KB of text.
        try:
            lines = (await asyncio.to_thread(log_text, path)).encode("utf-8").splitlines(keepends=True)
        except (OSError, ValueError, RefereeError):  # removed since (pruned), or damaged: nothing to show
            return PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        return StreamingResponse(_records_shown(lines, public_log_record), media_type="application/x-ndjson")


class GamesArchive:
    """``games.tar.gz``, made when asked for, in a worker thread, into a temporary file of the server's own with no
    name in any folder (never the league's), and kept for every visitor until what may be shown changes.

    Made again only once every ten times it took to make (at least :data:`ARCHIVE_AGAIN_S`): a season's archive
    costs the server a tenth of a CPU at most, however often it is asked for; meanwhile the one kept is served, which
    holds fewer games, never more. Unless a game it holds is held back now (a folder whose rule says so, however
    unlikely): then it is made again at once, and what it holds is never shown before its time. An archive made
    again is closed once the last visitor reading it has read it.
    """

    def __init__(self, output: Path) -> None:
        self.output = output
        self._lock = asyncio.Lock()
        self._file: IO[bytes] | None = None
        self._name = "league"  # the archive's one folder
        self._key: tuple[Any, ...] | None = None
        self._games: frozenset[str] = frozenset()
        self._again = 0.0  # time.monotonic() before which it is not made again (but to hold a game back)
        self.made = 0  # archives made, for the tests

    def _key_of(self, shown: Shown) -> tuple[Any, ...]:
        """What the archive is made of: the results file as it is now and the games the rule holds now."""
        try:
            status = (self.output / RESULTS_FILE).stat()
            results = (status.st_ino, status.st_size, status.st_mtime_ns)
        except FileNotFoundError:
            results = None
        held = frozenset(game for game in shown.held if not shown.game(game))
        return results, shown.accounted, shown.everything_held, held

    async def open(self) -> tuple[IO[bytes], str]:
        """The archive (a file each visitor reads at its own offsets, :func:`_chunks`) and the name of its folder."""
        async with self._lock:
            shown = Shown.read(self.output)
            key = self._key_of(shown)
            unsafe = shown.everything_held or not self._games.isdisjoint(key[-1])
            if self._file is None or unsafe or (key != self._key and time.monotonic() >= self._again):
                await self._make(shown, key)
            assert self._file is not None  # made above
            return self._file, self._name

    async def _make(self, shown: Shown, key: tuple[Any, ...]) -> None:
        self.made += 1
        started = time.monotonic()
        file, archived = await asyncio.to_thread(self._write, shown)
        took = time.monotonic() - started
        # The one made before is dropped, not closed: a visitor still reading it holds it until done.
        self._file, self._key, self._games, self._name = file, key, frozenset(archived.games), archived.root
        self._again = time.monotonic() + max(ARCHIVE_AGAIN_S, 10 * took)

    def _write(self, shown: Shown) -> tuple[IO[bytes], Archived]:
        file = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for its readers; no name in any folder
        try:
            archived = write_archive(self.output, file, "gz", shown=shown)
            file.flush()
        except BaseException:
            file.close()
            raise
        return file, archived


async def _chunks(file: IO[bytes], size: int = 1 << 16) -> AsyncIterator[bytes]:
    """A file's bytes from its start, a chunk at a time, read in a worker thread at this reader's own offsets (the
    file is shared by every visitor; it is kept open for as long as this reads it)."""
    offset = 0
    while chunk := await asyncio.to_thread(os.pread, file.fileno(), size, offset):
        offset += len(chunk)
        yield chunk


def _lines_shown(
    path: Path, shown: Callable[[dict[str, Any]], dict[str, Any] | None], limit: int | None = None
) -> Iterator[bytes]:
    """The JSON lines of ``path`` (its first ``limit`` bytes), each record as ``shown`` gives it, or left out where
    it gives None (read a line at a time, in a worker thread)."""
    with open(path, "rb") as lines:
        yield from _records_shown(lines, shown, limit)


def _records_shown(
    lines: Iterable[bytes], shown: Callable[[dict[str, Any]], dict[str, Any] | None], limit: int | None = None
) -> Iterator[bytes]:
    """The JSON lines of ``lines`` (their first ``limit`` bytes), each record as ``shown`` gives it (see above)."""
    read = 0
    for line in lines:
        read += len(line)
        if not line.endswith(b"\n") or (limit is not None and read > limit):
            return  # a line still being written, or written after the records were looked at
        try:
            record = json.loads(line)
        except ValueError:
            continue
        public = shown(record) if isinstance(record, dict) else None
        if public is not None:
            yield (json.dumps(public, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
