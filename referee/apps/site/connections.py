"""The server's connections under load: a cap from the open-file limit, a cap per client, and deadlines.

``referee serve`` may face the internet, where a client may open connections and send nothing, send its
headers a byte at a time, trickle a body, or stop reading what it asked for. Each such connection holds one of
the process's open files; at the open-file limit the server can accept no one, and a new visitor gets no
answer. So every connection is watched here, at the socket (uvicorn's h11 protocol, subclassed:
:class:`GuardedProtocol`), before the application sees a request:

- **A cap on connections**, below the open-file limit by what the server opens itself
  (:meth:`ServeLimits.for_open_files`). When a new connection would pass it, the server closes one that serves
  no one: the connection that has waited longest for a request (idle between two requests, or still sending
  its headers). Only when every other connection is busy with a request is the newcomer closed.
- **A cap per client** (:func:`client_of`: an IPv4 address, an IPv6 /64), the same way: over it, that client's
  own oldest waiting connection is closed. A proxy the server trusts (``forwarded_allow_ips``) is many
  clients and has no cap of its own; the streams its clients open are counted by their forwarded address
  (:mod:`referee.apps.site.streams`).
- **Deadlines**: a request's headers complete within ``header_timeout_s`` of its first byte (of the connection,
  for its first request); a body brings ``body_min_bytes`` every ``body_timeout_s``; a response the client
  does not read for ``write_timeout_s`` is dropped. Between requests uvicorn's keep-alive timeout closes an
  idle connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import logging
import resource
import socket
import time
from dataclasses import dataclass
from typing import Any

import h11
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import Server, ServerState

from referee.apps.site import ServeError

log = logging.getLogger("referee.apps.site")

MAX_OPEN_FILES = 16_384  # the soft limit is raised towards the hard one up to this: 12,288 connections
LISTEN_QUEUE = 2048  # connections the system holds for the server to accept (uvicorn's default backlog)
HEADER_BYTES = 16 * 1024  # a request's line and headers, at most (h11's own default, stated)
SWEEP_S = 0.5  # how often the deadlines are looked at
REPORT_S = 60.0  # the connections closed are logged at most this often, counted by why (not one line each)
IPV6_CLIENT_PREFIX = 64  # one IPv6 host is usually given a whole /64: any address in it is the same client
# Why a connection was closed (the log counts them by these).
HEADERS_LATE = "headers not complete in time"
BODY_STALLED = "a body stalled"
NOT_READ = "a response not read"


@dataclass(frozen=True)
class ServeLimits:
    """How many connections and streams the server holds, and how long a request may take to arrive."""

    connections: int
    streams: int
    connections_per_client: int = 64
    streams_per_client: int = 32
    header_timeout_s: float = 5.0
    body_timeout_s: float = 10.0
    body_min_bytes: int = 1024
    write_timeout_s: float = 30.0
    keep_alive_s: int = 5
    accept_batch: int = 64  # connections accepted at a time (uvicorn's backlog; the queue is LISTEN_QUEUE)

    @classmethod
    def for_open_files(cls, open_files: int, **overrides: Any) -> ServeLimits:
        """The limits of a process that may hold ``open_files`` files.

        An eighth of them (at least 64) is left for the files the server opens itself (pages, feeds, logs,
        uploads), and two batches of accepts for the connections accepted before the guard has counted them
        (asyncio accepts up to ``accept_batch`` at a time, and a second batch may come before the first is
        counted); the rest are connections, half of which may be streams.
        """
        accept_batch = min(2048, max(64, open_files // 16))
        reserved = max(64, open_files // 8) + 2 * accept_batch
        connections = open_files - reserved
        if connections < 16:
            raise ServeError(
                f"an open-file limit of {open_files} leaves {connections} connections after the {reserved} files "
                f"the server keeps for itself and its accepts; raise it (ulimit -n) to at least {reserved + 16}"
            )
        return cls(connections=connections, streams=connections // 2, accept_batch=accept_batch, **overrides)

    @classmethod
    def for_this_process(cls, **overrides: Any) -> ServeLimits:
        """The limits for this process's open-file limit (its soft limit)."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return cls.for_open_files(soft, **overrides)


def raise_open_file_limit() -> int:
    """Raise this process's soft open-file limit towards its hard limit (up to :data:`MAX_OPEN_FILES`); return it.

    Many systems start processes at a soft limit of 1,024 under a far higher hard limit, which a process may
    raise itself to: the server then holds more visitors than the soft limit would let it.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MAX_OPEN_FILES)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        return wanted
    return soft


def client_of(host: str) -> str:
    """The client an address stands for: an IPv4 address itself (an IPv4-mapped IPv6 address as IPv4), an IPv6
    address its /64 network, anything else (a Unix socket's path) as it is."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


class TrustedProxies:
    """The addresses of ``forwarded_allow_ips`` (addresses and networks, comma-separated; ``*`` for any)."""

    def __init__(self, allowed: str | list[str]) -> None:
        items = allowed.split(",") if isinstance(allowed, str) else allowed
        names = [item.strip() for item in items if item.strip()]
        self.anyone = "*" in names
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for name in names:
            try:
                self.networks.append(ipaddress.ip_network(name, strict=False))
            except ValueError:
                continue  # a host name or a socket's path: never the address of a TCP peer
        self.literals = set(names)

    def __contains__(self, host: str) -> bool:
        if self.anyone or host in self.literals:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)


class ConnectionGuard:
    """Every open connection of one server: the caps (:meth:`admit`) and the deadlines (a sweep every
    :data:`SWEEP_S` seconds)."""

    def __init__(self, limits: ServeLimits, trusted: TrustedProxies | None = None) -> None:
        self.limits = limits
        self.trusted = trusted or TrustedProxies([])
        self.open: dict[GuardedProtocol, None] = {}  # in the order they were made
        # Those waiting for a request (idle, or still sending its headers), the longest waiting first.
        self.waiting: dict[GuardedProtocol, None] = {}
        self.by_client: dict[str, dict[GuardedProtocol, None]] = {}
        self.closed: collections.Counter[str] = collections.Counter()
        self._sweep: asyncio.TimerHandle | None = None
        self._reported = -REPORT_S  # the first connections closed are reported at once, then once a minute

    def admit(self, connection: GuardedProtocol) -> None:
        """A connection was made: counted, and a connection closed if that puts the server or its client over a cap."""
        self.open[connection] = None
        self.waiting[connection] = None
        client = connection.client_key
        if client is not None:
            mine = self.by_client.setdefault(client, {})
            mine[connection] = None
            if len(mine) > self.limits.connections_per_client:
                self._shed(connection, mine, "over its client's cap")
        if connection.guarded and len(self.open) > self.limits.connections:
            self._shed(connection, self.open, "the server full")
        if self._sweep is None:
            self._sweep = asyncio.get_running_loop().call_later(SWEEP_S, self.sweep)

    def release(self, connection: GuardedProtocol) -> None:
        """A connection is closed (or being closed): no longer counted."""
        if self.open.pop(connection, False) is False:
            return
        self.waiting.pop(connection, None)
        client = connection.client_key
        if client is not None:
            mine = self.by_client[client]
            del mine[connection]
            if not mine:
                del self.by_client[client]
        connection.guarded = False

    def now_waiting(self, connection: GuardedProtocol, waiting: bool) -> None:
        if not connection.guarded:
            return
        if waiting and connection not in self.waiting:
            self.waiting[connection] = None
        elif not waiting:
            self.waiting.pop(connection, None)

    def _shed(self, newcomer: GuardedProtocol, among: dict[GuardedProtocol, None], why: str) -> None:
        """Close the connection of ``among`` that has waited longest for a request; the newcomer if none other
        waits (it alone is not busy)."""
        shed = next((other for other in self.waiting if other in among and other is not newcomer), newcomer)
        self.drop(shed, f"waiting for a request, {why}")

    def drop(self, connection: GuardedProtocol, why: str, *, hard: bool = False) -> None:
        """Close ``connection`` now (``hard``: without sending what is still buffered for it)."""
        self.release(connection)
        self.closed[why] += 1
        connection.close_now(hard)

    def sweep(self) -> None:
        """Close every connection past a deadline; come again while any is open."""
        self._sweep = None
        now = time.monotonic()
        for connection in list(self.open):
            late = connection.late(now, self.limits)
            if late is not None:
                self.drop(connection, late, hard=late == NOT_READ)  # what is buffered for it would never leave
        if self.closed and now - self._reported >= REPORT_S:
            self.report(now)
        if self.open or self.closed:  # the closed are reported even once no connection is left
            self._sweep = asyncio.get_running_loop().call_later(SWEEP_S, self.sweep)

    def report(self, now: float) -> None:
        counts = ", ".join(f"{count} {why}" for why, count in self.closed.most_common())
        log.warning("connections closed since the last report: %s", counts)
        self.closed.clear()
        self._reported = now


class GuardedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, its connections counted and held to deadlines by the server's
    :class:`ConnectionGuard` (a subclass made for each guard: :func:`guarded_protocol`)."""

    guard: ConnectionGuard

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.app = _left_quietly(self.app)
        self.guarded = False
        self.client_key: str | None = None
        self.headers_due: float | None = None  # when this request's headers must be complete
        self.body_window = (0.0, 0)  # when the body's current window began, and the bytes it brought
        self.write_paused_at: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        now = time.monotonic()
        self.headers_due = now + self.guard.limits.header_timeout_s
        self.guarded = True
        if self.client is not None and self.client[0] not in self.guard.trusted:
            self.client_key = client_of(self.client[0])
        self.guard.admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.release(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if self.conn.their_state is h11.IDLE and self.headers_due is None:
            self.headers_due = now + self.guard.limits.header_timeout_s  # the next request began
        sending_body = self.conn.their_state is h11.SEND_BODY
        super().data_received(data)
        if sending_body:
            began, brought = self.body_window
            self.body_window = (began, brought + len(data))
        self._follow(now)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow(time.monotonic())

    def pause_writing(self) -> None:
        self.write_paused_at = time.monotonic()
        super().pause_writing()

    def resume_writing(self) -> None:
        self.write_paused_at = None
        super().resume_writing()

    def _follow(self, now: float) -> None:
        """After what may have moved the request on: whether the connection waits for a request, and its
        deadlines."""
        state = self.conn.their_state
        if state is not h11.IDLE:
            self.headers_due = None
        if state is h11.SEND_BODY and self.body_window[0] == 0.0:
            self.body_window = (now, 0)
        elif state is not h11.SEND_BODY:
            self.body_window = (0.0, 0)
        self.guard.now_waiting(self, state is h11.IDLE and not self.transport.is_closing())

    def late(self, now: float, limits: ServeLimits) -> str | None:
        """Why this connection is past a deadline now, or None (a body's window moves on when it is not)."""
        if self.write_paused_at is not None and now - self.write_paused_at >= limits.write_timeout_s:
            return NOT_READ  # closing or not: a transport closed waits for its buffer to be read, for ever
        if self.transport.is_closing():
            return None
        if self.headers_due is not None and now >= self.headers_due and self.conn.their_state is h11.IDLE:
            return HEADERS_LATE
        began, brought = self.body_window
        if began and self.flow.read_paused:
            self.body_window = (now, 0)  # the server has not taken what came: the wait is not the client's
        elif began and now - began >= limits.body_timeout_s:
            if brought < limits.body_min_bytes:
                return BODY_STALLED
            self.body_window = (now, 0)
        return None

    def close_now(self, hard: bool) -> None:
        if hard:
            self.transport.abort()
        elif not self.transport.is_closing():
            self.transport.close()


def _left_quietly(app: ASGIApp) -> ASGIApp:
    """``app``, a request whose client left while its body was read (or that the guard closed, its body stalled)
    ending there: no one is left to answer, and it is no error of the server's to log."""

    async def answering(scope: Scope, receive: Receive, send: Send) -> None:
        with contextlib.suppress(ClientDisconnect):
            await app(scope, receive, send)

    return answering


def guarded_protocol(guard: ConnectionGuard) -> type[GuardedProtocol]:
    """The protocol class for uvicorn's ``http=`` whose connections ``guard`` watches."""

    class OfThisServer(GuardedProtocol):
        pass

    OfThisServer.guard = guard
    return OfThisServer


class GuardedServer(Server):
    """uvicorn's server, its listening queue kept long while it accepts a few connections at a time.

    asyncio takes uvicorn's ``backlog`` both as the system's queue of connections to accept and as how many it
    accepts at once, before any is counted: a long queue holds a burst of visitors, a short batch keeps the
    connections not yet counted few (:meth:`ServeLimits.for_open_files`). The queue is set again once listening.
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for server in getattr(self, "servers", []):
            for listening in server.sockets:
                with socket.fromfd(listening.fileno(), listening.family, listening.type) as same:
                    same.listen(LISTEN_QUEUE)
