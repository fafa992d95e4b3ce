"""A well-behaved bot that records every message it is given: handshake, decisions and notifications.

``--record-dir DIR`` appends to ``DIR/spy-<pid>-<random>.jsonl``, one file
per process, so that a league may run several spy processes at once (the
pid alone is not unique: every bot in a PID namespace of its own is pid 2).
One JSON line per call, written before the bot answers: ``{"call",
"message"}``, with ``call`` one of ``handshake``, ``decide``, ``notify`` and
``message`` the serialized request in base64. It plays legal random actions.
"""

from __future__ import annotations

import base64
import os
import uuid

import _common


class SpyServicer(_common.LegalServicer):
    """Plays legal random actions and records each request of every kind."""

    def __init__(self, args, record_path: str) -> None:
        super().__init__(args, "spy")
        self.record_path = record_path

    def _record(self, call: str, request) -> None:
        encoded = base64.b64encode(request.SerializeToString()).decode()
        _common._append(self.record_path, {"call": call, "message": encoded})

    def Handshake(self, request, context):  # noqa: N802 - gRPC method name
        self._record("handshake", request)
        return super().Handshake(request, context)

    def Decide(self, request, context):  # noqa: N802
        self._record("decide", request)
        return super().Decide(request, context)

    def Notify(self, request, context):  # noqa: N802
        self._record("notify", request)
        return super().Notify(request, context)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--record-dir", required=True, help="append what this bot is given to DIR/spy-*.jsonl")
    args = _common.parse(options)
    run_path = os.path.join(args.record_dir, f"spy-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl")
    _common.run(SpyServicer(args, run_path))
