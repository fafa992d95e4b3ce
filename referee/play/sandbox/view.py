"""What a bot's sandbox shows: its own files, what its program needs, its writable places and its environment.

A bot sees the system read-only (``/usr``, ``/bin``, ``/lib*``, and
``/etc`` without the files only root may read), its own files read-only,
what its program needs to run (the program's installation; for Python, the
referee's virtual environment and the ``referee`` package), its writable
places (``/tmp``, ``/scratch``, ``/dev/shm`` and its socket's folder
``/run/referee``: each a small file system in memory of its own), a
private ``/proc`` and a minimal ``/dev``. Nothing else: no home folders, no
``/work``, no ``/var``, no other bot's files, sockets or processes.

A bot's own files, for a command the organiser wrote: its ``cwd`` when the
league file gives one (the bot's folder), and what its command names (the
folder of each file it names, or the file alone when that folder is the
league's, which holds the league file and the results; each folder it
names). For a submission: its built copy, and nothing its run command
names, as its author wrote that. Hidden paths (:mod:`referee.play.sandbox.masks`)
are masked wherever they fall inside what it sees.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from referee.play.sandbox.limits import DEFAULT_LIMITS, ResourceLimits

# Where a sandboxed bot finds its socket's folder, its scratch folder and its temporary files.
SOCKET_DIR_INSIDE = "/run/referee"
SCRATCH_INSIDE = "/scratch"
SCRATCH_VARIABLE = "REFEREE_BOT_SCRATCH"
# Every place a sandboxed bot can write (besides its shared folders): each a tmpfs of output_mb.
WRITABLE_PLACES = ("/tmp", SCRATCH_INSIDE, "/dev/shm", SOCKET_DIR_INSIDE)

# The system a bot sees read-only; the /bin-like entries are symlinks into /usr on merged-/usr systems.
SYSTEM_FOLDERS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Folders never bound from an argument or a program's location: the sandbox has its own.
SPECIAL_FOLDERS = ("/proc", "/sys", "/dev", "/run")
# The variables a sandboxed bot inherits from the referee (everything else it gets is set here or by its spec).
INHERITED_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM")  # and every LC_*
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class SandboxPlan:
    """Everything one bot's sandbox shows, and how. Paths are absolute; each is shown at its own path."""

    read_only: tuple[str, ...]  # the bot's own files and folders, and what its program needs
    read_write: tuple[str, ...]  # folders shared with it read-write
    hidden: tuple[str, ...]  # never shown, even inside a folder it sees
    cwd: str
    network_host: bool
    writable_bytes: int | None  # the size of each writable place
    user: int | None = None  # the uid and gid it runs as (the referee is root), or None: the referee's user
    bind_sources: tuple[tuple[str, str], ...] = ()  # (read-write folder, what is bound there instead: a lane's copy)
    # With read-write folders its user is also in SHARED_GROUP, the group that may write shared folders; a build's
    # copy is its user's own, so a build is in no group but its own.
    shared_group: bool = True


def plan_sandbox(
    command: Sequence[str],
    cwd: str | None,
    *,
    own_folders: Sequence[str] | None = None,
    shared: Sequence[str] = (),
    shared_sources: Sequence[str] | None = None,
    hidden: Sequence[str] = (),
    network_host: bool = False,
    limits: ResourceLimits = DEFAULT_LIMITS,
    search_path: str | None = None,
    user: int | None = None,
) -> SandboxPlan:
    """Decide what a bot's sandbox shows.

    Its own files, read-only: ``own_folders`` when given (a submission: its
    folder; a league's command: :func:`command_folders`), otherwise what
    :func:`command_folders` finds, with ``cwd`` among them when given; and
    its program's installation when the program is a bare name found on
    ``PATH`` or the referee's Python (a program given by path is among its
    own files already). Nothing inside a hidden path is shown, but for its
    own folders (a submission runs from the league's copy, in the output).
    ``shared_sources``: the folder bound at each of ``shared`` (default: the
    folder itself; a process of lane ``k > 0`` gets its lane's copies).
    """
    given_cwd = os.path.abspath(cwd) if cwd else None
    cwd = given_cwd or os.getcwd()
    program = command[0]
    own = list(own_folders) if own_folders is not None else command_folders(command, cwd, given_cwd is not None)
    needed = []
    located = _locate(program, cwd, search_path)
    if located is not None and ("/" not in program or _is_referee_python(located)):
        needed = _runtime_folders(located)
    hidden_paths = tuple(dict.fromkeys(os.path.abspath(path) for path in hidden))
    needed = [path for path in needed if not any(within(os.path.realpath(path), h) for h in hidden_paths)]
    return SandboxPlan(
        read_only=_bindable([*own, *needed]),
        read_write=_bindable(shared),
        hidden=hidden_paths,
        cwd=cwd,
        network_host=network_host,
        writable_bytes=limits.output_bytes,
        user=user,
        bind_sources=tuple(
            (os.path.realpath(folder), os.path.realpath(source))
            for folder, source in zip(shared, shared_sources or shared, strict=True)
            if folder != source
        ),
    )


def command_folders(
    command: Sequence[str], cwd: str, bind_cwd: bool, *, bare_cwd: bool = False, hidden: Sequence[str] = ()
) -> list[str]:
    """What a command written by the organiser needs of its files, read-only.

    ``cwd`` when ``bind_cwd``; each folder it names; the folder of each file
    it names (the installation of its program, when given by path: the
    folder above ``bin/``, or its own), or the file alone when that folder
    is ``cwd`` and ``bare_cwd`` (a league's own folder, shown bare), or lies
    in one of ``hidden``.
    """
    cwd = os.path.abspath(cwd)
    needed = [cwd] if bind_cwd else []
    for index, (_, path) in enumerate(named_paths(command, cwd, options=False)):
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue
        folder = os.path.dirname(path)
        if stat.S_ISDIR(mode) or (folder == cwd and bare_cwd) or any(within(folder, place) for place in hidden):
            needed.append(path)
        elif index == 0 and "/" in command[0]:
            needed += _runtime_folders(path)
        else:
            needed.append(os.path.dirname(path))
    return needed


def named_paths(command: Sequence[str], cwd: str, options: bool = True) -> list[tuple[str, str]]:
    """(as written, absolute path) of what a command may name: its program when given by path, each argument
    that is not an option, and (with ``options``) the value of each ``--name=VALUE``."""
    named = []
    if "/" in command[0]:
        named.append((command[0], command[0]))
    for argument in command[1:]:
        if not argument:
            continue
        if argument.startswith("-"):
            _, equals, value = argument.partition("=")
            if not (options and equals and value):
                continue
            named.append((argument, value))
        else:
            named.append((argument, argument))
    return [(written, os.path.normpath(os.path.join(cwd, path))) for written, path in named if "\0" not in path]


def own_paths(command: Sequence[str], cwd: str) -> list[str]:
    """The existing files and folders a command names that are its own: what other bots must not see.

    The system, the sandbox's own folders and the referee's Python are no
    bot's own (every bot may see them).
    """
    paths = []
    for _, path in named_paths(command, cwd):
        real = os.path.realpath(path)
        if os.path.exists(real) and _is_bindable(real) and not _is_referee_python(real):
            paths.append(path)
    return paths


def closed_to_others(paths: Iterable[str]) -> str | None:
    """The first of ``paths`` that a user of no group of its own could not read (a folder it could not list
    and enter, a file it could not read), or None: what a bot running as its own user cannot use."""
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        needed = stat.S_IROTH | stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
        if mode & needed != needed:
            return path
    return None


def sandbox_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's environment: a few of the referee's variables, its scratch folder as home, and ``extra``."""
    env = {name: value for name, value in os.environ.items() if name in INHERITED_VARIABLES or name.startswith("LC_")}
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(HOME=SCRATCH_INSIDE, TMPDIR="/tmp", **{SCRATCH_VARIABLE: SCRATCH_INSIDE})
    env.update(extra)
    return env


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (as written: resolve both first where links matter)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _bindable(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.abspath(path) for path in paths if _is_bindable(path)))


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


def _is_bindable(path: str) -> bool:
    """Whether a file or folder may be shown in a sandbox: not the root, not the system (already there), not /proc
    and kin."""
    real = os.path.realpath(path)
    if real == "/" or not (os.path.isdir(real) or os.path.isfile(real)):
        return False
    return not any(within(real, top) for top in (*SYSTEM_FOLDERS, *SPECIAL_FOLDERS))
