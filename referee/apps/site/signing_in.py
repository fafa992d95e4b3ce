"""Who a visitor is: an author by their token or their session's cookie, anyone else anonymous; and the routes that
sign an author in (``/signin``: a form, then a session cookie) and out (``/signout``).

A token travels only in an ``Authorization: Bearer`` header or the sign-in form's body, never in a URL. A missing,
wrong or revoked token gets 401, in the same words whichever it is; a client that keeps failing gets 429 for a
while (:meth:`referee.apps.site.served.Site.check_token`). A session's cookie is HttpOnly and SameSite=Strict, and
a form posted with it comes from this site's own pages, as every POST of the site does
(:class:`referee.apps.site.app.SameOriginOnly`).
"""

from __future__ import annotations

import logging

from starlette.authentication import AuthCredentials, AuthenticationBackend, AuthenticationError, SimpleUser
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from referee.apps.site import author_page as pages
from referee.apps.site.auth import SESSION_COOKIE, SESSION_HOURS
from referee.apps.site.served import Refused, Site, author_page_url, client_address, root_of, wants_html
from referee.common.http_headers import NO_STORE

log = logging.getLogger(__name__)

AUTHOR = "author"  # the scope of a visitor who is an author (by token or session)
SESSION = "session"  # ... by a session cookie: a form they post must come from this site
SIGNIN_FORM_ROUTE = "signin_form"  # the name the sign-in form is routed by, for request.url_for


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
            key = self.site.check_token(token.strip(), client_address(conn))
            return AuthCredentials([AUTHOR]), SimpleUser(key.author)
        session = conn.cookies.get(SESSION_COOKIE)
        if session:
            author = self.site.sessions.author(session, self.site.authors)
            if author is not None:
                return AuthCredentials([AUTHOR, SESSION]), SimpleUser(author)
        return None


def refusal_answer(connection: HTTPConnection, error: AuthenticationError) -> Response:
    """The answer to a request whose credentials :class:`Credentials` refused: a page for a browser, else JSON."""
    status = error.status if isinstance(error, Refused) else 401
    headers = error.headers() if isinstance(error, Refused) else {}
    if wants_html(connection):
        return HTMLResponse(pages.refused(status, str(error), root_of(connection)), status, headers=headers)
    return JSONResponse({"error": str(error)}, status, headers=headers)


def signin_routes(site: Site) -> list[Route]:
    """``/signin`` (the form, and the token posted from it) and ``/signout``."""

    async def signin_form(request: Request) -> Response:
        return HTMLResponse(pages.signin(site.name), headers=NO_STORE)

    async def signin(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=4, max_part_size=4096)
        token = str(form.get("token") or "").strip()
        try:
            if not token:
                raise Refused(401, "give the token the organiser gave you")
            key = site.check_token(token, client_address(request))
        except Refused as refusal:
            return HTMLResponse(
                pages.signin(site.name, str(refusal)), refusal.status, headers={**NO_STORE, **refusal.headers()}
            )
        log.info("%s: %s signed in", client_address(request), key.author)
        answer = RedirectResponse(author_page_url(request, key.author), 303)
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
        answer = RedirectResponse(request.url_for(SIGNIN_FORM_ROUTE), 303)
        answer.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return answer

    return [
        Route("/signin", signin_form, methods=["GET"], name=SIGNIN_FORM_ROUTE),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
    ]
