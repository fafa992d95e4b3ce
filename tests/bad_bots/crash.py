"""Plays legally, then exits abruptly (os._exit) when asked for a chosen decision: a crash mid-game."""

from __future__ import annotations

import _common


class CrashingServicer(_common.LegalServicer):
    def misbehave(self, request):
        _common.exit_now(self.args.code)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--code", type=int, default=3, help="exit status")
    _common.run(CrashingServicer(_common.parse(options), "crash"))
