"""Thinks aloud: writes its secret to stderr on every decision, as a bot's debug prints do, and on chosen ones fails with it.

``--fail error`` answers a Decision whose ``error`` names the secret (as the
Python kit does when ``decide`` raises); ``--fail abort`` ends its stream with
a gRPC status whose details name it. The secret is ``$CHATTY_SECRET``.
"""

from __future__ import annotations

import os
import sys

import _common
import grpc

from referee.v2 import bot_pb2 as pb


class ChattyServicer(_common.LegalServicer):
    def __init__(self, args, name: str) -> None:
        super().__init__(args, name)
        self.secret = os.environ.get("CHATTY_SECRET", "")
        self.abort_with: str | None = None

    async def Play(self, request_iterator, context):  # noqa: N802 - gRPC method name
        async for response in super().Play(request_iterator, context):
            if self.abort_with is not None:
                details, self.abort_with = self.abort_with, None
                await context.abort(grpc.StatusCode.INTERNAL, details)
            yield response

    def decision_response(self, request):
        print(f"decision {request.decision_number}: my plan is {self.secret}", file=sys.stderr, flush=True)
        return super().decision_response(request)

    def misbehave(self, request):
        if self.args.fail == "abort":
            self.abort_with = f"gave up on {self.secret}"
            return _common.legal_reply(request)
        return pb.PlayResponse(
            decision=pb.Decision(
                decision_number=request.decision_number, error=f"ValueError: no move fits {self.secret}"
            )
        )


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--fail", choices=["error", "abort"], default="error", help="how a chosen decision fails")
    _common.run(ChattyServicer(_common.parse(options), "chatty"))
