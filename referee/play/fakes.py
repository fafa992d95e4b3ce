"""Fakes for a bot session's parts: a clock a test moves by hand, a stream a test writes the bot's side of.

A :class:`referee.play.session.BotSession` is given its transport and its clock
(``BotSession(spec, transport=..., clock=...)``). With these fakes a test
plays every race of a decision in memory and in order, as python-chess tests
its engine protocol on a scripted transport: the reply that comes exactly on
the deadline or a microsecond past it, the stale and the duplicate reply, the
stream that ends while a decision waits. Nothing sleeps: time moves when the
test calls :meth:`FakeClock.advance`, and a message arrives when it calls
:meth:`FakeStream.send` (or :meth:`~FakeStream.reply`, :meth:`~FakeStream.end`,
:meth:`~FakeStream.fail`).

What only a real process shows (signals, the sandbox, the freezer, how a
process exits) is tested with real bots (tests/bad_bots/).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from referee.engine.games import Action
from referee.play.transport import Stream
from referee.protocol.messages import GAME_TO_PB, PROTOCOL_VERSION, action_to_pb
from referee.v2 import bot_pb2 as pb

__all__ = [
    "HANDSHAKE",
    "FakeClock",
    "FakeStream",
    "FakeTimer",
    "FakeTransport",
    "decision_bytes",
    "handshake_bytes",
    "settle",
]


class FakeTimer:
    """A callback a :class:`FakeClock` runs when it is advanced to its time, unless cancelled first."""

    __slots__ = ("args", "callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A :class:`referee.protocol.clock.Clock` whose time moves only when :meth:`advance` is called.

    It starts at 0.0, so that the deadline of a decision asked at the start is
    exact in floating point (0.8 - 0.0 is 0.8; 1000.8 - 1000.0 is not).
    :attr:`lag` is what :meth:`lag_before` answers: how late the referee says
    it ran, which the honest clock does not charge.
    """

    def __init__(self) -> None:
        self.time = 0.0
        self.lag = 0.0
        self._timers: list[tuple[float, int, FakeTimer]] = []  # a heap: the earliest first, then in order made
        self._order = itertools.count()

    def now(self) -> float:
        return self.time

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> FakeTimer:
        timer = FakeTimer(self.time + delay, callback, args)
        heapq.heappush(self._timers, (timer.when, next(self._order), timer))
        return timer

    def call_soon(self, callback: Callable[..., None], *args: Any) -> FakeTimer:
        """A timer due now, run at the next :meth:`advance` (as an event loop's ``call_soon``): with
        :meth:`call_later`, all that :class:`referee.play.freezer.OffMove` asks of a loop."""
        return self.call_later(0.0, callback, *args)

    def lag_before(self, now: float, since: float) -> float:
        return self.lag

    @property
    def next_timer(self) -> float | None:
        """When the earliest timer not cancelled is due, or None."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def advance(self, seconds: float, *, fire: bool = True) -> None:
        """Move the time on by ``seconds`` and run, in order, each timer due by then, at its own time.

        With ``fire=False`` the time moves but the timers wait for the next
        call: what an event loop does when a reply and a timer are due at the
        same moment (it runs the ready I/O first, then the timers due).
        """
        self.advance_to(self.time + seconds, fire=fire)

    def advance_to(self, when: float, *, fire: bool = True) -> None:
        """Move the time on to ``when`` (see :meth:`advance`)."""
        if not fire:
            self.time = max(self.time, when)
            return
        while (due := self.next_timer) is not None and due <= when:
            _, _, timer = heapq.heappop(self._timers)
            self.time = max(self.time, due)
            timer.callback(*timer.args)
        self.time = max(self.time, when)


def decision_bytes(number: int, action: Action | str | None = None, *, error: str = "") -> bytes:
    """A PlayResponse's bytes: decision ``number`` answered with ``action`` (or the ``error`` it reports)."""
    decision = pb.Decision(decision_number=number, error=error)
    if action is not None:
        action_to_pb(Action.parse(action) if isinstance(action, str) else action, decision.action)
    return pb.PlayResponse(decision=decision).SerializeToString()


def handshake_bytes(games: tuple[str, ...] = ("stop_the_bus", "bastard_brag")) -> bytes:
    """A PlayResponse's bytes: a handshake reply that speaks this referee's protocol and plays ``games``."""
    response = pb.HandshakeResponse(
        name="fake", version="1.0", protocol_versions=[PROTOCOL_VERSION], games=[GAME_TO_PB[game] for game in games]
    )
    return pb.PlayResponse(handshake=response).SerializeToString()


HANDSHAKE = handshake_bytes()


class FakeStream:
    """A :class:`referee.play.transport.Stream` whose bot side a test writes: every request it is sent is kept
    (:attr:`requests`), every message it gives the session is one the test put in.

    It answers the handshake by itself (``handshake``, None to leave that to
    the test), and ends its side when the referee ends its own, as a good bot
    does (``ends_when_done``).
    """

    def __init__(self, handshake: bytes | None = HANDSHAKE, *, ends_when_done: bool = True) -> None:
        self.requests: list[pb.PlayRequest] = []
        self.handshake = handshake
        self.ends_when_done = ends_when_done
        self.write_error: BaseException | None = None  # raised by every write from now on
        self.done_writing_called = False
        self.cancelled = False
        self._inbox: asyncio.Queue[object] = asyncio.Queue()

    # ----- the session's side -----------------------------------------------------------

    async def write(self, request: bytes) -> None:
        if self.write_error is not None:
            raise self.write_error
        message = pb.PlayRequest.FromString(request)
        self.requests.append(message)
        if message.WhichOneof("message") == "handshake" and self.handshake is not None:
            self.send(self.handshake)

    async def read(self) -> object:
        item = await self._inbox.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def done_writing(self) -> None:
        self.done_writing_called = True
        if self.ends_when_done:
            self.end()

    def cancel(self) -> bool:
        self.cancelled = True
        return True

    # ----- the bot's side ---------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """The bot sends a message: these bytes."""
        self._inbox.put_nowait(data)

    def reply(self, number: int, action: Action | str = "draw") -> None:
        """The bot answers decision ``number`` with ``action``."""
        self.send(decision_bytes(number, action))

    def end(self) -> None:
        """The bot ends its side of the stream (cleanly: gRPC's EOF)."""
        self._inbox.put_nowait(grpc.aio.EOF)

    def fail(self, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE, details: str = "Socket closed") -> None:
        """The stream breaks with a final status: the next read raises it (and so does every write, from now)."""
        error = grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)
        self.write_error = error
        self._inbox.put_nowait(error)

    @property
    def decision_requests(self) -> list[pb.DecisionRequest]:
        """The DecisionRequests sent so far, in order."""
        return [message.decision_request for message in self.requests if message.HasField("decision_request")]

    def kinds(self) -> list[str]:
        """What each request sent so far was: ``handshake``, ``game_start``, ``decision_request`` ..."""
        return [str(message.WhichOneof("message")) for message in self.requests]


class FakeTransport:
    """A :class:`referee.play.transport.Transport` that opens its :class:`FakeStream` at once (``refusal``: what
    :meth:`play_refusal` says, as a v1 bot's server would)."""

    def __init__(self, stream: FakeStream | None = None, refusal: str | None = None) -> None:
        self.stream = stream if stream is not None else FakeStream()
        self.refusal = refusal
        self.opened = self.closed = False

    async def open(self, timeout: float) -> Stream:
        self.opened = True
        return self.stream

    async def play_refusal(self) -> str | None:
        return self.refusal

    async def close(self) -> None:
        self.closed = True


async def settle(rounds: int = 20) -> None:
    """Let the event loop run what is ready (a reply read, a decision going on), without time passing."""
    for _ in range(rounds):
        await asyncio.sleep(0)
