"""``referee serve DIR``: a league's output directory as a local web site that tells open pages when games finish.

Built on Starlette (the site: the directory's pages and what they link to,
read-only; never its ``league.json``, which holds the seed, nor its builds:
:data:`PUBLISHED_FILES`, :data:`PUBLISHED_FOLDERS`) and uvicorn (the
server), bound to 127.0.0.1 unless told otherwise. Besides the files it
serves ``/events``, a stream of server-sent events: one event each time the
league's page (``leaderboard.html``, rewritten by the league runner as games
finish) changes, which the page answers by fetching itself again and
redrawing, keeping the reader's sorting and filters. Before the league has
written its page (a folder served before ``referee run`` starts, or an
empty one), ``/leaderboard.html`` is a small page that says so and turns
into the league's page as soon as it is written. Both are optional
dependencies: ``pip install 'brag-referee[serve]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import RefereeError

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Scope

PAGE = "leaderboard.html"
# What the site shows of the folder: the pages and what they link to. Never league.json (it holds the seed, which
# gives every deal while the league or ladder runs), the builds (each author's code), the lanes' copies of the bots'
# files, nor a ladder's register and tables: the pages and the reports tell what of them is public.
PUBLISHED_FILES = frozenset({PAGE, "leaderboard.md", "leaderboard.json", "leaderboard.csv", "games.jsonl"})
PUBLISHED_FOLDERS = frozenset({"replays", "games", "logs", "reports", "checks"})
NOT_PUBLISHED = (
    "not published: referee serve shows a league's pages and what they link to (replays, game logs, the bots' "
    "output, a ladder's reports and checks), never its league.json (the seed), builds or other records\n"
)
DEFAULT_PORT = 8000
POLL_SECONDS = 0.5  # how often the page's file is looked at
KEEPALIVE_SECONDS = 15.0  # a comment line now and then keeps proxies and browsers from closing the stream
WAITING_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>waiting for the league</title>
<style>body { font: 16px/1.5 system-ui, sans-serif; margin: 2em; color: #1d232a; } p { color: #66707a; }</style>
</head><body data-waiting="1">
<h1>Waiting for the league</h1>
<p>No game has finished in this folder yet. This page turns into the league's page as soon as the referee
writes it (<code>referee run</code> with this folder as its output).</p>
<script>
// The server says when leaderboard.html changes; a plain poll covers a stream that cannot open.
const reload = () => location.reload();
if (window.EventSource) { const events = new EventSource("events"); events.onmessage = reload; }
setInterval(() => fetch(location.pathname, { method: "HEAD", cache: "no-store" })
  .then((response) => { if (response.headers.get("x-referee-page") === "league") reload(); }).catch(() => {}), 3000);
</script>
</body></html>
"""


class ServeError(RefereeError):
    """``referee serve`` cannot start: no such directory, or the web libraries are not installed."""


def _require_libraries() -> None:
    """Raise a :class:`ServeError` saying how to install Starlette and uvicorn when either is missing."""
    try:
        for library in ("uvicorn", "starlette"):
            importlib.import_module(library)
    except ImportError as error:
        raise ServeError(
            f"referee serve needs Starlette and uvicorn ({error.name} is missing): "
            "pip install 'brag-referee[serve]' (or: pip install starlette uvicorn)"
        ) from None


def _version(path: Path) -> tuple[int, int] | None:
    """What changes when the page is rewritten: its modification time and size (None while it does not exist)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def create_app(directory: Path, poll_seconds: float = POLL_SECONDS) -> Starlette:
    """The web application serving ``directory`` with its ``/events`` stream."""
    _require_libraries()
    from starlette.applications import Starlette
    from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    class PublishedFiles(StaticFiles):
        """The folder's files that :data:`PUBLISHED_FILES` and :data:`PUBLISHED_FOLDERS` name; 404 for any other."""

        async def get_response(self, path: str, scope: Scope) -> Response:
            parts = Path(path).parts  # normalised by StaticFiles.get_path: no "..", no "."
            if parts and (parts[0] in PUBLISHED_FOLDERS or (len(parts) == 1 and parts[0] in PUBLISHED_FILES)):
                return await super().get_response(path, scope)
            return PlainTextResponse(NOT_PUBLISHED, status_code=404)

    directory = Path(directory).resolve()
    if not directory.is_dir():
        raise ServeError(f"{directory}: no such directory; give a league's output directory (its `output:`)")
    page = directory / PAGE

    async def changes(request: Request) -> AsyncIterator[str]:
        seen = _version(page)
        yield "retry: 2000\n\n"  # reconnect after 2 s if the stream breaks
        waited = 0.0
        while not await request.is_disconnected():
            await asyncio.sleep(poll_seconds)
            waited += poll_seconds
            current = _version(page)
            if current != seen and current is not None:
                seen = current
                waited = 0.0
                yield f"event: message\ndata: {current[0]}\n\n"
            elif waited >= KEEPALIVE_SECONDS:
                waited = 0.0
                yield ": still here\n\n"

    async def events(request: Request) -> Response:
        return StreamingResponse(
            changes(request), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def home(request: Request) -> Response:
        return RedirectResponse(PAGE)

    async def league_page(request: Request) -> Response:
        headers = {"Cache-Control": "no-store"}
        if page.is_file():
            return FileResponse(page, headers={**headers, "X-Referee-Page": "league"})
        return HTMLResponse(WAITING_PAGE, headers={**headers, "X-Referee-Page": "waiting"})

    return Starlette(
        routes=[
            Route("/events", events),
            Route("/", home),
            Route(f"/{PAGE}", league_page, methods=["GET", "HEAD"]),
            Mount("/", app=PublishedFiles(directory=directory, html=True)),
        ]
    )


def serve(directory: Path, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> int:
    """Serve ``directory`` until interrupted; return the exit status."""
    _require_libraries()
    import uvicorn

    app = create_app(directory)
    _check_address(host, port)
    where = f"http://{host}:{port}/"
    print(f"serving {Path(directory).resolve()} at {where}{PAGE} (Ctrl-C stops)", flush=True)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn stops on Ctrl-C, then passes the signal on
        server.run()
    print("stopped", flush=True)
    return 0


def _check_address(host: str, port: int) -> None:
    """Refuse an address that cannot be listened on, with a sentence rather than the server's log."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ServeError(f"--host {host}: not an address of this machine ({error.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            raise ServeError(
                f"cannot listen on {host}:{port}: {error.strerror or error}; choose another with --port"
            ) from None
