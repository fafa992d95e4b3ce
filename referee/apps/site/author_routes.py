"""An author's own, for them alone (``/authors/NAME/...``): their page, and what it links to (each version's build
log, its check games' replays and output, their bots' private replays and output in each game of the league). A
build log and a bot's output are pages for a browser (wrapped to the screen, with the way back to the author's
page), plain text for a script. A private replay is the game's public replay with the notes the author's own bots
wrote beside their decisions (:mod:`referee.records.notes`), no other bot's.

Anyone else gets the sign-in page (401) or, signed in as another author, 403, the same for an author who does not
exist, so that nothing is learnt of who does. A bot's output (its debug prints, and with them its strategy) is
read by its author alone, and in a game of the league only once the game may be shown.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from referee.apps.checkbot import CANDIDATE
from referee.apps.site import author_page as pages
from referee.apps.site.season_folder import (
    BOT_LOGS,
    GAME_LOGS,
    OUTPUT_LINES_SHOWN,
    check_folder,
    game_log,
    outputs_in,
    plain_name,
    read_lines,
    versions_of,
)
from referee.apps.site.served import (
    AUTHOR_PAGE_ROUTE,
    Site,
    author_page_url,
    root_of,
    tests_url,
    upload_url,
    wants_html,
)
from referee.common.http_headers import NO_STORE
from referee.publish.redaction import public_log
from referee.publish.replay_page import replay_page
from referee.records.gamelog import find_log
from referee.records.notes import notes_beside, seats_notes
from referee.records.results import ACCEPTED
from referee.records.transcript import read_game


class AuthorsOwn:
    """The routes of every author's own page and what it links to, each answered to that author alone."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.output = site.output

    def routes(self) -> list[Route]:
        return [
            Route("/authors/{author}", self.author_slash),
            Route("/authors/{author}/", self.author_page, name=AUTHOR_PAGE_ROUTE),
            Route("/authors/{author}/builds/{bot}.log", self.build_log),
            Route("/authors/{author}/checks/{bot}/{game}.html", self.check_replay),
            Route("/authors/{author}/checks/{bot}/{game}.txt", self.check_output),
            Route("/authors/{author}/games/{game}.txt", self.game_output),
            Route("/authors/{author}/games/{game}.html", self.game_replay),
        ]

    def may_show(self, game: str) -> bool:
        """Whether anything of league game ``game`` (a name safe in a path) may be shown: it is recorded, every game
        dealt alike has ended and the spectator delay is over (referee.records.visibility)."""
        games = self.site.games
        return plain_name(game) and games.recorded(game, games.shown())

    def version_of(self, author: str, bot: str) -> bool:
        """Whether ``bot`` names a version ``author`` submitted (and so, a name safe in a path)."""
        return plain_name(bot) and any(judged.bot == bot for judged in versions_of(self.output, author))

    async def author_page(self, request: Request) -> Response:
        author = request.path_params["author"]
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        html = await asyncio.to_thread(
            pages.author, self.site.page_sources, author, upload_url(request), None, tests_url(request)
        )
        return HTMLResponse(html, headers=NO_STORE)

    async def author_slash(self, request: Request) -> Response:
        return RedirectResponse(author_page_url(request, request.path_params["author"]), 308)

    async def build_log(self, request: Request) -> Response:
        author, bot = request.path_params["author"], request.path_params["bot"]
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        path = self.output / BOT_LOGS / f"build-{bot}.log"
        if not self.version_of(author, bot) or not path.is_file():
            return _missing(f"no build log of {bot}")
        if wants_html(request):
            lines, more = await asyncio.to_thread(_build_lines, path)
            return HTMLResponse(pages.build_log_page(bot, lines, more, "../"), headers=NO_STORE)
        return FileResponse(path, media_type="text/plain; charset=utf-8", headers=NO_STORE)

    async def check_replay(self, request: Request) -> Response:
        author, bot, game = (request.path_params[key] for key in ("author", "bot", "game"))
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        path = check_folder(self.output, bot) / f"{game}.jsonl"
        if not self.version_of(author, bot) or not plain_name(game) or not path.is_file():
            return _missing(f"no check game {game} of {bot}")
        start, steps = await asyncio.to_thread(read_game, path)
        # In its check the version plays as the candidate, against the sample bots: its notes alone are shown.
        notes = await asyncio.to_thread(_notes_of, notes_beside(path), start, {CANDIDATE})
        return HTMLResponse(replay_page(start, steps, back="../../", notes=notes), headers=NO_STORE)

    async def check_output(self, request: Request) -> Response:
        author, bot, game = (request.path_params[key] for key in ("author", "bot", "game"))
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        folder = check_folder(self.output, bot)
        records = game_log(folder, game) if self.version_of(author, bot) else None
        if records is None:
            return _missing(f"no check game {game} of {bot}")
        # In its check the version plays as the candidate, against the sample bots.
        found = outputs_in(records, folder, [CANDIDATE])
        if wants_html(request):
            title = f"{bot}'s output in its check game {game}"
            page = pages.output_page(title, found, "../../", [("the check game's replay", f"{game}.html")])
            return HTMLResponse(page, headers=NO_STORE)
        return PlainTextResponse(pages.output_text(game, found), headers=NO_STORE)

    async def game_output(self, request: Request) -> Response:
        author, game = request.path_params["author"], request.path_params["game"]
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        output = self.output
        mine = [judged.bot for judged in versions_of(output, author) if judged.verdict == ACCEPTED]
        if not self.may_show(game):
            return _missing(f"no game {game} of yours that may be shown yet (its deals are still in play)")
        records = game_log(output / GAME_LOGS, game)
        found = outputs_in(records, output / BOT_LOGS, mine) if records else []
        if not records or not any(player in mine for player in records[0].get("players", [])):
            return _missing(f"no game {game} of yours")
        if wants_html(request):
            replay = [("your replay of the game", f"{game}.html")]  # the private one, with the bots' notes
            page = pages.output_page(f"Your bot's output in {game}", found, "../", replay)
            return HTMLResponse(page, headers=NO_STORE)
        return PlainTextResponse(pages.output_text(game, found), headers=NO_STORE)

    async def game_replay(self, request: Request) -> Response:
        """The author's private replay of a game of the league: the public replay, with their own bots' notes."""
        author, game = request.path_params["author"], request.path_params["game"]
        refusal = only_for(self.site, request, author)
        if refusal is not None:
            return refusal
        output = self.output
        if not self.may_show(game):
            if wants_html(request) and plain_name(game):
                return HTMLResponse(pages.held_back(game, root_of(request)), 404, headers=NO_STORE)
            return _missing(f"no game {game} of yours that may be shown yet (its deals are still in play)")
        log = find_log(output / GAME_LOGS, game)
        if log is None:
            return _missing(f"no game {game} of yours (or its log is no longer kept)")
        start, steps = await asyncio.to_thread(read_game, log, public_log)
        mine = {judged.bot for judged in versions_of(output, author) if judged.verdict == ACCEPTED}
        if not mine.intersection(start.get("players", [])):
            return _missing(f"no game {game} of yours")
        notes = await asyncio.to_thread(_notes_of, notes_beside(log), start, mine)
        return HTMLResponse(replay_page(start, steps, back="../", notes=notes), headers=NO_STORE)


def only_for(site: Site, request: Request, author: str) -> Response | None:
    """None when the visitor is ``author``; otherwise the answer: sign in (401), or not yours (403)."""
    if not request.user.is_authenticated:
        return HTMLResponse(pages.signin(site.name, None, author, root_of(request)), 401, headers=NO_STORE)
    if request.user.display_name != author:
        return HTMLResponse(pages.not_yours(request.user.display_name, root_of(request)), 403, headers=NO_STORE)
    return None


def _notes_of(path: Path, start: dict[str, Any], players: set[str]) -> dict[int, tuple[int, str]]:
    """The notes in ``path`` of the seats of the game ``start`` held by ``players`` (an author's own), by decision."""
    return seats_notes(path, {seat for seat, name in enumerate(start.get("players", [])) if name in players})


def _build_lines(path: Path) -> tuple[list[str], bool]:
    """The lines of a build's log a page shows, and whether it has more."""
    lines, _ = read_lines(path, 0, OUTPUT_LINES_SHOWN)
    try:
        with path.open("rb") as log:
            return lines, sum(1 for _ in log) > len(lines)
    except OSError:
        return lines, False


def _missing(what: str) -> Response:
    return PlainTextResponse(f"{what}\n", 404, headers=NO_STORE)
