"""Plays legally but writes many megabytes to stdout on chosen decisions (and a line on stderr)."""

from __future__ import annotations

import sys

import _common

LINE = (b"flood " * 171)[:1023] + b"\n"  # 1 KiB exactly, so --megabytes counts MiB


class FloodingServicer(_common.LegalServicer):
    def misbehave(self, request):
        lines = self.args.megabytes * 1024
        sys.stdout.buffer.write(LINE * lines)
        sys.stdout.buffer.flush()
        print(f"flood: wrote {lines} lines at decision {request.decision_number}", file=sys.stderr, flush=True)
        return _common.legal_reply(request)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--megabytes", type=int, default=4, help="output per chosen decision")
    _common.run(FloodingServicer(_common.parse(options), "flood"))
