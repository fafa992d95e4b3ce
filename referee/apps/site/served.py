"""What ``referee serve`` serves (:class:`Site`: a folder, and for a ladder its authors and uploads), and what every
route asks of a request: who sent it, whether it wants a page, the way back to the site's root, the site's URLs."""

from __future__ import annotations

import asyncio
import logging
import math
from pathlib import Path

from starlette.authentication import AuthenticationError
from starlette.requests import HTTPConnection, Request

from referee.apps.ladder.file import Ladder, load_ladder
from referee.apps.site import ServeError
from referee.apps.site.auth import AuthorKey, Authors, FailureLimiter, Sessions, client_network
from referee.apps.site.author_page import AuthorPageSources
from referee.apps.site.season_folder import GamesIndex
from referee.apps.site.uploads import UPLOADS_DIR
from referee.common.errors import RefereeError

log = logging.getLogger(__name__)

AUTHOR_PAGE_ROUTE = "author_page"  # the name an author's page is routed by, for request.url_for
UPLOAD_PATH = "api/submissions"  # where an author uploads, from the site's root
TESTS_PATH = "api/tests"  # where an author asks for an A/B test of theirs (referee.apps.site.ab_test_routes)


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
        self.page_sources = AuthorPageSources(self.output, self.ladder, self.games)
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
    def name(self) -> str:
        """The name its pages go by: the ladder's league, else the folder's."""
        return self.ladder.league.name if self.ladder is not None else self.output.name

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


def client_address(connection: HTTPConnection) -> str:
    """The client's address: the connection's peer, or the address a proxy of ``--forwarded-allow-ips`` names."""
    return connection.client.host if connection.client else "unknown"


def wants_html(connection: HTTPConnection) -> bool:
    """Whether the visitor is a browser reading pages (rather than a script reading JSON)."""
    return "text/html" in connection.headers.get("accept", "")


def root_of(connection: HTTPConnection) -> str:
    """The way back to the site's root from the page asked for, as a relative link (the site may sit under a path)."""
    return "../" * (connection.url.path.count("/") - 1)


def author_page_url(request: Request, author: str) -> str:
    return str(request.url_for(AUTHOR_PAGE_ROUTE, author=author))


def upload_url(request: Request) -> str:
    return str(request.base_url) + UPLOAD_PATH


def tests_url(request: Request) -> str:
    return str(request.base_url) + TESTS_PATH
