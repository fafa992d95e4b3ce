"""A well-behaved bot that records every message the referee sends it on its stream, in order.

``--record-dir DIR`` appends to ``DIR/spy-<pid>-<random>.jsonl``, one file
per process, so that a league may run several spy processes at once (the
pid alone is not unique: every bot in a PID namespace of its own is pid 2).
One JSON line per message, written before the bot answers: ``{"message"}``,
the serialized ``PlayRequest`` in base64. It plays legal random actions.
"""

from __future__ import annotations

import base64
import os
import uuid

import _common


class SpyServicer(_common.LegalServicer):
    """Plays legal random actions and records every message the referee sends, in order."""

    def __init__(self, args, record_path: str) -> None:
        super().__init__(args, "spy")
        self.record_path = record_path

    async def Play(self, request_iterator, context):  # noqa: N802 - gRPC method name
        async def recorded():
            async for request in request_iterator:
                encoded = base64.b64encode(request.SerializeToString()).decode()
                _common._append(self.record_path, {"message": encoded})
                yield request

        async for response in super().Play(recorded(), context):
            yield response


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--record-dir", required=True, help="append what this bot is given to DIR/spy-*.jsonl")
    args = _common.parse(options)
    run_path = os.path.join(args.record_dir, f"spy-{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl")
    _common.run(SpyServicer(args, run_path))
