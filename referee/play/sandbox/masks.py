"""Masking: hiding what a bot must not see wherever it falls inside what the bot sees, each path on its own.

The hidden paths of a bot are the competition's: the league's output (its
results, game logs, the bots' logs, the builds of the other submissions),
the league file (the seed, every bot's command and environment), and every
other bot's own files and folders (its cwd, what its command names, its
submission folder, its shared folders). Each is covered, independently of
the others, wherever a folder the bot sees shows it: a folder by an empty
read-only one, a file by an empty file. A hidden folder that holds one of
the bot's own folders is covered all the same, and the bot's folder shown
again on top (a submission runs from its copy in the output); a hidden path
that is one of the bot's own is the bot's to see (two bots given the same
folder share it).

:func:`naming_a_hidden_path` is how the league file refuses a command that
names a hidden path, before any bot starts.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.play.sandbox.view import within


def mount_options(
    read_only: Sequence[str],
    read_write: Sequence[str],
    hidden: Sequence[str],
    sources: Mapping[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """bubblewrap's options that show the bot's files and hide the hidden paths, in order, and the remounts that
    must come once every mount is made (a mask stays writable until then, for the bot's folders inside it).
    ``sources``: what is bound at a path instead of the path itself (a lane's copy of a shared folder)."""
    sources = sources or {}
    binds, links = _binds(read_only, read_write)
    bound = {path for path, _ in binds}
    masks = [
        real
        for real in dict.fromkeys(os.path.realpath(path) for path in hidden)
        if os.path.lexists(real) and real not in bound
    ]
    # Parents before what they hold; at the same depth a folder's own mount before a mask of a path in it.
    steps: list[tuple[str, str]] = [(path, "bind") for path, _ in binds] + [(path, "mask") for path in masks]
    steps.sort(key=lambda step: (step[0].count("/"), step[1] == "mask", step[0]))
    writable = dict(binds)
    shown: list[tuple[str, str]] = []  # (path, "bind" or "mask") as mounted so far
    options: list[str] = []
    remounts: list[str] = []
    for path, kind in steps:
        if kind == "bind":
            options += _way_to(path, shown)
            options += ["--bind" if writable[path] else "--ro-bind", sources.get(path, path), path]
            shown.append((path, kind))
            continue
        if _shown_by(path, shown) != "bind":
            continue  # not visible: outside every folder shown, or already under a mask
        if os.path.isdir(path):
            options += ["--tmpfs", path]
            remounts += ["--remount-ro", path]
        else:
            options += ["--ro-bind", "/dev/null", path]
        shown.append((path, kind))
    for target, link in links:
        options += ["--symlink", target, link]
    return options, remounts


def _shown_by(path: str, shown: Sequence[tuple[str, str]]) -> str | None:
    """How the deepest mount made so far that holds ``path`` shows it ("bind" or "mask"); None: the empty root."""
    covering = [(other, how) for other, how in shown if within(path, other)]
    return max(covering, key=lambda item: len(item[0]))[1] if covering else None


def _way_to(path: str, shown: list[tuple[str, str]]) -> list[str]:
    """Options that make the folders on the way to ``path`` that no bound folder shows, traversable by anyone
    (bubblewrap would copy the host's modes: a bot of its own user could not reach its own files under /root)."""
    options = []
    parts = path.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/" + "/".join(parts[:depth])
        if _shown_by(folder, shown) != "bind" and (folder, "dir") not in shown:
            options += ["--perms", "0755", "--dir", folder]
            shown.append((folder, "dir"))
    return options


def way_to(path: str, read_only: Sequence[str], read_write: Sequence[str]) -> list[str]:
    """Options that make ``path`` and the folders on the way to it, where no bound folder shows them."""
    shown = [(os.path.realpath(other), "bind") for other in (*read_only, *read_write)]
    return [
        *_way_to(path, shown),
        *([] if is_shown(path, read_only, read_write) else ["--perms", "0755", "--dir", path]),
    ]


def is_shown(path: str, read_only: Sequence[str], read_write: Sequence[str]) -> bool:
    """Whether ``path`` lies inside a file or folder the sandbox shows (rather than in its own empty root)."""
    return any(within(path, os.path.realpath(shown)) for shown in (*read_only, *read_write))


def _binds(read_only: Sequence[str], read_write: Sequence[str]) -> tuple[list[tuple[str, bool]], list[tuple[str, str]]]:
    """The bind mounts (real path, writable), and the symlinks for paths given through one."""
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
    bound = list(chosen)
    # A path reached through a symlink gets the link, unless a bound folder already shows it.
    links = [(real, path) for real, path in dict.fromkeys(links) if not any(within(path, other) for other in bound)]
    return list(chosen.items()), links


@dataclass(frozen=True)
class Owner:
    """A bot and what is its own, for hiding it from the others: (path, what it is) each, and where it runs."""

    name: str
    cwd: str
    paths: tuple[tuple[str, str], ...]
    private: tuple[str, ...] = ()  # of its paths, those never shared: its submission folder, its shared folders


def hidden_from_each(
    owners: Sequence[Owner], competition: Sequence[tuple[str, str]]
) -> dict[str, list[tuple[str, str]]]:
    """What each bot must not see, by name: ``competition`` ((path, what it is): the output, the league file) and
    every other bot's own paths; but for those private to it, not those that are its own too (two commands
    naming one file) nor those that hold where it runs (a bot's cwd is often the league's folder, which holds
    every bot's files: what is hidden there is hidden path by path)."""
    hidden = {}
    for owner in owners:
        mine = {path for path, _ in owner.paths}
        others = [
            (path, f"{other.name}'s {what}")
            for other in owners
            if other.name != owner.name
            for path, what in other.paths
            if path in other.private or (path not in mine and not within(owner.cwd, path))
        ]
        hidden[owner.name] = list(dict.fromkeys([*competition, *others]))
    return hidden


def naming_a_hidden_path(
    named: Sequence[tuple[str, str]], hidden: Sequence[tuple[str, str]], files_shared_from: Sequence[str] = ()
) -> tuple[str, str, str] | None:
    """The first of ``named`` ((as written, absolute path)) that is or lies inside one of ``hidden`` ((path, what
    it is)), as (as written, hidden path, what it is); None if none does.

    A file inside one of ``files_shared_from`` (other bots' folders) does not count: naming it shares that file
    alone (the league's own tournaments run one sample bot from the folder of another).
    """
    for written, path in named:
        real = os.path.realpath(path)
        for hidden_path, what in hidden:
            if within(path, hidden_path) or within(real, os.path.realpath(hidden_path)):
                if hidden_path in files_shared_from and os.path.isfile(real):
                    continue
                return written, hidden_path, what
    return None


@functools.cache
def etc_masks() -> tuple[str, ...]:
    """Options that hide what in /etc only its owner may read (password hashes, private keys).

    The bot may run as the referee's user, who could read them otherwise.
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
