"""The system call filter every sandboxed bot runs under: what it refuses, and why each.

Bots in separate sandboxes still share the machine's files (``/usr``,
``/etc``, the referee's Python: read-only, but the same files), its kernel
and, when the referee is not root, its user. The filter closes the ways to
signal through those that no bot needs:

- file locks (``flock``; ``fcntl``'s record, open-file-description and
  lease commands): one bot locking a shared file and another testing the
  lock carries bits between them. Refused with ENOLCK ("no locks
  available"), as on a file system without locking;
- change notifications (``inotify``, ``fanotify``, ``fcntl(F_NOTIFY)``):
  one bot opening a shared file is an event another can watch. Refused
  with EPERM;
- the kernel's keyrings (``add_key``, ``keyctl``, ``request_key``), shared
  by every process of a user. Refused with EPERM;
- cache eviction advice (``fadvise``): evicting a shared file's pages and
  timing a read of them is a channel; the advice is ignored (the call
  succeeds and does nothing, as advice may);
- new user namespaces (``unshare``/``clone`` with ``CLONE_NEWUSER``;
  ``clone3``, whose flags a filter cannot read, answers ENOSYS so that the
  C library falls back to ``clone``), and ``perf_event_open``,
  ``userfaultfd`` and ``bpf``: kernel surface no bot needs. EPERM.

System calls of another architecture than the referee's (32-bit calls on
a 64-bit machine) kill the process: the rules above name this one's.

A submission's build (:mod:`referee.play.sandbox.build`) runs under the same
filter but for the locks, which it may take: Go takes one on ``go.mod`` and
on its module cache, SQLite on its database. A build has nothing of a game
to pass on, and no bot can hear it (a ladder builds while its games go on):
a bot can neither take nor test a lock, and ``/proc/locks`` shows it only
the locks of its own sandbox's processes (its PID namespace).

The filter is compiled once per referee process by libseccomp (through its
ctypes binding ``pyseccomp``), and handed to bubblewrap, which loads it last
before it starts the bot (``--seccomp FD``).
"""

from __future__ import annotations

import errno
import fcntl
import functools
import tempfile

from referee.common.errors import RefereeError

# fcntl commands (asm-generic/fcntl.h): locks, open-file-description locks, leases, directory notices.
_LOCK_COMMANDS = (fcntl.F_GETLK, fcntl.F_SETLK, fcntl.F_SETLKW, 36, 37, 38)  # F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
_LEASE_AND_NOTICE_COMMANDS = (1024, 1025, 1026)  # F_SETLEASE, F_GETLEASE, F_NOTIFY
CLONE_NEWUSER = 0x10000000

REFUSED_WITH = {
    "flock": errno.ENOLCK,
    "inotify_init": errno.EPERM,
    "inotify_init1": errno.EPERM,
    "inotify_add_watch": errno.EPERM,
    "fanotify_init": errno.EPERM,
    "fanotify_mark": errno.EPERM,
    "add_key": errno.EPERM,
    "keyctl": errno.EPERM,
    "request_key": errno.EPERM,
    "perf_event_open": errno.EPERM,
    "userfaultfd": errno.EPERM,
    "bpf": errno.EPERM,
    "clone3": errno.ENOSYS,
}
LOCKING = ("flock",)  # with fcntl's lock commands: what a build's filter lets through
IGNORED = ("fadvise64",)  # succeed without effect
INSTALL_COMMAND = "apt-get install libseccomp2"


class FilterUnavailable(RefereeError):
    """The filter cannot be compiled here (no libseccomp); the message says what to install."""


@functools.cache
def filter_program(locks: bool = False) -> bytes:
    """The filter as a BPF program, ready for bubblewrap's ``--seccomp``; raise :class:`FilterUnavailable`.

    ``locks``: file locks are let through (``flock``, ``fcntl``'s locks): a build's filter.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError) as error:
        raise FilterUnavailable(
            f"the system call filter needs libseccomp, which cannot be loaded ({error}): install it with "
            f"`{INSTALL_COMMAND}`"
        ) from None
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name, code in REFUSED_WITH.items():
        if not (locks and name in LOCKING):
            rules.add_rule(seccomp.ERRNO(code), name)
    for name in IGNORED:
        rules.add_rule(seccomp.ERRNO(0), name)
    for command in () if locks else _LOCK_COMMANDS:
        rules.add_rule(seccomp.ERRNO(errno.ENOLCK), "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for command in _LEASE_AND_NOTICE_COMMANDS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for name, flags_argument in (("unshare", 0), ("clone", 0)):
        rules.add_rule(
            seccomp.ERRNO(errno.EPERM),
            name,
            seccomp.Arg(flags_argument, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER),
        )
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()
