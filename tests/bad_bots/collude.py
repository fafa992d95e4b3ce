"""Two of these try to pass bits between their sandboxes through a shared read-only file: locks and change notices.

    collude.py --role send --message 10110010     # on its Nth decision, sets bit N (cycling) on every channel
    collude.py --role receive                     # on each decision, reads every channel

The shared file is this script, which every bot run from here sees. The
channels: ``flock`` (the sender holds an exclusive lock for a 1; the
receiver tries one without waiting), ``fcntl`` record locks (a read lock;
the receiver asks whether a write lock would conflict) and ``inotify`` (the
sender opens and reads the file for a 1; the receiver watches it). Each
decision the bot writes ``COLLUDE {json}`` to its output: the sender the
bits it sent, the receiver what it heard on each channel (``"1"``, ``"0"``,
or why the attempt failed). It plays legally throughout.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import struct

import _common

SHARED = os.path.abspath(__file__)
IN_OPEN, IN_ACCESS, IN_NONBLOCK = 0x20, 0x01, 0o4000
_libc = ctypes.CDLL(None, use_errno=True)
_FLOCK = "hh4xqqi4x"  # struct flock on 64-bit Linux: type, whence, start, len, pid


def failure(error: OSError) -> str:
    return os.strerror(error.errno) if error.errno else str(error)


class Sender:
    def __init__(self, message: str) -> None:
        self.message = message
        self.sent = ""
        self.lock_fd = os.open(SHARED, os.O_RDONLY)

    def decision(self, number: int) -> dict:
        bit = self.message[(number - 1) % len(self.message)]
        # The file is opened and closed first: closing any descriptor of it drops this process's fcntl locks on it.
        for channel in (self._touch, self._flock, self._fcntl):
            with contextlib.suppress(OSError):
                channel(bit == "1")
        self.sent += bit
        return {"bits": self.sent[: len(self.message)]}

    def _flock(self, on: bool) -> None:
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX if on else fcntl.LOCK_UN)

    def _fcntl(self, on: bool) -> None:
        fcntl.fcntl(
            self.lock_fd, fcntl.F_SETLK, struct.pack(_FLOCK, fcntl.F_RDLCK if on else fcntl.F_UNLCK, 0, 0, 0, 0)
        )

    def _touch(self, on: bool) -> None:
        if on:
            with open(SHARED, "rb") as shared:
                shared.read(1)


class Receiver:
    def __init__(self) -> None:
        self.heard: dict[str, list[str]] = {"flock": [], "fcntl": [], "inotify": []}
        self.lock_fd = os.open(SHARED, os.O_RDONLY)
        self.watch_error = None
        self.notify_fd = _libc.inotify_init1(IN_NONBLOCK)
        if self.notify_fd < 0 or _libc.inotify_add_watch(self.notify_fd, SHARED.encode(), IN_OPEN | IN_ACCESS) < 0:
            self.watch_error = os.strerror(ctypes.get_errno())

    def decision(self, number: int) -> dict:
        for channel, listen in (("flock", self._flock), ("fcntl", self._fcntl), ("inotify", self._inotify)):
            try:
                self.heard[channel].append(listen())
            except OSError as error:
                self.heard[channel].append(failure(error))
        return {"heard": self.heard}

    def _flock(self) -> str:
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "1"
        fcntl.flock(self.lock_fd, fcntl.LOCK_UN)
        return "0"

    def _fcntl(self) -> str:
        asked = struct.pack(_FLOCK, fcntl.F_WRLCK, 0, 0, 0, 0)
        answer = fcntl.fcntl(self.lock_fd, fcntl.F_GETLK, asked)
        return "0" if struct.unpack(_FLOCK, answer)[0] == fcntl.F_UNLCK else "1"

    def _inotify(self) -> str:
        if self.watch_error is not None:
            return self.watch_error
        try:
            events = os.read(self.notify_fd, 4096)
        except BlockingIOError:
            return "0"
        except OSError as error:
            if error.errno == errno.EAGAIN:
                return "0"
            raise
        return "1" if events else "0"


class ColludingServicer(_common.LegalServicer):
    def __init__(self, args) -> None:
        super().__init__(args, f"collude-{args.role}")
        self.side = Sender(args.message) if args.role == "send" else Receiver()
        self.decisions = 0

    def decision_response(self, request):
        self.decisions += 1
        print("COLLUDE " + json.dumps(self.side.decision(self.decisions)), flush=True)
        return super().decision_response(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--role", choices=("send", "receive"), required=True)
    options.add_argument("--message", default="10110010")
    _common.run(ColludingServicer(_common.parse(options)))
