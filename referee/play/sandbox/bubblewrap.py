"""The bubblewrap command a sandboxed bot runs in: finding bubblewrap, and its options for one bot.

``sandbox_argv`` turns a :class:`~referee.play.sandbox.view.SandboxPlan` into
bubblewrap's command line up to the bot's command. Its namespaces: PIDs,
IPC, host name, cgroup view, and the network's unless the bot has the
host's; and its own user namespace when the referee is not root (the bot
then runs as the referee's user, root of nothing). When the referee is
root, no user namespace: bubblewrap sets up the sandbox with root's rights
(it must read what the bot is shown, wherever it is), then the bot's own
unprivileged user takes over (``setpriv``, before the bot's program runs)
with no capability left (:mod:`referee.play.sandbox.users`).

``/proc`` (the sandbox's own) and ``/dev`` are read-only: no kernel
setting, no global switch under ``/proc/sys``, ``/proc/sysrq-trigger`` and
the like can be written, whoever the bot is; ``/sys`` is not there at all.
The system call filter (:mod:`referee.play.sandbox.seccomp`) is loaded last.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from referee.play.sandbox import seccomp
from referee.play.sandbox.cgroups import SandboxError
from referee.play.sandbox.masks import etc_masks, mount_options, way_to
from referee.play.sandbox.users import SHARED_GROUP, runs_as_root
from referee.play.sandbox.view import SYSTEM_FOLDERS, SYSTEM_LINKS, WRITABLE_PLACES, SandboxPlan

# The bubblewrap program: this variable if set (a path), else `bwrap` on PATH.
BWRAP_VARIABLE = "REFEREE_BWRAP"
INSTALL_COMMAND = "apt-get install bubblewrap"
# The namespaces of every sandbox: PIDs, IPC, host name, cgroup view (plus the user's, unless the referee is root,
# and the network's, unless it is `host`).
NAMESPACE_OPTIONS = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
# What bubblewrap keeps, as root, for setpriv to hand the sandbox to the bot's user (setpriv then drops them all).
USER_SWITCH_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
_PROBE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Bubblewrap:
    """The bubblewrap on this machine: its path and version, or why it cannot be used."""

    path: str | None
    version: str  # "bubblewrap 0.8.0", or empty
    problem: str | None  # None when it works here
    sizes_tmpfs: bool = False  # has --size (0.6 and later)
    disables_userns: bool = False  # has --disable-userns (0.8 and later)

    def refusal(self, how_to_turn_off: str) -> str:
        """Why no bot can start in a sandbox here, and what to do; ``how_to_turn_off`` names the switch."""
        return f"{self.problem}; {how_to_turn_off} runs bots without it (only for bots you trust)"


@functools.cache
def bubblewrap() -> Bubblewrap:
    """Find bubblewrap (``$REFEREE_BWRAP`` or ``bwrap`` on PATH) and check, once, that it can make a sandbox here.

    The system call filter and (as root) ``setpriv`` are part of the
    sandbox: where either is missing, so is the sandbox.
    """
    chosen = os.environ.get(BWRAP_VARIABLE)
    path = chosen or shutil.which("bwrap")
    if not path or not os.access(path, os.X_OK) or os.path.isdir(path):
        where = f"{chosen} (from ${BWRAP_VARIABLE})" if chosen else "bwrap on PATH"
        return Bubblewrap(
            None,
            "",
            f"bubblewrap, which every bot runs in, is not installed (looked for {where}): "
            f"install it with `{INSTALL_COMMAND}`",
        )
    try:
        version = _run([path, "--version"]).stdout.strip()
        usage = _run([path, "--help"]).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return Bubblewrap(path, "", f"bubblewrap ({path}) does not run: {error}")
    found = Bubblewrap(path, version, None, "--size" in usage, "--disable-userns" in usage)
    probe = [
        path,
        *_namespace_options(found, network_host=False, user_namespace=not runs_as_root()),
        "--ro-bind",
        "/",
        "/",
        "--",
        "true",
    ]
    try:
        done = _run(probe)
    except (OSError, subprocess.SubprocessError) as error:
        return Bubblewrap(path, version, f"bubblewrap ({path}) cannot make a sandbox here: {error}")
    if done.returncode != 0:
        detail = done.stderr.strip() or f"exit code {done.returncode}"
        return Bubblewrap(
            path,
            version,
            f"bubblewrap ({path}) cannot make a sandbox here ({detail}); it needs root, or a kernel "
            "that allows unprivileged user namespaces",
        )
    try:
        seccomp.filter_program()
    except seccomp.FilterUnavailable as error:
        return Bubblewrap(path, version, str(error))
    if runs_as_root() and setpriv() is None:
        return Bubblewrap(
            path,
            version,
            "setpriv, which hands each sandbox to its bot's own user when the referee "
            "runs as root, is not installed: install it with `apt-get install util-linux`",
        )
    return found


@functools.cache
def _setpriv_path() -> str:
    """Where setpriv is, for a bot that runs as its own user (its absence turns the sandbox off: see bubblewrap())."""
    path = setpriv()
    if path is None:
        raise SandboxError("setpriv, which hands a sandbox to its bot's user, is not installed (util-linux)")
    return path


def setpriv() -> str | None:
    """The path of util-linux's ``setpriv`` (it sets a parent-death signal, and switches users), or None."""
    return shutil.which("setpriv") or next(
        (path for path in ("/usr/bin/setpriv", "/bin/setpriv") if os.access(path, os.X_OK)), None
    )


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL
    )


def _namespace_options(bwrap: Bubblewrap, network_host: bool, user_namespace: bool) -> list[str]:
    options = list(NAMESPACE_OPTIONS)
    if user_namespace:
        options.insert(0, "--unshare-user")
        if bwrap.disables_userns:
            options.append("--disable-userns")
    if not network_host:
        options.append("--unshare-net")
    return options


def sandbox_argv(
    plan: SandboxPlan,
    bwrap: Bubblewrap,
    *,
    seccomp_fd: int,
    info_fd: int | None,
    block_fd: int | None = None,
    files: Sequence[tuple[int, str]] = (),
) -> list[str]:
    """bubblewrap's command line up to the bot's command (which follows).

    ``seccomp_fd`` holds the system call filter; bubblewrap writes the
    sandbox's first process's pid to ``info_fd`` (as JSON, ``child-pid``),
    when there is one (a build without a network of its own to connect has
    no use for it). Given ``block_fd``, the sandbox waits for a byte there
    before its command runs (a build's network is connected meanwhile).
    ``files``: (a descriptor, a path) for each file shown read-only (and
    readable by all) at that path with the descriptor's content, over what
    the system has there.
    """
    if bwrap.path is None:
        raise SandboxError(bwrap.problem or "bubblewrap is not installed")
    argv = [bwrap.path, *_namespace_options(bwrap, plan.network_host, user_namespace=plan.user is None)]
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if plan.user is not None:
        for capability in USER_SWITCH_CAPABILITIES:
            argv += ["--cap-add", capability]
    for folder in SYSTEM_FOLDERS:
        argv += ["--ro-bind", folder, folder]
    argv += _system_links()
    argv += etc_masks()
    for fd, path in files:
        argv += ["--perms", "0644", "--ro-bind-data", str(fd), path]  # readable by the sandbox's user, whoever
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for place in WRITABLE_PLACES:
        if plan.writable_bytes is not None and bwrap.sizes_tmpfs:
            argv += ["--size", str(plan.writable_bytes)]
        argv += ["--perms", "1777", "--tmpfs", place]
    shown, remounts = mount_options(plan.read_only, plan.read_write, plan.hidden, dict(plan.bind_sources))
    argv += shown
    argv += way_to(plan.cwd, plan.read_only, plan.read_write)
    argv += remounts
    # The sandbox's own root (where the folders above hang), /proc and /dev are read-only: write to the writable places.
    argv += ["--remount-ro", "/proc", "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", plan.cwd]
    argv += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    if block_fd is not None:
        argv += ["--block-fd", str(block_fd)]
    argv.append("--")
    if plan.user is not None:
        # Then the bot's own user, with no capability and no way to gain one; bubblewrap's tie to the referee
        # (a parent-death signal, which a change of user clears) kept.
        argv += [_setpriv_path(), f"--reuid={plan.user}", f"--regid={plan.user}", "--clear-groups"]
        if plan.read_write and plan.shared_group:
            argv[-1] = f"--groups={SHARED_GROUP}"
        argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--pdeathsig=keep", "--"]
    return argv


def options_through(argv: list[str], fd: int) -> list[str]:
    """The same command with bubblewrap's options written to ``fd`` and read from there (``--args``): the bot can
    read its sandbox's first process's command line, which then names none of the paths the sandbox hides."""
    end = argv.index("--")
    os.write(fd, b"".join(os.fsencode(option) + b"\0" for option in argv[1:end]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd), *argv[end:]]


def data_fd(data: bytes = b"") -> int:
    """A new file in memory holding ``data``, at its start, for one bubblewrap to read (the caller closes it)."""
    fd = os.memfd_create("referee-sandbox", 0)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


@functools.cache
def _system_links() -> tuple[str, ...]:
    options = []
    for entry in SYSTEM_LINKS:
        if os.path.islink(entry):
            options += ["--symlink", os.readlink(entry), entry]
        elif os.path.isdir(entry):
            options += ["--ro-bind", entry, entry]
    return tuple(options)
