"""The honest clock: how much of a decision's time the bot used, and so may be charged for.

A decision's wall time runs from sending the request to reading the reply.
Two things in it are not the bot's doing, and the referee does not charge
them:

- **waiting for a CPU**: on a busy machine a bot that is ready to run may
  wait for a core. Each sandboxed bot runs in a cgroup of its own, whose
  pressure-stall counter (``cpu.pressure``, the ``full`` line) adds up the
  time during which every runnable process of the bot was waiting for a CPU
  at once. A bot cannot grow that figure by starting more threads: while any
  of its threads runs, it is not stalled.
- **the referee's own delays**: the referee runs many games on one event
  loop; a reply may sit in a socket while the loop finishes other work (or
  while the machine runs something else). :class:`LagMonitor` measures how
  late the loop runs its callbacks; the lateness of the loop as the reply
  was read (the worst of the ticks due in the delay that ended then) is not
  charged. Lateness earlier in the decision delayed nobody's reply, and is
  charged as usual.

So the charge is ``wall - stall - lag``, but never less than the CPU time
the bot's processes used during the decision (its cgroup's ``cpu.stat``)
and never more than the wall time. Sleeping, waiting on I/O or on a lock is
time the bot chose to spend, and is charged. Where the machine offers no
cgroup for a bot (``sandbox: none``, or no writable cgroup v2 hierarchy),
only the referee's lag is discounted.

The figures are only read when a decision runs past its move time, so the
common case costs two clock readings (check-bot, which calls a decision slow
at half its move time, has them read for every decision).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Timing:
    """Time limits of a game, in milliseconds."""

    move_time_ms: int = 1000
    time_bank_ms: int = 10_000
    grace_ms: int = 50  # transport allowance: a reply is a timeout once move + bank left + grace are charged
    startup_timeout_ms: int = 10_000


@dataclass(slots=True)
class TimeControl:
    """One seat's clock in a game: the move time, the bank left, the grace, and what each decision is charged.

    A decision may be charged up to :attr:`limit_ms` (move time, bank left and
    grace) before it is a timeout; what it is charged beyond the move time
    comes out of the bank (:meth:`spend`). The charge itself is the honest
    clock's (:func:`charged_seconds`), measured by the session; the last one,
    to the nearest millisecond, is :attr:`last_charged_ms`, told to the bot
    in its next request (0 before its first decision).
    """

    move_time_ms: int
    bank_ms: int
    grace_ms: int
    last_charged_ms: int = 0

    @classmethod
    def of(cls, timing: Timing) -> TimeControl:
        """A seat's clock at the start of a game played with ``timing``."""
        return cls(timing.move_time_ms, timing.time_bank_ms, timing.grace_ms)

    @property
    def limit_ms(self) -> int:
        """The time a decision may be charged before it is a timeout."""
        return self.move_time_ms + self.bank_ms + self.grace_ms

    def spend(self, charged_ms: float) -> None:
        """Take what a decision was charged beyond the move time out of the bank (never below zero), and keep
        the charge as :attr:`last_charged_ms`."""
        self.last_charged_ms = round(charged_ms)
        over = charged_ms - self.move_time_ms
        if over > 0:
            self.bank_ms = max(0, int(self.bank_ms - over))


# How often the lag monitor samples the event loop, and how many samples it keeps.
LAG_TICK_SECONDS = 0.005
LAG_SAMPLES = 1024  # about 5 s of samples at one every 5 ms


class LagMonitor:
    """Measures how late an event loop runs its callbacks: a tick every few milliseconds, and its lateness.

    ``lag_before(now, since)`` is how late the loop was running just before
    ``now`` (a ``time.perf_counter()`` reading), looking no further back
    than ``since``: how long a message read at ``now`` may have waited.
    """

    def __init__(self, tick_seconds: float = LAG_TICK_SECONDS) -> None:
        self._tick = tick_seconds
        self._samples: deque[tuple[float, float]] = deque(maxlen=LAG_SAMPLES)  # (due, lateness), oldest first
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._due = 0.0
        self.users = 0

    def start(self) -> None:
        """Start ticking on the running loop (again after :meth:`stop`); each ``start`` needs a ``stop``."""
        self.users += 1
        if self._handle is None:
            self._loop = asyncio.get_running_loop()
            self._due = time.perf_counter() + self._tick
            self._handle = self._loop.call_later(self._tick, self._on_tick)

    def stop(self) -> None:
        self.users = max(0, self.users - 1)
        if self.users == 0 and self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _on_tick(self) -> None:
        now = time.perf_counter()
        self._samples.append((self._due, max(0.0, now - self._due)))
        self._due = now + self._tick
        assert self._loop is not None  # ticks run only between start() and stop()
        self._handle = self._loop.call_later(self._tick, self._on_tick)

    def lag_before(self, now: float, since: float) -> float:
        """How long, in seconds, the loop had been running late when ``now`` came (0 when it was on time).

        The worst lateness of the ticks due in the delay that ended at
        ``now``: the tick still waiting to run (as late as the loop is now),
        then, walking back from the newest tick run, each tick due within the
        worst lateness found so far (plus two ticks) of ``now``; an older one
        is from a delay that ended before, which no message read at ``now``
        waited through. Never looks before ``since``.
        """
        # The tick waiting to run is as late as the loop is now (it may run after whoever asks).
        worst = max(0.0, now - self._due) if self._handle is not None else 0.0
        horizon = 2 * self._tick
        for due, lateness in reversed(self._samples):
            if due < since or due < now - worst - horizon:
                break
            if lateness > worst:
                worst = lateness
        return worst


_MONITORS: dict[asyncio.AbstractEventLoop, LagMonitor] = {}


def lag_monitor() -> LagMonitor:
    """The lag monitor of the running event loop (one per loop, shared by its sessions)."""
    loop = asyncio.get_running_loop()
    monitor = _MONITORS.get(loop)
    if monitor is None:
        for old in [old for old in _MONITORS if old.is_closed()]:
            del _MONITORS[old]
        monitor = _MONITORS[loop] = LagMonitor()
    return monitor


class Timer(Protocol):
    """A callback a :class:`Clock` will run, until cancelled (an :class:`asyncio.TimerHandle` is one)."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """The time a bot session reads and the deadlines it waits on: a part it is given, so that a test can
    drive a decision's races on a clock of its own (:class:`referee.play.fakes.FakeClock`).

    The session's other waits (a write, the handshake, the close) stay on the event loop's own time: they
    end a bot that stopped answering altogether, and no race is run on them.
    """

    def now(self) -> float:
        """A reading in seconds, on the :func:`time.perf_counter` scale: only differences mean anything."""
        ...

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer:
        """Run ``callback(*args)`` once ``delay`` seconds have passed."""
        ...

    def lag_before(self, now: float, since: float) -> float:
        """How late the referee was running as ``now`` came, looking no further back than ``since``
        (see :meth:`LagMonitor.lag_before`): time no reply read at ``now`` is charged for."""
        ...


class LoopClock:
    """The real :class:`Clock`: :func:`time.perf_counter`, the running loop's timers, its lag monitor.

    Made on a running loop; :meth:`close` when done with it (the loop's lag monitor stops with its last user).
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._lag = lag_monitor()
        self._lag.start()

    def now(self) -> float:
        return time.perf_counter()

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> asyncio.TimerHandle:
        return self._loop.call_later(delay, callback, *args)

    def lag_before(self, now: float, since: float) -> float:
        return self._lag.lag_before(now, since)

    def close(self) -> None:
        self._lag.stop()


def charged_seconds(wall: float, cpu: float | None, stall: float | None, lag: float) -> float:
    """The time to charge a bot for a decision, from its wall time and what was not its doing.

    ``cpu`` and ``stall`` are the CPU time the bot's processes used and the
    time they were all stalled waiting for a CPU during the decision (None
    where unknown); ``lag`` is the referee's own delay. See the module's
    docstring for why each counts or not.
    """
    charged = wall - lag - (stall or 0.0)
    if cpu is not None and charged < cpu:
        charged = cpu
    if charged > wall:
        charged = wall
    return max(0.0, charged)
