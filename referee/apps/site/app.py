"""The site's routes, and the one place that decides who may read what.

What each visitor may read:

========================  =====================================================================
anyone                    the league's page and leaderboards (``leaderboard.*``), ``games.jsonl``,
                          the replays and game logs (``replays/``, ``games/``); a finished game,
                          its record, log, replay and seed only once every game on its deals has
                          ended and the spectator delay is over (:mod:`referee.records.visibility`
                          decides), ``/events``, the
                          games in play as a spectator sees them (``/live/``:
                          :mod:`referee.apps.site.spectating`), the sign-in form; with
                          ``--offer-play``, games against the sample bots (``/play/``:
                          :mod:`referee.apps.site.offered`)
an author (their token,   their own page (``/authors/NAME/``): every version with its verdict,
or a session after        build log, check games and output, standing, games and faults; their
signing in)               bots' output in each game; ``POST /api/submissions`` (an upload) and
                          ``GET /api/submissions`` (their versions, as JSON)
nobody, over HTTP         ``league.json`` (the seed: every deal), ``builds/`` (each author's code),
                          ``logs/``, ``checks/`` and ``reports/`` (but through their author's
                          page), ``register.jsonl``, ``tables.jsonl``, ``authors.json``,
                          ``uploads.jsonl``, ``lanes/``, anything else
========================  =====================================================================

The site serves exact routes only: a path no route names, however it is
spelled (``/games.jsonl/``, ``//games.jsonl``, ``/./games.jsonl``,
``/replays/../games.jsonl``), is 404, never a file of the folder.

A bot's output (its debug prints, and with them its strategy) reaches its
author alone. Another author's token or session gets 403 on any author's
page but their own, and the same 403 for an author who does not exist, so
it learns nothing. A missing, wrong or revoked token gets 401, in the same
words whichever it is; a client that keeps failing is refused (429) for a
while (:class:`referee.apps.site.auth.FailureLimiter`), and each refusal is
logged, never with the token. A token travels only in an ``Authorization:
Bearer`` header or a sign-in form's body, never in a URL; a browser keeps a
session cookie (HttpOnly, SameSite=Strict) instead of it, and a form posted
with that cookie from another origin is refused.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError, SimpleUser
from starlette.datastructures import UploadFile
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.apps.checkbot import CANDIDATE
from referee.apps.ladder.file import MB, Ladder, load_ladder
from referee.apps.site import ServeError
from referee.apps.site import author_page as pages
from referee.apps.site.auth import (
    SESSION_COOKIE,
    SESSION_HOURS,
    AuthorKey,
    Authors,
    FailureLimiter,
    Sessions,
    client_network,
)
from referee.apps.site.page_cache import PageCache
from referee.apps.site.season_folder import (
    BOT_LOGS,
    GamesIndex,
    check_folder,
    game_log,
    outputs_in,
    plain_name,
    record_upload,
    versions_of,
)
from referee.apps.site.spectating import live_routes
from referee.apps.site.streams import FileChanges
from referee.apps.site.uploads import TOO_LARGE, UPLOADS_DIR, UploadRefused, admit, land
from referee.common.errors import RefereeError
from referee.publish.league_page import REPLAY_DIR
from referee.publish.live import BACK_LINK
from referee.publish.redaction import public_game_record, public_log, public_log_record
from referee.publish.replay_page import replay_page
from referee.records.gamelog import find_log, log_text
from referee.records.results import ACCEPTED, RESULTS_FILE, read_league
from referee.records.transcript import read_game
from referee.records.visibility import Shown

log = logging.getLogger("referee.apps.site")

PAGE = "leaderboard.html"
# The leaderboard files beside the page: written by the league runner with the games that may be shown alone.
LEADERBOARD_FILES = {"leaderboard.md": "text/markdown", "leaderboard.json": "application/json",
                     "leaderboard.csv": "text/csv"}  # fmt: skip
HELD_BACK = (
    "not yet: a game on the same deals is still being played, and this one would show its cards; it is published "
    "once the last game on its deals has ended and the league's spectator delay after it is over\n"
)
NOT_PUBLISHED = (
    "not published: referee serve shows a league's pages and what they link to (replays and game logs); a bot's "
    "output, checks and build log only to its author, on their page; never league.json (the seed), builds or "
    "other records\n"
)
NO_LONGER_KEPT = (
    "no longer kept: the league keeps the logs of each bot's latest games (keep_logs, docs/leagues.md), and this "
    "game's log has been removed; its record is still in games.jsonl\n"
)
AUTHOR = "author"  # the scope of a visitor who is an author (by token or session)
SESSION = "session"  # ... by a session cookie: a form they post must come from this site
POLL_SECONDS = 0.5  # how often the league's page file is looked at, for /events
FORM_OVERHEAD = 64 * 1024  # a multipart form's own bytes around the archive
CHUNK = 256 * 1024
CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
# Every answer: no page of the site in another's frame, no URL of it in another site's Referer, no type guessed from
# content;
# scripts and styles are the pages' own (inline) or the site's.
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    # The full address to this site's own pages only (not "no-referrer": with it a browser's form says it comes
    # from nowhere, "Origin: null", and a post from this site could not be told from one from another).
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY),
]
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


class Refused(AuthenticationError):
    """A token refused (401), or a client refused for its failures (429, with the seconds until it may retry)."""

    def __init__(self, status: int, message: str, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        if self.status == 429:
            return {"Retry-After": str(math.ceil(self.retry_after))}
        return {"WWW-Authenticate": 'Bearer realm="referee"'}


class Site:
    """What the server serves: a league's or a ladder's output folder, and for a ladder its authors and uploads."""

    def __init__(self, target: Path, limiter: FailureLimiter | None = None) -> None:
        target = Path(target)
        self.ladder: Ladder | None = None
        if target.is_file():
            self.ladder = load_ladder(target)
            self.output = self.ladder.output.resolve()
            self.output.mkdir(parents=True, exist_ok=True)
        elif target.is_dir():
            self.output = target.resolve()
        else:
            raise ServeError(
                f"{target}: no such directory or ladder file; give a league's output directory, a ladder's, or its "
                "ladder file (which turns on uploads)"
            )
        self.authors = Authors(self.output)
        if self.ladder is None and self.authors.ladder:
            self.ladder = self._ladder_of_authors(self.authors.ladder)
        if self.ladder is not None:  # where uploads are staged: made now, so that no refused upload makes it
            (self.ladder.submissions / UPLOADS_DIR).mkdir(mode=0o700, exist_ok=True)
        self.sessions = Sessions()
        self.limiter = limiter or FailureLimiter()
        self.games = GamesIndex(self.output)
        self.season = pages.Season(self.output, self.ladder, self.games)
        self._landing: dict[str, asyncio.Lock] = {}

    def _ladder_of_authors(self, path: str) -> Ladder:
        try:
            ladder = load_ladder(path)
        except (RefereeError, OSError) as error:
            raise ServeError(
                f"{self.output}: its authors.json belongs to ladder file {path}, which cannot be read ({error}); "
                "serve the ladder file itself"
            ) from None
        if ladder.output.resolve() != self.output:
            raise ServeError(
                f"{self.output}: its authors.json belongs to ladder file {path}, whose output is {ladder.output}; "
                "serve the ladder file itself"
            )
        return ladder

    @property
    def described(self) -> str:
        if self.ladder is None:
            return str(self.output)
        return f"ladder {self.ladder.league.name} ({self.output}; uploads to {self.ladder.submissions})"

    def check_token(self, token: str, client: str) -> AuthorKey:
        """The author whose token ``token`` is in force; otherwise :class:`Refused`, counted against ``client``'s
        network.

        A token in force is accepted even from a network locked out for its failures: attackers behind an author's
        NAT must not lock the author out, and the lockout is not what stops guessing (256 random bits are). Only
        wrong tokens get the 429, and a success forgets none of the network's failures.
        """
        key = self.authors.who(token)
        if key is not None and key.revoked is None:
            return key
        wait = self.limiter.retry_after(client)
        if wait:
            raise Refused(429, f"too many failed sign-ins from {client}: try again in {math.ceil(wait)} s", wait)
        locked = self.limiter.failed(client)
        log.warning("%s: a token refused (%s)", client, f"revoked, of {key.author}" if key else "no author's token")
        if locked:
            log.warning(
                "%s: too many failed sign-ins: refused for %d s (every wrong token from %s)",
                client,
                locked,
                client_network(client),
            )
        raise Refused(401, "not a valid token: sign in with the token the organiser gave you")

    def landing(self, author: str) -> asyncio.Lock:
        """One upload of an author at a time in this server (the landing itself also locks, across processes)."""
        return self._landing.setdefault(author, asyncio.Lock())


def client_of(connection: HTTPConnection) -> str:
    """The client's address: the connection's peer, or the address a proxy of ``--forwarded-allow-ips`` names."""
    return connection.client.host if connection.client else "unknown"


class Credentials(AuthenticationBackend):
    """An author by their token (``Authorization: Bearer``) or by their session's cookie; otherwise anonymous."""

    def __init__(self, site: Site) -> None:
        self.site = site

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        header = conn.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Refused(401, "give your token as: Authorization: Bearer TOKEN")
            key = self.site.check_token(token.strip(), client_of(conn))
            return AuthCredentials([AUTHOR]), SimpleUser(key.author)
        session = conn.cookies.get(SESSION_COOKIE)
        if session:
            author = self.site.sessions.author(session, self.site.authors)
            if author is not None:
                return AuthCredentials([AUTHOR, SESSION]), SimpleUser(author)
        return None


def _refused(connection: HTTPConnection, error: AuthenticationError) -> Response:
    status = error.status if isinstance(error, Refused) else 401
    headers = error.headers() if isinstance(error, Refused) else {}
    if _wants_html(connection):
        return HTMLResponse(pages.refused(status, str(error), _root(connection)), status, headers=headers)
    return JSONResponse({"error": str(error)}, status, headers=headers)


def _root(connection: HTTPConnection) -> str:
    """The way back to the site's root from the page asked for, as a relative link (the site may sit under a path)."""
    return "../" * (connection.url.path.count("/") - 1)


def _wants_html(connection: HTTPConnection) -> bool:
    return "text/html" in connection.headers.get("accept", "")


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(
    target: Path,
    *,
    poll_seconds: float = POLL_SECONDS,
    limiter: FailureLimiter | None = None,
    offer_play: bool = False,
) -> Starlette:
    """The web application serving ``target``: a league's or ladder's output folder, or a ladder file."""
    site = Site(target, limiter)
    output = site.output
    page = output / PAGE

    # ----- the public pages ---------------------------------------------------------------------------

    changes = FileChanges(page, poll_seconds)  # one watcher of the page for every open page's stream

    async def events(request: Request) -> Response:
        return changes.stream(request)

    async def home(request: Request) -> Response:
        return RedirectResponse(PAGE)

    async def league_page(request: Request) -> Response:
        headers = {"Cache-Control": "no-store"}
        if page.is_file():
            return FileResponse(page, headers={**headers, "X-Referee-Page": "league"})
        return HTMLResponse(WAITING_PAGE, headers={**headers, "X-Referee-Page": "waiting"})

    async def leaderboard_file(request: Request) -> Response:
        name = request.url.path.rsplit("/", 1)[-1]
        path = output / name
        if not path.is_file():
            return PlainTextResponse(NOT_PUBLISHED, status_code=404)
        return FileResponse(path, media_type=LEADERBOARD_FILES[name], headers={"Cache-Control": "no-store"})

    def withheld(game: str) -> Response | None:
        """404 for a game that is not a finished one that may be shown: a bad name, no record yet, or its deals
        still in play or within the spectator delay (:mod:`referee.records.visibility`)."""
        if not plain_name(game):
            return PlainTextResponse(NOT_PUBLISHED, status_code=404)
        if not site.games.recorded(game, site.games.shown()):
            return PlainTextResponse(HELD_BACK, status_code=404)
        return None

    replays = PageCache()

    async def game_replay(request: Request) -> Response:
        """A game's replay page: its file where the league writes them (``static_replays``), else made now from the
        game's log, as published (:mod:`referee.publish.redaction`)."""
        game = request.path_params["game"]
        refusal = withheld(game)
        if refusal is not None:
            return refusal
        written, log_file = output / REPLAY_DIR / f"{game}.html", find_log(output / "games", game)
        if written.is_file():
            return FileResponse(written)
        if log_file is None:  # shown, so its log was written (before its record): the league's keep_logs pruned it
            return PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        try:
            stat = log_file.stat()
        except OSError:
            return PlainTextResponse(NOT_PUBLISHED, status_code=404)

        async def make() -> bytes:
            start, steps = await asyncio.to_thread(read_game, log_file, public_log)
            return (await asyncio.to_thread(replay_page, start, steps, BACK_LINK)).encode("utf-8")

        # Made once for every visitor (and again if the log is written again): what passed withheld() alone.
        version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return HTMLResponse(await replays.get(game, version, make))

    async def game_log_records(request: Request) -> Response:
        """A game's log, each record as published (:mod:`referee.publish.redaction`)."""
        game = request.path_params["game"]
        refusal = withheld(game)
        path = None if refusal else find_log(output / "games", game)
        if refusal is not None or path is None:
            return refusal or PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        # Stored compressed, answered as JSON lines: unpacked in a worker thread, a log being some 20 KB of text.
        try:
            lines = (await asyncio.to_thread(log_text, path)).encode("utf-8").splitlines(keepends=True)
        except (OSError, ValueError, RefereeError):  # removed since (pruned), or damaged: nothing to show
            return PlainTextResponse(NO_LONGER_KEPT, status_code=404)
        return StreamingResponse(_records_shown(lines, public_log_record), media_type="application/x-ndjson")

    async def results_records(request: Request) -> Response:
        """``games.jsonl``: each record that may be shown (:mod:`referee.records.visibility`), as published."""
        path = output / RESULTS_FILE
        if not path.is_file():
            return PlainTextResponse(NOT_PUBLISHED, status_code=404)
        shown = Shown.read(output)  # the rule first, then the records it accounts for

        def public(record: dict[str, Any]) -> dict[str, Any] | None:
            return public_game_record(record) if shown.game(str(record.get("game_id"))) else None

        return StreamingResponse(
            _lines_shown(path, public, shown.accounted), media_type="application/x-ndjson", headers=NO_STORE
        )

    # ----- signing in and out ----------------------------------------------------------------------------

    async def signin_form(request: Request) -> Response:
        return HTMLResponse(pages.signin(site_name(site)), headers=PRIVATE)

    async def signin(request: Request) -> Response:
        if not _same_origin(request):
            return HTMLResponse(pages.refused(403, "a sign-in from another site", _root(request)), 403)
        form = await request.form(max_files=0, max_fields=4, max_part_size=4096)
        token = str(form.get("token") or "").strip()
        try:
            if not token:
                raise Refused(401, "give the token the organiser gave you")
            key = site.check_token(token, client_of(request))
        except Refused as refusal:
            return HTMLResponse(
                pages.signin(site_name(site), str(refusal)), refusal.status, headers={**PRIVATE, **refusal.headers()}
            )
        log.info("%s: %s signed in", client_of(request), key.author)
        answer = RedirectResponse(request.url_for("author_page", author=key.author), 303)
        answer.set_cookie(
            SESSION_COOKIE,
            site.sessions.start(key),
            max_age=int(SESSION_HOURS * 3600),
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return answer

    async def signout(request: Request) -> Response:
        session = request.cookies.get(SESSION_COOKIE)
        if session:
            site.sessions.end(session)
        answer = RedirectResponse(request.url_for("signin_form"), 303)
        answer.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return answer

    # ----- an author's own --------------------------------------------------------------------------------

    def only_for(request: Request, author: str) -> Response | None:
        """None when the visitor is ``author``; otherwise the answer: sign in (401), or not yours (403)."""
        if not request.user.is_authenticated:
            return HTMLResponse(pages.signin(site_name(site), None, author, _root(request)), 401, headers=PRIVATE)
        if request.user.display_name != author:
            return HTMLResponse(pages.not_yours(request.user.display_name, _root(request)), 403, headers=PRIVATE)
        return None

    def version_of(author: str, bot: str) -> bool:
        return plain_name(bot) and any(judged.bot == bot for judged in versions_of(output, author))

    async def author_page(request: Request) -> Response:
        author = request.path_params["author"]
        refusal = only_for(request, author)
        if refusal is not None:
            return refusal
        html = await asyncio.to_thread(pages.author, site.season, author, _api(request))
        return HTMLResponse(html, headers=PRIVATE)

    async def author_slash(request: Request) -> Response:
        return RedirectResponse(request.url_for("author_page", author=request.path_params["author"]), 308)

    async def build_log(request: Request) -> Response:
        author, bot = request.path_params["author"], request.path_params["bot"]
        refusal = only_for(request, author)
        if refusal is not None:
            return refusal
        path = output / BOT_LOGS / f"build-{bot}.log"
        if not version_of(author, bot) or not path.is_file():
            return _missing(f"no build log of {bot}")
        return FileResponse(path, media_type="text/plain; charset=utf-8", headers=PRIVATE)

    async def check_replay(request: Request) -> Response:
        author, bot, game = (request.path_params[key] for key in ("author", "bot", "game"))
        refusal = only_for(request, author)
        if refusal is not None:
            return refusal
        path = check_folder(output, bot) / f"{game}.jsonl"
        if not version_of(author, bot) or not plain_name(game) or not path.is_file():
            return _missing(f"no check game {game} of {bot}")
        start, steps = await asyncio.to_thread(read_game, path)
        return HTMLResponse(replay_page(start, steps, back="../../"), headers=PRIVATE)

    async def check_output(request: Request) -> Response:
        author, bot, game = (request.path_params[key] for key in ("author", "bot", "game"))
        refusal = only_for(request, author)
        if refusal is not None:
            return refusal
        folder = check_folder(output, bot)
        records = game_log(folder, game) if version_of(author, bot) else None
        if records is None:
            return _missing(f"no check game {game} of {bot}")
        # In its check the version plays as the candidate, against the sample bots.
        return PlainTextResponse(pages.output_text(game, outputs_in(records, folder, [CANDIDATE])), headers=PRIVATE)

    async def game_output(request: Request) -> Response:
        author, game = request.path_params["author"], request.path_params["game"]
        refusal = only_for(request, author)
        if refusal is not None:
            return refusal
        mine = [judged.bot for judged in versions_of(output, author) if judged.verdict == ACCEPTED]
        if not plain_name(game) or not site.games.recorded(game, site.games.shown()):
            return _missing(f"no game {game} of yours that may be shown yet (its deals are still in play)")
        records = game_log(output / "games", game)
        found = outputs_in(records, output / BOT_LOGS, mine) if records else []
        if not records or not any(player in mine for player in records[0].get("players", [])):
            return _missing(f"no game {game} of yours")
        return PlainTextResponse(pages.output_text(game, found), headers=PRIVATE)

    # ----- uploads -----------------------------------------------------------------------------------------

    async def my_submissions(request: Request) -> Response:
        if not request.user.is_authenticated:
            return JSONResponse(
                {"error": "sign in: Authorization: Bearer TOKEN"}, 401, headers=Refused(401, "").headers()
            )
        author = request.user.display_name
        return JSONResponse(await asyncio.to_thread(pages.versions_json, output, author, _follow(request, author)),
                            headers=PRIVATE)  # fmt: skip

    async def upload(request: Request) -> Response:
        if not request.user.is_authenticated:
            error = "sign in: send your token as Authorization: Bearer TOKEN, or upload from your page"
            return JSONResponse({"error": error}, 401, headers=Refused(401, "").headers())
        author = request.user.display_name
        if SESSION in request.auth.scopes and not _same_origin(request):
            return JSONResponse({"error": "an upload from another site"}, 403)
        if site.ladder is None:
            error = "this server takes no uploads: the organiser serves the ladder's folder without its ladder file"
            return JSONResponse({"error": error}, 409)
        ladder = site.ladder
        client = client_of(request)
        if (ladder.submissions / author).resolve() == output:  # the ladder's own output folder: never replaced
            error = f"author {author!r}: the ladder's output folder has this name; the organiser must rename one"
            return JSONResponse({"error": error}, 409)
        async with site.landing(author):
            try:
                await asyncio.to_thread(admit, output, author, ladder.uploads)  # before the body is read
                with tempfile.TemporaryDirectory(prefix="referee-upload-") as scratch:
                    archive = Path(scratch) / "archive"
                    size = await _receive(request, archive, ladder.uploads.archive_bytes)
                    landed = await asyncio.to_thread(land, archive, ladder.submissions, author, ladder.uploads)
            except UploadRefused as refusal:
                log.info("%s: an upload by %s refused: %s", client, author, refusal)
                retry = {"Retry-After": str(math.ceil(refusal.retry_after))} if refusal.retry_after else {}
                if SESSION in request.auth.scopes and _wants_html(request):
                    html = await asyncio.to_thread(pages.author, site.season, author, _api(request), str(refusal))
                    return HTMLResponse(html, refusal.status, headers={**PRIVATE, **retry})
                return JSONResponse({"error": str(refusal)}, refusal.status, headers=retry)
            record_upload(output, author, landed.digest, size)
        versions = versions_of(output, author)
        follow = _follow(request, author)
        if versions and versions[-1].digest == landed.digest:
            answer = {"author": author, "version": versions[-1].bot, "digest": landed.digest, "follow": follow,
                      "status": f"unchanged: the same content as {versions[-1].bot}, judged already"}  # fmt: skip
            code = 200
        else:
            version = f"{author}-v{len(versions) + 1}"
            answer = {"author": author, "version": version, "digest": landed.digest, "follow": follow,
                      "status": f"waiting to be judged: the ladder looks every {ladder.poll_s:g} s"}  # fmt: skip
            code = 202
        log.info("%s: an upload by %s landed (%d bytes, digest %s): %s", client, author, size, landed.digest[:12],
                 answer["status"])  # fmt: skip
        if SESSION in request.auth.scopes and _wants_html(request):
            return RedirectResponse(follow, 303)
        return JSONResponse(answer, code, headers=PRIVATE)

    routes = [
        Route("/events", events),
        *live_routes(output),
        *(_offered(output) if offer_play else []),
        Route("/", home),
        Route(f"/{PAGE}", league_page, methods=["GET", "HEAD"]),
        *(Route(f"/{name}", leaderboard_file) for name in LEADERBOARD_FILES),
        Route(f"/{RESULTS_FILE}", results_records),
        Route(f"/{REPLAY_DIR}/{{game}}.html", game_replay),
        Route("/games/{game}.jsonl", game_log_records),
        Route("/signin", signin_form, methods=["GET"], name="signin_form"),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/api/submissions", upload, methods=["POST"]),
        Route("/api/submissions", my_submissions, methods=["GET"]),
        Route("/authors/{author}", author_slash),
        Route("/authors/{author}/", author_page, name="author_page"),
        Route("/authors/{author}/builds/{bot}.log", build_log),
        Route("/authors/{author}/checks/{bot}/{game}.html", check_replay),
        Route("/authors/{author}/checks/{bot}/{game}.txt", check_output),
        Route("/authors/{author}/games/{game}.txt", game_output),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(AuthenticationMiddleware, backend=Credentials(site), on_error=_refused),
        ],
    )
    app.router.redirect_slashes = False  # exact routes only: /games.jsonl/ is no way to /games.jsonl
    app.router.default = _not_a_route
    app.state.site = site
    return app


async def _not_a_route(scope: Scope, receive: Receive, send: Send) -> None:
    """Any path no route names, however spelled: 404, never a file of the folder."""
    await PlainTextResponse(NOT_PUBLISHED, status_code=404)(scope, receive, send)


PRIVATE = {"Cache-Control": "no-store"}  # an author's answers: kept by no cache, shared or not
NO_STORE = PRIVATE  # what changes as games finish: kept by no cache


def _offered(output: Path) -> list[Route]:
    """``/play/``: the league's game offered to visitors (:mod:`referee.apps.site.offered`), at the league's table size."""
    from referee.apps.site.offered import offered_routes

    recorded = read_league(output)
    rules = recorded.rules if recorded is not None else {}
    if not isinstance(rules.get("game"), str) or not isinstance(rules.get("table_size"), int):
        raise ServeError(
            f"{output}: --offer-play needs a league's folder (its league.json names the game and table size)"
        )
    return offered_routes(rules["game"], rules["table_size"])


def site_name(site: Site) -> str:
    return site.ladder.league.name if site.ladder is not None else site.output.name


def _api(request: Request) -> str:
    return str(request.base_url) + "api/submissions"


def _follow(request: Request, author: str) -> str:
    return str(request.url_for("author_page", author=author))


def _missing(what: str) -> Response:
    return PlainTextResponse(f"{what}\n", 404, headers=PRIVATE)


def _same_origin(request: Request) -> bool:
    """Whether a form posted with a session cookie comes from a page of this site (its Origin, else its Referer)."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source:
        return True  # not a browser's cross-site post: browsers send Origin with every POST
    return urlsplit(source).netloc == request.headers.get("host", "")


async def _receive(request: Request, archive: Path, limit: int) -> int:
    """Write the uploaded archive (the body, or a form's file) to ``archive``, refusing one over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise _too_big(limit)
    kind = request.headers.get("content-type", "")
    with open(os.open(archive, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        if kind.startswith("multipart/form-data"):
            capped = Request(request.scope, _capped(request.receive, limit + FORM_OVERHEAD))
            form = await capped.form(max_files=1, max_fields=4)
            files = [value for value in form.values() if isinstance(value, UploadFile)]
            if not files:
                raise UploadRefused("the form", "it holds no file; choose your bot folder's .tar.gz or .zip")
            size = await _copy(files[0].read, out, limit)
        else:
            chunks = request.stream()
            size = await _copy(lambda _: anext(chunks, b""), out, limit)
    if size == 0:
        raise UploadRefused("the request", "it holds no archive; send your bot folder as a .tar.gz or .zip")
    return size


async def _copy(read: Callable[[int], Awaitable[bytes]], out: Any, limit: int) -> int:
    size = 0
    while chunk := await read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise _too_big(limit)
        out.write(chunk)
    return size


def _capped(receive: Receive, limit: int) -> Receive:
    """``receive``, refusing a body that grows past ``limit`` bytes (whatever its Content-Length said)."""
    received = 0

    async def capped() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise _too_big(limit - FORM_OVERHEAD)
        return message

    return capped


def _too_big(limit: int) -> UploadRefused:
    return UploadRefused(
        "the archive",
        f"it is over the limit of {limit // MB} MB (uploads.archive_mb); leave out what the bot needs neither to "
        "build nor to run",
        TOO_LARGE,
    )


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
