"""How a session reaches its bot: the Play stream it is given, and the transport that opens it.

A :class:`referee.play.session.BotSession` talks to its bot over one :class:`Stream`, opened by a
:class:`Transport` once the process is launched: :class:`GrpcTransport`, a ``grpc.aio`` channel to the bot's
address, or a test's fake (:mod:`referee.play.fakes`). A failure to open it is named here, from what the
process did meanwhile (a ``startup`` fault), and so is a bot that refuses the stream (a v1 bot: a
``handshake`` fault that says where the v2 guide is).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

import grpc
import grpc.aio

from referee.play.processes import ADDRESS_VARIABLE, BotProcess
from referee.protocol.faults import NOT_SERVED, V1_MOVED, BotFault, FaultKind
from referee.protocol.messages import PLAY_METHOD

MAX_REPLY_BYTES = 1 << 20  # a real reply is a few bytes; anything near this is a fault
# How long a failed handshake's probe waits for a bot's server to say it has no Play method (a v1 bot).
V1_PROBE_SECONDS = 1.0
# gRPC waits a second before retrying a connection by default; a starting bot listens sooner.
RECONNECT_BACKOFF_MS = 50
MAX_RECONNECT_BACKOFF_MS = 500


class Stream(Protocol):
    """The bot's Play stream as a session uses it: PlayRequests' bytes out, PlayResponses' bytes in.

    A ``grpc.aio`` stream-stream call without serializers is one; :class:`referee.play.fakes.FakeStream`,
    which a test scripts message by message, is another. A stream that breaks raises
    :class:`grpc.aio.AioRpcError` (its final status) from :meth:`read` and :meth:`write`.
    """

    async def write(self, request: bytes) -> None: ...

    async def read(self) -> object:
        """The next message's bytes, or :data:`grpc.aio.EOF` once the bot has ended its side."""
        ...

    async def done_writing(self) -> None:
        """End the referee's side: the bot sees the stream end, and may end its own."""
        ...

    def cancel(self) -> bool: ...


class Transport(Protocol):
    """How a session reaches its bot once the process is launched: :class:`GrpcTransport`, or a test's fake."""

    async def open(self, timeout: float) -> Stream:
        """Wait (at most ``timeout`` seconds) until the bot listens, and open its Play stream; raise a
        ``startup`` :class:`BotFault` if it does not listen."""
        ...

    async def play_refusal(self) -> str | None:
        """How the bot refuses a Play stream (``UNIMPLEMENTED: ...``: a v1 bot), or None if it does not."""
        ...

    async def close(self) -> None: ...


class GrpcTransport:
    """The real :class:`Transport`: a ``grpc.aio`` channel to the bot's address and the Play call on it.

    A failure to connect is named from what the process did meanwhile (it
    exited, hit a limit, listens without speaking gRPC), so it is given the process.
    """

    def __init__(self, process: BotProcess) -> None:
        self.process = process
        self.channel: grpc.aio.Channel | None = None

    async def open(self, timeout: float) -> Stream:
        address = self.process.address
        assert address is not None  # launched: the bot's address is known
        self.channel = grpc.aio.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", MAX_REPLY_BYTES),
                ("grpc.enable_retries", 0),
                ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS),
                ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_BACKOFF_MS),
                # No bandwidth probes: each is a ping, which a bot frozen off move would leave unanswered,
                # and gRPC closes a connection whose ping goes unanswered for a minute.
                ("grpc.http2.bdp_probe", 0),
            ],
        )
        await self._wait_ready(timeout)
        # No serializers: requests go as the bytes referee.protocol.messages makes, replies come as bytes
        # the session parses, so a reply that does not parse is a fault it can name.
        call: grpc.aio.StreamStreamCall[bytes, bytes] = self.channel.stream_stream(PLAY_METHOD)()
        return call

    async def close(self) -> None:
        if self.channel is not None:
            channel, self.channel = self.channel, None
            with contextlib.suppress(Exception):
                await channel.close(grace=None)

    async def _wait_ready(self, timeout: float) -> None:
        assert self.channel is not None  # opened by open()
        ready = asyncio.ensure_future(self.channel.channel_ready())
        waiters: set[asyncio.Future[Any]] = {ready}
        exited: asyncio.Future[int] | None = None
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
        # The address the bot was given, as it sees it (in its sandbox, not the host's path to the socket).
        address = f"{self.process.bot_address} (its {ADDRESS_VARIABLE})"
        hint = self.process.log_hint()
        if exited is not None and exited in done:
            ended = "was" if self.process.killed_by_signal() else "exited with"
            detail = f"{ended} {self.process.exit_detail(cause=' (%s)')}"
            raise BotFault(FaultKind.STARTUP, f"{detail} before listening on {address}" + hint, self.process.spec.name)
        hits = self.process.limits_hit()
        if hits:  # still running, but held back by a limit (a fork bomb at the process limit, say)
            raise BotFault(
                FaultKind.STARTUP,
                f"did not listen on {address} within {timeout:g} s: {'; '.join(hits)}" + hint,
                self.process.spec.name,
            )
        if self.process.accepts_connections():
            raise BotFault(
                FaultKind.STARTUP,
                f"listens on {address} but does not speak gRPC's HTTP/2, so not the bot protocol "
                f"(docs/bot-protocol.md): no answer the referee could connect with within {timeout:g} s" + hint,
                self.process.spec.name,
            )
        raise BotFault(
            FaultKind.STARTUP, f"did not listen on {address} within {timeout:g} s" + hint, self.process.spec.name
        )

    async def play_refusal(self) -> str | None:
        """How the bot's server refuses Play (``UNIMPLEMENTED: ...``), asked on a fresh call that sends nothing;
        None if it does not refuse it.

        A v1 bot refuses the stream at once, but a handshake written at that
        moment can fail first, and gRPC then ends the call with INTERNAL
        instead: this second call, which writes nothing, cannot race.
        """
        assert self.channel is not None  # opened by open()
        probe: grpc.aio.StreamStreamCall[bytes, bytes] = self.channel.stream_stream(PLAY_METHOD)()
        try:
            async with asyncio.timeout(V1_PROBE_SECONDS):
                code = await probe.code()
                details = await probe.details()
        except (TimeoutError, grpc.aio.AioRpcError):
            return None  # it serves Play (or is too far gone to say): the stream's own fault stands
        finally:
            probe.cancel()
        return status_text(code, details) if code is grpc.StatusCode.UNIMPLEMENTED else None


def status_text(code: grpc.StatusCode, details: str | None) -> str:
    """A call's final status as a fault names it: ``UNIMPLEMENTED: Method not found!``."""
    return f"{code.name}{': ' + details if details else ''}"


def v1_fault(name: str, how: str) -> BotFault:
    """The handshake fault of a bot that serves only the v1 protocol, saying where the v2 guide is."""
    return BotFault(
        FaultKind.HANDSHAKE,
        f"{NOT_SERVED} {PLAY_METHOD} ({how}): {V1_MOVED}, one stream per bot; docs/bot-protocol.md is the guide",
        name,
    )
