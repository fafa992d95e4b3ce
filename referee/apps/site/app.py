"""The site's application: every route, in the order they are matched, and the one table of who may read what.

Each group of routes is built by its own module, which answers for its part of the table: the public pages and
records (:mod:`referee.apps.site.public_pages`), the games in play (:mod:`referee.apps.site.spectating`), the
games offered to visitors (:mod:`referee.apps.site.offered`), signing in and out
(:mod:`referee.apps.site.signing_in`), uploads (:mod:`referee.apps.site.submissions_api`) and an author's own
pages (:mod:`referee.apps.site.author_routes`). What each visitor may read:

========================  =====================================================================
anyone                    the league's page and leaderboards (``leaderboard.*``), each two bots'
                          page (``pairs/A/B.html``), ``games.jsonl``, every game shown as one
                          archive (``games.tar.gz``), the replays and game logs (``replays/``,
                          ``games/``); a finished game,
                          its record, log, replay and seed only once every game on its deals has
                          ended and the spectator delay is over (:mod:`referee.records.visibility`
                          decides), ``/events``, the
                          games in play as a spectator sees them (``/live/``:
                          :mod:`referee.apps.site.spectating`), the sign-in form; with
                          ``--offer-play``, games against the sample bots (``/play/``:
                          :mod:`referee.apps.site.offered`)
an author (their token,   their own page (``/authors/NAME/``): every version with its verdict,
or a session after        build log, check games and output, standing, games and faults; their
signing in)               bots' output and private replays (with their notes) in each game;
                          ``POST /api/submissions`` (an upload) and ``GET /api/submissions``
                          (their versions, as JSON); ``POST /api/tests`` (an A/B test of theirs)
                          and ``GET /api/tests``, each test game's private replay
nobody, over HTTP         ``league.json`` (the seed: every deal), ``builds/`` (each author's code),
                          ``logs/``, ``notes/``, ``author_tests/``, ``checks/`` and ``reports/``
                          (but through their author's page), ``register.jsonl``, ``tables.jsonl``, ``authors.json``,
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
session cookie (HttpOnly, SameSite=Strict) instead of it.

Every request that changes something (a sign-in or sign-out, an upload from
an author's page, a game started or a click on ``/play/``: any method but
GET, HEAD and OPTIONS) must come from this site's own pages: its ``Origin``,
or without one its ``Referer``, names this site. One that says neither is
refused as one from another site is (403, in a sentence): a browser sends
``Origin`` with every POST, so only a script sends neither, and a script
shows who it is by a token in an ``Authorization`` header, which no page of
another site can make a browser send; a request with that header is judged
by its token alone. This module holds that rule, for every route
(:class:`SameOriginOnly`).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.apps.site import ServeError
from referee.apps.site import author_page as pages
from referee.apps.site.ab_test_routes import ab_test_routes
from referee.apps.site.auth import FailureLimiter
from referee.apps.site.author_routes import AuthorsOwn
from referee.apps.site.public_pages import PAGE, POLL_SECONDS, PublishedGames, events_route, not_published, page_routes
from referee.apps.site.served import Site, root_of, wants_html
from referee.apps.site.signing_in import Credentials, refusal_answer, signin_routes
from referee.apps.site.spectating import live_routes
from referee.apps.site.submissions_api import submission_routes
from referee.records.results import read_league

CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
# Every answer: no page of the site in another's frame, no URL of it in another site's Referer, no type guessed from
# content; scripts and styles are the pages' own (inline) or the site's.
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    # The full address to this site's own pages only (not "no-referrer": with it a browser's form says it comes
    # from nowhere, "Origin: null", and a post from this site could not be told from one from another).
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY),
)


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


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # the methods that change nothing


class SameOriginOnly:
    """Refuses (403) every request that changes something and is not from this site's own pages
    (:func:`from_elsewhere`), before any route reads it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            connection = HTTPConnection(scope)
            problem = from_elsewhere(connection)
            if problem is not None:
                await _refused_from_elsewhere(connection, problem)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def from_elsewhere(connection: HTTPConnection) -> str | None:
    """Why a request that changes something is not from this site's own pages, or None when it is, or when it
    carries a token in an ``Authorization`` header (judged by the token alone): its ``Origin``, else its
    ``Referer``, must name this site's host, and a request that names neither is refused (the module's doc)."""
    if "authorization" in connection.headers:
        return None
    host = connection.headers.get("host", "")
    allowed = (
        f"this site's own pages ({host or 'a request naming its Host'}) alone, or from a script that sends its token "
        "(Authorization: Bearer TOKEN)"
    )
    source = connection.headers.get("origin") or connection.headers.get("referer")
    if not source:
        return (
            f"a form, a click or an upload is taken from {allowed}: this request says where it came from neither by "
            "Origin nor Referer"
        )
    if not host or urlsplit(source).netloc != host:
        return f"a form, a click or an upload is taken from {allowed}: this request came from {source[:200]!r}"
    return None


def _refused_from_elsewhere(connection: HTTPConnection, problem: str) -> Response:
    """403 for a request from elsewhere: a page for a browser, else JSON. Its body is left unread, so the
    connection is closed rather than read on."""
    headers = {"Connection": "close"}
    if wants_html(connection):
        return HTMLResponse(pages.refused(403, problem, root_of(connection)), 403, headers=headers)
    return JSONResponse({"error": problem}, 403, headers=headers)


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
    # Matched in this order, each route a path exactly (a path that no route names is 404: _not_a_route).
    routes = [
        events_route(output / PAGE, poll_seconds),
        *live_routes(output),
        *(_offered(output) if offer_play else []),
        *page_routes(output),
        *PublishedGames(site).routes(),
        *signin_routes(site),
        *submission_routes(site),
        *ab_test_routes(site),
        *AuthorsOwn(site).routes(),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(SameOriginOnly),
            Middleware(AuthenticationMiddleware, backend=Credentials(site), on_error=refusal_answer),
        ],
    )
    app.router.redirect_slashes = False  # exact routes only: /games.jsonl/ is no way to /games.jsonl
    app.router.default = _not_a_route
    app.state.site = site
    return app


async def _not_a_route(scope: Scope, receive: Receive, send: Send) -> None:
    """Any path no route names, however spelled: 404, never a file of the folder."""
    await not_published()(scope, receive, send)


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
