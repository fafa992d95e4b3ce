"""Each bot's cgroups: where the machine lets the referee make them, the limits written in, and the accounting.

Limits (:class:`~referee.play.sandbox.limits.ResourceLimits`) are enforced by
cgroups where the referee can create them (cgroup v2 with its ``memory`` and
``pids`` controllers, or the v1 ``memory``, ``pids`` and ``cpuacct``
hierarchies), otherwise by rlimits. Each started bot also gets a cgroup v2
folder of its own where the machine has one, even if it enforces nothing
there: it gives the bot's CPU time and CPU stall (:meth:`BotCgroup.usage`)
to the honest clock, and ``cgroup.kill`` to stop everything the bot started.

Each referee process keeps its bots' cgroups in a folder of its own,
``referee-NS-PID-START``, under its own cgroup in each hierarchy. A small
watcher process (:func:`start_watcher`) kills every bot cgroup of the
referee as soon as the referee ends, however it ends: so a sandbox caught
halfway through its start (before bubblewrap ties it to the referee) cannot
outlive it. What a referee killed by SIGKILL leaves is removed by the next.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import itertools
import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from referee.common.errors import RefereeError
from referee.play.sandbox.leftovers import referee_token, remove_leftovers
from referee.play.sandbox.limits import MIB, ResourceLimits
from referee.play.sandbox.view import within

CGROUP_WAIT_SECONDS = 2.0  # how long stopping a bot waits for its cgroup to empty before leaving it
# cgroup v1 keeps the peak of a bot's memory use, not a count of the times it met its limit; reclaim keeps the peak
# up to a page or so short of the limit (seen: 63.2 MiB of 64), so a peak this near the limit means it was reached.
MEMORY_REACHED_FRACTION = 0.97


class SandboxError(RefereeError):
    """The sandbox or a limit cannot be set up for a bot; the message says why and what to do."""


@dataclass(frozen=True)
class _Hierarchy:
    """One cgroup hierarchy where this referee makes its bots' cgroups: ``folder`` is its own, under its cgroup."""

    kind: str  # "v2", or the v1 controller: "memory", "pids", "cpuacct", "freezer"
    folder: Path


@dataclass(frozen=True)
class CgroupSupport:
    """What cgroups this machine lets the referee make, found once per process by :func:`cgroup_support`."""

    v2: _Hierarchy | None
    v2_controllers: frozenset[str]  # of "memory", "pids": usable in the bots' v2 cgroups
    v1: Mapping[str, _Hierarchy]  # controller -> hierarchy, for "memory", "pids", "cpuacct", "freezer"
    problems: tuple[str, ...]  # why some hierarchy could not be used

    def memory(self) -> str | None:
        return "v2" if "memory" in self.v2_controllers else ("memory" if "memory" in self.v1 else None)

    def pids(self) -> str | None:
        return "v2" if "pids" in self.v2_controllers else ("pids" if "pids" in self.v1 else None)

    def cpu(self) -> str | None:
        return "v2" if self.v2 is not None else ("cpuacct" if "cpuacct" in self.v1 else None)

    def pressure(self) -> bool:
        return self.v2 is not None and (self.v2.folder / "cpu.pressure").exists()

    def freezer(self) -> str | None:
        """Where bots are frozen: "v2" (``cgroup.freeze``), "freezer" (the v1 hierarchy), or None (nowhere)."""
        if self.v2 is not None and (self.v2.folder / "cgroup.freeze").exists():
            return "v2"
        return "freezer" if "freezer" in self.v1 else None


@functools.cache
def cgroup_support() -> CgroupSupport:
    """Find the cgroup hierarchies where this referee can make cgroups, make its folder in each, and clean up.

    Each referee process keeps its bots' cgroups in a folder of its own,
    ``referee-PID-START`` (its pid and start time), under its own cgroup in
    each hierarchy, removed when it exits. Folders left by a referee that
    is gone are removed here (:func:`remove_leftovers`).
    """
    own = _own_cgroups()
    problems: list[str] = []
    v2 = None
    v1: dict[str, _Hierarchy] = {}
    for mount_point, root, fstype, options in _cgroup_mounts():
        if fstype == "cgroup2":
            if v2 is None and "" in own:
                v2 = _make_referee_folder("v2", mount_point, root, own[""], problems)
            continue
        key = ",".join(sorted(set(options) & _V1_CONTROLLERS))
        controllers = sorted(({"memory", "pids", "cpuacct", "freezer"} & set(options)) - set(v1))
        if controllers and key in own:
            hierarchy = _make_referee_folder(",".join(controllers), mount_point, root, own[key], problems)
            for controller in controllers:
                if hierarchy is not None:
                    v1[controller] = _Hierarchy(controller, hierarchy.folder)
    if v2 is not None and not (v2.folder / "cpu.stat").exists():
        problems.append(f"cgroup v2 at {v2.folder.parent} has no cpu.stat (a kernel of 5.x or later has it)")
        v2 = None
    enabled: frozenset[str] = frozenset()
    if v2 is not None:
        enabled = _enable_v2_controllers(v2, problems)
    support = CgroupSupport(v2, enabled, v1, tuple(problems))
    atexit.register(_remove_own_folders, support)
    return support


# The v1 controllers a hierarchy may carry, to match /proc/self/cgroup's lines with the mounts.
_V1_CONTROLLERS = {
    "cpu",
    "cpuacct",
    "cpuset",
    "memory",
    "devices",
    "freezer",
    "net_cls",
    "blkio",
    "perf_event",
    "net_prio",
    "hugetlb",
    "pids",
    "rdma",
    "misc",
}


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup in each hierarchy, by its controllers ("" for v2, "memory", "cpu,cpuacct", ...)."""
    found = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            controllers = ",".join(sorted(name for name in controllers.split(",") if name in _V1_CONTROLLERS))
            found[controllers] = path
    return found


def _cgroup_mounts() -> list[tuple[str, str, str, list[str]]]:
    """(mount point, root in the hierarchy, fstype, options) of each cgroup mount, from /proc/self/mountinfo."""
    mounts = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            parts, tail = before.split(), after.split()
            if len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            options = tail[2].split(",") + parts[5].split(",")
            mounts.append((_unescape(parts[4]), _unescape(parts[3]), tail[0], options))
    return mounts


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match[1], 8)), text)


def _make_referee_folder(kind: str, mount_point: str, root: str, own: str, problems: list[str]) -> _Hierarchy | None:
    label = "cgroup v2" if kind == "v2" else f"cgroup v1 {kind}"
    if not within(own, root):
        problems.append(f"{label}: this process's cgroup {own} is outside the mount at {mount_point}")
        return None
    own_folder = Path(mount_point) / os.path.relpath(own, root)
    folder = own_folder / f"referee-{referee_token()}"
    try:
        remove_leftovers(own_folder, _remove_cgroup_tree)
        folder.mkdir(exist_ok=True)
    except OSError as error:
        problems.append(f"{label}: cannot create {folder}: {error.strerror or error}")
        return None
    return _Hierarchy(kind, folder)


def _enable_v2_controllers(v2: _Hierarchy, problems: list[str]) -> frozenset[str]:
    """Enable the memory and pids controllers for the bots' v2 cgroups, where this cgroup may delegate them."""
    wanted = ("memory", "pids")
    available = set(_read(v2.folder / "cgroup.controllers").split())
    missing = [name for name in wanted if name not in available]
    if missing:  # ask the referee's own cgroup to pass them down (allowed at the root, or where it has no processes)
        with contextlib.suppress(OSError):
            (v2.folder.parent / "cgroup.subtree_control").write_text(" ".join(f"+{name}" for name in missing))
        available = set(_read(v2.folder / "cgroup.controllers").split())
    enabled = set()
    for name in wanted:
        if name not in available:
            continue
        try:
            (v2.folder / "cgroup.subtree_control").write_text(f"+{name}")
        except OSError as error:
            problems.append(f"cgroup v2: cannot enable the {name} controller in {v2.folder}: {error.strerror}")
        else:
            enabled.add(name)
    return frozenset(enabled)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _remove_cgroup_tree(folder: Path) -> bool:
    """Kill every process in a cgroup and its children, and remove them all; True when it is gone. Never raises."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):  # bot-N: a bot cannot make cgroups, so no deeper
                _remove_cgroup_tree(Path(entry.path))
    _kill_cgroup(folder)
    deadline = time.monotonic() + CGROUP_WAIT_SECONDS
    while True:
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            _kill_cgroup(folder)
            time.sleep(0.01)


def _kill_cgroup(folder: Path) -> None:
    _thaw_v1(folder)  # a task frozen by the v1 freezer does not die until it thaws
    try:
        (folder / "cgroup.kill").write_text("1")
        return
    except OSError:
        pass  # cgroup v1, or a kernel before 5.14: kill its processes one by one
    for pid in _read(folder / "cgroup.procs").split():
        with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def _thaw_v1(folder: Path) -> None:
    with contextlib.suppress(OSError):
        (folder / "freezer.state").write_text("THAWED")


def _remove_own_folders(support: CgroupSupport) -> None:
    """At exit: kill what is left in this referee's cgroups (nothing, after every bot was stopped) and remove them."""
    hierarchies = [support.v2, *support.v1.values()]
    for hierarchy in hierarchies:
        if hierarchy is not None:
            with contextlib.suppress(OSError):
                _remove_cgroup_tree(hierarchy.folder)


_bot_numbers = itertools.count(1)


class BotCgroup:
    """One bot's cgroups (a v2 folder, and v1 folders for the limits v1 enforces), with its limits written in."""

    def __init__(self, support: CgroupSupport, limits: ResourceLimits) -> None:
        self.support = support
        self.limits = limits
        name = f"bot-{next(_bot_numbers)}"
        self.folders: dict[str, Path] = {}  # "v2" or a v1 controller -> the bot's folder there
        self._cpu_fd: int | None = None
        self._pressure_fd: int | None = None
        try:
            self._make(name)
        except OSError as error:
            self.remove()
            raise SandboxError(f"cannot set up the bot's cgroup: {error}") from None

    def _make(self, name: str) -> None:
        support, limits = self.support, self.limits
        wanted = set()
        if support.v2 is not None:
            wanted.add("v2")
        for kind in (support.memory(), support.pids()):
            if kind is not None:
                wanted.add(kind)
        if support.v2 is None and support.cpu() is not None:
            wanted.add("cpuacct")
        if support.freezer() == "freezer":
            wanted.add("freezer")
        made: dict[Path, Path] = {}  # co-mounted v1 controllers share one folder
        for kind in sorted(wanted):
            hierarchy = support.v2 if kind == "v2" else support.v1[kind]
            assert hierarchy is not None, "v2 is wanted only where there is one"
            if hierarchy.folder not in made:
                made[hierarchy.folder] = hierarchy.folder / name
                made[hierarchy.folder].mkdir()
            self.folders[kind] = made[hierarchy.folder]
        memory = limits.memory_mb * MIB if limits.memory_mb is not None else None
        if memory is not None and support.memory() == "v2":
            _write(self.folders["v2"] / "memory.max", memory)
            _write(self.folders["v2"] / "memory.swap.max", 0, optional=True)
            _write(self.folders["v2"] / "memory.oom.group", 1, optional=True)  # one process over: the whole bot goes
        elif memory is not None and support.memory() == "memory":
            _write(self.folders["memory"] / "memory.limit_in_bytes", memory)
            _write(self.folders["memory"] / "memory.memsw.limit_in_bytes", memory, optional=True)  # no swapping out
        if limits.processes is not None and support.pids() is not None:
            _write(self.folders["v2" if support.pids() == "v2" else "pids"] / "pids.max", limits.processes)
        if "v2" in self.folders:
            self._cpu_fd = os.open(self.folders["v2"] / "cpu.stat", os.O_RDONLY | os.O_CLOEXEC)
            if support.pressure():
                self._pressure_fd = os.open(self.folders["v2"] / "cpu.pressure", os.O_RDONLY | os.O_CLOEXEC)
        elif "cpuacct" in self.folders:
            self._cpu_fd = os.open(self.folders["cpuacct"] / "cpuacct.usage", os.O_RDONLY | os.O_CLOEXEC)

    def freezer_file(self) -> Path | None:
        """The file that freezes the bot's processes (``cgroup.freeze`` or v1 ``freezer.state``), or None."""
        kind = self.support.freezer()
        if kind == "v2" and "v2" in self.folders:
            return self.folders["v2"] / "cgroup.freeze"
        return self.folders["freezer"] / "freezer.state" if "freezer" in self.folders else None

    @property
    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the bot's first process writes its pid into."""
        return [str(folder / "cgroup.procs") for folder in dict.fromkeys(self.folders.values())]

    # ----- reading: the hot path ----------------------------------------------------------

    def usage(self) -> tuple[int, int] | None:
        """CPU time the bot's processes used, and time they were all stalled waiting for a CPU: µs, running totals.

        Read with ``pread`` on files kept open: a few microseconds. The stall
        is 0 where the machine has no cgroup v2 ``cpu.pressure``.
        """
        cpu = self.cpu_us()
        if cpu is None:
            return None
        stall = 0
        if self._pressure_fd is not None:
            # "some avg10=... total=N\nfull avg10=... total=N\n": the last number is the full total.
            data = os.pread(self._pressure_fd, 256, 0)
            stall = int(data[data.rindex(b"=") + 1 :])
        return cpu, stall

    def cpu_us(self) -> int | None:
        if self._cpu_fd is None:
            return None
        data = os.pread(self._cpu_fd, 256, 0)
        if "v2" in self.folders:  # "usage_usec N\n..."
            return int(data[11 : data.index(b"\n")])
        return int(data) // 1000  # cpuacct.usage: nanoseconds

    # ----- what the kernel enforced ---------------------------------------------------------

    def limits_hit(self) -> list[tuple[str, str]]:
        """The limits the kernel enforced on the bot so far: (limit key, what happened) for each."""
        hits = []
        kind = self.support.memory()
        if kind is not None and self.limits.memory_mb is not None:
            if kind == "v2":
                kills = _counter(self.folders["v2"] / "memory.events", "oom_kill")
            else:
                kills = _counter(self.folders["memory"] / "memory.oom_control", "oom_kill")
            if kills:
                text = (
                    f"memory limit of {self.limits.memory_mb} MB exceeded (the kernel killed {kills} of its processes)"
                )
                hits.append(("memory_mb", text))
            elif self._memory_reached(kind):
                # At its limit, the kernel takes back the bot's file pages (its program's code among them) before it
                # kills: a bot can spend its move's CPU time there, and then times out rather than crashing.
                text = f"memory limit of {self.limits.memory_mb} MB reached (the kernel reclaiming its memory there)"
                hits.append(("memory_mb", text))
        kind = self.support.pids()
        if kind is not None and self.limits.processes is not None:
            refused = _counter(self.folders[kind] / "pids.events", "max")
            if refused:
                starts = "start" if refused == 1 else "starts"
                text = f"process limit of {self.limits.processes} reached ({refused} process {starts} refused)"
                hits.append(("processes", text))
        return hits

    def _memory_reached(self, kind: str) -> bool:
        """Whether the bot's memory use reached its limit (v2 counts the times; v1 keeps the peak, a page or so short)."""
        assert self.limits.memory_mb is not None
        if kind == "v2":
            return _counter(self.folders["v2"] / "memory.events", "max") > 0
        peak = _read(self.folders["memory"] / "memory.max_usage_in_bytes").strip()
        return peak.isdigit() and int(peak) >= self.limits.memory_mb * MIB * MEMORY_REACHED_FRACTION

    # ----- stopping ------------------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL every process of the bot (``cgroup.kill`` on v2; one by one on v1), thawed first if frozen."""
        if "freezer" in self.folders:
            _thaw_v1(self.folders["freezer"])
        for folder in [self.folders["v2"]] if "v2" in self.folders else set(self.folders.values()):
            _kill_cgroup(folder)

    def is_empty(self) -> bool:
        if "v2" in self.folders:
            return "populated 0" in _read(self.folders["v2"] / "cgroup.events")
        return all(not _read(folder / "cgroup.procs").strip() for folder in self.folders.values())

    def remove(self) -> bool:
        """Remove the bot's cgroup folders (once it has no process left); True when all are gone."""
        self.close()
        for folder in set(self.folders.values()):
            with contextlib.suppress(FileNotFoundError):
                try:
                    folder.rmdir()
                except OSError:
                    if folder.exists():
                        continue
            self.folders = {kind: path for kind, path in self.folders.items() if path != folder}
        return not self.folders

    def close(self) -> None:
        for fd in (self._cpu_fd, self._pressure_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._cpu_fd = self._pressure_fd = None


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


def _counter(path: Path, name: str) -> int:
    """A named counter of a cgroup file of "name value" lines (0 when absent)."""
    for line in _read(path).splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


async def remove_when_empty(cgroup: BotCgroup) -> list[tuple[str, str]]:
    """Wait for a cgroup to empty (killing again what a fork bomb started meanwhile), then remove it; return the
    limits the kernel enforced there (:meth:`BotCgroup.limits_hit`, read before it goes).

    Gives up after :data:`CGROUP_WAIT_SECONDS`: what is left goes when the referee exits, or at the next start.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CGROUP_WAIT_SECONDS
    while not cgroup.is_empty() and loop.time() < deadline:
        cgroup.kill()
        await asyncio.sleep(0.005)
    hits = cgroup.limits_hit()
    while not cgroup.remove() and loop.time() < deadline:
        await asyncio.sleep(0.005)  # an emptied cgroup may stay busy a moment
    return hits


def make_cgroup(limits: ResourceLimits) -> BotCgroup | None:
    """A new bot's cgroups with ``limits`` written in, or None where the machine lets the referee make none."""
    support = cgroup_support()
    if support.v2 is None and not support.v1:
        return None
    start_watcher(support)
    return BotCgroup(support, limits)


# Waits for the referee to end (its stdin, a pipe only the referee holds, reaches its end), then thaws (v1
# freezer) and kills every process in the referee's bot cgroups, again until they are empty (at most 5 s): what was starting
# when the referee died (a wrapper, or bubblewrap setting up) is in its bot's cgroup from its first moment.
_WATCHER_SCRIPT = r"""
read -r _ended
round=0
while [ "$round" -lt 50 ]; do
    left=
    for folder in "$@"; do
        for bot in "$folder"/bot-*; do
            [ -d "$bot" ] || continue
            procs=$(cat "$bot/cgroup.procs" 2>/dev/null)
            [ -n "$procs" ] || continue
            left=1
            # A task frozen by the v1 freezer does not die until it thaws.
            [ -e "$bot/freezer.state" ] && echo THAWED > "$bot/freezer.state" 2>/dev/null
            if [ -e "$bot/cgroup.kill" ]; then
                echo 1 > "$bot/cgroup.kill" 2>/dev/null
            else
                for pid in $procs; do kill -9 "$pid" 2>/dev/null; done
            fi
        done
    done
    [ -n "$left" ] || exit 0
    sleep 0.1
    round=$((round + 1))
done
"""


_watchers: dict[int, subprocess.Popen[bytes] | None] = {}  # this process's pid -> its watcher


def start_watcher(support: CgroupSupport) -> subprocess.Popen[bytes] | None:
    """Start, once, the process that kills this referee's bots' cgroups when the referee ends; None if it cannot."""
    if os.getpid() in _watchers:
        return _watchers[os.getpid()]
    folders = sorted({str(hierarchy.folder) for hierarchy in [support.v2, *support.v1.values()] if hierarchy})
    try:
        # Its own session, so that Ctrl-C at the terminal leaves it to do its work; the pipe's other end is
        # this process's alone (close-on-exec), so it ends exactly when this process does.
        watcher = subprocess.Popen(
            ["sh", "-c", _WATCHER_SCRIPT, "referee-watcher", *folders],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        watcher = None
    _watchers[os.getpid()] = watcher
    return watcher
