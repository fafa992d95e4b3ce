"""What a referee leaves behind (cgroups, socket folders), named so that a later one can tell and remove it.

A referee killed by SIGKILL cannot remove what it made for its bots: each
such folder is named ``referee-NS-PID-START...`` (the referee's PID
namespace, pid and start time), and the next referee to start removes those
whose referee has ended (:func:`remove_leftovers`).

Whatever a bot left in a folder (thousands of nested folders, hundreds of
thousands of files, symbolic link loops, folders without permissions) is
removed by :func:`remove_tree`, which walks iteratively with one open
folder at a time, follows no link and never raises; callers on the event
loop run it in a thread.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

_LEFTOVER = re.compile(r"referee-(\d+-\d+-\d+)(?:-.*)?\Z")
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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


def remove_leftovers(folder: str | os.PathLike[str], remove: Callable[[Path], bool] | None = None) -> list[str]:
    """Remove what referees that are gone left in ``folder``; return what was removed.

    Only ``referee-NS-PID-START...`` folders whose referee has ended are
    touched, each by ``remove`` (default :func:`remove_tree`; the cgroups
    pass one that kills what is left in a cgroup first). Never raises.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        try:
            if match is None or not entry.is_dir(follow_symlinks=False) or not _is_gone(match[1]):
                continue
        except (OSError, ValueError):
            continue
        if (remove or remove_tree)(Path(entry.path)):
            removed.append(entry.path)
    return removed


def remove_tree(path: str | os.PathLike[str]) -> bool:
    """Remove ``path`` and all it holds, however deep, many or odd its entries are; True when it is gone.

    One folder is open at a time (the walk climbs back through ``..``), so
    depth costs neither recursion nor file descriptors; links are removed,
    never followed; a folder without permissions is given them first; an
    entry that cannot be removed is left and the rest goes. Never raises.
    """
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    with contextlib.suppress(Exception):
        parent_fd = os.open(parent, _FOLDER_FLAGS)
        try:
            _remove_entry(parent_fd, name)
        finally:
            os.close(parent_fd)
    return not os.path.lexists(path)


def _remove_entry(parent_fd: int, name: str) -> None:
    mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
    if not stat.S_ISDIR(mode):
        os.unlink(name, dir_fd=parent_fd)
        return
    fd = _open_folder(parent_fd, name)
    names: list[str] = []  # the way down from the top folder, one name a level
    stuck: set[tuple[int, int]] = set()  # folders that could not be emptied: not entered again
    while True:
        below = _empty_files(fd, stuck)
        if below is not None:
            try:
                child = _open_folder(fd, below)
            except OSError:
                stuck.add(_identity(fd, below))
                continue
            os.close(fd)
            fd = child
            names.append(below)
            continue
        if not names:  # the top folder holds nothing more that can go
            os.close(fd)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=parent_fd)
            return
        up = os.open("..", _FOLDER_FLAGS & ~os.O_NOFOLLOW, dir_fd=fd)
        done = names.pop()
        identity = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
        os.close(fd)
        fd = up
        try:
            os.rmdir(done, dir_fd=fd)
        except OSError:
            stuck.add(identity)


def _empty_files(fd: int, stuck: set[tuple[int, int]]) -> str | None:
    """Remove the non-folders in the folder open as ``fd``; return a sub-folder to empty next, if any."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    if (info.st_dev, info.st_ino) not in stuck:
                        return entry.name
                    continue
                os.unlink(entry.name, dir_fd=fd)
            except OSError:
                continue
    return None


def _open_folder(parent_fd: int, name: str) -> int:
    """Open a folder for the walk, giving it (as its owner) the permissions to list and empty it."""
    try:
        fd = os.open(name, _FOLDER_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent_fd)
        fd = os.open(name, _FOLDER_FLAGS, dir_fd=parent_fd)
    mode = os.fstat(fd).st_mode
    if mode & 0o700 != 0o700:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(mode) | 0o700)
    return fd


def _identity(parent_fd: int, name: str) -> tuple[int, int]:
    try:
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)
