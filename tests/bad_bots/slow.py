"""Sleeps before replying on chosen decisions: past the deadline (a timeout), within the time bank, or forever.

slow.py --at 3 --sleep-ms 800     # the third decision is late, the rest are prompt
slow.py --at all --sleep-ms 150   # every decision takes 150 ms
slow.py --at 2 --forever          # never answers its second decision
"""

from __future__ import annotations

import threading
import time

import _common


class SlowServicer(_common.LegalServicer):
    def misbehave(self, request):
        if self.args.forever:
            threading.Event().wait()
        time.sleep(self.args.sleep_ms / 1000)
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--sleep-ms", type=int, default=1000, help="how long to sleep before replying")
    options.add_argument("--forever", action="store_true", help="never reply")
    _common.run(SlowServicer(_common.parse(options), "slow"))
