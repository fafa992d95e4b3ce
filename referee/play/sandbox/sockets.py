"""Where a bot listens: a socket in its sandbox's own socket folder, or, without the sandbox, in a host folder.

A sandboxed bot's socket folder, ``/run/referee``, is one of its writable
places: a small file system in memory inside its sandbox, which vanishes
with it, whatever the bot leaves there. The referee reaches the socket
through the sandbox's root as the kernel shows it, ``/proc/PID/root`` of
the sandbox's first process (whose pid bubblewrap reports).

A bot without the sandbox gets a private host folder (mode 0700) under
``$TMPDIR``, named for this referee so that a later one can remove what a
killed one left; it is removed off the event loop, by
:func:`referee.play.sandbox.leftovers.remove_tree`.
"""

from __future__ import annotations

import os
import tempfile
import threading

from referee.play.sandbox.leftovers import referee_token, remove_leftovers
from referee.play.sandbox.view import SOCKET_DIR_INSIDE

SOCKET_NAME = "bot.sock"
ADDRESS_INSIDE = f"unix:{SOCKET_DIR_INSIDE}/{SOCKET_NAME}"  # what a sandboxed bot is told


def sandbox_address(child_pid: int) -> str:
    """The referee's way to a sandboxed bot's socket: through the root of the sandbox's first process."""
    return f"unix:/proc/{child_pid}/root{SOCKET_DIR_INSIDE}/{SOCKET_NAME}"


def make_socket_dir() -> str:
    """A new private host folder (mode 0700) for an unsandboxed bot's socket, named for this referee."""
    folder = tempfile.gettempdir()
    _clean_socket_folder(folder)
    path = tempfile.mkdtemp(prefix=f"referee-{referee_token()}-", dir=folder)
    os.chmod(path, 0o700)
    return path


_cleaned_socket_folders: set[str] = set()


def _clean_socket_folder(folder: str) -> None:
    """Remove, once per folder and in the background, what killed referees left there (it may be huge)."""
    if folder not in _cleaned_socket_folders:
        _cleaned_socket_folders.add(folder)
        threading.Thread(target=remove_leftovers, args=(folder,), name="referee-leftovers", daemon=True).start()
