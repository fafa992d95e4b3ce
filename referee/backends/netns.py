"""A private network namespace with only loopback up: where a Ray started on this machine must run.

Ray started on a machine's own network listens on, and advertises, the
machine's external address; in a network namespace of its own with only the
loopback interface up, its one address is 127.0.0.1 and nothing outside the
namespace can reach it. ``referee run --backend ray`` without ``--address``
re-executes itself in such a namespace (``unshare --net``, then ``ip link
set lo up``) before it starts Ray; as root directly, otherwise in a user
namespace of its own (``unshare --map-root-user``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence

from referee.common.errors import RefereeError


class NamespaceError(RefereeError):
    """A private network namespace cannot be made here (no unshare or ip, or not permitted)."""


def loopback_only() -> bool:
    """Whether this process's network has no interface but loopback, and loopback is up (127.0.0.1 binds)."""
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        return False
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
    except OSError:
        return False
    return True


def in_private_network(argv: Sequence[str]) -> list[str]:
    """The command line that runs ``argv`` in a new network namespace with only loopback up.

    Checked first (a few milliseconds), so that a machine that does not
    allow it is told why in one :class:`NamespaceError` line.
    """
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or _sbin("ip")
    if unshare is None or ip is None:
        missing = " and ".join(
            name for name, path in (("unshare (util-linux)", unshare), ("ip (iproute2)", ip)) if path is None
        )
        raise NamespaceError(
            f"a Ray started for this run runs in a private network namespace, which needs {missing}: "
            "install it, or give --address of a Ray cluster"
        )
    prefix = [unshare, *([] if os.geteuid() == 0 else ["--map-root-user"]), "--net", "--"]
    check = subprocess.run([*prefix, ip, "link", "set", "lo", "up"], check=False, capture_output=True, text=True)
    if check.returncode != 0:
        reason = (check.stderr.strip().splitlines() or [f"exit status {check.returncode}"])[-1]
        raise NamespaceError(
            f"a Ray started for this run runs in a private network namespace, and this machine refused one "
            f"({reason}): run as root, allow user namespaces (sysctl kernel.unprivileged_userns_clone=1), "
            "or give --address of a Ray cluster"
        )
    return [*prefix, "sh", "-c", f'"{ip}" link set lo up && exec "$@"', "sh", *argv]


def reexec_in_private_network(argv: Sequence[str]) -> None:
    """Replace this process with ``argv`` run in a new network namespace with only loopback up."""
    command = in_private_network(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)


def _sbin(name: str) -> str | None:
    for folder in ("/usr/sbin", "/sbin"):
        if os.access(os.path.join(folder, name), os.X_OK):
            return os.path.join(folder, name)
    return None
