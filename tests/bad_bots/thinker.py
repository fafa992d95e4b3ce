"""A well-behaved bot that thinks for a set time on every decision: computing, then (optionally) sleeping.

``--cpu-ms MS`` spins until this thread has used MS ms of CPU time (so a busy
machine stretches it on the wall clock, but not its CPU time); ``--sleep-ms
MS`` then sleeps MS ms (time the bot chooses to wait: the referee's clock
charges it). It always plays a legal random action.
"""

from __future__ import annotations

import time

import _common


class ThinkingServicer(_common.LegalServicer):
    def decision_response(self, request):
        spent_until = time.thread_time() + self.args.cpu_ms / 1000
        while time.thread_time() < spent_until:
            pass
        if self.args.sleep_ms:
            time.sleep(self.args.sleep_ms / 1000)
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--cpu-ms", type=float, default=3.0, help="CPU time to spend on each decision")
    options.add_argument("--sleep-ms", type=float, default=0.0, help="then sleep this long")
    _common.run(ThinkingServicer(_common.parse(options), "thinker"))
