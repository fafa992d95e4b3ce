"""The unprivileged user each bot runs as when the referee is root: chosen, never created, never anyone's.

A referee run as root would otherwise run its bots as root too: inside a
user namespace, but root of the host for what the kernel checks by user
(global settings under ``/proc/sys``, say). So each bot runs as a user of
its own, chosen from a range far above the machine's users: the bot's name
picks a number in ``[FIRST_BOT_ID, FIRST_BOT_ID + BOT_ID_COUNT)``, and the
next free one is taken where that is in use, or named by ``/etc/passwd`` or
``/etc/group`` (read through the C library, so also by NSS), or in a range
of ``/etc/subuid`` or ``/etc/subgid``. Nothing is added to the machine's
user database: inside the sandbox the number has no name. The same bot gets
the same number every run (what it leaves in its ``shared:`` folders stays
its own), and no two bots of one referee share one. Its group has the same
number; a bot with ``shared:`` folders is also in the group
:data:`SHARED_GROUP`, which those folders are given (see :func:`share_folder`).

When the referee is not root, bots run as the referee's user (as the
sandbox's root without privileges, in a user namespace of their own), and
this module chooses nothing.
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import stat
from pathlib import Path

from referee.play.sandbox.cgroups import SandboxError

FIRST_BOT_ID = 1_900_000_000  # above the ranges systemd hands to containers (up to 1,879,048,191)
BOT_ID_COUNT = 1 << 20
SHARED_GROUP = FIRST_BOT_ID - 1  # the group of folders shared read-write with bots

_chosen: dict[str, int] = {}  # bot name -> its id, in this process


def runs_as_root() -> bool:
    return os.geteuid() == 0


def bot_user(name: str) -> int | None:
    """The uid (and gid) the bot called ``name`` runs as; None when the referee is not root (it runs as the referee)."""
    if not runs_as_root():
        return None
    if name in _chosen:
        return _chosen[name]
    taken = set(_chosen.values())
    reserved = _subordinate_ranges()
    start = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % BOT_ID_COUNT
    for step in range(BOT_ID_COUNT):
        candidate = FIRST_BOT_ID + (start + step) % BOT_ID_COUNT
        if candidate not in taken and _is_free(candidate, reserved):
            _chosen[name] = candidate
            return candidate
    raise SandboxError(
        f"no free user id for bot {name!r}: every id from {FIRST_BOT_ID} to {FIRST_BOT_ID + BOT_ID_COUNT - 1} is "
        "a user or group of this machine, another bot of this referee, or in a range of /etc/subuid or /etc/subgid"
    )


def _is_free(number: int, reserved: list[tuple[int, int]]) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(number)
        except KeyError:
            continue
        return False
    return not any(first <= number < first + count for first, count in reserved)


def _subordinate_ranges() -> list[tuple[int, int]]:
    """The ranges of /etc/subuid and /etc/subgid (handed to users for their own containers)."""
    ranges = []
    for path in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                ranges.append((int(parts[1]), int(parts[2])))
    return ranges


def share_folder(folder: str) -> None:
    """Let bots write in a folder shared with them: its group becomes :data:`SHARED_GROUP`, with write access,
    and what they make there keeps that group (the set-group-ID bit). Its owner and what it holds are unchanged."""
    info = os.stat(folder)
    mode = stat.S_IMODE(info.st_mode) | stat.S_IRWXG | stat.S_ISGID
    if info.st_gid != SHARED_GROUP:
        os.chown(folder, -1, SHARED_GROUP)
    if stat.S_IMODE(info.st_mode) != mode:
        os.chmod(folder, mode)
