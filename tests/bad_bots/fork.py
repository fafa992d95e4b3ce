"""Starts processes of its own before it listens, then plays legally (or crashes on chosen decisions).

    fork.py --children sleeper                  # a child that sleeps, in the bot's process group
    fork.py --children detached                 # a grandchild that left the group and session (double fork + setsid)
    fork.py --children sleeper,detached --crash # ... and exits abruptly on the decisions --at chooses

Every process it starts sleeps for ten minutes and carries the marker on its
command line, so a test finds it in /proc. ``--clean-env`` starts the
detached grandchild with an empty environment, so it cannot be found by the
variables the referee gave the bot either.
"""

from __future__ import annotations

import os
import subprocess
import sys

import _common

# Run by a helper process: fork, start a new session, fork again and leave; the grandchild is
# adopted by init (or the PID namespace's init) and belongs to no group of the bot's.
_DETACH = """
import os, sys, time
marker, clean = sys.argv[1], sys.argv[2] == "clean"
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        argv = [sys.executable, "-c", "import time; time.sleep(600)", "bad-bot-detached", marker]
        if clean:
            os.execve(sys.executable, argv, {})
        os.execv(sys.executable, argv)
    os._exit(0)
os.wait()
"""


def start_children(kinds: list[str], marker: str, clean_env: bool) -> None:
    for kind in kinds:
        if kind == "sleeper":
            _common.spawn_sleeping_child(marker)
        elif kind == "detached":
            subprocess.run(
                [sys.executable, "-c", _DETACH, marker, "clean" if clean_env else "keep"],
                stdin=subprocess.DEVNULL,
                check=True,
            )
        else:
            raise SystemExit(f"fork.py: unknown child kind {kind!r}; use sleeper or detached")


class ForkingServicer(_common.LegalServicer):
    def misbehave(self, request):
        if self.args.crash:
            _common.exit_now(3)
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--children", default="sleeper,detached", help="comma separated: sleeper, detached")
    options.add_argument("--clean-env", action="store_true", help="start the detached grandchild with no environment")
    options.add_argument("--crash", action="store_true", help="exit abruptly (code 3) on the chosen decisions")
    arguments = _common.parse(options)
    start_children([kind for kind in arguments.children.split(",") if kind], arguments.marker, arguments.clean_env)
    print(f"fork.py: started {arguments.children} (pid {os.getpid()})", file=sys.stderr, flush=True)
    _common.run(ForkingServicer(arguments, "fork"))
