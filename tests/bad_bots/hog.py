"""Uses a resource without bound until a limit stops it: memory, CPU time, open files or processes.

    hog.py --resource memory               # allocate (and touch) 16 MiB blocks until stopped
    hog.py --resource memory --children 2 --child-mb 72
                                           # two child processes hold 72 MiB each; exit 1 if one is killed
    hog.py --resource cpu [--children N]   # spin (with N spinning children) until stopped
    hog.py --resource files                # open files until "Too many open files", then exit 1
    hog.py --resource processes            # start sleeping processes until the system refuses one, then exit 1

On the decisions ``--at`` chooses, or with ``--at-start`` before it
listens; it plays legally otherwise. A limit stops it as it would stop a
real program: a ``MemoryError`` or "Too many open files" (exit code 1),
the kernel's or the referee's SIGKILL, or SIGXCPU. So that it cannot take
the machine down where a limit is not enforced, it never goes past
``--most`` (MiB of memory, seconds of CPU time, files or processes): there
it says the limit was not enforced and exits with code 4.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import traceback

import _common

BLOCK_BYTES = 16 << 20
PAGE_BYTES = 4096
NOT_ENFORCED = 4
# The default ceilings, far below what the machines running the tests have.
MOST = {"memory": 512, "cpu": 20, "files": 4096, "processes": 1000}

# A child of the memory and CPU hogs: a fresh interpreter (forking a gRPC server is unsafe).
HOLD_MEMORY = """
import sys, time
block = bytearray(int(sys.argv[1]) << 20)
block[::4096] = b"x" * (len(block) // 4096)
time.sleep(float(sys.argv[2]))
"""
SPIN = """
import sys, time
while time.process_time() < float(sys.argv[1]):
    pass
"""


def not_enforced(what: str) -> None:
    print(f"hog.py: the limit was not enforced: {what}", file=sys.stderr, flush=True)
    _common.exit_now(NOT_ENFORCED)


def fail(error: BaseException) -> None:
    """Die as a program with an unhandled error would: the traceback, then exit code 1."""
    traceback.print_exception(error)
    sys.stderr.flush()
    _common.exit_now(1)


def hog_memory(most_mb: int) -> None:
    held = []
    try:
        while len(held) * (BLOCK_BYTES >> 20) < most_mb:
            block = bytearray(BLOCK_BYTES)
            block[::PAGE_BYTES] = b"x" * (BLOCK_BYTES // PAGE_BYTES)  # touch every page
            held.append(block)
    except MemoryError as error:
        held.clear()
        fail(error)
    not_enforced(f"{most_mb} MiB allocated")


def hog_with_children(code: str, args: list[str], count: int, what: str) -> None:
    """Start ``count`` children running ``code``; exit 1 as soon as one of them is killed."""
    children = [
        subprocess.Popen([sys.executable, "-c", code, *args, "bad-bot-child"], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    for child in children:
        status = child.wait()
        if status < 0:
            print(f"hog.py: a child was killed by {signal.Signals(-status).name}", file=sys.stderr, flush=True)
            _common.exit_now(1)
    not_enforced(what)


def hog_cpu(most_seconds: float, children: int) -> None:
    if children:
        hog_with_children(SPIN, [str(most_seconds)], children, f"{children} children used {most_seconds} s each")
    while time.process_time() < most_seconds:  # the limit's SIGKILL or SIGXCPU ends this
        pass
    not_enforced(f"{most_seconds} s of CPU time used")


def hog_files(most: int) -> None:
    held = []
    try:
        while len(held) < most:
            held.append(open(os.devnull, "rb"))  # noqa: SIM115 - kept open on purpose
    except OSError as error:
        fail(error)
    not_enforced(f"{most} files open")


def hog_processes(most: int) -> None:
    started = []
    try:
        while len(started) < most:
            started.append(subprocess.Popen(["sleep", "120"], stdin=subprocess.DEVNULL))
    except OSError as error:
        print(f"hog.py: started {len(started)} processes", file=sys.stderr)
        fail(error)
    not_enforced(f"{most} processes started")


def exhaust(args) -> None:
    most = args.most if args.most is not None else MOST[args.resource]
    if args.resource == "memory" and args.children:
        hold_seconds = "10"
        total = args.children * args.child_mb
        hog_with_children(
            HOLD_MEMORY,
            [str(args.child_mb), hold_seconds],
            args.children,
            f"{args.children} children held {args.child_mb} MiB each, {total} MiB in all",
        )
    elif args.resource == "memory":
        hog_memory(most)
    elif args.resource == "cpu":
        hog_cpu(most, args.children)
    elif args.resource == "files":
        hog_files(most)
    else:
        hog_processes(most)


class HogServicer(_common.LegalServicer):
    def misbehave(self, request):
        exhaust(self.args)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--resource", required=True, choices=sorted(MOST))
    options.add_argument("--at-start", action="store_true", help="exhaust it before listening")
    options.add_argument("--children", type=int, default=0, help="memory and cpu: use it in this many children")
    options.add_argument("--child-mb", type=int, default=96, help="memory with --children: MiB each child holds")
    options.add_argument("--most", type=int, help="never use more than this (MiB, s, files, processes)")
    arguments = _common.parse(options)
    if arguments.at_start:
        exhaust(arguments)
    _common.run(HogServicer(arguments, "hog"))
