"""Bot processes: start a bot's program in its sandbox, keep its output, tell how it ended, stop it.

This module knows nothing of games or of the protocol: ``referee.play.session``
talks to a bot over the channel this module's process listens on. How a bot
is contained and limited (bubblewrap, cgroups, rlimits) is
``referee.play.sandbox``; docs/security.md says what that gives.

A bot is a command line (started here) or the address of a bot server
already running (outside any sandbox). The referee chooses where a started
bot listens: a Unix socket by default (in the sandbox's own socket folder,
``/run/referee``, which the referee reaches through the sandbox's root; or,
without the sandbox, in a private host folder), or TCP on 127.0.0.1 (which
needs the host's network), and passes the address in ``REFEREE_BOT_ADDRESS``.

No bot, nor anything it starts, outlives its stop or the referee: its
launcher is tied to the referee by a parent-death signal, checked before
anything runs (``referee.play.sandbox.launcher``); in the sandbox the bot is a
PID namespace tied to the referee (``--die-with-parent``), and each bot's
cgroup, where the machine has one, is killed whole (``cgroup.kill``) when it
stops, and by the referee's watcher when the referee ends. Without the
sandbox the bot runs in a process group of its own, killed with it. None of
this needs ``preexec_fn``, which is unsafe with grpcio.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, get_args

from referee.common.errors import RefereeError
from referee.common.printable import printable
from referee.play import sandbox
from referee.play.freezer import Freezer, freezer_for
from referee.play.sandbox import DEFAULT_LIMITS, SOCKET_NAME, ResourceLimits
from referee.protocol.faults import BotFault, FaultKind

__all__ = [
    "ADDRESS_VARIABLE",
    "NETWORKS",
    "TRANSPORTS",
    "BotProcess",
    "BotSpec",
    "BotSpecError",
    "Network",
    "ResourceLimits",
    "Transport",
]

ADDRESS_VARIABLE = "REFEREE_BOT_ADDRESS"
DEFAULT_LOG_CAP_BYTES = DEFAULT_LIMITS.output_bytes
STOP_GRACE_SECONDS = 1.0
# The choices of a started bot, which the league file's schema offers (referee.leaguefile.config.schema):
Transport = Literal["unix", "tcp"]  # where it listens: a Unix socket, or TCP on 127.0.0.1
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)
Network = Literal["host", "none"]  # the network it has in its sandbox: the host's, or none at all
NETWORKS: tuple[Network, ...] = get_args(Network)
# How long bubblewrap may take to report its sandbox's first process (it does so before setting anything up).
SANDBOX_REPORT_SECONDS = 10.0
# The CPU time watcher wakes at least this far apart (the soonest the limit could be reached, otherwise).
CPU_WATCH_MIN_SECONDS = 0.02

# How a bot is contained, as BotProcess.containment reports it.
SANDBOXED = "bubblewrap"
PROCESS_GROUP = "process group"


class BotSpecError(RefereeError, ValueError):
    """A bot cannot be set up as given: the message names the bot, the value and what is allowed."""


@dataclass(frozen=True)
class BotSpec:
    """How to reach one bot: a command to start (in its sandbox), or the address of a running server.

    ``folders``: what the bot sees as its own, read-only; ``None`` (a
    command the organiser wrote) means its ``cwd`` and the folders of the
    files its command names (see :func:`referee.play.sandbox.plan_sandbox`).
    ``shared``: folders it may also write; a process that plays ``lane``
    ``k > 0`` of a league sees there its lane's copies, ``lane_copies[k - 1]``
    (:mod:`referee.leaguefile.lanes`). ``hidden``: paths it must never see, even inside
    those (the league's output, other bots' folders); ``hidden_whose`` says, of those
    a league hides, whose each is (``heuristic's own files``). ``network`` (``none``
    or ``host``) applies in the sandbox; without it a bot has the host's
    network. ``freeze``: the bot's processes are frozen while it is not on
    move (:mod:`referee.play.freezer`).
    """

    name: str
    command: tuple[str, ...] = ()
    address: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = DEFAULT_LIMITS
    transport: Transport = "unix"  # where a started bot listens
    network: Network = "none"
    sandbox: bool = True
    folders: tuple[str, ...] | None = None
    shared: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    hidden_whose: Mapping[str, str] = field(default_factory=dict)  # a hidden path -> whose it is, for messages
    freeze: bool = True
    lane_copies: tuple[tuple[str, ...], ...] = ()  # for lanes 1, 2, ...: the folders shown at `shared` instead
    lane: int = 0

    def __post_init__(self) -> None:
        if self.network not in NETWORKS:
            raise BotSpecError(f"{self.name}: network {self.network!r} is not one of {', '.join(NETWORKS)}")
        if self.transport not in TRANSPORTS:
            raise BotSpecError(f"{self.name}: transport {self.transport!r} is not one of {', '.join(TRANSPORTS)}")
        if self.sandbox and self.command and self.transport == "tcp" and self.network != "host":
            raise BotSpecError(
                f"{self.name}: transport 'tcp' needs network 'host': a bot in its sandbox has no network "
                "of its own to listen on"
            )

    @classmethod
    def from_command(cls, command: str | Sequence[str], name: str | None = None, **kwargs: Any) -> BotSpec:
        try:
            argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
        except ValueError as error:  # shlex: an unclosed quotation, or an escape at the end
            raise BotSpecError(f"bot command {command!r} cannot be split into words: {error}") from None
        if not argv:
            raise BotSpecError(
                f"{name + ': ' if name else ''}a bot command cannot be empty; give the program and its arguments, "
                "e.g. 'python bot.py'"
            )
        return cls(name=name or Path(argv[-1]).stem, command=argv, **kwargs)

    def describe(self) -> str:
        return self.address or shlex.join(self.command)

    def shared_sources(self) -> tuple[str, ...]:
        """What the sandbox shows at each of ``shared``: the folders themselves, or this lane's copies of them."""
        if self.lane == 0 or not self.shared:
            return self.shared
        if self.lane > len(self.lane_copies):
            raise BotSpecError(
                f"{self.name}: lane {self.lane} has no copy of the shared folders (there are copies "
                f"for lanes 1 to {len(self.lane_copies)})"
            )
        return self.lane_copies[self.lane - 1]


class BotProcess:
    """One bot's process (started here), or the address of a bot server already running."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, log_cap: int | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        # The log keeps the first output_mb of the bot's output (a caller may choose another cap).
        self.log_cap = log_cap if log_cap is not None else spec.limits.output_bytes
        self.process: asyncio.subprocess.Process | None = None
        self.address = spec.address  # where the referee connects
        self.bot_address = spec.address  # where the bot was told to listen (REFEREE_BOT_ADDRESS), as it sees it
        self.containment: str | None = None  # SANDBOXED or PROCESS_GROUP, once started
        self.cgroup: sandbox.BotCgroup | None = None
        self.freezer: Freezer | None = None  # with spec.freeze: how the session freezes it off move
        self.enforced_by: dict[str, str] = {}  # limit key -> how it is enforced for this bot
        self._private_dir: str | None = None  # an unsandboxed bot's socket folder, on the host
        self._log_task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._limit_hit: str | None = None  # what the referee stopped the bot for
        self._removed_cgroup_hits: list[str] = []  # what its cgroup said when it was removed
        self.output_lines = 0  # lines of output received so far (fault records point into the log with it)

    # ----- start -------------------------------------------------------------------

    async def launch(self) -> None:
        """Start the bot's program (nothing to do for a bot server already running).

        Raises :class:`BotFault` (``startup``) when it cannot be started, after
        cleaning up what was made.
        """
        if not self.spec.command:
            return
        try:
            await self._launch()
        except BaseException:
            await self.stop()
            raise

    async def _launch(self) -> None:
        spec = self.spec
        program = spec.command[0]
        if shutil.which(program, path=spec.env.get("PATH", os.environ.get("PATH"))) is None and not (
            spec.cwd and os.access(os.path.join(spec.cwd, program), os.X_OK)
        ):
            raise BotFault(
                FaultKind.STARTUP, f"cannot start {spec.describe()!r}: no such program {program!r}", spec.name
            )
        bwrap = sandbox.bubblewrap() if spec.sandbox else None
        if bwrap is not None and bwrap.problem:
            raise BotFault(
                FaultKind.STARTUP, f"cannot start {spec.describe()!r} in a sandbox: {bwrap.problem}", spec.name
            )
        self.enforced_by = sandbox.enforcement(sandboxed=spec.sandbox)
        try:
            self.cgroup = sandbox.make_cgroup(spec.limits)
        except sandbox.SandboxError as error:
            raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: {error}", spec.name) from None

        inside = self._choose_address()
        limits = sandbox.rlimit_arguments(spec.limits, self.enforced_by, sandboxed=spec.sandbox)
        passed: list[int] = []  # for bubblewrap: its system call filter, its options, where it reports
        report = None
        try:
            if bwrap is not None:
                self.containment = SANDBOXED
                try:
                    user = sandbox.bot_user(spec.name)
                except sandbox.SandboxError as error:
                    raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: {error}", spec.name) from None
                shared_sources = spec.shared_sources()  # this lane's copies of the shared folders, or the folders
                plan = sandbox.plan_sandbox(
                    spec.command,
                    spec.cwd,
                    own_folders=spec.folders,
                    shared=spec.shared,
                    shared_sources=shared_sources,
                    hidden=self._hidden_paths(),
                    network_host=spec.network == "host",
                    limits=spec.limits,
                    search_path=spec.env.get("PATH"),
                    user=user,
                )
                # Shared folders are opened to the bots' group below; everything else must be readable by any user.
                shared = {*spec.shared, *shared_sources}
                closed = None
                if user is not None:
                    closed = sandbox.closed_to_others(path for path in plan.read_only if path not in shared)
                if closed is not None:
                    raise BotFault(
                        FaultKind.STARTUP,
                        (
                            f"cannot start {spec.describe()!r}: it runs as a user of its own (the referee runs as root), "
                            f"which cannot read {closed} (mode {stat.S_IMODE(os.stat(closed).st_mode):o}): make what the "
                            f"bot needs readable by all (chmod o+rX), or give it a folder of its own that is"
                        ),
                        spec.name,
                    )
                try:
                    if user is not None:
                        for folder in shared_sources:
                            sandbox.share_folder(folder)
                    passed.append(sandbox.data_fd(sandbox.filter_program()))
                    passed.append(sandbox.data_fd())
                except (OSError, sandbox.FilterUnavailable) as error:
                    raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: {error}", spec.name) from None
                report, reporting = os.pipe()
                passed.append(reporting)
                wrap = sandbox.sandbox_argv(plan, bwrap, seccomp_fd=passed[0], info_fd=reporting)
                inner = [*sandbox.options_through(wrap, passed[1]), *spec.command]
                env = sandbox.sandbox_environment({**spec.env, ADDRESS_VARIABLE: inside})
                cwd = None
            else:
                self.containment = PROCESS_GROUP
                inner = sandbox.unsandboxed_argv(spec.command)
                env = {**os.environ, **spec.env, ADDRESS_VARIABLE: inside}
                env.pop("GRPC_ENABLE_FORK_SUPPORT", None)
                cwd = spec.cwd
            argv = sandbox.launch_argv(self.cgroup.procs_files if self.cgroup else [], limits, inner)
            await self._spawn(argv, cwd, env, passed)
        except BaseException:
            if report is not None:
                os.close(report)
            raise
        finally:
            for fd in passed:
                os.close(fd)
        if report is not None:
            child = await self._sandbox_pid(report)
            if spec.transport == "unix":
                self.address = sandbox.sandbox_address(child)

    async def _spawn(self, argv: list[str], cwd: str | None, env: dict[str, str], passed: list[int]) -> None:
        spec = self.spec
        log = open(self.log_path, "wb", buffering=0) if self.log_path else None  # noqa: SIM115 - closed by the log task
        creating = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=passed,
            )
        )
        try:
            # Shielded: interrupted halfway (Ctrl-C), asyncio would leave a process it no longer tracks;
            # once made, the process is stopped like any other (launch's caller stops it).
            try:
                self.process = await asyncio.shield(creating)
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    self.process = await creating
                if log:
                    log.close()
                raise
        except OSError as error:
            if log:
                log.close()
            raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: {error}", spec.name) from None
        assert self.process.stdout is not None  # started with its output to a pipe
        self._log_task = asyncio.create_task(_drain_output(self.process.stdout, log, self.log_cap, self))
        if spec.freeze:
            try:
                self.freezer = freezer_for(self.process.pid, self.cgroup)
            except OSError as error:
                raise BotFault(
                    FaultKind.STARTUP,
                    f"cannot start {spec.describe()!r}: cannot freeze it off move "
                    f"({error.strerror or error}); freeze: false in the league file turns freezing off",
                    spec.name,
                ) from None
        if spec.limits.cpu_seconds is not None and self.cgroup is not None and self.cgroup.cpu_us() is not None:
            self._watch_task = asyncio.create_task(self._watch_cpu_time(spec.limits.cpu_seconds))

    def _choose_address(self) -> str:
        """Choose where the bot listens; set :attr:`address` (the referee's side, for a sandboxed bot's socket once
        its sandbox is made) and return the bot's side."""
        if self.spec.transport == "tcp":
            self.address = self.bot_address = f"127.0.0.1:{_free_port()}"
            return self.address
        if self.spec.sandbox:
            # The socket lives in the sandbox's own /run/referee; the referee reaches it once the sandbox is made.
            self.bot_address = sandbox.ADDRESS_INSIDE
            return self.bot_address
        self._private_dir = sandbox.make_socket_dir()
        self.address = self.bot_address = f"unix:{self._private_dir}/{SOCKET_NAME}"
        return self.address

    async def _sandbox_pid(self, report: int) -> int:
        """The pid of the sandbox's first process, as bubblewrap reports it on ``report`` (which this closes)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(report, "rb", buffering=0)
        )
        try:
            async with asyncio.timeout(SANDBOX_REPORT_SECONDS):
                return await _child_pid(reader)
        except (TimeoutError, ValueError, KeyError, TypeError):
            pass
        finally:
            transport.close()
        await self.wait_exit(STOP_GRACE_SECONDS)
        raise BotFault(
            FaultKind.STARTUP, f"its sandbox did not start: {self.exit_detail()}{self.log_hint()}", self.spec.name
        )

    def accepts_connections(self) -> bool:
        """Whether something accepts connections at the bot's address, whatever it speaks there."""
        address = self.address
        try:
            if address is None:
                return False
            if address.startswith("unix:"):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    probe.settimeout(1.0)
                    probe.connect(address.removeprefix("unix:"))
            else:
                host, port = address.rsplit(":", 1)
                socket.create_connection((host, int(port)), timeout=1.0).close()
        except (OSError, ValueError):
            return False
        return True

    def _hidden_paths(self) -> list[str]:
        """What the sandbox masks: the spec's hidden paths and the folder of the bots' logs."""
        hidden = list(self.spec.hidden)
        if self.log_path is not None:
            hidden.append(str(Path(self.log_path).resolve().parent))
        return hidden

    async def _watch_cpu_time(self, limit_seconds: int) -> None:
        """Stop the bot when its processes together have used ``limit_seconds`` of CPU time (its cgroup's count).

        It sleeps for the soonest the limit could be reached (what is left,
        shared among every core), so it wakes rarely and overshoots by at most
        a few hundredths of a second per core.
        """
        limit_us = limit_seconds * 1_000_000
        cores = os.cpu_count() or 1
        while self.cgroup is not None and not self.has_exited():
            used = self.cgroup.cpu_us()
            if used is None:
                return
            if used >= limit_us:
                self._limit_hit = (
                    f"CPU time limit of {limit_seconds} s exceeded (its processes used {used / 1e6:.2f} s)"
                )
                self._kill()
                return
            await asyncio.sleep(max(CPU_WATCH_MIN_SECONDS, (limit_us - used) / 1e6 / cores))

    # ----- measuring ---------------------------------------------------------------

    def usage(self) -> tuple[int, int] | None:
        """The CPU time the bot's processes used and the time they were all stalled waiting for a CPU, in µs.

        Both are running totals (read twice and subtract), from the bot's
        cgroup with two ``pread`` calls; ``None`` where the machine gives the
        bot no cgroup (see :func:`referee.play.sandbox.clock_description`).
        """
        return self.cgroup.usage() if self.cgroup is not None else None

    # ----- how it ended --------------------------------------------------------------

    def has_exited(self) -> bool:
        return self.process is not None and self.process.returncode is not None

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the process to end; return whether it has."""
        if self.process is None:
            return False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.process.wait()
        return self.has_exited()

    def exit_detail(self, cause: str = ": %s") -> str:
        """How the process ended, with the limit it hit (put in ``cause``), or the limits that may have ended it.

        For example ``killed by signal SIGKILL: CPU time limit of 2 s
        exceeded (its processes used 2.01 s)``, ``exit code 1: memory limit
        of 64 MB exceeded (the kernel killed 1 of its processes)`` or ``exit
        code 1 (open-file limit 32)``.
        """
        returncode = self.process.returncode if self.process is not None else None
        return f"{_exit_text(returncode)}{self._limits_note(returncode, cause)}"

    def killed_by_signal(self) -> bool:
        """Whether the process ended by a signal (rather than with an exit code)."""
        return self.process is not None and _signal_of(self.process.returncode) is not None

    def log_hint(self) -> str:
        """`` (its output is in PATH)``, to end a message about this bot; empty without a log. When its last output
        names a path the league hides from it, the hint says so, and whose the path is: a bot that reads another
        bot's file fails with a bare "permission denied" or an empty file, and its author cannot see why."""
        return output_hint(self.log_path) + hidden_path_note(self.log_path, self.spec.hidden_whose)

    def limits_hit(self) -> list[str]:
        """The limits the bot hit so far, in words: what the referee stopped it for, and what the kernel enforced."""
        hits = [self._limit_hit] if self._limit_hit else []
        if self.cgroup is not None:
            return hits + [text for _, text in self.cgroup.limits_hit()]
        return hits + self._removed_cgroup_hits

    def _limits_note(self, returncode: int | None, cause: str = ": %s") -> str:
        """The limits a bot hit (put in ``cause``); or else the rlimits that may have ended it, when set for this bot.

        A cgroup says for sure which limit it enforced, and SIGXCPU names the
        CPU time rlimit; an exit code cannot tell whether an rlimit was hit
        (MemoryError, "Too many open files"), so the rlimits the league set
        for this bot are listed.
        """
        hits = self.limits_hit()
        limits = self.spec.limits
        if not hits and limits.cpu_seconds is not None and _signal_of(returncode) == signal.SIGXCPU:
            hits = [f"CPU time limit of {limits.cpu_seconds} s exceeded"]
        if hits:
            return cause % "; ".join(hits)
        by_rlimit = [key for key in limits.changed() if self.enforced_by.get(key) == sandbox.RLIMIT]
        described = limits.describe(by_rlimit)
        return f" ({described})" if described else ""

    # ----- stop -------------------------------------------------------------------

    def _kill(self) -> None:
        """SIGKILL the bot and everything it started: its process group, its sandbox, its cgroup."""
        sandbox.kill_launched(self.process, self.cgroup)

    async def stop(self) -> None:
        """Stop the bot and everything it started, remove its cgroup and socket folder; safe to call more than once."""
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
        if self.freezer is not None:
            self.freezer.close()  # thawed, so that it ends (a process frozen by the v1 freezer cannot die)
            self.freezer = None
        if self.process is not None:
            self._kill()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_GRACE_SECONDS):
                    await self.process.wait()
        if self._log_task is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(STOP_GRACE_SECONDS):
                    await asyncio.shield(self._log_task)  # cancelled below, by its name, should it outlast the grace
            self._log_task.cancel()
        if self.cgroup is not None:
            await self._remove_cgroup()
        if self._private_dir is not None:
            # Whatever the bot left there (it may be huge, deep or odd) goes off the event loop, without raising.
            await asyncio.to_thread(sandbox.remove_tree, self._private_dir)
            self._private_dir = None

    async def _remove_cgroup(self) -> None:
        """Wait for the bot's cgroup to empty (killing again what a fork bomb started meanwhile), then remove it.

        Kept until then: :meth:`limits_hit` still reads it after the process ended.
        """
        cgroup = self.cgroup
        assert cgroup is not None  # called only for a bot that has one
        self._removed_cgroup_hits = [text for _, text in await sandbox.remove_when_empty(cgroup)]
        self.cgroup = None  # what is left (if anything) goes when the referee exits, or at the next start


async def _child_pid(reader: asyncio.StreamReader) -> int:
    """The ``child-pid`` of bubblewrap's report (one JSON object), as soon as the object is whole."""
    text = b""
    while chunk := await reader.read(4096):
        text += chunk
        with contextlib.suppress(ValueError):
            return int(json.loads(text)["child-pid"])
    return int(json.loads(text)["child-pid"])


async def _drain_output(
    stream: asyncio.StreamReader, log: IO[bytes] | None, cap: int | None, counter: BotProcess
) -> None:
    """Copy a bot's output to its log up to ``cap`` bytes, then discard the rest (never block the bot).

    Counts the lines received in ``counter.output_lines``.
    """
    written = 0
    dropped = 0
    try:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            counter.output_lines += chunk.count(b"\n")
            if log is None:
                continue
            room = len(chunk) if cap is None else cap - written
            if room > 0:
                try:
                    log.write(chunk[:room])
                except OSError:  # a full disk: keep reading, so the bot never blocks on its output
                    with contextlib.suppress(OSError):
                        log.close()
                    log = None
                    continue
                written += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped and log is not None:
            log.write(f"\n[referee: log capped at {cap} bytes; {dropped} more bytes discarded]\n".encode())
    finally:
        if log is not None:
            with contextlib.suppress(OSError):
                log.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _exit_text(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    signum = _signal_of(returncode)
    if signum is not None:
        try:
            return f"killed by signal {signal.Signals(signum).name}"
        except ValueError:
            return f"killed by signal {signum}"
    return f"exit code {returncode}"


def _signal_of(returncode: int | None) -> int | None:
    """The signal that ended the process, or None for an exit code."""
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    # bubblewrap reports its bot's death by a signal as 128 + the signal's number.
    if returncode > 128 and returncode - 128 in signal.valid_signals():
        return returncode - 128
    return None


LOG_TAIL_LINES = 40  # enough for a whole Go panic or a Node.js module error


def output_hint(log_path: Path | None) -> str:
    """`` (its output is in PATH)``, the words that end a message about a bot whose output is in ``log_path``."""
    return f" (its output is in {log_path})" if log_path else ""


HIDDEN_PATH_READ_BYTES = 16_384  # of a log's end, where a failure's traceback names the path it could not read


def hidden_path_note(log_path: Path | None, hidden_whose: Mapping[str, str]) -> str:
    """``; its output names PATH, which ...``: the first path hidden from the bot, deepest first, that the end of
    its output names; empty if none (or no log)."""
    if log_path is None or not hidden_whose:
        return ""
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - HIDDEN_PATH_READ_BYTES))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    for path in sorted(hidden_whose, key=len, reverse=True):
        # The path itself, or a path inside it: not a longer name (/a/bc for /a/b), nor a way out of it (/a/b/..).
        if re.search(re.escape(path) + r"(?![\w.-])(?!/\.\.)", tail):
            return (
                f"; its output names {path}, which this league hides from it ({hidden_whose[path]}): a league "
                "shows no bot another bot's files, so give each bot what it reads in a folder of its own"
            )
    return ""


def log_tail(path: Path | None, lines: int = LOG_TAIL_LINES, show_path: bool = True) -> str:
    """The last lines of a bot's output, indented, to show with a problem, and where the whole log is kept."""
    if path is None:
        return ""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").rstrip()
    except OSError:
        return ""
    if not text:
        return "\n      (the bot wrote no output)"
    tail = [printable(line[:300]) for line in text.splitlines()[-lines:]]  # the bot's own text: no escapes pass
    where = f" (all of it in {path})" if show_path else " (--logs DIR keeps all of it)"
    return f"\n      its last output{where}:\n" + "\n".join(f"        {line}" for line in tail)
