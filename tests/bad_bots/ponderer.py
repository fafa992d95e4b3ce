"""A bot that ponders: worker processes spin without pause, on move and off, while it thinks like thinker.py.

``--workers N`` (default 3) processes are started before the bot listens and
spin until it ends: a bot that searches in the background while the others
think. Each worker leaves the bot's session for one of its own (``setsid``),
so that a kernel that shares the CPU out by session (autogroup) gives each
as much as a whole bot. On each decision it spends ``--cpu-ms`` of CPU, then
answers a legal random action. Frozen off move (referee.play.freezer), its workers use next to no
CPU between its decisions; its cgroup's CPU time shows it.
"""

from __future__ import annotations

import os
import time

import _common


class PonderingServicer(_common.LegalServicer):
    def decision_response(self, request):
        spent_until = time.thread_time() + self.args.cpu_ms / 1000
        while time.thread_time() < spent_until:
            pass
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--workers", type=int, default=3, help="processes that spin all the time")
    options.add_argument("--cpu-ms", type=float, default=3.0, help="CPU time to spend on each decision")
    arguments = _common.parse(options)
    for _ in range(arguments.workers):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    _common.run(PonderingServicer(arguments, "ponderer"))
