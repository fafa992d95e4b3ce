"""An author's own A/B tests (:mod:`referee.apps.ladder.author_tests`): asked for by ``POST /api/tests`` (with their
token, or from the form on their page), listed by ``GET /api/tests``, and each test game's private replay
(``/authors/NAME/tests/TEST/GAME.html``, their own bots' notes beside their decisions), for that author alone.

A request is read whole only when it is small (:data:`MAX_REQUEST_BYTES`), and checked before it is left for the
ladder: A must be one of the author's accepted versions, B another version, the hypotheses in range, and the author
may have one test open at a time. Whether B is active, and the field a test needs, the running ladder says (the
test is then *refused* on the author's page, with why).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from referee.apps.ladder.author_tests import (
    DEFAULT_ELO0,
    DEFAULT_ELO1,
    open_tests,
    post_request,
    read_test,
    request_problem,
    test_folder,
    tests_of,
)
from referee.apps.site import author_page as pages
from referee.apps.site.author_routes import only_for
from referee.apps.site.season_folder import GAME_LOGS, plain_name, versions_of
from referee.apps.site.served import TESTS_PATH, Refused, Site, author_page_url, root_of, wants_html
from referee.apps.site.signing_in import SESSION
from referee.common.http_headers import NO_STORE
from referee.publish.redaction import public_log
from referee.publish.replay_page import replay_page
from referee.records.gamelog import find_log
from referee.records.notes import NOTES_DIR, notes_path, seats_notes
from referee.records.results import ACCEPTED, RESULTS_FILE, read_records
from referee.records.transcript import read_game

MAX_REQUEST_BYTES = 4096  # a request names two versions and two numbers


def ab_test_routes(site: Site) -> list[Route]:
    """``POST /api/tests``, ``GET /api/tests`` and each test game's private replay."""

    async def ask(request: Request) -> Response:
        if not request.user.is_authenticated:
            error = "sign in: send your token as Authorization: Bearer TOKEN, or ask from your page"
            return JSONResponse({"error": error}, 401, headers=Refused(401, "").headers())
        author = request.user.display_name
        from_page = SESSION in request.auth.scopes and wants_html(request)
        if site.ladder is None:
            return _refused(request, from_page, 409, "this server runs no tests: it serves the ladder's folder alone")
        body = await _small_body(request)
        if body is None:
            return _refused(request, from_page, 413, f"a test request is at most {MAX_REQUEST_BYTES} bytes")
        fields = _fields(body, request.headers.get("content-type", ""))
        try:
            a, b = str(fields.get("a", "")), str(fields.get("b", ""))
            elo0 = float(fields.get("elo0", DEFAULT_ELO0))
            elo1 = float(fields.get("elo1", DEFAULT_ELO1))
        except (TypeError, ValueError):
            return _refused(request, from_page, 400, "elo0 and elo1 must be numbers")
        mine = [judged.bot for judged in versions_of(site.output, author) if judged.verdict == ACCEPTED]
        problem = request_problem(a, b, elo0, elo1, mine) or (None if plain_name(b) else f"no version {b!r}")
        if problem is not None:
            return _refused(request, from_page, 400, problem)
        async with site.landing(author):  # one request of an author at a time: the one-open-test rule holds
            if await asyncio.to_thread(open_tests, site.output, author):
                return _refused(request, from_page, 409, "you have a test open: one at a time (see your page)")
            asked = await asyncio.to_thread(post_request, site.output, author, a, b, elo0, elo1)
        follow = author_page_url(request, author) + "#tests"
        if from_page:
            return RedirectResponse(follow, 303)
        said = f"asked: the ladder takes it up within {site.ladder.poll_s:g} s; follow it on your page"
        return JSONResponse({"request": asked.id, "status": "asked", "said": said, "follow": follow}, 202,
                            headers=NO_STORE)  # fmt: skip

    async def mine(request: Request) -> Response:
        if not request.user.is_authenticated:
            return JSONResponse({"error": "sign in: Authorization: Bearer TOKEN"}, 401,
                                headers=Refused(401, "").headers())  # fmt: skip
        found = await asyncio.to_thread(tests_of, site.output, request.user.display_name)
        return JSONResponse({"tests": found}, headers=NO_STORE)

    async def replay(request: Request) -> Response:
        author, test, game = (request.path_params[key] for key in ("author", "test", "game"))
        refusal = only_for(site, request, author)
        if refusal is not None:
            return refusal
        folder = test_folder(site.output, test)
        shown = await asyncio.to_thread(_shown, folder, author, game) if folder and plain_name(game) else False
        if folder is None or not shown:
            return HTMLResponse(pages.refused(404, f"no game {game} of your test {test} to show yet", root_of(request)),
                                404, headers=NO_STORE)  # fmt: skip
        yours = {judged.bot for judged in versions_of(site.output, author)}
        return HTMLResponse(await asyncio.to_thread(_replay, folder, game, yours), headers=NO_STORE)

    return [
        Route(f"/{TESTS_PATH}", ask, methods=["POST"]),
        Route(f"/{TESTS_PATH}", mine, methods=["GET"]),
        Route("/authors/{author}/tests/{test}/{game}.html", replay),
    ]


async def _small_body(request: Request) -> bytes | None:
    """The request's body, or None once it is over :data:`MAX_REQUEST_BYTES` (read no further)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            return None
    return body


def _fields(body: bytes, kind: str) -> dict[str, Any]:
    """A request's fields: a JSON object, or a form (the author's page)."""
    text = body.decode("utf-8", "replace")
    if kind.startswith("application/json"):
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return {key: values[0] for key, values in parse_qs(text).items()}


def _refused(request: Request, from_page: bool, status: int, why: str) -> Response:
    if from_page:
        page = pages.refused(status, f"Your test was not asked for: {why}.", root_of(request))
        return HTMLResponse(page, status, headers=NO_STORE)
    return JSONResponse({"error": why}, status, headers=NO_STORE)


def _shown(folder: Path, author: str, game: str) -> bool:
    """Whether test game ``game`` of ``author``'s test in ``folder`` may be shown to them: it is recorded, and so is
    every game of its deal (a replay shows the deal's cards, which the deal's other games play)."""
    test = read_test(folder)
    if test is None or test.get("author") != author or not (folder / RESULTS_FILE).is_file():
        return False
    records = list(read_records(folder / RESULTS_FILE))
    record = next((each for each in records if each.get("game_id") == game), None)
    if record is None:
        return False
    deal = sum(each.get("table") == record.get("table") for each in records)
    return bool(deal == len(record.get("seats", ())))


def _replay(folder: Path, game: str, yours: set[str]) -> str:
    """The test game's replay, with the notes of the author's own versions (``yours``) beside their decisions."""
    log = find_log(folder / GAME_LOGS, game)
    if log is None:
        return pages.refused(404, f"the log of {game} is gone", "../../../../")
    start, steps = read_game(log, public_log)
    seats = {seat for seat, name in enumerate(start.get("players", [])) if name in yours}
    return replay_page(start, steps, back="../../", notes=seats_notes(notes_path(folder / NOTES_DIR, game), seats))
