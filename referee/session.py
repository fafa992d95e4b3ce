"""The conversation with one bot: handshake, decisions with deadlines, notifications. The only code that talks to bots.

A :class:`BotSession` wraps a :class:`referee.bots.BotProcess` (which starts
and stops the program) with the gRPC channel to it, and turns every way a
call can go wrong into a :class:`referee.faults.BotFault` of the right kind.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from referee import __version__
from referee.bots import DEFAULT_LOG_CAP_BYTES, BotProcess, BotSpec
from referee.faults import BotFault, FaultKind
from referee.protocol import GAME_FROM_PB, GAME_TO_PB, PROTOCOL_VERSION
from referee.v1 import bot_pb2 as pb

MAX_REPLY_BYTES = 1 << 20  # a real reply is a few bytes; anything near this is a fault
# How long a lost connection waits for the bot's exit status. It passes through the supervising shell
# (and unshare), which takes a few milliseconds, but more on a busy machine.
EXIT_STATUS_WAIT_SECONDS = 1.0
# gRPC waits a second before retrying a connection by default; a starting bot listens sooner.
RECONNECT_BACKOFF_MS = 50
MAX_RECONNECT_BACKOFF_MS = 500

_CONNECTION_LOST = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


@dataclass(frozen=True)
class Timing:
    """Time limits of a game, in milliseconds."""

    move_time_ms: int = 1000
    time_bank_ms: int = 10_000
    grace_ms: int = 200  # transport allowance added to every deadline
    startup_timeout_ms: int = 10_000
    notify_timeout_ms: int = 1000


@dataclass(frozen=True)
class GameSetup:
    """What the handshake tells a bot: the game, the table size and the limits."""

    game: str
    num_players: int
    timing: Timing = Timing()
    turn_limit: int = 200


class BotSession:
    """One bot: its process (see :mod:`referee.bots`) and the gRPC channel the referee talks to it on."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, log_cap: int = DEFAULT_LOG_CAP_BYTES) -> None:
        self.process = BotProcess(spec, log_path, log_cap)
        self.spec = spec
        self.channel: grpc.aio.Channel | None = None
        # Calls that return the reply's bytes: this class parses them, so a reply that does not
        # parse is a fault it can name (grpc.aio would log the error and return None).
        self._handshake_call: grpc.aio.UnaryUnaryMultiCallable | None = None
        self._decide_call: grpc.aio.UnaryUnaryMultiCallable | None = None
        self._notify_call: grpc.aio.UnaryUnaryMultiCallable | None = None
        self.handshake_reply: pb.HandshakeReply | None = None
        self.healthy = True  # false after a fault that may leave the process wedged

    @property
    def log_path(self) -> Path | None:
        return self.process.log_path

    def has_exited(self) -> bool:
        return self.process.has_exited()

    # ----- start and handshake -------------------------------------------------

    async def start(self, setup: GameSetup) -> None:
        """Start the bot (if it is a command), wait until it listens, and handshake.

        Raises :class:`BotFault` (``startup`` or ``handshake``) on failure,
        after stopping whatever was started.
        """
        try:
            await self.process.launch()
            self.channel = grpc.aio.insecure_channel(
                self.process.address,
                options=[
                    ("grpc.max_receive_message_length", MAX_REPLY_BYTES),
                    ("grpc.enable_retries", 0),
                    ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS),
                    ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_BACKOFF_MS),
                ],
            )
            self._handshake_call = self._raw_call("Handshake", pb.HandshakeRequest)
            # The referee encodes decision requests to bytes itself (referee.protocol.RequestEncoder).
            self._decide_call = self.channel.unary_unary("/referee.v1.Bot/Decide")
            self._notify_call = self._raw_call("Notify", pb.Notification)
            await self._wait_ready(setup.timing.startup_timeout_ms / 1000)
            await self._handshake(setup)
        except BaseException:
            await self.stop()
            raise

    def _raw_call(self, method: str, request_type) -> grpc.aio.UnaryUnaryMultiCallable:
        return self.channel.unary_unary(
            f"/referee.v1.Bot/{method}", request_serializer=request_type.SerializeToString
        )  # no response_deserializer: the reply arrives as bytes

    async def _wait_ready(self, timeout: float) -> None:
        ready = asyncio.ensure_future(self.channel.channel_ready())
        waiters = {ready}
        exited = None
        process = self.process.process
        if process is not None:
            exited = asyncio.ensure_future(process.wait())
            waiters.add(exited)
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waiters:
                task.cancel()
        if ready in done and not ready.cancelled():
            return
        name = self.spec.name
        address = self.process.address
        if exited is not None and exited in done:
            ended = "was" if self.process.killed_by_signal() else "exited with"
            detail = f"{ended} {self.process.exit_detail(cause=' (%s)')}"
            raise BotFault(FaultKind.STARTUP, f"{detail} before listening on {address}" + self.process.log_hint(), name)
        raise BotFault(
            FaultKind.STARTUP, f"did not listen on {address} within {timeout:g} s" + self.process.log_hint(), name
        )

    async def _handshake(self, setup: GameSetup) -> None:
        request = pb.HandshakeRequest(
            protocol_version=PROTOCOL_VERSION,
            referee_version=__version__,
            game=GAME_TO_PB[setup.game],
            num_players=setup.num_players,
            time_limits=pb.TimeLimits(
                move_time_ms=setup.timing.move_time_ms, time_bank_ms=setup.timing.time_bank_ms
            ),
            turn_limit=setup.turn_limit,
        )
        name = self.spec.name
        timeout = setup.timing.startup_timeout_ms / 1000
        try:
            data = await self._handshake_call(request, timeout=timeout)
        except grpc.aio.AioRpcError as error:
            if error.code() is grpc.StatusCode.DEADLINE_EXCEEDED:
                raise BotFault(FaultKind.HANDSHAKE, f"no handshake reply within {timeout:g} s", name) from None
            raise BotFault(FaultKind.HANDSHAKE, f"no valid handshake reply: {_status_text(error)}", name) from None
        try:
            reply = pb.HandshakeReply.FromString(data)
        except DecodeError:
            detail = f"the handshake reply is not a HandshakeReply ({len(data)} bytes that do not parse)"
            raise BotFault(FaultKind.HANDSHAKE, detail, name) from None
        self.handshake_reply = reply
        if reply.protocol_version != PROTOCOL_VERSION:
            raise BotFault(
                FaultKind.HANDSHAKE,
                f"speaks protocol version {reply.protocol_version}; this referee speaks version {PROTOCOL_VERSION}",
                name,
            )
        if GAME_TO_PB[setup.game] not in reply.games:
            games = ", ".join(GAME_FROM_PB.get(game, str(game)) for game in reply.games) or "none"
            raise BotFault(FaultKind.HANDSHAKE, f"does not play {setup.game} (it plays: {games})", name)

    # ----- calls during a game ----------------------------------------------------

    async def decide(self, request: bytes, timeout: float) -> pb.DecisionReply:
        """Send an encoded ``DecisionRequest``; raise :class:`BotFault` for a timeout, crash or malformed reply."""
        try:
            data = await self._decide_call(request, timeout=timeout)
        except grpc.aio.AioRpcError as error:
            if error.code() in _CONNECTION_LOST:
                # Give the exit status a moment to arrive, so the fault can name it (and the limit).
                await self.process.wait_exit(EXIT_STATUS_WAIT_SECONDS)
            raise self._fault_from(error, timeout) from None
        try:
            return pb.DecisionReply.FromString(data)
        except DecodeError:
            detail = f"reply is not a DecisionReply ({len(data)} bytes that do not parse)"
            raise BotFault(FaultKind.MALFORMED, detail, self.spec.name) from None

    async def notify(self, notification: pb.Notification, timeout: float) -> None:
        """Send a notification; best effort, so failures are ignored (the next decision will tell)."""
        if self._notify_call is None:
            return
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.TimeoutError):
            await self._notify_call(notification, timeout=timeout)  # the reply carries nothing: not parsed

    def _fault_from(self, error: grpc.aio.AioRpcError, timeout: float) -> BotFault:
        code = error.code()
        name = self.spec.name
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            self.healthy = False
            return BotFault(FaultKind.TIMEOUT, f"no reply within {timeout * 1000:.0f} ms", name)
        if self.has_exited():
            self.healthy = False
            return BotFault(FaultKind.CRASH, f"process {self.process.exit_detail()}" + self.process.log_hint(), name)
        if code in _CONNECTION_LOST:
            self.healthy = False
            return BotFault(FaultKind.CRASH, f"connection lost: {_status_text(error)}", name)
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            return BotFault(FaultKind.MALFORMED, f"reply too large (limit {MAX_REPLY_BYTES} bytes)", name)
        if code is grpc.StatusCode.INTERNAL:
            return BotFault(FaultKind.MALFORMED, f"reply is not a DecisionReply: {_status_text(error)}", name)
        return BotFault(FaultKind.MALFORMED, f"answered with an error instead of a reply: {_status_text(error)}", name)

    # ----- stop -------------------------------------------------------------------

    async def stop(self) -> None:
        """Close the channel and stop the bot and everything it started; safe to call more than once."""
        if self.channel is not None:
            channel, self.channel = self.channel, None
            with contextlib.suppress(Exception):
                await channel.close(grace=None)
        await self.process.stop()


def _status_text(error: grpc.aio.AioRpcError) -> str:
    details = error.details() or ""
    return f"{error.code().name}{': ' + details if details else ''}"
