"""What a submission's build sees and runs as: its copy, writable; the system, read-only; nothing else of the machine.

A submission's ``build:`` command is its author's code. It runs once, before its bot plays, in the
league's copy of the submission's folder (``OUTPUT/builds/NAME``, :mod:`referee.leaguefile.submissions`), in a
sandbox made of a bot's pieces (docs/security.md says what this gives):

- the system, read-only, as a bot sees it (:mod:`referee.play.sandbox.view`): ``/usr``, ``/bin``,
  ``/lib*`` and ``/etc`` without what only its owner may read (:mod:`referee.play.sandbox.masks`), so
  the compilers and tools a build calls; and, when the referee runs in a virtual environment, the
  referee's Python as a Python bot sees it, first on the build's ``PATH`` (so ``python`` in a build
  is the referee's, as docs/leagues.md says);
- its copy, read-write, at its own absolute path (builds record absolute paths), and nothing else
  of the league's output, the league file's folder, the other submissions and their builds, home
  folders or ``/root``; the competition's paths are masked should a folder it sees hold one;
- a bot's writable places (``/tmp``, ``/scratch``: its ``HOME``, where npm and Go keep their
  caches, ``/dev/shm``), each a file system in memory of :data:`BUILD_LIMITS`' ``output_mb``,
  gone when it ends;
- a network of its own (``network``): with ``outside`` (a league's default), joined to the machine's
  network by slirp4netns, which connects out for it (``npm ci``, ``pip`` and Go modules fetch
  packages) and never to the machine's loopback, so that no build reaches ``referee serve``, a bot
  with the host's network or any other service listening there; with ``none``, loopback only; or,
  with ``host``, the machine's own network, loopback included;
- a bot's small environment (no variable of the referee's but ``PATH``, the locale and the
  terminal's), the proxy variables when it has the network, and the bot entry's ``env:``;
- a bot's containment: the system call filter, its own PIDs, IPC and host name, no capability,
  and, when the referee is root, the bot's own unprivileged user (:func:`~referee.play.sandbox.users.bot_user`),
  who owns the copy for the build only: once the build has ended the copy is the referee's again,
  with no set-user-ID or set-group-ID file and nothing writable by group or others;
- limits on its whole process tree (:data:`BUILD_LIMITS`, larger than a bot's: a compiler needs
  more), by its cgroup where the machine has one, through the launcher every bot starts through
  (:mod:`referee.play.sandbox.launcher`): it dies with the referee, and stopping it kills everything
  it started, in its PID namespace and its cgroup.

Without the sandbox (``sandbox: none``) a build runs by a shell in its copy, as the referee's user,
with the referee's environment and no limit, but through the launcher and in a cgroup of its own all
the same, so that it ends with the referee, killed or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import stat
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal, get_args

from referee.play.sandbox.bubblewrap import bubblewrap, data_fd, options_through, sandbox_argv
from referee.play.sandbox.cgroups import CGROUP_WAIT_SECONDS, BotCgroup, SandboxError, make_cgroup, remove_when_empty
from referee.play.sandbox.launcher import kill_launched, launch_argv
from referee.play.sandbox.leftovers import remove_tree
from referee.play.sandbox.limits import ResourceLimits, rlimit_arguments
from referee.play.sandbox.seccomp import FilterUnavailable, filter_program
from referee.play.sandbox.users import bot_user
from referee.play.sandbox.view import SCRATCH_VARIABLE, SandboxPlan, plan_sandbox, sandbox_environment

# A build's whole process tree: g++ takes about 1 GB for a file that includes gRPC's headers, and make -j2
# runs two; npm's and Go's caches go to its writable places, which are memory too. Its CPU time is
# bounded by build_timeout_s.
BUILD_LIMITS = ResourceLimits(memory_mb=4096, processes=1024, cpu_seconds=None, open_files=4096, output_mb=1024)
NO_LIMITS = ResourceLimits(memory_mb=None, processes=None, cpu_seconds=None, open_files=None, output_mb=None)
# What a build with the network takes from the referee's environment, beyond a bot's variables: the way out.
PROXY_VARIABLES = tuple(
    name
    for variable in ("http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy")
    for name in (variable, variable.upper())
)
SHELL = "/bin/sh"  # a build is a shell command, as create_subprocess_shell runs one
# A build's network: the machine's network without its loopback (slirp4netns), none but its own loopback, or the
# machine's own.
BuildNetwork = Literal["outside", "none", "host"]
BUILD_NETWORKS: tuple[BuildNetwork, ...] = get_args(BuildNetwork)
SLIRP4NETNS_INSTALL = "apt-get install slirp4netns"
# slirp4netns gives the namespace 10.0.2.100, its gateway 10.0.2.2 (the machine's loopback, which
# --disable-host-loopback shuts) and a DNS forwarder at 10.0.2.3, which asks the machine's resolver: the build is
# told of that one, as the resolver the machine names may be on its loopback (systemd-resolved's 127.0.0.53).
SLIRP_RESOLVER = b"nameserver 10.0.2.3\n"
RESOLVER_FILE = "/etc/resolv.conf"
OUTSIDE_START_SECONDS = 10.0  # for bubblewrap to report its sandbox, and for slirp4netns to connect it
# What a submission's copy never holds, built or not (referee.leaguefile.submissions copies files without it too): a program
# that runs as its owner or group, nor a file or folder that anyone but the owner may change. Folders keep
# set-group-ID, which only names new files' group.
_NEVER_HANDED_BACK = stat.S_IWGRP | stat.S_IWOTH
_NO_SET_ID = stat.S_ISUID | stat.S_ISGID
NEVER_ON_A_COPYS_FILE = _NEVER_HANDED_BACK | _NO_SET_ID


class BuildProcess:
    """One build's processes, from their start (:func:`start_build`) to :meth:`stop`, which ends every one of them,
    removes their cgroup and hands the copy back to the referee."""

    def __init__(self, copy: Path, user: int | None) -> None:
        self.copy = copy
        # Who the build runs as, and who owns the copy until it is handed back (the referee is root); or None: the
        # referee's own user, whose copy it stays.
        self.user = user
        self.process: asyncio.subprocess.Process | None = None
        self.cgroup: BotCgroup | None = None
        self.problem: str | None = None  # why the copy could not be handed back (it is removed then)
        self._hits: list[str] = []  # the limits its cgroup enforced, kept once the cgroup is removed
        self.outside: asyncio.subprocess.Process | None = None  # slirp4netns, for build_network: outside
        self.outside_exit: int | None = None  # its --exit-fd's other end: closed, it ends

    async def wait(self) -> int:
        """Wait for the build's command to end; return its exit status (128 + N: killed by signal N, in its sandbox)."""
        if self.process is None:
            raise SandboxError("the build was never started")
        return await self.process.wait()

    def kill(self) -> None:
        """SIGKILL everything the build started, and its way out to the network."""
        kill_launched(self.process, self.cgroup)
        if self.outside_exit is not None:
            os.close(self.outside_exit)
            self.outside_exit = None
        kill_launched(self.outside, None)

    async def stop(self) -> None:
        """End the build, every process of it: then remove its cgroup and hand its copy back to the referee.

        Safe once it has ended, and more than once. The kill comes first, before any wait: interrupted
        (Ctrl-C), nothing of the build is left running.
        """
        self.kill()
        for process in (self.process, self.outside):
            if process is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(CGROUP_WAIT_SECONDS):
                        await process.wait()
        if self.cgroup is not None:
            self._hits = [text for _, text in await remove_when_empty(self.cgroup)]
            self.cgroup = None
        if self.user is not None:
            user, self.user = self.user, None
            self.problem = await asyncio.to_thread(_hand_back, self.copy, user)

    def limits_hit(self) -> list[str]:
        """The limits the kernel enforced on the build, in words (its cgroup's record)."""
        if self.cgroup is not None:
            return [text for _, text in self.cgroup.limits_hit()]
        return list(self._hits)


async def start_build(
    name: str,
    command: str,
    copy: Path,
    output: IO[bytes],
    *,
    env: Mapping[str, str],
    sandboxed: bool = True,
    network: BuildNetwork = "outside",
    hidden: Sequence[str] = (),
) -> BuildProcess:
    """Start ``command`` by a shell in ``copy``, writing to ``output``, in its sandbox (see the module's words):
    as bot ``name``'s own user when the referee is root, with ``env`` over a bot's environment, its ``network``,
    the ``hidden`` paths masked. Without ``sandboxed``: as the referee, with the machine's network.

    Raise :class:`SandboxError` when its sandbox cannot be made or its network connected, :class:`OSError` when it
    cannot be started.
    """
    if not sandboxed:
        build = BuildProcess(copy, None)
        # No limit, but a cgroup and the launcher all the same: killed, the referee takes the build with it.
        build.cgroup = make_cgroup(NO_LIMITS)
        try:
            build.process = await asyncio.create_subprocess_exec(
                *launch_argv(build.cgroup.procs_files if build.cgroup else [], [], [SHELL, "-c", command]),
                cwd=copy,
                env=_referee_python_first({**os.environ, **env}),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=output,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # its own process group, so that stopping it kills everything it started
            )
        except BaseException:
            await build.stop()
            raise
        return build
    bwrap = bubblewrap()
    if bwrap.problem is not None:
        raise SandboxError(bwrap.problem)
    slirp = _slirp4netns() if network == "outside" else None
    user = bot_user(name)
    build = BuildProcess(copy, user)
    passed: list[int] = []  # for bubblewrap: its system call filter and its options (and the outside's pipes)
    kept: list[int] = []  # the referee's ends of those pipes: where bubblewrap reports, and what unblocks it
    try:
        if user is not None:
            _hand_over(copy, user)
        build.cgroup = make_cgroup(BUILD_LIMITS)
        plan = plan_build(copy, hidden=hidden, network_host=network == "host", user=user)
        try:
            passed.append(data_fd(filter_program(locks=True)))  # Go and SQLite lock their files
        except FilterUnavailable as error:
            raise SandboxError(str(error)) from None
        passed.append(data_fd())
        reported = blocked = None  # bubblewrap's ends: where it reports its sandbox, where it waits to go on
        files: list[tuple[int, str]] = []
        if slirp is not None:
            report, reported = os.pipe()
            blocked, unblock = os.pipe()
            kept += [report, unblock]
            passed += [reported, blocked, data_fd(SLIRP_RESOLVER)]
            files.append((passed[-1], _resolver_path()))
        wrap = sandbox_argv(plan, bwrap, seccomp_fd=passed[0], info_fd=reported, block_fd=blocked, files=files)
        inner = [*options_through(wrap, passed[1]), SHELL, "-c", command]
        # No address-space rlimit where no cgroup bounds its memory: compilers and runtimes reserve far more than
        # they use. Its open files and no core files, as a bot.
        rlimits = rlimit_arguments(BUILD_LIMITS, {}, sandboxed=True)
        argv = launch_argv(build.cgroup.procs_files if build.cgroup else [], rlimits, inner)
        creating = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                env=build_environment(env, network != "none"),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=output,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                pass_fds=passed,
            )
        )
        try:
            # Shielded: interrupted halfway, asyncio would leave a process it no longer tracks; this one is stopped.
            build.process = await asyncio.shield(creating)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                build.process = await creating
            raise
        if slirp is not None:
            for fd in passed[2:]:  # bubblewrap's ends, so that its report ends when it does
                os.close(fd)
            del passed[2:]
            await _connect_outside(build, slirp, report=kept[0], unblock=kept[1], user_namespace=user is None)
    except BaseException:
        await build.stop()
        raise
    finally:
        for fd in passed + kept:
            os.close(fd)
    return build


def _slirp4netns() -> str:
    """slirp4netns, which connects a build's network to the outside; :class:`SandboxError` saying how to install it."""
    path = shutil.which("slirp4netns")
    if path is None:
        raise SandboxError(
            "slirp4netns, which connects a build's network to the outside without the machine's loopback "
            f"(build_network: outside, the default), is not installed: install it with `{SLIRP4NETNS_INSTALL}`; or "
            "give the league build_network: none (builds without the network) or host (the machine's network, "
            "loopback included, for builds you trust)"
        )
    return path


def _resolver_path() -> str:
    """Where a sandbox's system has its resolver file: /etc/resolv.conf, or where its link leads (into /run, say)."""
    try:
        return os.path.normpath(os.path.join(os.path.dirname(RESOLVER_FILE), os.readlink(RESOLVER_FILE)))
    except OSError:  # not a link
        return RESOLVER_FILE


async def _connect_outside(build: BuildProcess, slirp: str, *, report: int, unblock: int, user_namespace: bool) -> None:
    """Connect the network namespace of ``build``'s sandbox (its pid read from bubblewrap's ``report``) to the
    outside through slirp4netns, which then lets the sandbox go on (a byte on ``unblock``).

    slirp4netns runs through the launcher, in the build's cgroup: it dies with the referee, and with the build.
    """
    pid = await _reported_pid(report)
    await _loopback_addressed(pid)
    ready, ready_end = os.pipe()
    exit_end, build.outside_exit = os.pipe()
    try:
        argv = [slirp, "--configure", "--mtu=65520", "--disable-host-loopback", "--enable-sandbox"]
        if user_namespace:  # bubblewrap made a user namespace, which owns the network's: join it first
            argv.append(f"--userns-path=/proc/{pid}/ns/user")
        argv += [f"--ready-fd={ready_end}", f"--exit-fd={exit_end}", str(pid), "tap0"]
        procs = build.cgroup.procs_files if build.cgroup else []
        build.outside = await asyncio.create_subprocess_exec(
            *launch_argv(procs, [], argv),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            pass_fds=(ready_end, exit_end),
        )
        os.close(ready_end)
        os.close(exit_end)
        ready_end = exit_end = -1
        try:
            async with asyncio.timeout(OUTSIDE_START_SECONDS), _reading(ready) as reader:
                said = await reader.read(1)
        except TimeoutError:
            said = b""
        if said != b"1":
            build.kill()
            assert build.outside.stderr is not None
            detail = (await build.outside.stderr.read()).decode(errors="replace").strip().splitlines()[-1:]
            raise SandboxError(
                f"slirp4netns could not connect the build's network to the outside within {OUTSIDE_START_SECONDS:g} s"
                f"{': ' + detail[0] if detail else ''}; give the league build_network: none or host to build without it"
            )
        os.write(unblock, b"1")
    finally:
        for fd in (ready, ready_end, exit_end):
            if fd >= 0:
                os.close(fd)


async def _reported_pid(report: int) -> int:
    """The ``child-pid`` of bubblewrap's report on ``report`` (one JSON object), as soon as the object is whole."""
    text = b""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(OUTSIDE_START_SECONDS), _reading(report) as reader:
            while chunk := await reader.read(4096):
                text += chunk
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    return int(json.loads(text)["child-pid"])
    raise SandboxError(
        f"the build's sandbox did not start (bubblewrap reported {text.decode(errors='replace')!r}); its output says why"
    )


async def _loopback_addressed(pid: int) -> None:
    """Wait until bubblewrap has given the sandbox's loopback its address: slirp4netns brings the loopback up, on
    which the kernel gives it that address, and bubblewrap's own request for it would then fail."""
    routes = f"/proc/{pid}/net/fib_trie"
    deadline = asyncio.get_running_loop().time() + OUTSIDE_START_SECONDS
    while asyncio.get_running_loop().time() < deadline:
        try:
            with open(routes, encoding="ascii", errors="replace") as table:
                if "127.0.0.1" in table.read():
                    return
        except OSError:
            break  # the sandbox has ended already
        await asyncio.sleep(0.001)
    raise SandboxError(f"the build's sandbox did not set up its network within {OUTSIDE_START_SECONDS:g} s")


@contextlib.asynccontextmanager
async def _reading(fd: int) -> AsyncIterator[asyncio.StreamReader]:
    """A reader of the pipe ``fd`` on the event loop (of a copy of it: the caller still closes ``fd``)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fd), "rb", buffering=0)
    )
    try:
        yield reader
    finally:
        transport.close()


def plan_build(copy: Path, *, hidden: Sequence[str], network_host: bool, user: int | None) -> SandboxPlan:
    """What a build's sandbox shows: the system, the referee's Python when it comes first on the build's ``PATH``
    (a Python bot's view of it), and the copy, read-write. Its user is in no group but its own."""
    program = sys.executable if _in_virtual_environment() else SHELL
    plan = plan_sandbox(
        (program,),
        str(copy),
        own_folders=(),
        shared=(str(copy),),
        hidden=hidden,
        network_host=network_host,
        limits=BUILD_LIMITS,
        user=user,
    )
    return dataclasses.replace(plan, shared_group=False)


def build_environment(extra: Mapping[str, str], network_host: bool) -> dict[str, str]:
    """A sandboxed build's environment: a bot's (``PATH``, the locale, ``TERM``; ``HOME=/scratch``,
    ``TMPDIR=/tmp``), the referee's proxy variables when it has the network, ``extra`` (the bot entry's
    ``env:``), and the referee's Python first on ``PATH``."""
    env = sandbox_environment({})
    env.pop(SCRATCH_VARIABLE, None)  # a bot's name for its scratch folder: a build is no bot
    if network_host:
        env.update({name: os.environ[name] for name in PROXY_VARIABLES if name in os.environ})
    env.update(extra)
    return _referee_python_first(env)


def _in_virtual_environment() -> bool:
    return sys.prefix != sys.base_prefix


def _referee_python_first(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the referee's virtual environment first on ``PATH``: ``python`` in a build is this interpreter."""
    if _in_virtual_environment():
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


# ----- the copy's owner --------------------------------------------------------------------------


def _hand_over(copy: Path, user: int) -> None:
    """Make the copy (just made by the referee: no process of ``user`` is running) the build's user's, to write in."""
    try:
        _own_tree(copy, (user, user), strip=0)
    except OSError as error:
        raise SandboxError(
            f"cannot hand the copy {copy} to the build's user {user}: {error.strerror or error}"
        ) from None


def _hand_back(copy: Path, user: int) -> str | None:
    """Make the copy the referee's again, once no process of the build's ``user`` is left: nothing in it owned by
    that user, set-user-ID or set-group-ID, or writable by anyone but the referee. Return None; or, when that
    cannot be done, remove the copy (what its user could still change never plays) and return why."""
    try:
        _own_tree(copy, (os.geteuid(), os.getegid()), strip=_NEVER_HANDED_BACK)
        return None
    except OSError as error:
        reason = f"{error.filename or copy}: {error.strerror or error}"
    removed = remove_tree(copy)
    return (
        f"its copy could not be handed back from its user {user} ({reason}), so it was removed"
        if removed
        else f"its copy could not be handed back from its user {user} ({reason}) nor removed: remove {copy}"
    )


def _own_tree(top: Path, owner: tuple[int, int], strip: int) -> None:
    """Give ``top`` and everything in it ``owner`` (uid, gid), without the ``strip`` mode bits nor, on files, the
    set-user-ID and set-group-ID bits. Links are changed, never followed. Iterative, so depth costs no recursion."""
    _own(str(top), os.stat(top, follow_symlinks=False), owner, strip)
    folders = [str(top)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                _own(entry.path, info, owner, strip)
                if stat.S_ISDIR(info.st_mode):
                    folders.append(entry.path)


def _own(path: str, info: os.stat_result, owner: tuple[int, int], strip: int) -> None:
    if (info.st_uid, info.st_gid) != owner:
        os.chown(path, *owner, follow_symlinks=False)  # the kernel clears a file's set-ID bits with it
    if stat.S_ISLNK(info.st_mode):
        return  # a link's own mode means nothing, and its target is not the copy's to change
    mode = stat.S_IMODE(info.st_mode)
    kept = mode & ~strip & ~(0 if stat.S_ISDIR(info.st_mode) else _NO_SET_ID)
    if kept != mode or (info.st_uid, info.st_gid) != owner:
        # Not a link (looked at above), and no process of the build is left to put one in its place.
        os.chmod(path, kept)
