"""``referee play --human SEAT --browser``: the person's seat of the terminal, played in a web browser.

The seat is the terminal's :class:`referee.human.HumanSeat`, with the same
view (what :meth:`Game.observation` gives the seat, and the public events)
and the same words; only its screen and its answers travel another way. A
server on 127.0.0.1 (uvicorn, with the ``serve`` extra) serves one page,
which shows the screen (what happened since the person's last turn, the
seats and their lives, the table, the hand) and the legal actions as
buttons, each with the hand it leaves. The page asks for the screen
(``GET screen``) every few tenths of a second and sends a click (``POST
choose``: the screen's number and the button's); the seat, waiting in its
own thread as it waits at the terminal, takes it. On a clock (``referee play
--human-clock``), the page counts down the seconds left, and a move not made
in time is the seat's timeout: the fault policy plays for it, as for a bot. The address carries a
token made for this game: a request without it is refused, so another page
in the same browser cannot play for the person.
"""

from __future__ import annotations

import asyncio
import json
import queue
import secrets
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.human import TIME_UP, HumanSeat

PAGE = Path(__file__).resolve().parent / "publish" / "html" / "play.html"
LEAVE = "q"  # the terminal's answer for leaving the game


class BrowserTable:
    """The screen the person's page shows, and the clicks it sends back to the seat."""

    def __init__(self, on_clock: bool = False) -> None:
        """``on_clock``: the person has the bots' clock (the move time and a bank), else all the time they want."""
        self.token = secrets.token_urlsafe(18)
        self._lock = threading.Lock()
        self._screen: dict[str, Any] = {
            "n": 0,
            "lines": ["Waiting for the game to start"],
            "choices": [],
            "over": False,
        }
        self._answers: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.last_read = 0  # the number of the last screen the page read
        self._due: float | None = None  # with a clock: when the move waiting is due (time.time())
        self._missed = False  # the last move's time ran out
        self.seat = HumanSeat("you", ask=self._ask, show=self._show, on_clock=self._clock if on_clock else None)

    def screen(self) -> dict[str, Any]:
        """The screen the page shows now (marked as read)."""
        with self._lock:
            self.last_read = self._screen["n"]
            return self._screen

    @property
    def number(self) -> int:
        """The number of the screen now (the page has read it when :attr:`last_read` reaches it)."""
        with self._lock:
            number: int = self._screen["n"]
            return number

    def ended(self) -> None:
        """The game is over (or stopped, or the person left): the page shows the last screen as the end."""
        with self._lock:
            if not self._screen["over"]:
                self._screen = {**self._screen, "n": self._screen["n"] + 1, "choices": [], "over": True}

    def choose(self, number: object, choice: object) -> str | None:
        """A click: ``choice`` (a button's index, or "leave") on screen ``number``; what is wrong with it, or None."""
        with self._lock:
            screen = self._screen
            if number != screen["n"] or not screen["choices"]:
                return f"screen {number!r} is not the one waiting for a move (screen {screen['n']})"
            if choice == "leave":
                answer = LEAVE
            elif isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(screen["choices"]):
                answer = str(choice + 1)
            else:
                return f"choice {choice!r} is not a button of this screen (0 to {len(screen['choices']) - 1} or leave)"
            self._screen = {**screen, "n": screen["n"] + 1, "choices": [], "waiting": True}
        self._answers.put(answer)
        return None

    def _show(self, lines: Sequence[str], labels: Sequence[str]) -> None:
        with self._lock:
            self._screen = {
                "n": self._screen["n"] + 1,
                "lines": list(lines),
                "choices": list(labels),
                "over": not labels,
            }
            if labels and self._due is not None:
                self._screen["seconds_left"] = round(max(0.0, self._due - time.time()), 1)
            if self._missed:  # said on the next screen: the one that said it (no choices) may pass unseen
                self._screen["time_up"] = True
                self._missed = False

    def _clock(self, seconds: float | None) -> None:
        """The seat's clock: ``seconds`` for the move now asked, or None when its time ran out."""
        if seconds is not None:
            self._due = time.time() + seconds
            return
        with self._lock:
            self._due = None
            self._missed = True
            screen = self._screen
            if screen["choices"]:
                self._screen = {**screen, "n": screen["n"] + 1, "choices": [], "time_up": True}
        self._answers.put(TIME_UP)

    def _ask(self, prompt: str) -> str:
        return self._answers.get()


async def page_of(table: BrowserTable, request: Any) -> Any:
    """The person's page, for a request with the game's token."""
    from starlette.responses import HTMLResponse

    if not _allowed(table, request):
        return _refused()
    return HTMLResponse(PAGE.read_text(encoding="utf-8"), headers={"Cache-Control": "no-store"})


async def screen_of(table: BrowserTable, request: Any) -> Any:
    """The screen now, as JSON, for a request with the game's token."""
    from starlette.responses import JSONResponse

    if not _allowed(table, request):
        return _refused()
    return JSONResponse(table.screen(), headers={"Cache-Control": "no-store"})


async def choose_on(table: BrowserTable, request: Any) -> Any:
    """A click: ``{"n": SCREEN, "choice": BUTTON or "leave"}``, taken if it is a button of the screen waiting."""
    from starlette.responses import JSONResponse, PlainTextResponse

    if not _allowed(table, request):
        return _refused()
    try:
        body = json.loads(await request.body())
        problem = table.choose(body["n"], body["choice"]) if isinstance(body, dict) else "not a JSON object"
    except (ValueError, KeyError):
        problem = 'the body must be JSON: {"n": SCREEN, "choice": BUTTON or "leave"}'
    if problem:
        return PlainTextResponse(problem + "\n", 409)
    return JSONResponse({"ok": True})


def _allowed(table: BrowserTable, request: Any) -> bool:
    given = request.query_params.get("token") or request.headers.get("x-token", "")
    return secrets.compare_digest(given.encode(), table.token.encode())


def _refused() -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("this game's page needs the address it was given (with its token)\n", 403)


def browser_app(table: BrowserTable) -> Any:
    """The page's server: ``/`` (the page), ``/screen`` and ``/choose``, each only with the game's token."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def page(request: Any) -> Any:
        return await page_of(table, request)

    async def screen(request: Any) -> Any:
        return await screen_of(table, request)

    async def choose(request: Any) -> Any:
        return await choose_on(table, request)

    return Starlette(routes=[Route("/", page), Route("/screen", screen), Route("/choose", choose, methods=["POST"])])


class BrowserServer:
    """The page's server on 127.0.0.1, in the game's event loop, from :meth:`start` to :meth:`stop`."""

    def __init__(self, table: BrowserTable, port: int = 0) -> None:
        import uvicorn

        config = uvicorn.Config(browser_app(table), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.table = table
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> str:
        """Start serving; return the page's address (with its token)."""
        self._task = asyncio.get_running_loop().create_task(self.server.serve())
        while not self.server.started:
            if self._task.done():
                self._task.result()  # the port was taken, say: raise why
            await asyncio.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/?token={self.table.token}"

    async def stop(self, linger_s: float = 0.0) -> None:
        """Stop serving, once the page has read the last screen or ``linger_s`` seconds have passed."""
        waited = 0.0
        final = self.table.number
        while waited < linger_s and self.table.last_read < final:
            await asyncio.sleep(0.1)
            waited += 0.1
        self.server.should_exit = True
        if self._task is not None:
            await self._task
