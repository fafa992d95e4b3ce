"""The launcher every bot process starts through: it joins the bot's cgroups, checks the referee, sets the rlimits.

A bot the referee starts runs as::

    setpriv --pdeathsig KILL -- sh -c LAUNCHER referee-bot REFEREE-PID CGROUP.PROCS... -- bwrap OPTIONS... -- BOT...

``setpriv`` arms a parent-death signal first: from then on, the referee's
death kills the launcher, and bubblewrap after it (the signal survives
``exec``). The shell writes its own pid into the bot's cgroups, so that the
bot and everything it starts are counted there from its first instruction,
then checks that its parent is still the referee (had the referee died
before the signal was armed, nothing would have killed it), sets the
rlimits and execs bubblewrap, whose parent is then the referee itself, so
that ``--die-with-parent`` ties the sandbox to the referee. What bubblewrap
starts before it ties its own child to itself is in the bot's cgroups, which
the referee's watcher kills when the referee ends
(:func:`referee.play.sandbox.cgroups.start_watcher`). Without the sandbox
(``sandbox: none``) the shell execs the bot's command itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING

from referee.play.sandbox.bubblewrap import setpriv

if TYPE_CHECKING:
    from referee.play.sandbox.cgroups import BotCgroup

# Exit code of a launcher that gave up (the referee is gone, or a cgroup could not be joined).
LAUNCHER_FAILED = 125

_SCRIPT = (
    "referee=$1; shift; "
    'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
    # /proc/PID/stat is "PID (NAME) STATE PPID ...": the parent's pid, with shell built-ins only.
    "read -r stat < /proc/$$/stat; stat=${stat##*) }; stat=${stat#* }; "
    '[ "${stat%% *}" = "$referee" ] || exit 125; '
)


def launch_argv(cgroup_procs: Sequence[str], rlimits: Sequence[str], inner: Sequence[str]) -> list[str]:
    """The command that arms a parent-death signal, joins the bot's cgroups, checks that this process is still its
    parent, sets ``rlimits`` (``ulimit`` arguments) and runs ``inner``."""
    script = _SCRIPT + "".join(f"ulimit {limit} || exit 125; " for limit in rlimits) + 'exec "$@"'
    shell = ["sh", "-c", script, "referee-bot", str(os.getpid()), *cgroup_procs, "--", *inner]
    armed = setpriv()
    return [armed, "--pdeathsig", "KILL", "--", *shell] if armed else shell


def unsandboxed_argv(command: Sequence[str]) -> list[str]:
    """A command run without the sandbox: as it is (the launcher's parent-death signal ties it to the referee)."""
    return list(command)


def kill_launched(process: asyncio.subprocess.Process | None, cgroup: BotCgroup | None) -> None:
    """SIGKILL what a launch started: its process group (the launcher, bubblewrap, whose PID namespace goes with it)
    and its cgroup (what left both)."""
    if process is not None and process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    if cgroup is not None:
        cgroup.kill()
