"""Bot processes: start a bot's program, keep its output, tell how it ended, stop it.

This module knows nothing of games or of the protocol: ``referee.session``
talks to a bot over the channel this module's process listens on.

A bot is a command line (started here, in its own session and process group)
or the address of a bot server already running. The referee chooses where a
started bot listens (a Unix socket in a private directory by default, or TCP
on 127.0.0.1) and passes it in ``REFEREE_BOT_ADDRESS``.

No bot, nor anything it starts, outlives its stop or the referee. Where the
machine allows it (root, or unprivileged user namespaces), each bot runs in
its own PID namespace, with a /proc of its own (``unshare --pid
--mount-proc --fork``), under a small supervising shell that is the
namespace's init: when that shell ends, the kernel kills everything in the
namespace, even descendants that left the bot's process group with
``setsid``. ``setpriv --pdeathsig`` ties ``unshare`` to the referee, so this
happens when the referee dies too, even by SIGKILL; the shell first removes
the bot's private socket directory. Elsewhere the bot's process group is
killed instead, and descendants that left it are found by the bot's address
in their environment (docs/security.md has the limits of each). Resource
limits are applied by ``prlimit`` and named in the fault when a limited bot
dies. A bot may be started in a network namespace of its own
(``isolate_network``): no network at all, while its Unix socket still works.
None of this needs ``preexec_fn``, which is unsafe with grpcio.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.faults import BotFault, FaultKind

ADDRESS_VARIABLE = "REFEREE_BOT_ADDRESS"
DEFAULT_LOG_CAP_BYTES = 1 << 20
STOP_GRACE_SECONDS = 1.0

# How a bot is contained, as BotProcess.containment reports it.
PID_NAMESPACE = "pid namespace"
PROCESS_GROUP = "process group"

# The shell that runs a bot in its own PID namespace, as the namespace's init. When it ends, the
# kernel kills every process left in the namespace. unshare --kill-child sends it SIGTERM when
# unshare dies (unshare gets SIGKILL when the referee dies: it blocks SIGTERM itself); it then
# removes the private directory ($1, empty for TCP) and exits. When the bot exits by itself, it
# exits with the bot's status.
_NAMESPACE_SUPERVISOR = (
    'dir=$1; shift; trap \'[ -n "$dir" ] && rm -rf -- "$dir"; exit 143\' TERM; '
    '"$@" & wait $!; exit $?'
)

# The shell that runs a bot where PID namespaces are not allowed. When the referee dies it gets
# SIGTERM (pdeathsig), removes the private directory, kills every process that carries this
# bot's address in its environment (descendants that left the group with setsid, unless they
# cleared their environment) and then its whole process group. When the bot exits by itself, the
# shell terminates whatever the bot left behind in its group and exits with the bot's status.
_GROUP_SUPERVISOR = (
    'dir=$1; shift; '
    'trap \'[ -n "$dir" ] && rm -rf -- "$dir"; '
    'for e in /proc/[0-9]*/environ; do p=${e%/environ}; p=${p#/proc/}; [ "$p" = $$ ] && continue; '
    'grep -qzxF -- "REFEREE_BOT_ADDRESS=$REFEREE_BOT_ADDRESS" "$e" 2>/dev/null && kill -KILL "$p" 2>/dev/null; '
    'done; kill -KILL 0\' TERM; '
    '"$@" & wait $!; status=$?; trap "" TERM; kill -TERM 0; exit $status'
)

# unshare with a user namespace mapping the referee's user to itself: namespaces without root.
_USER_NAMESPACE = ("--user", "--map-current-user")
# A PID namespace with its own /proc (so a bot's pid, 2, and /proc/self agree; it sees only its own processes).
_PID_NAMESPACE = ("--pid", "--mount-proc")
_PROBE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class ResourceLimits:
    """Optional limits for a bot process; ``None`` means no limit.

    Each applies to every process of the bot separately (they are rlimits,
    inherited on fork). ``memory_mb`` limits the address space. The CPU time
    limit sends SIGXCPU at ``cpu_seconds`` and SIGKILL a second later.
    """

    memory_mb: int | None = None
    cpu_seconds: int | None = None
    open_files: int | None = None

    def prlimit_args(self) -> list[str]:
        args = []
        if self.memory_mb is not None:
            args.append(f"--as={self.memory_mb * 1024 * 1024}")
        if self.cpu_seconds is not None:
            # A soft limit below the hard one: the kernel sends SIGXCPU first, which names the cause.
            args.append(f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}")
        if self.open_files is not None:
            args.append(f"--nofile={self.open_files}")
        # No core files: SIGXCPU would otherwise dump one into the bot's folder.
        return ["prlimit", *args, "--core=0", "--"] if args else []

    def describe(self) -> str:
        """The limits in force, in words ("memory limit 256 MB, open-file limit 32"); empty for none."""
        parts = []
        if self.memory_mb is not None:
            parts.append(f"memory limit {self.memory_mb} MB")
        if self.cpu_seconds is not None:
            parts.append(f"CPU time limit {self.cpu_seconds} s")
        if self.open_files is not None:
            parts.append(f"open-file limit {self.open_files}")
        return ", ".join(parts)


@dataclass(frozen=True)
class BotSpec:
    """How to reach one bot: a command to start, or the address of a running server."""

    name: str
    command: tuple[str, ...] = ()
    address: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    limits: ResourceLimits = ResourceLimits()
    transport: str = "unix"  # where a started bot listens: "unix" or "tcp"
    isolate_network: bool = False  # start it in a network namespace of its own: no network at all

    def __post_init__(self) -> None:
        if self.isolate_network and self.address:
            raise ValueError(f"{self.name}: network isolation applies only to a bot the referee starts")
        if self.isolate_network and self.transport != "unix":
            raise ValueError(
                f"{self.name}: a bot with network isolation listens on a Unix socket; "
                f"transport {self.transport!r} cannot reach it"
            )

    @classmethod
    def from_command(cls, command: str | Sequence[str], name: str | None = None, **kwargs) -> BotSpec:
        argv = tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)
        if not argv:
            raise ValueError("a bot command cannot be empty")
        return cls(name=name or Path(argv[-1]).stem, command=argv, **kwargs)

    def describe(self) -> str:
        return self.address if self.address else shlex.join(self.command)


class BotProcess:
    """One bot's process (started here), or the address of a bot server already running."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, log_cap: int = DEFAULT_LOG_CAP_BYTES) -> None:
        self.spec = spec
        self.log_path = log_path
        self.log_cap = log_cap
        self.process: asyncio.subprocess.Process | None = None
        self.address = spec.address
        self._private_dir: str | None = None
        self._log_task: asyncio.Task | None = None
        self.containment: str | None = None  # PID_NAMESPACE or PROCESS_GROUP, once started

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
        if spec.transport == "tcp":
            self.address = f"127.0.0.1:{_free_port()}"
        else:
            # A directory only the referee's user can enter holds the socket.
            self._private_dir = tempfile.mkdtemp(prefix="referee-")
            os.chmod(self._private_dir, 0o700)
            self.address = f"unix:{self._private_dir}/bot.sock"
        program = spec.command[0]
        if shutil.which(program, path=_search_path(spec)) is None and not (
            spec.cwd and os.access(os.path.join(spec.cwd, program), os.X_OK)
        ):
            raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: no such program {program!r}", spec.name)
        env = {**os.environ, **spec.env, ADDRESS_VARIABLE: self.address}
        env.pop("GRPC_ENABLE_FORK_SUPPORT", None)
        argv = [*self._containment_argv(), self._private_dir or "", *spec.limits.prlimit_args(), *spec.command]
        log = open(self.log_path, "wb") if self.log_path else None  # noqa: SIM115 - closed by the log task
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=spec.cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            if log:
                log.close()
            raise BotFault(FaultKind.STARTUP, f"cannot start {spec.describe()!r}: {error}", spec.name) from None
        self._log_task = asyncio.create_task(_drain_output(self.process.stdout, log, self.log_cap))

    def _containment_argv(self) -> list[str]:
        """The command that runs the supervising shell, up to its first argument (the private directory).

        A PID namespace where the machine allows one; otherwise the process
        group. A network namespace when the spec asks for one, or a startup
        fault saying why the machine refuses it.
        """
        isolate = self.spec.isolate_network
        namespaces = (*_PID_NAMESPACE, "--net") if isolate else _PID_NAMESPACE
        unshare, _ = _unshare_prefix(namespaces)
        if unshare is not None:
            self.containment = PID_NAMESPACE
            return [
                "setpriv", "--pdeathsig", "KILL", "--",
                *unshare, "--fork", "--kill-child=TERM", "--",
                "sh", "-c", _NAMESPACE_SUPERVISOR, "referee-bot",
            ]  # fmt: skip
        net_only: tuple[str, ...] = ()
        if isolate:
            net_only, net_problem = _unshare_prefix(("--net",))
            if net_only is None:
                raise BotFault(
                    FaultKind.STARTUP,
                    "network isolation (isolate_network) needs `unshare --net`, which this machine does not "
                    f"allow ({net_problem}); run the referee as root or where unprivileged user namespaces are "
                    "allowed, or turn network isolation off",
                    self.spec.name,
                )
            net_only = (*net_only, "--")
        self.containment = PROCESS_GROUP
        return ["setpriv", "--pdeathsig", "TERM", "--", *net_only, "sh", "-c", _GROUP_SUPERVISOR, "referee-bot"]

    # ----- how it ended --------------------------------------------------------------

    def has_exited(self) -> bool:
        return self.process is not None and self.process.returncode is not None

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the process to end; return whether it has."""
        if self.process is None:
            return False
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), timeout)
        return self.has_exited()

    def exit_detail(self, cause: str = ": %s") -> str:
        """How the process ended, with the resource limit it hit or the limits in force.

        For example ``killed by signal SIGXCPU: CPU time limit of 2 s
        exceeded`` or ``exit code 1 (memory limit 64 MB)``.
        """
        returncode = self.process.returncode if self.process is not None else None
        return f"{_exit_text(returncode)}{self._limits_note(returncode, cause)}"

    def killed_by_signal(self) -> bool:
        """Whether the process ended by a signal (rather than with an exit code)."""
        return self.process is not None and _signal_of(self.process.returncode) is not None

    def log_hint(self) -> str:
        """`` (its output is in PATH)``, to end a message about this bot; empty without a log."""
        return f" (its output is in {self.log_path})" if self.log_path else ""

    def _limits_note(self, returncode: int, cause: str = ": %s") -> str:
        """What to add to a limited bot's exit status: the limit it hit (put in ``cause``), or the limits in force.

        Only SIGXCPU names its limit for sure; an exit code or another signal
        may or may not come from a limit (MemoryError, "Too many open files"),
        so every limit in force is listed.
        """
        limits = self.spec.limits
        if limits.cpu_seconds is not None and _signal_of(returncode) == signal.SIGXCPU:
            return cause % f"CPU time limit of {limits.cpu_seconds} s exceeded"
        described = limits.describe()
        return f" ({described})" if described else ""

    # ----- stop -------------------------------------------------------------------

    async def stop(self) -> None:
        """Stop the bot and everything it started; safe to call more than once."""
        process = self.process
        if process is not None:
            # SIGKILL to the whole group: the bot, its supervising shell and any child it forked; in a
            # PID namespace, the shell's death takes everything else in the namespace with it.
            _kill_group(process.pid, signal.SIGKILL)
            if self.containment == PROCESS_GROUP and self.address:
                _kill_by_environment(f"{ADDRESS_VARIABLE}={self.address}".encode())
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), STOP_GRACE_SECONDS)
        if self._log_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._log_task, STOP_GRACE_SECONDS)
            self._log_task.cancel()
        if self._private_dir is not None:
            shutil.rmtree(self._private_dir, ignore_errors=True)
            self._private_dir = None


def _kill_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _kill_by_environment(entry: bytes) -> None:
    """SIGKILL every process whose environment holds ``entry`` ("NAME=value") exactly.

    Finds a bot's descendants that left its process group (``setsid``), as
    long as they kept the environment they were started with.
    """
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if entry in variables:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(name), signal.SIGKILL)


@functools.cache
def _unshare_prefix(namespaces: tuple[str, ...]) -> tuple[tuple[str, ...] | None, str]:
    """The ``unshare`` command that creates ``namespaces`` here, or None and why the machine refuses.

    Tried once per process: as it is (root), then inside a user namespace
    that maps the referee's user to itself (no root needed where the kernel
    allows unprivileged user namespaces).
    """
    problems = []
    for prefix in (("unshare",), ("unshare", *_USER_NAMESPACE)):
        probe = [*prefix, *namespaces, "--fork", "true"]
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            problems.append(f"{shlex.join(probe)}: {error}")
            continue
        if done.returncode == 0:
            return (*prefix, *namespaces), ""
        problems.append(f"{shlex.join(probe)}: {done.stderr.strip() or f'exit code {done.returncode}'}")
    return None, "; ".join(problems)


def namespace_support() -> dict[str, str | None]:
    """What this machine allows, for messages and checks: per namespace kind, None (allowed) or why not."""
    return {
        "pid": _unshare_prefix(_PID_NAMESPACE)[1] or None,
        "net": _unshare_prefix(("--net",))[1] or None,
    }


async def _drain_output(stream: asyncio.StreamReader, log, cap: int) -> None:
    """Copy a bot's output to its log up to ``cap`` bytes, then discard the rest (never block the bot)."""
    written = 0
    dropped = 0
    try:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                break
            if log is None:
                continue
            room = cap - written
            if room > 0:
                log.write(chunk[:room])
                written += min(room, len(chunk))
            dropped += max(0, len(chunk) - max(room, 0))
        if dropped and log is not None:
            log.write(f"\n[referee: log capped at {cap} bytes; {dropped} more bytes discarded]\n".encode())
    finally:
        if log is not None:
            log.close()


def _search_path(spec: BotSpec) -> str | None:
    return spec.env.get("PATH", os.environ.get("PATH"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
    # The supervising shell reports a signal death as 128 + signal number.
    if returncode > 128 and returncode - 128 in signal.valid_signals():
        return returncode - 128
    return None
