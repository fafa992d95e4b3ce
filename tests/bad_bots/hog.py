"""Uses a resource without bound until a limit stops it: memory, CPU time or open files.

    hog.py --resource memory   # allocate (and touch) 16 MiB blocks until MemoryError, then exit 1
    hog.py --resource cpu      # spin until the CPU time limit's SIGXCPU kills it
    hog.py --resource files    # open files until "Too many open files", then exit 1

On the decisions ``--at`` chooses, or with ``--at-start`` before it listens;
it plays legally otherwise. It refuses to start (exit code 2, before
listening) unless the matching limit is set and small, so that a test
without limits cannot take the machine down.
"""

from __future__ import annotations

import os
import resource
import sys
import traceback

import _common

BLOCK_BYTES = 16 << 20
PAGE_BYTES = 4096
# The largest limit the hog runs under: beyond this it refuses, however the limit was set.
SAFE_LIMITS = {
    "memory": (resource.RLIMIT_AS, 4 << 30, "memory (address space)"),
    "cpu": (resource.RLIMIT_CPU, 60, "CPU time"),
    "files": (resource.RLIMIT_NOFILE, 4096, "open-file"),
}


def check_limit(kind: str) -> None:
    """Exit (code 2) unless this process runs under a small enough limit of ``kind``."""
    which, safe, words = SAFE_LIMITS[kind]
    soft, _ = resource.getrlimit(which)
    if soft == resource.RLIM_INFINITY or soft > safe:
        shown = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
        print(f"hog.py: refusing to run: the {words} limit is {shown}; set one of at most {safe}", file=sys.stderr)
        sys.exit(2)


def exhaust(kind: str) -> None:
    """Use ``kind`` until the limit stops the process: it dies as a program with an unhandled error would."""
    held = []
    try:
        if kind == "memory":
            while True:
                block = bytearray(BLOCK_BYTES)
                block[::PAGE_BYTES] = b"x" * (BLOCK_BYTES // PAGE_BYTES)  # touch every page
                held.append(block)
        elif kind == "files":
            while True:
                held.append(open(os.devnull, "rb"))  # noqa: SIM115 - kept open on purpose
        else:
            while True:  # SIGXCPU ends this
                pass
    except (MemoryError, OSError):
        held.clear()
        traceback.print_exc()
        sys.stderr.flush()
        _common.exit_now(1)


class HogServicer(_common.LegalServicer):
    def misbehave(self, request, context):
        exhaust(self.args.resource)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--resource", required=True, choices=sorted(SAFE_LIMITS))
    options.add_argument("--at-start", action="store_true", help="exhaust it before listening")
    arguments = _common.parse(options)
    check_limit(arguments.resource)
    if arguments.at_start:
        exhaust(arguments.resource)
    _common.run(HogServicer(arguments, "hog"))
