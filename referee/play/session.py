"""The conversation with one bot: the v2 stream, its handshake, decisions on the honest clock, faults.

A :class:`BotSession` wraps a :class:`referee.play.processes.BotProcess` (which starts,
contains and stops the program) with the one gRPC stream the referee keeps
open to it (``referee.v2.BotService/Play``, see proto/referee/v2/bot.proto).
It is the only code that speaks the wire protocol to a bot, and it turns every
way a conversation can go wrong into a :class:`referee.protocol.faults.BotFault` of the
right kind:

- a stream that breaks (or a process that exits) is a **crash**;
- a reply still missing when the deadline has been charged is a **timeout**
  (the deadline is the referee's own timer on the honest clock, see
  :mod:`referee.protocol.clock`);
- a reply that does not parse, holds no decision, says it failed, or names
  no action there is, is **malformed**; a reply to a decision that was not
  asked of the bot is **stale**. (Whether the action is legal is the game's to say.)

A task reads the stream for the life of the session, so a reply is taken
whenever it comes: a late reply to a decision that already ended in a fault
(it timed out, say) is dropped without a second fault, and the stream stays
usable; so is a second reply to a decision already answered. The usual reply is read straight from its bytes
(:func:`referee.protocol.codec.decision_from_bytes`), anything else with the
protobuf library.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from referee.engine.games.game import Action
from referee.play.freezer import OffMove
from referee.play.processes import BotProcess, BotSpec
from referee.play.transport import MAX_REPLY_BYTES, GrpcTransport, Stream, Transport, status_text, v1_fault
from referee.protocol.clock import Clock, LoopClock, TimeControl, Timer, charged_seconds
from referee.protocol.codec import decision_from_bytes, play_request
from referee.protocol.faults import COULD_NOT_DECIDE, STREAM_BROKE, BotFault, FaultKind
from referee.protocol.messages import (
    GAME_FROM_PB,
    GAME_TO_PB,
    PROTOCOL_VERSION,
    MalformedMessage,
    action_from_pb,
    handshake_message,  # re-exported: the session sends it first
)
from referee.protocol.setup import GameSetup
from referee.v2 import bot_pb2 as pb

# How long a broken stream waits for the bot's exit status, so the fault can name it. It passes
# through the sandbox's own processes, which takes a few milliseconds, more on a busy machine.
EXIT_STATUS_WAIT_SECONDS = 1.0
# However little of it the honest clock charges, a decision ends as a timeout once the wall clock
# reaches this many times its limit, plus the extra: the referee never waits without end.
WALL_CAP_FACTOR = 3
WALL_CAP_EXTRA_SECONDS = 2.0
# A write that does not complete within this is a bot that stopped reading its stream.
WRITE_TIMEOUT_SECONDS = 5.0
# On stop, how long the bot has to take the last messages and end its side of the stream before it is killed.
CLOSE_GRACE_SECONDS = 1.0

# The PlayRequest fields each message goes in.
_HANDSHAKE_FIELD = pb.PlayRequest.HANDSHAKE_FIELD_NUMBER
_GAME_START_FIELD = pb.PlayRequest.GAME_START_FIELD_NUMBER
_DECISION_REQUEST_FIELD = pb.PlayRequest.DECISION_REQUEST_FIELD_NUMBER
_FAULT_NOTICE_FIELD = pb.PlayRequest.FAULT_NOTICE_FIELD_NUMBER
_GAME_END_FIELD = pb.PlayRequest.GAME_END_FIELD_NUMBER


class _Pending:
    """The decision a session waits for: its number, its clock readings and the future its reply resolves."""

    __slots__ = (
        "charged_s", "honest_after_s", "limit_s", "note", "number", "settled", "started", "timer", "usage", "waiter",
        "wall_s",
    )  # fmt: skip

    def __init__(
        self, number: int, waiter: asyncio.Future[Action], started: float, honest_after_s: float, limit_s: float
    ) -> None:
        self.number = number
        self.waiter = waiter
        self.started = started
        self.usage: tuple[int, int] | None = None
        self.honest_after_s = honest_after_s  # a decision longer than this is charged by the honest clock
        self.limit_s = limit_s
        self.timer: Timer | None = None
        self.settled = False  # its times are recorded (by the deadline, for a timeout)
        self.wall_s = self.charged_s = 0.0
        self.note = ""  # the bot's private note on this decision (Decision.note), if its reply had one

    def settle(self, wall_s: float, charged_s: float) -> None:
        self.settled = True
        self.wall_s = wall_s
        self.charged_s = charged_s

    def reply(self, chosen: Action | None, fault: BotFault | None = None) -> Reply:
        return Reply(chosen, self.charged_s * 1000, self.wall_s * 1000, fault, self.note)


@dataclass(frozen=True, slots=True)
class Reply:
    """What a decision came to: the action chosen (or the fault instead), the time charged and the wall time.

    ``fault`` is set, and ``action`` None, when the decision ended in a fault
    (timeout, crash, malformed or stale reply); whether the action is legal is
    the caller's to say. ``note`` is the bot's private note on the decision
    (``Decision.note``, uncapped: :mod:`referee.records.notes` caps it), "" if none.
    """

    action: Action | None
    charged_ms: float
    wall_ms: float
    fault: BotFault | None = None
    note: str = ""


class Player(Protocol):
    """What a game asks of a seat's player: a bot's :class:`BotSession`, or a player inside the referee."""

    @property
    def name(self) -> str: ...

    @property
    def connected(self) -> bool:
        """Whether the player can still answer (a bot whose stream is gone cannot)."""
        ...

    def game_start(self, message: pb.GameStart) -> None: ...

    def fault_notice(self, message: pb.FaultNotice) -> None: ...

    def game_end(self, body: bytes) -> None: ...

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply: ...


class BotSession:
    """One bot: its process (see :mod:`referee.play.processes`) and the v2 stream the referee talks to it on.

    The stream comes from a :class:`~referee.play.transport.Transport` and the decisions are timed on a
    :class:`~referee.protocol.clock.Clock`, both parts a session may be given: by default the real ones
    (:class:`~referee.play.transport.GrpcTransport`, :class:`~referee.protocol.clock.LoopClock`);
    :mod:`referee.play.fakes` has fakes that play a decision's races in memory.
    """

    _loop: asyncio.AbstractEventLoop  # the loop the session runs on, from start() on
    _clock: Clock  # what decisions are timed on, from start() on

    def __init__(
        self,
        spec: BotSpec,
        log_path: Path | None = None,
        log_cap: int | None = None,
        *,
        transport: Transport | None = None,
        clock: Clock | None = None,
        charge_every_decision: bool = False,
    ) -> None:
        self.process = BotProcess(spec, log_path, log_cap)
        # The honest clock's charge (referee.protocol.clock) is measured for a decision past its move time, the
        # only charge that can cost the bot anything; check-bot, which judges a bot slow well within its move
        # time, has every decision measured, so that a pause of a loaded machine is not the bot's slowness.
        self.charge_every_decision = charge_every_decision
        self.spec = spec
        self.transport: Transport = transport if transport is not None else GrpcTransport(self.process)
        self._given_clock = clock
        self._loop_clock: LoopClock | None = None  # the real clock, made (and closed) here when none is given
        self.handshake_response: pb.HandshakeResponse | None = None
        self.healthy = True  # false after a fault that may leave the bot wedged: a timeout, a crash
        self.late_replies = 0  # replies to decisions that had already ended (a fault, or answered already), dropped
        self.unasked_replies = 0  # replies when no decision was asked, dropped
        self._call: Stream | None = None
        self._reader: asyncio.Task[None] | None = None
        self._sequence = 0
        self._pending: _Pending | None = None
        self._handshake_waiter: asyncio.Future[pb.HandshakeResponse] | None = None
        # Decisions of this game asked of this bot that have ended (answered, or a fault): a reply to one is late.
        self._ended: set[int] = set()
        self._broken: BotFault | None = None  # set once the stream is gone
        self._closing = False
        self._outbox: deque[tuple[int, bytes]] = deque()  # notices to send: (PlayRequest field, message bytes)
        self._sending: asyncio.Task[None] | None = None  # the task writing the outbox while it is not empty, or None
        self._off_move: OffMove | None = None  # keeps the bot frozen between its decisions (referee.play.freezer)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def log_path(self) -> Path | None:
        return self.process.log_path

    def has_exited(self) -> bool:
        return self.process.has_exited()

    @property
    def connected(self) -> bool:
        """Whether the stream is open and the process alive: the bot can still answer."""
        return self._broken is None and not self.process.has_exited()

    @property
    def usable(self) -> bool:
        """Whether the session can play another game: healthy, stream open, process alive."""
        return self.healthy and self._broken is None and not self.process.has_exited()

    # ----- start and handshake -------------------------------------------------

    async def start(self, setup: GameSetup) -> None:
        """Start the bot (if it is a command), wait until it listens, open the stream and handshake.

        Raises :class:`BotFault` (``startup`` or ``handshake``) on failure,
        after stopping whatever was started.
        """
        self._loop = asyncio.get_running_loop()
        if self._given_clock is not None:
            self._clock = self._given_clock
        else:
            self._clock = self._loop_clock = LoopClock()
        try:
            await self.process.launch()
            self._call = await self.transport.open(setup.timing.startup_timeout_ms / 1000)
            self._reader = self._loop.create_task(self._read_stream())
            await self._handshake(setup)
            if self.process.freezer is not None:
                cgroup = self.process.cgroup
                cpu_us = cgroup.cpu_us if cgroup is not None and cgroup.cpu_us() is not None else None
                self._off_move = OffMove(self.process.freezer, self._loop, cpu_us)
                self._off_move.off_move(watched=False)
        except BaseException:
            await self.stop()
            raise

    async def _handshake(self, setup: GameSetup) -> None:
        request = handshake_message(setup)
        timeout = setup.timing.startup_timeout_ms / 1000
        self._handshake_waiter = self._loop.create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._write(_HANDSHAKE_FIELD, request.SerializeToString())
            async with asyncio.timeout(timeout):
                response = await self._handshake_waiter
        except TimeoutError:
            raise BotFault(FaultKind.HANDSHAKE, f"no handshake reply within {timeout:g} s", self.name) from None
        except BotFault as fault:
            refusal = None
            if fault.kind is FaultKind.CRASH and not self.process.has_exited():
                refusal = await self.transport.play_refusal()
            if refusal is not None:
                raise v1_fault(self.name, refusal) from None
            raise BotFault(FaultKind.HANDSHAKE, fault.detail, self.name) from None
        finally:
            waiter, self._handshake_waiter = self._handshake_waiter, None
            if waiter.done() and not waiter.cancelled():
                waiter.exception()  # the reader's view of a failure already raised from the write: taken, not logged
        self.handshake_response = response
        if PROTOCOL_VERSION not in response.protocol_versions:
            spoken = ", ".join(map(str, response.protocol_versions)) or "none"
            raise BotFault(
                FaultKind.HANDSHAKE,
                f"speaks protocol versions {spoken}; this referee speaks version {PROTOCOL_VERSION} "
                "(docs/bot-protocol.md is the guide)",
                self.name,
            )
        if GAME_TO_PB[setup.game] not in response.games:
            games = ", ".join(GAME_FROM_PB.get(game, str(game)) for game in response.games) or "none"
            raise BotFault(FaultKind.HANDSHAKE, f"does not play {setup.game} (it plays: {games})", self.name)

    # ----- writing -------------------------------------------------------------------

    async def _write(self, field: int, body: bytes) -> None:
        """Send one PlayRequest now (callers send the notices on their way first); raise a crash
        :class:`BotFault` if the stream is gone."""
        if self._broken is not None:
            raise self._broken
        call = self._call
        assert call is not None  # opened by start(), before anything is written
        self._sequence += 1
        try:
            await call.write(play_request(self._sequence, field, body))
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError) as error:
            raise await self._stream_lost(error) from None

    def notify(self, field: int, body: bytes) -> None:
        """Send a message that needs no answer (``field``: game start, fault notice, game end; ``body``: its
        bytes) without waiting for it.

        Notices go out in order, and before anything written after them; the
        game goes on meanwhile (a write takes a round of the transport, and
        at a game's start and end every seat gets one at once). Best effort:
        a bot that does not take one within the write timeout has stopped
        reading its stream and is no longer healthy, and the next decision
        will tell how it failed.
        """
        if not self.usable:
            return
        self._outbox.append((field, body))
        if self._sending is None:
            self._sending = self._loop.create_task(self._send_notices())

    async def _send_notices(self) -> None:
        """Write the notices in the outbox, one after the other, until it is empty."""
        outbox = self._outbox
        try:
            while outbox and self.usable:
                field, body = outbox.popleft()
                try:
                    async with asyncio.timeout(WRITE_TIMEOUT_SECONDS):
                        await self._write(field, body)
                except TimeoutError:
                    self.healthy = False
                except BotFault:
                    pass
        finally:
            if self._sending is asyncio.current_task():
                outbox.clear()  # anything left is for a bot that can no longer take it
                self._sending = None  # nothing is on its way: the next write need not wait

    async def flush(self) -> None:
        """Wait until the notices on their way are sent (or given up on)."""
        sending = self._sending
        if sending is not None and not sending.done():
            await asyncio.wait((sending,))

    def game_start(self, message: pb.GameStart) -> None:
        self._ended.clear()  # decision numbers start again at 1
        self.notify(_GAME_START_FIELD, message.SerializeToString())

    def fault_notice(self, message: pb.FaultNotice) -> None:
        self.notify(_FAULT_NOTICE_FIELD, message.SerializeToString())

    def game_end(self, body: bytes) -> None:
        """Send the GameEnd whose bytes are ``body`` (see ``referee.protocol.codec.RequestEncoder.game_end``)."""
        self.notify(_GAME_END_FIELD, body)

    # ----- decisions: the hot path ---------------------------------------------------

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply:
        """Send an encoded DecisionRequest for decision ``number``; return the bot's :class:`Reply`.

        ``while_waiting`` is called once the request is sent, before waiting
        for the reply: work done there (the game log's formatting) costs the
        decision nothing, as the bot is thinking.

        ``clock`` is the seat's: the reply is a timeout once the bot was
        charged its :attr:`~referee.protocol.clock.TimeControl.limit_ms` (move time,
        bank left and grace); the caller spends the charge. A timeout, crash,
        malformed or stale reply comes back as the reply's ``fault``.
        """
        loop = self._loop
        off_move = self._off_move
        if off_move is not None:
            off_move.on_move()  # thawed before anything is sent: notices waiting in its socket are read now
        if self._sending is not None:
            await self.flush()  # the notices before the request (a game's start) are not the bot's time
        started = self._clock.now()
        honest_after_s = 0.0 if self.charge_every_decision else clock.move_time_ms / 1000
        pending = self._pending = _Pending(number, loop.create_future(), started, honest_after_s, clock.limit_ms / 1000)
        try:
            if self._broken is None and self.healthy:
                await self._write(_DECISION_REQUEST_FIELD, request)
            else:  # a bot that timed out before may have stopped reading: don't wait on it for ever
                async with asyncio.timeout(WRITE_TIMEOUT_SECONDS):
                    await self._write(_DECISION_REQUEST_FIELD, request)
            # Read after the write, while the bot thinks: this costs the round trip nothing.
            pending.usage = self.process.usage()
            pending.timer = self._clock.call_later(pending.limit_s, self._on_deadline, pending)
            if while_waiting is not None:
                while_waiting()
            chosen = await pending.waiter
        except TimeoutError:
            self.healthy = False
            self._ended.add(number)
            self._settle_times(pending, self._clock.now())
            return pending.reply(
                None,
                BotFault(
                    FaultKind.TIMEOUT,
                    f"stopped reading its stream (a request was not taken in {WRITE_TIMEOUT_SECONDS:g} s)",
                    self.name,
                ),
            )
        except BotFault as fault:
            self._ended.add(number)
            self._settle_times(pending, self._clock.now())
            return pending.reply(None, fault)
        finally:
            if pending.timer is not None:
                pending.timer.cancel()
            self._pending = None
            if off_move is not None:
                off_move.off_move()
        self._settle_times(pending, self._clock.now())
        return pending.reply(chosen)

    def _settle_times(self, pending: _Pending, now: float) -> None:
        if pending.settled:
            return
        wall = now - pending.started
        pending.settle(wall, wall if wall <= pending.honest_after_s else self._charge(pending, now))

    def _charge(self, pending: _Pending, now: float) -> float:
        """The honest clock's charge for ``pending`` up to ``now``, in seconds (see referee.protocol.clock)."""
        wall = now - pending.started
        cpu = stall = None
        before = pending.usage
        if before is not None:
            after = self.process.usage()
            if after is not None:
                cpu = (after[0] - before[0]) / 1e6
                stall = (after[1] - before[1]) / 1e6
        lag = self._clock.lag_before(now, pending.started)
        return charged_seconds(wall, cpu, stall, lag)

    def _on_deadline(self, pending: _Pending) -> None:
        """The decision's timer: a timeout if the bot was charged its limit, else wait for what is left."""
        if pending.waiter.done() or self._broken is not None:
            return  # a broken stream is reported as a crash by the reader
        now = self._clock.now()
        charged = self._charge(pending, now)
        wall = now - pending.started
        wall_cap = pending.limit_s * WALL_CAP_FACTOR + WALL_CAP_EXTRA_SECONDS
        if charged >= pending.limit_s or wall >= wall_cap:
            self.healthy = False
            pending.settle(wall, charged)
            limit_ms = pending.limit_s * 1000
            if charged >= pending.limit_s:
                detail = f"no reply after {charged * 1000:.0f} ms charged (limit {limit_ms:.0f} ms; {wall * 1000:.0f} ms on the wall clock)"
            else:
                detail = (
                    f"no reply after {wall * 1000:.0f} ms on the wall clock ({charged * 1000:.0f} ms charged; "
                    f"the referee waits at most {WALL_CAP_FACTOR} x the {limit_ms:.0f} ms limit + {WALL_CAP_EXTRA_SECONDS:g} s)"
                )
            hits = self.process.limits_hit()
            if hits:  # a bot held at a limit (its memory, say) times out for it: the author is told why
                detail += f"; {'; '.join(hits)}"
            pending.waiter.set_exception(BotFault(FaultKind.TIMEOUT, detail, self.name))
            return
        left = max(pending.limit_s - charged, 0.001)
        pending.timer = self._clock.call_later(min(left, wall_cap - wall), self._on_deadline, pending)

    # ----- reading -------------------------------------------------------------------

    async def _read_stream(self) -> None:
        """Take every message the bot sends, for the life of the stream."""
        call = self._call
        assert call is not None  # the reader starts once the stream is open
        try:
            while True:
                data = await call.read()
                if data is grpc.aio.EOF:
                    if self._closing:
                        return  # the bot ended its side after the referee ended its own: a clean close
                    raise _StreamEnded("the bot closed its stream")
                assert isinstance(data, bytes)  # no deserializer: a message is its bytes
                self._received(data)
                # Let the decision just answered go on (the engine step, the next request) before asking
                # gRPC for the next message: starting a read costs ~20 us that the next request need not wait.
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            raise
        except (_StreamEnded, grpc.aio.AioRpcError, grpc.aio.UsageError) as error:
            fault = await self._stream_lost(error)
        except Exception as error:  # noqa: BLE001 - the reader must end by reporting, whatever happened
            fault = BotFault(FaultKind.CRASH, f"the stream failed: {error!r}", self.name)
            self._broken = fault
        for waiter in (self._handshake_waiter, self._pending.waiter if self._pending else None):
            if waiter is not None and not waiter.done():
                waiter.set_exception(fault)

    async def _stream_lost(self, error: BaseException) -> BotFault:
        """The fault of a stream that is gone, naming how the process ended if it did."""
        if self._broken is not None:
            return self._broken
        self.healthy = False
        if isinstance(error, grpc.aio.AioRpcError) and error.code() is grpc.StatusCode.UNIMPLEMENTED:
            fault = v1_fault(self.name, status_text(error.code(), error.details()))
        elif isinstance(error, grpc.aio.AioRpcError) and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
            fault = BotFault(
                FaultKind.MALFORMED, f"a reply over the {MAX_REPLY_BYTES} byte limit broke the stream", self.name
            )
        else:
            self._broken = BotFault(FaultKind.CRASH, "the stream is gone", self.name)  # until the exit status is in
            if self.process.process is not None:
                await self.process.wait_exit(EXIT_STATUS_WAIT_SECONDS)
            if self.process.has_exited():
                fault = BotFault(
                    FaultKind.CRASH, f"process {self.process.exit_detail()}" + self.process.log_hint(), self.name
                )
            else:
                how = (
                    status_text(error.code(), error.details())
                    if isinstance(error, grpc.aio.AioRpcError)
                    else str(error)
                )
                fault = BotFault(FaultKind.CRASH, f"{STREAM_BROKE}: {how}", self.name)
        self._broken = fault
        return fault

    def _received(self, data: bytes) -> None:
        read: tuple[int, Action | BotFault] | None = decision_from_bytes(data)  # the usual reply, from its bytes
        if read is None:
            read = self._read_message(data)
            if read is None:
                return  # not a decision: taken care of
        number, chosen = read
        pending = self._pending
        if pending is not None and number == pending.number:
            waiter = pending.waiter
            if waiter.done():
                return
            if isinstance(chosen, BotFault):
                waiter.set_exception(chosen)
            else:
                waiter.set_result(chosen)
                self._ended.add(number)
            if self._off_move is not None:  # after the waiter: what it schedules comes after the decision goes on
                self._off_move.off_move()
        elif number in self._ended:
            # Dropped, whether or not another request went out meanwhile: a second reply to a decision
            # already answered would otherwise be a fault of the next decision, and only when it lost the race.
            self.late_replies += 1
        elif pending is not None:
            self._answer_fault(
                pending, FaultKind.STALE, f"replied to decision {number}, but decision {pending.number} was asked"
            )
        else:
            self.unasked_replies += 1

    def _read_message(self, data: bytes) -> tuple[int, Action | BotFault] | None:
        """Read a reply with the protobuf library: a decision's number and its action, or the fault its
        content is; None for anything else, once it is dealt with (a handshake's reply, or a fault)."""
        pending = self._pending
        try:
            message = pb.PlayResponse.FromString(data)
        except DecodeError:
            self._answer_fault(pending, FaultKind.MALFORMED, f"sent {len(data)} bytes that are not a PlayResponse")
            return None
        kind = message.WhichOneof("message")
        if kind == "decision":
            decision = message.decision
            if decision.note and pending is not None and pending.number == decision.decision_number:
                pending.note = decision.note  # a reply with a note is never the fast path's: it is read here
            try:
                return decision.decision_number, decision_action(decision, self.name)
            except BotFault as fault:
                return decision.decision_number, fault
        if kind == "handshake":
            waiter = self._handshake_waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(message.handshake)
            else:
                self._answer_fault(pending, FaultKind.MALFORMED, "sent a handshake response where a decision was asked")
        else:
            self._answer_fault(
                pending, FaultKind.MALFORMED, "sent an empty PlayResponse (neither handshake nor decision)"
            )
        return None

    def _answer_fault(self, pending: _Pending | None, kind: FaultKind, detail: str) -> None:
        """Fail the decision (or handshake) waited for with a fault; drop the message if nothing waits."""
        waiter = pending.waiter if pending is not None else self._handshake_waiter
        if waiter is None or waiter.done():
            self.unasked_replies += 1
            return
        waiter.set_exception(BotFault(kind, detail, self.name))

    # ----- stop -------------------------------------------------------------------

    async def stop(self) -> None:
        """Close the stream and the channel, and stop the bot and everything it started; safe to call twice.

        A bot whose stream is open gets a moment to take the last messages
        and end its side of the stream (so it sees the game's end) before its
        processes are killed. A cancellation of the task that stops it (Ctrl-C
        reaching the games) cuts that moment short, and is raised again once
        the bot is stopped: the task ends, as it was asked to.
        """
        task = asyncio.current_task()
        cancelled_before = task.cancelling() if task is not None else 0
        try:
            if self._off_move is not None:  # thawed for good: it takes its last messages, and ends
                self._off_move.release()
                self._off_move = None
            if self._sending is not None:
                if self.connected:  # the last notices (the game's end) go out first, within their write timeout
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await self.flush()
                if self._sending is not None:
                    self._sending.cancel()
                    self._sending = None
                self._outbox.clear()
            if self._reader is not None and self.connected and self._call is not None:
                self._closing = True
                # CancelledError too: a reader or call cancelled meanwhile (the game was interrupted) ends the grace.
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    async with asyncio.timeout(CLOSE_GRACE_SECONDS):
                        await self._call.done_writing()
                    async with asyncio.timeout(CLOSE_GRACE_SECONDS):
                        await asyncio.shield(self._reader)
            if self._reader is not None:
                self._reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._reader
                self._reader = None
            if self._call is not None:
                self._call.cancel()
                self._call = None
            await self.transport.close()
            if self._loop_clock is not None:
                self._loop_clock.close()
                self._loop_clock = None
        finally:
            await self.process.stop()  # whatever happened above, no process is left behind
        if task is not None and task.cancelling() > cancelled_before:
            # Cancelled while waiting above, where a cancelled reader or call looks the same and is let pass.
            raise asyncio.CancelledError


def decision_action(decision: pb.Decision, bot: str) -> Action:
    """The action a Decision read by the protobuf library names; raise a malformed :class:`BotFault` (of
    ``bot``) if it says the bot could not decide or names no action there is."""
    if decision.error:
        raise BotFault(FaultKind.MALFORMED, f"{COULD_NOT_DECIDE}: {decision.error[:500]}", bot)
    try:
        return action_from_pb(decision.action)
    except MalformedMessage as error:
        raise BotFault(FaultKind.MALFORMED, str(error), bot) from None


class _StreamEnded(Exception):
    """The bot ended its side of the stream."""
