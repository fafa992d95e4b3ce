"""How a bot process is contained: bubblewrap, cgroups and rlimits, and what each limit is called.

docs/security.md is the organiser's page on what this gives; this module is how.

A bot the referee starts runs as::

    sh -c WRAPPER referee-bot CGROUP.PROCS... -- bwrap OPTIONS... -- BOT COMMAND...

The wrapper shell writes its own pid into the bot's cgroups, so that the bot
and everything it starts are counted there from its first instruction, sets
the rlimits, and execs bubblewrap. bubblewrap's parent is then the referee
itself, so ``--die-with-parent`` ties the sandbox to the referee, even when
the referee is killed by SIGKILL; the bot is the sandbox's PID namespace, so
everything it starts dies with it. Without the sandbox (``sandbox: none``)
the wrapper execs ``setpriv --pdeathsig KILL`` and the bot instead.

Inside the sandbox a bot sees the system read-only (``/usr``, ``/bin``,
``/lib*``, and ``/etc`` without the files only root may read), its own
folders read-only, what its program needs to run (the program's
installation; for Python, the referee's virtual environment and the
``referee`` package), a private ``/tmp``, a private ``/scratch``, a private
``/proc`` and a minimal ``/dev``, and its socket's directory at
``/run/referee``. Nothing else: no home folders, no ``/work``, no ``/var``,
no other bot's files, sockets or processes. The network is its own (none)
unless the bot's spec says ``network: host``.

Limits (:class:`ResourceLimits`) are enforced by cgroups where the referee
can create them (cgroup v2 with its ``memory`` and ``pids`` controllers, or
the v1 ``memory``, ``pids`` and ``cpuacct`` hierarchies), otherwise by
rlimits; :func:`enforcement` says which, and :func:`machine_summary` says it
in one line. Each started bot also gets a cgroup v2 folder of its own where
the machine has one, even if it enforces nothing there: it gives the bot's
CPU time and CPU stall (:meth:`BotCgroup.usage`) to the honest clock, and
``cgroup.kill`` to stop everything the bot started.

A referee killed by SIGKILL cannot remove the cgroups and socket folders of
its bots (its bots die with it): the next referee to start removes those
whose referee is gone (:func:`remove_leftovers`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

# The bubblewrap program: this variable if set (a path), else `bwrap` on PATH.
BWRAP_VARIABLE = "REFEREE_BWRAP"
INSTALL_COMMAND = "apt-get install bubblewrap"

# Where a sandboxed bot finds its socket's directory, its scratch folder and its temporary files.
SOCKET_DIR_INSIDE = "/run/referee"
SCRATCH_INSIDE = "/scratch"
SCRATCH_VARIABLE = "REFEREE_BOT_SCRATCH"

# The system a bot sees read-only; the /bin-like entries are symlinks into /usr on merged-/usr systems.
SYSTEM_FOLDERS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Folders never bound from an argument or a program's location: the sandbox has its own.
SPECIAL_FOLDERS = ("/proc", "/sys", "/dev", "/run")
# The variables a sandboxed bot inherits from the referee (everything else it gets is set here or by its spec).
INHERITED_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM")  # and every LC_*
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# The namespaces of every sandbox: its own user (mapped to the referee's), PIDs, IPC, host name, cgroup
# view, and no further user namespaces inside; plus the network's unless it is `host`.
NAMESPACE_OPTIONS = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")

CGROUP_WAIT_SECONDS = 2.0  # how long stopping a bot waits for its cgroup to empty before leaving it
_PROBE_TIMEOUT_SECONDS = 10.0
MIB = 1 << 20


class SandboxError(Exception):
    """The sandbox or a limit cannot be set up for a bot; the message says why and what to do."""


# ----- the limits ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceLimits:
    """The limits of one bot's whole process tree; ``None`` means no limit. The names are the league file's keys.

    ``memory_mb``: memory in use by all its processes together (and its
    files in ``/tmp`` and ``/scratch``, which are in memory). ``processes``:
    processes and threads at once. ``cpu_seconds``: CPU time used by all its
    processes over the life of the bot process (which may play many games;
    off by default, as the clock already polices each decision).
    ``open_files``: per process. ``output_mb``: the most of its output kept
    in its log, and the size of each of its writable folders.
    """

    memory_mb: int | None = 1024
    processes: int | None = 256
    cpu_seconds: int | None = None
    open_files: int | None = 1024
    output_mb: int | None = 4

    @property
    def output_bytes(self) -> int | None:
        return None if self.output_mb is None else self.output_mb * MIB

    def describe(self, keys: Iterable[str] | None = None) -> str:
        """The limits in words ("memory limit 256 MB, open-file limit 32"), of ``keys`` (default all set)."""
        chosen = [field.name for field in fields(self)] if keys is None else list(keys)
        return ", ".join(limit_text(key, getattr(self, key)) for key in chosen if getattr(self, key) is not None)

    def changed(self) -> tuple[str, ...]:
        """The keys whose value differs from the default."""
        default = DEFAULT_LIMITS
        return tuple(field.name for field in fields(self) if getattr(self, field.name) != getattr(default, field.name))


DEFAULT_LIMITS = ResourceLimits()
LIMIT_KEYS = tuple(field.name for field in fields(ResourceLimits))
_LIMIT_WORDS = {
    "memory_mb": ("memory limit", " MB"),
    "processes": ("process limit", ""),
    "cpu_seconds": ("CPU time limit", " s"),
    "open_files": ("open-file limit", ""),
    "output_mb": ("output limit", " MB"),
}


def limit_text(key: str, value: int) -> str:
    """One limit in words: ``limit_text("memory_mb", 256) == "memory limit 256 MB"``."""
    words, unit = _LIMIT_WORDS[key]
    return f"{words} {value}{unit}"


# ----- bubblewrap --------------------------------------------------------------------------------


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
    """Find bubblewrap (``$REFEREE_BWRAP`` or ``bwrap`` on PATH) and check, once, that it can make a sandbox here."""
    chosen = os.environ.get(BWRAP_VARIABLE)
    path = chosen if chosen else shutil.which("bwrap")
    if not path or not os.access(path, os.X_OK) or os.path.isdir(path):
        where = f"{chosen} (from ${BWRAP_VARIABLE})" if chosen else "bwrap on PATH"
        return Bubblewrap(
            None, "", f"bubblewrap, which every bot runs in, is not installed (looked for {where}): "
            f"install it with `{INSTALL_COMMAND}`",
        )  # fmt: skip
    try:
        version = _run([path, "--version"]).stdout.strip()
        usage = _run([path, "--help"]).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return Bubblewrap(path, "", f"bubblewrap ({path}) does not run: {error}")
    found = Bubblewrap(path, version, None, "--size" in usage, "--disable-userns" in usage)
    probe = [path, *_namespace_options(found, network_host=False), "--ro-bind", "/", "/", "--", "true"]
    try:
        done = _run(probe)
    except (OSError, subprocess.SubprocessError) as error:
        return Bubblewrap(path, version, f"bubblewrap ({path}) cannot make a sandbox here: {error}")
    if done.returncode != 0:
        detail = done.stderr.strip() or f"exit code {done.returncode}"
        return Bubblewrap(
            path, version, f"bubblewrap ({path}) cannot make a sandbox here ({detail}); it needs root, or a kernel "
            "that allows unprivileged user namespaces",
        )  # fmt: skip
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL
    )


def _namespace_options(bwrap: Bubblewrap, network_host: bool) -> list[str]:
    options = list(NAMESPACE_OPTIONS)
    if bwrap.disables_userns:
        options.append("--disable-userns")
    if not network_host:
        options.append("--unshare-net")
    return options


# ----- what a sandbox shows ----------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxPlan:
    """Everything one bot's sandbox shows, and how. Paths are absolute; folders are bound at their own path."""

    read_only: tuple[str, ...]  # the bot's own folders and what its program needs
    read_write: tuple[str, ...]  # folders shared with it read-write
    hidden: tuple[str, ...]  # never shown, even inside a folder it sees
    cwd: str
    socket_dir: str | None  # bound read-write at SOCKET_DIR_INSIDE
    network_host: bool
    writable_bytes: int | None  # the size of /tmp, /scratch and /dev/shm each
    bind_sources: tuple[tuple[str, str], ...] = ()  # (read-write folder, what is bound there instead)

    def argv(self, bwrap: Bubblewrap) -> list[str]:
        """bubblewrap's command line up to the bot's command (which follows)."""
        argv = [bwrap.path, *_namespace_options(bwrap, self.network_host)]
        argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        for folder in SYSTEM_FOLDERS:
            argv += ["--ro-bind", folder, folder]
        argv += _system_links()
        argv += _etc_masks()
        argv += ["--proc", "/proc", "--dev", "/dev"]
        for place in ("/tmp", SCRATCH_INSIDE, "/dev/shm"):
            if self.writable_bytes is not None and bwrap.sizes_tmpfs:
                argv += ["--size", str(self.writable_bytes)]
            argv += ["--perms", "1777", "--tmpfs", place]
        if self.socket_dir is not None:
            argv += ["--bind", self.socket_dir, SOCKET_DIR_INSIDE]
        binds, links = _binds(self.read_only, self.read_write)
        sources = dict(self.bind_sources)
        for path, writable in binds:
            argv += ["--bind" if writable else "--ro-bind", sources.get(path, path), path]
        for target, link in links:
            argv += ["--symlink", target, link]
        bound = [path for path, _ in binds]
        for path in _outermost(self.hidden):
            argv += _mask(path, bound)
        if not _is_visible(self.cwd, bound):
            argv += ["--dir", self.cwd]
        # The sandbox's own root (where the folders above hang) is read-only too: write to /tmp and /scratch.
        argv += ["--remount-ro", "/", "--chdir", self.cwd]
        return argv


def plan_sandbox(
    command: Sequence[str],
    cwd: str | None,
    *,
    own_folders: Sequence[str] | None = None,
    shared: Sequence[str] = (),
    shared_sources: Sequence[str] | None = None,
    hidden: Sequence[str] = (),
    socket_dir: str | None = None,
    network_host: bool = False,
    limits: ResourceLimits = DEFAULT_LIMITS,
    search_path: str | None = None,
) -> SandboxPlan:
    """Decide what a bot's sandbox shows.

    Its own folders, read-only: ``own_folders`` when given (a submission:
    its folder, and its program's installation only when the program is a
    bare name found on ``PATH`` or the referee's Python, since the bot's
    author chose its run command); otherwise (a command written by the
    organiser) its ``cwd`` and, for each argument that names an existing
    file or folder, that file's folder or that folder. Hidden paths are
    masked where they fall inside a folder it sees. ``shared_sources``: the
    folder bound at each of ``shared`` (default: the folder itself).
    """
    given_cwd = os.path.abspath(cwd) if cwd else None
    cwd = given_cwd or os.getcwd()
    program = command[0]
    if own_folders is not None:
        read_only = list(own_folders)
    else:
        read_only = [*([given_cwd] if given_cwd else []), *_argument_folders(command[1:], cwd)]
    located = _locate(program, cwd, search_path)
    if located is not None and (own_folders is None or "/" not in program or _is_referee_python(located)):
        read_only += _runtime_folders(located)
    return SandboxPlan(
        read_only=_bindable(read_only),
        read_write=_bindable(shared),
        hidden=tuple(dict.fromkeys(os.path.abspath(path) for path in hidden)),
        cwd=cwd,
        socket_dir=socket_dir,
        network_host=network_host,
        writable_bytes=limits.output_bytes,
        bind_sources=tuple(
            (os.path.realpath(folder), os.path.realpath(source))
            for folder, source in zip(shared, shared_sources or shared, strict=True) if folder != source
        ),
    )  # fmt: skip


def _bindable(folders: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.abspath(folder) for folder in folders if _is_bindable(folder)))


def sandbox_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's environment: a few of the referee's variables, its scratch folder as home, and ``extra``."""
    env = {name: value for name, value in os.environ.items() if name in INHERITED_VARIABLES or name.startswith("LC_")}
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(HOME=SCRATCH_INSIDE, TMPDIR="/tmp", **{SCRATCH_VARIABLE: SCRATCH_INSIDE})
    env.update(extra)
    return env


def _argument_folders(arguments: Sequence[str], cwd: str) -> list[str]:
    """The folders of the existing files, and the existing folders, that ``arguments`` name."""
    folders = []
    for argument in arguments:
        if not argument or argument.startswith("-"):
            continue
        path = os.path.join(cwd, argument)
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue
        folder = path if stat.S_ISDIR(mode) else os.path.dirname(path)
        folders.append(folder)
    return folders


def _locate(program: str, cwd: str, search_path: str | None) -> str | None:
    if "/" in program:
        path = os.path.join(cwd, program)
        return path if os.access(path, os.X_OK) else None
    return shutil.which(program, path=search_path)


def _runtime_folders(program: str) -> list[str]:
    """What a program needs to run, beyond the system: its installation, for the path as given and as resolved.

    A program in a folder called ``bin`` is installed in that folder's
    parent (``.venv/bin/python`` in ``.venv``); any other in its own folder.
    The referee's Python adds its virtual environment, its base installation
    and the ``referee`` package (which an editable install leaves in the
    source tree).
    """
    folders = []
    for path in dict.fromkeys((os.path.abspath(program), os.path.realpath(program))):
        folder = os.path.dirname(path)
        if os.path.basename(folder) == "bin":
            folder = os.path.dirname(folder)
        folders.append(folder)
    if _is_referee_python(program):
        import referee

        folders += [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(referee.__file__))]
    return folders


def _is_referee_python(program: str) -> bool:
    interpreters = {
        os.path.realpath(sys.executable),
        os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
    }
    return os.path.realpath(program) in interpreters


def _is_bindable(folder: str) -> bool:
    """Whether a folder may be bound into a sandbox: not the root, not the system (already there), not /proc and kin."""
    real = os.path.realpath(folder)
    if real == "/" or not os.path.isdir(real):
        return False
    return not any(_within(real, top) for top in (*SYSTEM_FOLDERS, *SPECIAL_FOLDERS))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _binds(read_only: Sequence[str], read_write: Sequence[str]) -> tuple[list[tuple[str, bool]], list[tuple[str, str]]]:
    """The bind mounts (real path, writable), parents first, and the symlinks for paths given through one."""
    writable = {os.path.realpath(path) for path in read_write if os.path.isdir(path)}
    chosen: dict[str, bool] = {}
    links = []
    for path in [*read_only, *read_write]:
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue
        chosen[real] = real in writable
        if path != real:
            links.append((real, path))
    binds = sorted(chosen.items(), key=lambda item: (item[0].count("/"), item[0]))
    bound = list(chosen)
    # A path reached through a symlink gets the link, unless a bound folder already shows it.
    links = [(real, path) for real, path in dict.fromkeys(links) if not _is_visible(path, bound)]
    return binds, links


def _is_visible(path: str, bound: Sequence[str]) -> bool:
    return any(_within(path, folder) for folder in bound)


def _outermost(paths: Sequence[str]) -> list[str]:
    """The paths not inside another of them: masking a folder hides what it holds, and a mask cannot be
    made inside another (bubblewrap cannot create its mount point in a read-only, empty folder)."""
    real = [os.path.realpath(path) for path in paths]
    return [path for path, resolved in zip(paths, real, strict=True)
            if not any(other != resolved and _within(resolved, other) for other in real)]  # fmt: skip


def _mask(path: str, bound: Sequence[str]) -> list[str]:
    """Options that hide ``path`` where a bound folder shows it, unless it holds one of the bot's own folders."""
    real = os.path.realpath(path)
    if not os.path.exists(real) or not _is_visible(real, bound) or any(_within(folder, real) for folder in bound):
        return []
    if os.path.isdir(real):
        return ["--tmpfs", real, "--remount-ro", real]
    return ["--ro-bind", "/dev/null", real]


@functools.cache
def _system_links() -> tuple[str, ...]:
    options = []
    for entry in SYSTEM_LINKS:
        if os.path.islink(entry):
            options += ["--symlink", os.readlink(entry), entry]
        elif os.path.isdir(entry):
            options += ["--ro-bind", entry, entry]
    return tuple(options)


@functools.cache
def _etc_masks() -> tuple[str, ...]:
    """Options that hide what in /etc only its owner may read (password hashes, private keys).

    The bot runs as the referee's user, so it could read them otherwise.
    """
    options: list[str] = []
    for folder, subfolders, files in os.walk("/etc"):
        for name in list(subfolders):
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                mode = os.lstat(path).st_mode
                if stat.S_ISDIR(mode) and (mode & 0o005) != 0o005:
                    options += ["--tmpfs", path, "--remount-ro", path]
                    subfolders.remove(name)
        for name in files:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                mode = os.lstat(path).st_mode
                if stat.S_ISREG(mode) and not mode & 0o004:
                    options += ["--ro-bind", "/dev/null", path]
    return tuple(options)


# ----- the wrapper that joins the cgroups and sets the rlimits ------------------------------------


def launch_argv(cgroup_procs: Sequence[str], rlimits: Sequence[str], inner: Sequence[str]) -> list[str]:
    """The command that puts itself in the bot's cgroups, sets ``rlimits`` (``ulimit`` arguments) and runs ``inner``."""
    script = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
    script += "".join(f"ulimit {limit} || exit 125; " for limit in rlimits)
    script += 'exec "$@"'
    return ["sh", "-c", script, "referee-bot", *cgroup_procs, "--", *inner]


def rlimit_arguments(limits: ResourceLimits, enforced_by: Mapping[str, str], sandboxed: bool) -> list[str]:
    """The ``ulimit`` arguments for the limits that rlimits enforce (see :func:`enforcement`), and no core files."""
    arguments = ["-c 0"]  # a core file would land in the bot's folder
    if limits.open_files is not None:
        arguments.append(f"-n {limits.open_files}")
    if enforced_by.get("memory_mb") == RLIMIT and limits.memory_mb is not None:
        arguments.append(f"-v {limits.memory_mb * 1024}")
    if enforced_by.get("cpu_seconds") == RLIMIT and limits.cpu_seconds is not None:
        # The hard limit a second later: the soft one sends SIGXCPU, which names the cause.
        arguments += [f"-H -t {limits.cpu_seconds + 1}", f"-S -t {limits.cpu_seconds}"]
    if not sandboxed and limits.output_mb is not None:
        arguments.append(f"-f {limits.output_mb * 2048}")  # in 512-byte blocks
    return arguments


def unsandboxed_argv(command: Sequence[str]) -> list[str]:
    """A command run without the sandbox, killed when the referee dies (``setpriv --pdeathsig``, where present)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else list(command)


# ----- cgroups -----------------------------------------------------------------------------------

RLIMIT = "rlimit"
NOT_ENFORCED = "not enforced"


@dataclass(frozen=True)
class _Hierarchy:
    """One cgroup hierarchy where this referee makes its bots' cgroups: ``folder`` is its own, under its cgroup."""

    kind: str  # "v2", or the v1 controller: "memory", "pids", "cpuacct"
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


def enforcement(sandboxed: bool = True) -> dict[str, str]:
    """How each limit is enforced on this machine: limit key -> "cgroup v1 memory", "rlimit", ..."""
    support = cgroup_support()
    memory, pids, cpu = support.memory(), support.pids(), support.cpu()
    names = {"memory": f"cgroup {'v2' if memory == 'v2' else 'v1'} memory",
             "pids": f"cgroup {'v2' if pids == 'v2' else 'v1'} pids",
             "cpuacct": "cgroup v1 cpuacct", "v2": "cgroup v2 cpu.stat"}  # fmt: skip
    bwrap = bubblewrap()
    output = "log cap, tmpfs size" if sandboxed and bwrap.sizes_tmpfs else "log cap, rlimit (file size)"
    return {
        "memory_mb": names["memory"] if memory else RLIMIT,
        "processes": names["pids"] if pids else NOT_ENFORCED,
        "cpu_seconds": f"{names[cpu]}, watched by the referee" if cpu else RLIMIT,
        "open_files": RLIMIT,
        "output_mb": output,
    }


def machine_summary(sandboxed: bool = True) -> str:
    """One line on how bots are contained and limited here, for the start of a run."""
    how = enforcement(sandboxed)
    if sandboxed:
        bwrap = bubblewrap()
        sandbox = (bwrap.version or "bubblewrap") if bwrap.problem is None else f"unavailable ({bwrap.problem})"
    else:
        sandbox = "none (turned off)"
    words = {"memory_mb": "memory", "processes": "processes", "cpu_seconds": "CPU time", "open_files": "open files",
             "output_mb": "output"}  # fmt: skip
    limits = "; ".join(f"{words[key]}: {how[key]}" for key in LIMIT_KEYS)
    return f"sandbox: {sandbox}; {limits}; clock: {clock_description()}"


def clock_description() -> str:
    """What the honest clock can measure of a bot here."""
    support = cgroup_support()
    if support.v2 is not None and support.pressure():
        return "CPU time and CPU stall of each bot's processes (cgroup v2 cpu.stat, cpu.pressure)"
    if support.cpu() is not None:
        source = "cgroup v2 cpu.stat" if support.v2 is not None else "cgroup v1 cpuacct"
        return f"CPU time of each bot's processes ({source}); no CPU stall (no cgroup v2 cpu.pressure)"
    return "wall time only (no cgroup for the bots: " + ("; ".join(support.problems) or "none found") + ")"


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
    controllers: frozenset[str] = frozenset()
    if v2 is not None:
        controllers = _enable_v2_controllers(v2, problems)
    support = CgroupSupport(v2, controllers, v1, tuple(problems))
    atexit.register(_remove_own_folders, support)
    return support


# The v1 controllers a hierarchy may carry, to match /proc/self/cgroup's lines with the mounts.
_V1_CONTROLLERS = {
    "cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls", "blkio", "perf_event", "net_prio",
    "hugetlb", "pids", "rdma", "misc",
}  # fmt: skip


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
    if not _within(own, root):
        problems.append(f"{label}: this process's cgroup {own} is outside the mount at {mount_point}")
        return None
    own_folder = Path(mount_point) / os.path.relpath(own, root)
    folder = own_folder / f"referee-{referee_token()}"
    try:
        remove_leftovers(own_folder)
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


@functools.cache
def _token_of(pid: int) -> str:
    return f"{_pid_namespace()}-{pid}-{_start_time(pid)}"


def referee_token() -> str:
    """``NS-PID-START`` (PID namespace, pid and start time of this process): names what it leaves behind,
    so that a later referee can tell whether its owner is gone."""
    return _token_of(os.getpid())


def _pid_namespace() -> str:
    try:
        return re.sub(r"\D", "", os.readlink("/proc/self/ns/pid"))
    except OSError:
        return "0"


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _is_gone(token: str) -> bool:
    """Whether the referee named by ``NS-PID-START`` has ended; never for another PID namespace's (it cannot tell)."""
    namespace, pid, start = token.split("-")
    return namespace == _pid_namespace() and _start_time(int(pid)) != start


_LEFTOVER = re.compile(r"referee-(\d+-\d+-\d+)(?:-.*)?\Z")


def remove_leftovers(folder: str | os.PathLike[str]) -> list[str]:
    """Remove what referees that are gone left in ``folder`` (cgroups, socket folders); return what was removed.

    A cgroup's remaining processes are killed first (a bot of a referee
    killed by SIGKILL dies with it; without the sandbox, what it started may
    not). Only ``referee-PID-START...`` entries whose referee has ended are
    touched.
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False) or not _is_gone(match[1]):
            continue
        path = Path(entry.path)
        if (path / "cgroup.procs").exists():
            if _remove_cgroup_tree(path):
                removed.append(entry.path)
        else:
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                removed.append(entry.path)
    return removed


def _remove_cgroup_tree(folder: Path) -> bool:
    """Kill every process in a cgroup and its children, and remove them all; True when it is gone."""
    children = [Path(entry.path) for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    for child in children:
        _remove_cgroup_tree(child)
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
        kind = self.support.pids()
        if kind is not None and self.limits.processes is not None:
            refused = _counter(self.folders[kind] / "pids.events", "max")
            if refused:
                starts = "start" if refused == 1 else "starts"
                text = f"process limit of {self.limits.processes} reached ({refused} process {starts} refused)"
                hits.append(("processes", text))
        return hits

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


def make_cgroup(limits: ResourceLimits) -> BotCgroup | None:
    """A new bot's cgroups with ``limits`` written in, or None where the machine lets the referee make none."""
    support = cgroup_support()
    if support.v2 is None and not support.v1:
        return None
    return BotCgroup(support, limits)


# ----- socket folders ------------------------------------------------------------------------------


def make_socket_dir() -> str:
    """A new private folder (mode 0700) for one bot's socket, named for this referee so a later one can clean up."""
    folder = tempfile.gettempdir()
    _clean_socket_folder(folder)
    path = tempfile.mkdtemp(prefix=f"referee-{referee_token()}-", dir=folder)
    os.chmod(path, 0o700)
    return path


_cleaned_socket_folders: set[str] = set()


def _clean_socket_folder(folder: str) -> None:
    if folder not in _cleaned_socket_folders:
        _cleaned_socket_folders.add(folder)
        remove_leftovers(folder)
