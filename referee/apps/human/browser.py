"""``referee play --human SEAT --browser``: the person's seat of the terminal, played in a web browser.

The seat is the terminal's :class:`referee.apps.human.terminal.HumanSeat`, with the same
view (what :meth:`Game.observation` gives the seat, and the public events)
and the same words; only its screen and its answers travel another way. A
server on 127.0.0.1 (uvicorn, with the ``serve`` extra) serves one page,
which shows the screen (what happened since the person's last turn, the
seats and their lives, the table, the hand: its cards drawn as the replays
draw them, with the discard pile's top or the centre) and the legal actions as
buttons, each with the hand it leaves; at the end, the result (the places,
or that the person left). The page asks for the screen
(``GET screen``) every few tenths of a second and sends a click (``POST
choose``: the screen's number and the button's, in at most
:data:`MOST_BODY_BYTES`); the seat, waiting in its own thread as it waits at
the terminal, takes it. On a clock (``referee play --human-clock``), the
page counts down the seconds left, and a move not made in time is the
seat's timeout: the fault policy plays for it, as for a bot. A decision is
settled once, by a click or by its deadline, and its answer is taken by
that decision alone: a click that loses the race with the deadline is
refused, never kept for the next move. The address carries a token made for
this game: a request without it is refused, so another page in the same
browser cannot play for the person.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from referee.apps.human.terminal import TIME_UP, HumanSeat
from referee.common.http_headers import NO_STORE
from referee.engine.cards import Card
from referee.protocol.clock import Timer

PAGE = Path(__file__).resolve().parents[2] / "publish" / "html" / "play.html"
CARDS_SCRIPT = PAGE.with_name("cards.js")  # how the replays draw a card, which the page draws its cards with
LEAVE = "q"  # the terminal's answer for leaving the game
MOST_BODY_BYTES = 4096  # a click is some 30 bytes of JSON; a body past this is refused unread
LEFT = "You left the game: it ended there, and counts for no one."
STOPPED = "The game was stopped before its end: it counts for no one."
_PRETTY_CARD = re.compile(r"(?:10|[2-9JQKA])[\u2663\u2666\u2665\u2660]")  # a card as the screen writes it: 10♥


class Deadlines(Protocol):
    """The time a table reads and the deadlines it sets: the event loop's, or a test's fake clock
    (:class:`referee.play.fakes.FakeClock`), on which every race of a click and a deadline is played in order."""

    def now(self) -> float:
        """A reading in seconds: only differences mean anything."""
        ...

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer:
        """Run ``callback(*args)`` once ``delay`` seconds have passed."""
        ...


class LoopDeadlines:
    """The running event loop's time and timers (a table on a clock asks for them at its first decision)."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()

    def now(self) -> float:
        return self._loop.time()

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer:
        return self._loop.call_later(delay, callback, *args)


class BrowserTable:
    """The screen the person's page shows, and the clicks it sends back to the seat.

    Each decision of the seat is settled once, under one lock: by the first click on its screen, or on a clock by
    its deadline, whichever the table takes first; what comes after is refused (a click) or does nothing (the
    deadline). An answer is kept for its decision's number and taken only by the seat's thread asking that
    decision, so no click and no timeout of one decision can be taken as another's move.
    """

    def __init__(self, on_clock: bool = False, deadlines: Deadlines | None = None) -> None:
        """``on_clock``: the person has the bots' clock (the move time and a bank), else all the time they want;
        ``deadlines``: the clock that times them (by default the running event loop's)."""
        self.token = secrets.token_urlsafe(18)
        self.on_clock = on_clock
        self._deadlines = deadlines
        # Guards all below; the seat's thread waits on it for its answer.
        self._lock = threading.Condition(threading.Lock())
        self._screen: dict[str, Any] = {
            "n": 0,
            "lines": ["Waiting for the game to start"],
            "choices": [],
            "over": False,
        }
        self.last_read = 0  # the number of the last screen the page read
        self._shown: int | None = None  # the decision whose choices the screen shows, until it is settled
        self._settled = -1  # the latest decision settled (decisions are numbered upwards: every one up to it is)
        self._answers: dict[int, str] = {}  # decision -> its one answer, until the seat's thread takes it
        self._due: float | None = None  # on a clock: when the decision shown is due (on the deadlines' clock)
        self._deadline: Timer | None = None
        self._missed = False  # the last decision's time ran out: the next screen says so
        self._over = False
        self._left = False  # the person clicked "leave the game"
        self.seat = HumanSeat("you", screen=self)

    def screen(self) -> dict[str, Any]:
        """The screen the page shows now (marked as read), with the seconds left for its move on a clock."""
        with self._lock:
            self.last_read = self._screen["n"]
            if self._screen["choices"] and self._due is not None and self._deadlines is not None:
                left = max(0.0, self._due - self._deadlines.now())
                return {**self._screen, "seconds_left": round(left, 1)}
            return self._screen

    @property
    def number(self) -> int:
        """The number of the screen now (the page has read it when :attr:`last_read` reaches it)."""
        with self._lock:
            number: int = self._screen["n"]
            return number

    def ended(self) -> None:
        """The game is over (or stopped, or the person left): the page shows the last screen as the end, with the
        result (the places, or why there are none), and a seat's thread still waiting for an answer is let go."""
        with self._lock:
            self._over = True
            self._shown = None
            if self._deadline is not None:
                self._deadline.cancel()
            if not self._screen["over"]:  # no end screen, with its places: the game did not reach its end
                result = LEFT if self._left else STOPPED
                self._screen = {**self._screen, "n": self._screen["n"] + 1, "choices": [], "over": True,
                                "result": result}  # fmt: skip
            self._lock.notify_all()

    def choose(self, number: object, choice: object) -> str | None:
        """A click: ``choice`` (a button's index, or "leave") on screen ``number``; what is wrong with it, or None."""
        with self._lock:
            screen = self._screen
            decision = self._shown
            if number != screen["n"] or not screen["choices"] or decision is None:
                return f"screen {number!r} is not the one waiting for a move (screen {screen['n']})"
            if choice == "leave":
                answer = LEAVE
                self._left = True
            elif isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(screen["choices"]):
                answer = str(choice + 1)
            else:
                return f"choice {choice!r} is not a button of this screen (0 to {len(screen['choices']) - 1} or leave)"
            self._settle(decision, answer)
            self._screen = {**screen, "n": screen["n"] + 1, "choices": [], "waiting": True}
        return None

    # ----- the seat's side (HumanSeat's Screen) --------------------------------------------------------

    def asked(self, decision: int, limit_s: float) -> None:
        """Decision ``decision`` is asked; on a clock, it is settled as a timeout after ``limit_s`` seconds."""
        if not self.on_clock:
            return
        if self._deadlines is None:
            self._deadlines = LoopDeadlines()
        with self._lock:
            if self._deadline is not None:  # an earlier decision's, cancelled before it was settled
                self._deadline.cancel()
            self._due = self._deadlines.now() + limit_s
            self._deadline = self._deadlines.call_later(limit_s, self._time_up, decision)

    def show(self, decision: int | None, lines: Sequence[str], labels: Sequence[str]) -> None:
        """Show a screen; a decision's is not shown once the decision is settled (its time ran out before)."""
        with self._lock:
            if decision is not None and (decision <= self._settled or self._over):
                return
            self._screen = {"n": self._screen["n"] + 1, "lines": list(lines), "choices": list(labels),
                            "over": not labels, "cards": cards_on_screen(lines)}  # fmt: skip
            self._shown = decision if labels else None
            if self._missed:  # said on the next screen: the one that said it (no choices) may pass unseen
                self._screen["time_up"] = True
                self._missed = False

    def answer(self, decision: int) -> str:
        """The answer settled for ``decision`` (waited for in the seat's thread); :data:`TIME_UP` once the game
        is over."""
        with self._lock:
            self._lock.wait_for(lambda: decision in self._answers or self._over)
            return self._answers.pop(decision, TIME_UP)

    def _time_up(self, decision: int) -> None:
        """The deadline of ``decision``: a timeout, unless a click settled it first."""
        with self._lock:
            if decision <= self._settled or self._over:
                return
            self._settle(decision, TIME_UP)
            self._missed = True
            if self._screen["choices"]:
                self._screen = {**self._screen, "n": self._screen["n"] + 1, "choices": [], "time_up": True}

    def _settle(self, decision: int, answer: str) -> None:
        """Give ``decision`` its one answer (the lock held): no click or deadline counts for it after this."""
        self._answers[decision] = answer
        self._settled = max(self._settled, decision)
        self._shown = None
        self._due = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._lock.notify_all()


def cards_on_screen(lines: Sequence[str]) -> dict[str, Any]:
    """The cards a screen's lines show (:meth:`HumanSeat._table`'s words), for the page to draw as cards: the seat's
    ``hand`` and the card it just ``drawn`` (or took), the ``discard_top`` (None: the pile is empty) or the
    ``centre`` (None for a face-down card the seat has not seen), each in its text form (``TH``)."""
    shown: dict[str, Any] = {}
    for line in lines:
        if line.startswith("Your hand: "):
            held, _, drawn = line.removeprefix("Your hand: ").partition(", and ")
            shown["hand"] = [str(Card.parse(text)) for text in _PRETTY_CARD.findall(held)]
            if drawn:
                shown["drawn"] = str(Card.parse(_PRETTY_CARD.findall(drawn)[0]))
        elif line.startswith("Discard pile: "):
            top = _PRETTY_CARD.findall(line.removeprefix("Discard pile: ").partition(" (")[0])
            shown["discard_top"] = str(Card.parse(top[0])) if top else None
        elif line.startswith("Centre: "):
            slots = line.removeprefix("Centre: ").replace(" face down,", "").replace(" face up", "").split()
            shown["centre"] = [None if text == "??" else str(Card.parse(text)) for text in slots]
    return shown


async def page_of(table: BrowserTable, request: Any) -> Any:
    """The person's page, for a request with the game's token."""
    from starlette.responses import HTMLResponse

    if not _allowed(table, request):
        return _refused()
    return HTMLResponse(_page(), headers=NO_STORE)


@functools.cache
def _page() -> str:
    """The page with the replays' way of drawing a card inlined (the files ship with the referee)."""
    return PAGE.read_text(encoding="utf-8").replace("/*{{cards}}*/", CARDS_SCRIPT.read_text(encoding="utf-8"))


async def screen_of(table: BrowserTable, request: Any) -> Any:
    """The screen now, as JSON, for a request with the game's token."""
    from starlette.responses import JSONResponse

    if not _allowed(table, request):
        return _refused()
    return JSONResponse(table.screen(), headers=NO_STORE)


async def choose_on(table: BrowserTable, request: Any) -> Any:
    """A click: ``{"n": SCREEN, "choice": BUTTON or "leave"}``, taken if it is a button of the screen waiting."""
    from starlette.responses import JSONResponse, PlainTextResponse

    posted = await body_within(request, MOST_BODY_BYTES)
    if posted is None:
        return too_large(MOST_BODY_BYTES)
    if not _allowed(table, request):
        return _refused()
    try:
        body = json.loads(posted)
        problem = table.choose(body["n"], body["choice"]) if isinstance(body, dict) else "not a JSON object"
    except (ValueError, KeyError):
        problem = 'the body must be JSON: {"n": SCREEN, "choice": BUTTON or "leave"}'
    if problem:
        return PlainTextResponse(problem + "\n", 409)
    return JSONResponse({"ok": True})


async def body_within(request: Any, limit: int) -> bytes | None:
    """The request's body, or None once it is known to pass ``limit`` bytes: by its Content-Length, else as it
    arrives (a chunked body has none), read no further than the chunk that passes it."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def too_large(limit: int) -> Any:
    """413 for a body over ``limit`` bytes; the connection is closed, so that the server reads none of the rest."""
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(
        f"a request's body here is at most {limit} bytes (a click is a few bytes of JSON): refused unread\n",
        413,
        headers={"Connection": "close"},
    )


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
