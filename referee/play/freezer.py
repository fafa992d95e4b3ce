"""Freezing bots off move: a bot's processes get CPU only while it is deciding.

A bot that keeps threads or processes busy while the others think (pondering,
a background search, a spinning loop) takes CPU from the games around it: on
a machine playing as many games at once as it has cores, every other bot then
waits for a core. The honest clock does not charge them that wait, but their
games still slow down, and a bot whose wait the clock cannot see (no cgroup)
would be charged. So the referee freezes every bot it started while it is not
on move, and thaws it just before its request is sent: all its processes stop
in the kernel at once and take no CPU, and nothing of it runs between its
decisions.

How, in order of preference (:func:`freezer_for`):

- **cgroup v2** ``cgroup.freeze`` of the bot's own cgroup: one write freezes
  or thaws every process in it, which cannot notice; a frozen process can
  still be killed.
- **cgroup v1** ``freezer.state`` of its folder in the ``freezer``
  hierarchy: the same, but a frozen process does not die until it is thawed,
  so the referee thaws a bot before killing it, and the watcher that kills
  a referee's bots when it dies without cleaning up (a SIGKILL;
  :func:`referee.play.sandbox.cgroups.start_watcher`) thaws them first.
- **SIGSTOP and SIGCONT** of each of its processes (those of its cgroup, or
  of its process tree), where no freezer can be used.

:class:`OffMove` is the policy: thawed for each decision (one write, just
before its request is sent), frozen again once its reply is read (one
write, :data:`FREEZE_DELAY_S` later, off the decision's path: the bot's gRPC
library finishes sending the reply meanwhile, which frozen at once it would
do at its next decision). A bot seen using CPU in that moment (it ponders)
is *restless*: from then on it is frozen the moment each reply is read.
While a bot is frozen, what the referee sends it (a game's start or end, a
fault notice) waits in its socket, and it reads it when it is next thawed:
handling a game's start or end is charged to the bot's next decision. A bot
frozen a long while is thawed for a moment every :data:`BREATH_INTERVAL_S`,
so that its gRPC library can read the answers to its own pings: gRPC closes
a connection whose ping went unanswered for a minute (gRPC core's
``grpc.http2.ping_timeout_ms``), and a frozen process answers nothing. A bot
is thawed for good before it is stopped.

The league file turns freezing off for bots allowed to ponder
(``freeze: false``, for the league or a bot; docs/leagues.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from referee.play.sandbox import BotCgroup, cgroup_support
from referee.protocol.clock import Timer

# A bot frozen this long is thawed for BREATH_S, so that its gRPC library reads what came for it (a ping's
# answer) well before any library's ping timeout (gRPC core: 60 s, keepalive 20 s).
BREATH_INTERVAL_S = 5.0
BREATH_S = 0.02
# A reply read, the bot is frozen this much later: its gRPC library finishes sending the reply meanwhile (frozen
# at once, it would do that at its next decision, some 0.2 ms later for it and its game), and a bot asked again
# within it (a fast game) is not frozen and thawed for nothing (some 0.1 ms a decision). A bot that uses more than
# RESTLESS_CPU_S of CPU in that time, RESTLESS_TIMES times (a garbage collection may take that once), is frozen at
# once after every reply from then on: no bot gets more than that of CPU off move unseen.
FREEZE_DELAY_S = 0.005
RESTLESS_CPU_S = 0.001
RESTLESS_TIMES = 3
# How many times a freeze by signals looks again for processes started while it was stopping the others.
SIGNAL_ROUNDS = 8

V2 = "cgroup v2 cgroup.freeze"
V1 = "cgroup v1 freezer"
SIGNALS = "SIGSTOP/SIGCONT"


class Freezer(ABC):
    """Stops and resumes every process of one bot."""

    how: str

    @abstractmethod
    def freeze(self) -> None:
        """Stop the bot's processes (they take no CPU until thawed)."""

    @abstractmethod
    def thaw(self) -> None:
        """Let them run again."""

    def close(self) -> None:
        """Thaw the bot for good and let go of what freezing it held."""
        with contextlib.suppress(OSError):
            self.thaw()


class _CgroupFreezer(Freezer):
    """The bot's cgroup freezer file, kept open: a freeze or a thaw is one ``write``."""

    def __init__(self, path: Path, frozen: bytes, thawed: bytes, how: str) -> None:
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        self._frozen = frozen
        self._thawed = thawed
        self.how = how

    def freeze(self) -> None:
        if self._fd is not None:
            os.write(self._fd, self._frozen)

    def thaw(self) -> None:
        if self._fd is not None:
            os.write(self._fd, self._thawed)

    def close(self) -> None:
        super().close()
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class _SignalFreezer(Freezer):
    """SIGSTOP to each of the bot's processes, SIGCONT to those it stopped.

    The processes are those of the bot's cgroup (``procs``: a ``cgroup.procs``
    file) or else those descended from ``root`` (the process the referee
    started). A process started while the others are being stopped is found
    by looking again, until a look finds none new.
    """

    how = SIGNALS

    def __init__(self, root: int, procs: Path | None) -> None:
        self._root = root
        self._procs = procs
        self._stopped: list[int] = []

    def freeze(self) -> None:
        stopped = set(self._stopped)
        for _ in range(SIGNAL_ROUNDS):
            found = [pid for pid in self._processes() if pid not in stopped]
            if not found:
                break
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
                self._stopped.append(pid)

    def thaw(self) -> None:
        stopped, self._stopped = self._stopped, []
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGCONT)

    def _processes(self) -> list[int]:
        if self._procs is not None:
            with contextlib.suppress(OSError, ValueError):
                return [int(pid) for pid in self._procs.read_text().split()]
        return process_tree(self._root)


def process_tree(root: int) -> list[int]:
    """``root`` and every process descended from it, parents first (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    tree, index = [root], 0
    while index < len(tree):
        tree.extend(children.get(tree[index], ()))
        index += 1
    return tree


def freezer_for(root: int, cgroup: BotCgroup | None) -> Freezer:
    """The best way to freeze the bot whose first process is ``root`` (in ``cgroup``, if it has one)."""
    path = cgroup.freezer_file() if cgroup is not None else None
    if path is not None and path.name == "cgroup.freeze":
        return _CgroupFreezer(path, b"1", b"0", V2)
    if path is not None:
        return _CgroupFreezer(path, b"FROZEN", b"THAWED", V1)
    procs = Path(cgroup.procs_files[0]) if cgroup is not None and cgroup.procs_files else None
    return _SignalFreezer(root, procs)


def description() -> str:
    """How bots are frozen off move on this machine, in a few words (for the start of a run)."""
    kind = cgroup_support().freezer()
    return {"v2": V2, "freezer": V1}.get(kind or "", f"{SIGNALS} (no cgroup freezer here)")


class Timers(Protocol):
    """What :class:`OffMove` asks of an event loop: an :class:`asyncio.AbstractEventLoop` is one, and so is
    :class:`referee.play.fakes.FakeClock`, on which tests/test_freezer.py times the policy."""

    def call_soon(self, callback: Callable[..., None], *args: Any) -> Timer: ...

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> Timer: ...


class OffMove:
    """Keeps one bot frozen except while it is on move (and for a breath now and then); see the module's doc.

    ``cpu_us`` reads the CPU time the bot's processes used so far (its
    cgroup's), or is None where there is none to read.
    """

    def __init__(self, freezer: Freezer, loop: Timers, cpu_us: Callable[[], int | None] | None) -> None:
        self.freezer = freezer
        self._loop = loop
        self._cpu_us = cpu_us
        self._frozen = False
        self._on_move = False
        self._released = False
        self.restless = cpu_us is None  # frozen the moment its reply is read (nothing tells how it behaves)
        self._busy_times = 0  # times it used more than RESTLESS_CPU_S before its freeze
        self._marked: int | None = None  # its CPU time as its freeze was scheduled
        self._timer: Timer | None = None  # what comes next: the freeze, or a breath (its start or end)

    def on_move(self) -> None:
        """Thaw the bot for a decision: one write, if it is frozen."""
        self._on_move = True
        self._marked = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._frozen:
            self._frozen = False
            self._act(self.freezer.thaw)

    def off_move(self, watched: bool = True) -> None:
        """The bot's decision is over (its reply is read, or it failed): freeze it soon, or now if it is restless.

        ``watched``: whether the CPU it uses meanwhile counts (not after its
        handshake, where it may still be setting itself up).
        """
        self._on_move = False
        if self._frozen or self._released or self._timer is not None:
            return
        if self.restless:
            self._freeze()
        elif watched:  # once the next request has gone out: this costs the decision nothing
            self._timer = self._loop.call_soon(self._mark)
        else:
            self._timer = self._loop.call_later(FREEZE_DELAY_S, self._freeze)

    def release(self) -> None:
        """Thaw the bot for good (before it is stopped)."""
        self._released = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._frozen = False
        self.freezer.close()

    def _mark(self) -> None:
        self._timer = None
        if not self._on_move and not self._released:
            self._marked = self._cpu_us() if self._cpu_us is not None else None
            self._timer = self._loop.call_later(FREEZE_DELAY_S, self._freeze)

    def _freeze(self) -> None:
        self._timer = None
        if self._on_move or self._released:
            return
        if self._marked is not None and self._cpu_us is not None:  # marked only where the CPU time is known
            used = (self._cpu_us() or 0) - self._marked
            self._marked = None
            if used > RESTLESS_CPU_S * 1e6:
                self._busy_times += 1
                self.restless = self._busy_times >= RESTLESS_TIMES
        self._frozen = True
        self._act(self.freezer.freeze)
        if not self._released:
            self._timer = self._loop.call_later(BREATH_INTERVAL_S, self._breathe)

    def _breathe(self) -> None:
        self._timer = None
        if self._frozen and not self._released:
            self._frozen = False
            self._act(self.freezer.thaw)
            self._timer = self._loop.call_later(BREATH_S, self._freeze)

    def _act(self, step: Callable[[], None]) -> None:
        """Freeze or thaw; a freezer that fails (its cgroup is gone: the bot ended) is let go."""
        try:
            step()
        except OSError:
            self.release()
