"""The site's server-sent event streams, one loop for all: ``/events`` (the league's page changed) and each game's
feed (``/live/GAME/feed``, :mod:`referee.apps.site.spectating`).

A source is watched by one task (:class:`Watcher`), never by each stream: the task publishes what it finds to a
:class:`Broadcast`, and every stream of that source is woken and sends it. Each event is encoded once, and kept
for those who join late where the source has a history (a game's feed: a viewer that reconnects with
``Last-Event-ID`` is sent what it missed). A stream opens with ``retry``, sends a comment line every
:data:`KEEPALIVE_S` seconds of quiet (so proxies and browsers keep it open), and ends when its source ends.

Streams are capped (:class:`StreamCaps`): in all, and per client (its address as the trusted proxy forwarded
it, an IPv6 client by its /64); a stream over a cap is refused at once, 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from referee.apps.site.connections import ServeLimits, client_of
from referee.common.http_headers import NO_STORE

RETRY = b"retry: 2000\n\n"  # a browser reconnects 2 s after a stream breaks
KEEPALIVE_S = 15.0
KEEPALIVE = b": still here\n\n"
RETRY_AFTER_S = 30  # a stream refused over a cap: when to ask again
IDLE_STOP_S = 30.0  # a watcher nobody has asked anything for this long stops (the next question starts it again)
# Kept by no cache, and passed on as written by a proxy that would otherwise buffer it (nginx).
STREAM_HEADERS: Mapping[str, str] = MappingProxyType({**NO_STORE, "X-Accel-Buffering": "no"})


class Broadcast:
    """The events of one source, numbered from 1, each encoded once for every stream of it.

    ``history``: every event is kept (a stream may start after any of them); otherwise only the last (a stream
    is told of changes after it started, and one that fell behind of the latest).
    """

    def __init__(self, history: bool) -> None:
        self.history = history
        self.events: list[tuple[int, bytes]] = []
        self.last = 0
        self.ended = False
        self.final = b""  # sent after the events once the source has ended (``event: gone``)
        self.listeners = 0  # the streams open on it
        self._changed = asyncio.Event()

    def publish(self, number: int, event: bytes) -> None:
        """Event ``number`` (above every one before) for every stream."""
        if self.ended:
            return
        if self.history:
            self.events.append((number, event))
        else:
            self.events = [(number, event)]
        self.last = number
        self._wake()

    def end(self, final: bytes = b"") -> None:
        """No more events: each stream sends what it has not, then ``final``, and closes."""
        if not self.ended:
            self.ended, self.final = True, final
            self._wake()

    def after(self, seen: int) -> list[tuple[int, bytes]]:
        """The events numbered above ``seen``."""
        events = self.events
        if not events or events[-1][0] <= seen:
            return []
        if events[0][0] > seen:
            return list(events)
        low, high = 0, len(events)
        while low < high:  # the first event above seen
            middle = (low + high) // 2
            if events[middle][0] <= seen:
                low = middle + 1
            else:
                high = middle
        return events[low:]

    def changed(self) -> asyncio.Event:
        """Set at the next event or the end: taken before reading :meth:`after`, so that nothing is missed."""
        return self._changed

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class StreamCaps:
    """How many streams are open, in all and by client; a stream over either cap is refused."""

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self.by_client: dict[str, int] = {}
        self.open = 0

    @classmethod
    def of(cls, limits: ServeLimits) -> StreamCaps:
        return cls(limits.streams, limits.streams_per_client)

    def take(self, client: str) -> str | None:
        """Count a stream of ``client``; or say why not (None: taken, to be :meth:`give_back`)."""
        if self.open >= self.total:
            return f"the server holds its most streams ({self.total}) open"
        if self.by_client.get(client, 0) >= self.per_client:
            return f"{client} holds the most streams one client may ({self.per_client}) open"
        self.open += 1
        self.by_client[client] = self.by_client.get(client, 0) + 1
        return None

    def give_back(self, client: str) -> None:
        self.open -= 1
        left = self.by_client[client] - 1
        if left:
            self.by_client[client] = left
        else:
            del self.by_client[client]


def caps_of(request: Request) -> StreamCaps:
    """The stream caps of the request's application: as ``referee serve`` set them, else from the open-file limit."""
    state = request.app.state
    caps = getattr(state, "stream_caps", None)
    if not isinstance(caps, StreamCaps):
        caps = StreamCaps.of(ServeLimits.for_this_process())
        state.stream_caps = caps
    return caps


def event_stream(request: Request, broadcast: Broadcast, seen: int) -> Response:
    """The events of ``broadcast`` numbered above ``seen``, then each as it comes, as server-sent events; or 503
    with ``Retry-After`` if the request's client, or the server, holds as many streams as it may."""
    caps = caps_of(request)
    client = client_of(request.client.host if request.client else "unknown")
    refused = caps.take(client)
    if refused is not None:
        return PlainTextResponse(
            f"no more streams now: {refused}; ask again in {RETRY_AFTER_S} s (an open page falls back to asking "
            "every few seconds)\n",
            503,
            # Closed once answered: a refused client holds no connection while it waits.
            headers={"Retry-After": str(RETRY_AFTER_S), **NO_STORE, "Connection": "close"},
        )
    return _Stream(broadcast, seen, lambda: caps.give_back(client))


class _Stream(StreamingResponse):
    """A stream that gives its place back however it ends: its source ended, its client left, or the server
    stopped."""

    def __init__(self, broadcast: Broadcast, seen: int, give_back: Callable[[], None]) -> None:
        super().__init__(_events(broadcast, seen), media_type="text/event-stream", headers=STREAM_HEADERS)
        self.broadcast = broadcast
        self.give_back = give_back

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.broadcast.listeners += 1
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.broadcast.listeners -= 1
            self.give_back()


async def _events(broadcast: Broadcast, seen: int) -> AsyncIterator[bytes]:
    yield RETRY
    while True:
        changed = broadcast.changed()
        missed = broadcast.after(seen)
        if missed:
            seen = missed[-1][0]
            yield b"".join(event for _, event in missed)
        if broadcast.ended:
            if broadcast.final:
                yield broadcast.final
            return
        try:
            async with asyncio.timeout(KEEPALIVE_S):
                await changed.wait()
        except TimeoutError:
            yield KEEPALIVE


class Watcher:
    """One task that calls ``look`` every ``interval`` seconds while anyone asks for what it finds.

    :meth:`wanted` is called by each request that reads it: if the task is not running (never started, or
    stopped after :data:`IDLE_STOP_S` seconds unwanted, or of an event loop gone), ``look`` is called at once, so
    the answer is current, and the task starts.
    """

    def __init__(self, look: Callable[[], None], interval: float, busy: Callable[[], bool]) -> None:
        self.look = look
        self.interval = interval
        self.busy = busy  # whether streams still depend on it (it never stops while they do)
        self._task: asyncio.Task[None] | None = None
        self._wanted_at = 0.0

    def wanted(self) -> None:
        self._wanted_at = time.monotonic()
        task = self._task
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            self.look()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while self.busy() or time.monotonic() - self._wanted_at < IDLE_STOP_S:
                await asyncio.sleep(self.interval)
                self.look()


class FileChanges:
    """``/events``: an event whenever a file is rewritten (its modification time or size changes), its data the
    modification time."""

    def __init__(self, path: Path, interval: float) -> None:
        self.path = path
        self.broadcast = Broadcast(history=False)
        self.version = self._version()
        self.watcher = Watcher(self._look, interval, lambda: self.broadcast.listeners > 0)

    def stream(self, request: Request) -> Response:
        """A stream of the file's changes from now on."""
        self.watcher.wanted()
        return event_stream(request, self.broadcast, self.broadcast.last)

    def _look(self) -> None:
        current = self._version()
        if current != self.version and current is not None:
            self.broadcast.publish(self.broadcast.last + 1, f"event: message\ndata: {current[0]}\n\n".encode())
        if current is not None:
            self.version = current

    def _version(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size
