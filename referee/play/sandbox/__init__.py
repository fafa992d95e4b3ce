"""How a bot process is contained: its sandbox, its user, its limits, its cgroups; and what each limit is called.

docs/security.md is the organiser's page on what this gives; this package is how, one idea a module:

- :mod:`~referee.play.sandbox.limits`: the limits (the league file's keys), their words, the rlimits;
- :mod:`~referee.play.sandbox.view`: what a bot's sandbox shows (its own files, what its program needs, its
  writable places, its environment);
- :mod:`~referee.play.sandbox.masks`: hiding the competition's paths wherever they fall inside what it shows;
- :mod:`~referee.play.sandbox.bubblewrap`: finding bubblewrap, and its command line for one bot;
- :mod:`~referee.play.sandbox.users`: the unprivileged user of each bot when the referee is root;
- :mod:`~referee.play.sandbox.seccomp`: the system call filter (locks, change notices, keyrings, ...);
- :mod:`~referee.play.sandbox.launcher`: the wrapper that joins the cgroups, checks the referee and sets rlimits;
- :mod:`~referee.play.sandbox.cgroups`: each bot's cgroups (limits, accounting for the clock, killing);
- :mod:`~referee.play.sandbox.sockets`: where a bot listens;
- :mod:`~referee.play.sandbox.leftovers`: what a killed referee leaves, and removing whatever a bot left;
- :mod:`~referee.play.sandbox.build`: what a submission's build sees and runs as (the same pieces, its copy writable).

This module says, in words, how this machine contains and limits bots (:func:`machine_summary`).
"""

from __future__ import annotations

from referee.play.sandbox.bubblewrap import (
    BWRAP_VARIABLE,
    INSTALL_COMMAND,
    Bubblewrap,
    bubblewrap,
    data_fd,
    options_through,
    sandbox_argv,
    setpriv,
)
from referee.play.sandbox.build import BUILD_LIMITS, NEVER_ON_A_COPYS_FILE, BuildProcess, start_build
from referee.play.sandbox.cgroups import (
    CGROUP_WAIT_SECONDS,
    BotCgroup,
    CgroupSupport,
    SandboxError,
    cgroup_support,
    make_cgroup,
    remove_when_empty,
    start_watcher,
)
from referee.play.sandbox.launcher import LAUNCHER_FAILED, kill_launched, launch_argv, unsandboxed_argv
from referee.play.sandbox.leftovers import _token_of, referee_token, remove_leftovers, remove_tree
from referee.play.sandbox.limits import (
    DEFAULT_LIMITS,
    LIMIT_KEYS,
    MIB,
    NOT_ENFORCED,
    RLIMIT,
    ResourceLimits,
    limit_text,
    rlimit_arguments,
)
from referee.play.sandbox.masks import Owner, hidden_from_each, naming_a_hidden_path
from referee.play.sandbox.seccomp import FilterUnavailable, filter_program
from referee.play.sandbox.sockets import ADDRESS_INSIDE, SOCKET_NAME, make_socket_dir, sandbox_address
from referee.play.sandbox.users import FIRST_BOT_ID, SHARED_GROUP, bot_user, runs_as_root, share_folder
from referee.play.sandbox.view import (
    SCRATCH_INSIDE,
    SCRATCH_VARIABLE,
    SOCKET_DIR_INSIDE,
    WRITABLE_PLACES,
    SandboxPlan,
    closed_to_others,
    command_folders,
    named_paths,
    own_paths,
    plan_sandbox,
    sandbox_environment,
)

__all__ = [
    "ADDRESS_INSIDE",
    "BUILD_LIMITS",
    "BWRAP_VARIABLE",
    "CGROUP_WAIT_SECONDS",
    "DEFAULT_LIMITS",
    "FIRST_BOT_ID",
    "INSTALL_COMMAND",
    "LAUNCHER_FAILED",
    "LIMIT_KEYS",
    "MIB",
    "NEVER_ON_A_COPYS_FILE",
    "NOT_ENFORCED",
    "RLIMIT",
    "SCRATCH_INSIDE",
    "SCRATCH_VARIABLE",
    "SHARED_GROUP",
    "SOCKET_DIR_INSIDE",
    "SOCKET_NAME",
    "WRITABLE_PLACES",
    "BotCgroup",
    "Bubblewrap",
    "BuildProcess",
    "CgroupSupport",
    "FilterUnavailable",
    "Owner",
    "ResourceLimits",
    "SandboxError",
    "SandboxPlan",
    "_token_of",
    "bot_user",
    "bubblewrap",
    "cgroup_support",
    "clock_description",
    "closed_to_others",
    "command_folders",
    "data_fd",
    "enforcement",
    "filter_program",
    "hidden_from_each",
    "kill_launched",
    "launch_argv",
    "limit_text",
    "machine_summary",
    "make_cgroup",
    "make_socket_dir",
    "named_paths",
    "naming_a_hidden_path",
    "options_through",
    "own_paths",
    "plan_sandbox",
    "referee_token",
    "remove_leftovers",
    "remove_tree",
    "remove_when_empty",
    "rlimit_arguments",
    "runs_as_root",
    "sandbox_address",
    "sandbox_argv",
    "sandbox_environment",
    "setpriv",
    "share_folder",
    "start_build",
    "start_watcher",
    "unsandboxed_argv",
]


def enforcement(sandboxed: bool = True) -> dict[str, str]:
    """How each limit is enforced on this machine: limit key -> "cgroup v1 memory", "rlimit", ..."""
    support = cgroup_support()
    memory, pids, cpu = support.memory(), support.pids(), support.cpu()
    names = {
        "memory": f"cgroup {'v2' if memory == 'v2' else 'v1'} memory",
        "pids": f"cgroup {'v2' if pids == 'v2' else 'v1'} pids",
        "cpuacct": "cgroup v1 cpuacct",
        "v2": "cgroup v2 cpu.stat",
    }
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
    words = {
        "memory_mb": "memory",
        "processes": "processes",
        "cpu_seconds": "CPU time",
        "open_files": "open files",
        "output_mb": "output",
    }
    limits = "; ".join(f"{words[key]}: {how[key]}" for key in LIMIT_KEYS)
    users = ""
    if sandboxed and runs_as_root():
        users = f"; users: each bot its own, unprivileged (uid and gid {FIRST_BOT_ID} and up)"
    return f"sandbox: {sandbox}; {limits}; clock: {clock_description()}{users}"


def clock_description() -> str:
    """What the honest clock can measure of a bot here."""
    support = cgroup_support()
    if support.v2 is not None and support.pressure():
        return "CPU time and CPU stall of each bot's processes (cgroup v2 cpu.stat, cpu.pressure)"
    if support.cpu() is not None:
        source = "cgroup v2 cpu.stat" if support.v2 is not None else "cgroup v1 cpuacct"
        return f"CPU time of each bot's processes ({source}); no CPU stall (no cgroup v2 cpu.pressure)"
    return "wall time only (no cgroup for the bots: " + ("; ".join(support.problems) or "none found") + ")"
