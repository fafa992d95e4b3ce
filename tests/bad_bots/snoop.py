"""Plays legally, but on its first decision tries to reach what a bot must not, and reports what it reached.

    snoop.py --list DIR --read FILE --read-glob PATTERN --write FILE --unix SOCKET --unix-glob PATTERN
             --tcp HOST:PORT --signal PID --fill DIR --sysctl FILE --open-write FILE ...   (each repeatable)
    snoop.py --probes FILE          # the same options from a JSON file: {"read": [...], "list": [...], ...}

Each probe tries one thing: list a folder (reached: it shows entries), read
a file (reached: it has content), write a file (reached: written; it is
left there, for the test to look for), connect to a Unix socket or a TCP address (reached:
connected), signal a process (signal 0, which only checks: reached: no
error), fill a folder (writes 1 MiB pieces until the folder is full or 64 MiB
are written; reports how much). It also reports its own view: the processes
in ``/proc``, its user and capabilities, what ``/scratch`` holds (before it
wrote there) and what ``/`` holds.

The report is one line on stdout, ``SNOOP {json}``, in the bot's log: the
test reads it there. It is written before the bot answers the decision.
"""

from __future__ import annotations

import glob
import json
import os
import socket
import sys

import _common

CONNECT_TIMEOUT_SECONDS = 2.0
FILL_PIECE = b"x" * (1 << 20)
FILL_MOST_PIECES = 64


def attempt(probe: str, target: str, action) -> dict:
    try:
        reached, detail = action(target)
    except OSError as error:
        reached, detail = False, f"{type(error).__name__}: {error.strerror or error}"
    return {"probe": probe, "target": target, "reached": reached, "detail": detail}


def list_folder(path: str) -> tuple[bool, str]:
    entries = sorted(os.listdir(path))
    return bool(entries), f"{len(entries)} entries: {entries[:8]}"


def read_file(path: str) -> tuple[bool, str]:
    with open(path, "rb") as file:
        data = file.read(100)
    return bool(data), f"{len(data)} bytes"


def read_matching(pattern: str) -> tuple[bool, str]:
    paths = sorted(glob.glob(pattern))
    sizes = []
    for path in paths:
        try:
            sizes.append(read_file(path)[0])
        except OSError:
            sizes.append(False)
    return any(sizes), f"{len(paths)} matched, {sum(sizes)} with content"


def write_setting(path: str) -> tuple[bool, str]:
    with open(path, encoding="utf-8") as setting:
        value = setting.read()
    with open(path, "w", encoding="utf-8") as setting:
        setting.write(value)
    return True, f"wrote {value.strip()!r} back"


def open_for_writing(path: str) -> tuple[bool, str]:
    with open(path, "ab"):
        pass
    return True, "opened for writing"


def write_file(path: str) -> tuple[bool, str]:
    with open(path, "w", encoding="utf-8") as file:
        file.write("written by a bot\n")
    return True, "written (left there)"


def connect_unix(path: str) -> tuple[bool, str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(CONNECT_TIMEOUT_SECONDS)
        connection.connect(path)
    return True, "connected"


def connect_tcp(target: str) -> tuple[bool, str]:
    host, port = target.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_SECONDS) as connection:
        connection.sendall(b"hello from a bot\n")
    return True, "connected"


def signal_process(pid: str) -> tuple[bool, str]:
    os.kill(int(pid), 0)
    return True, "signalled"


def fill(folder: str) -> tuple[bool, str]:
    path = os.path.join(folder, f"fill-{os.getpid()}")
    written = 0
    try:
        with open(path, "wb") as file:
            for _ in range(FILL_MOST_PIECES):
                file.write(FILL_PIECE)
                file.flush()
                written += len(FILL_PIECE)
    except OSError as error:
        return True, f"{written} bytes, then {type(error).__name__}: {error.strerror}"
    finally:
        if os.path.exists(path):
            os.remove(path)
    return True, f"{written} bytes"


def own_view() -> dict:
    with open("/proc/self/status", encoding="utf-8") as status:
        capabilities = [line.split()[1] for line in status if line.startswith("CapEff:")]
    scratch = os.environ.get("REFEREE_BOT_SCRATCH", "")
    processes = sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit())
    command_lines = {}
    for pid in processes:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                command_lines[pid] = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError as error:
            command_lines[pid] = f"{type(error).__name__}"
    return {
        "processes": processes,
        "command_lines": command_lines,
        "pid": os.getpid(),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "capabilities": capabilities[0] if capabilities else "",
        "scratch": sorted(os.listdir(scratch)) if scratch and os.path.isdir(scratch) else None,
        "cwd": os.getcwd(),
        "root": sorted(os.listdir("/")),
        "address": os.environ.get("REFEREE_BOT_ADDRESS", ""),
    }


def snoop(args) -> dict:
    view = own_view()  # before it writes anything
    probes = []
    probes += [attempt("list", path, list_folder) for path in args.list]
    probes += [attempt("read", path, read_file) for path in args.read]
    probes += [attempt("read-glob", pattern, read_matching) for pattern in args.read_glob]
    probes += [attempt("sysctl", path, write_setting) for path in args.sysctl]
    probes += [attempt("open-write", path, open_for_writing) for path in args.open_write]
    probes += [attempt("write", path, write_file) for path in args.write]
    sockets = [*args.unix, *(found for pattern in args.unix_glob for found in glob.glob(pattern))]
    probes += [attempt("unix", path, connect_unix) for path in sockets]
    probes += [attempt("tcp", target, connect_tcp) for target in args.tcp]
    probes += [attempt("signal", pid, signal_process) for pid in args.signal]
    probes += [attempt("fill", folder, fill) for folder in args.fill]
    return {"probes": probes, "games_started": args.games_started, **view}


class SnoopingServicer(_common.LegalServicer):
    def misbehave(self, request):
        self.args.games_started = self.games_started
        print("SNOOP " + json.dumps(snoop(self.args)), flush=True)
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    probe_options = (
        "--list",
        "--read",
        "--read-glob",
        "--write",
        "--unix",
        "--unix-glob",
        "--tcp",
        "--signal",
        "--fill",
        "--sysctl",
        "--open-write",
    )
    for option in probe_options:
        options.add_argument(option, action="append", default=[])
    options.add_argument("--probes", help="a JSON file of probes: option name (without --) -> list of targets")
    arguments = _common.parse(options)
    if arguments.probes:
        with open(arguments.probes, encoding="utf-8") as given:
            for option, targets in json.load(given).items():
                getattr(arguments, option.replace("-", "_")).extend(targets)
    sys.stdout.reconfigure(line_buffering=True)
    _common.run(SnoopingServicer(arguments, "snoop"))
