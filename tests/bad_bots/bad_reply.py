"""Replies with a well-formed message that is still wrong, on chosen decisions.

Modes: ``empty`` (an action with no kind), ``unknown-kind`` (kind 99),
``illegal`` (a known action the rules do not allow now), ``stale`` (the wrong
decision_number), ``error`` (a gRPC error status instead of a reply).
"""

from __future__ import annotations

import grpc

import _common
from referee.v1 import bot_pb2 as pb

UNKNOWN_KIND = 99


def illegal_action(request: pb.DecisionRequest) -> pb.Action:
    """A known action that is not legal now: KNOCK is never legal in Stop the Bus, DRAW never in Bastard Brag."""
    legal = list(request.legal_actions)
    candidates = (pb.Action(kind=pb.KNOCK), pb.Action(kind=pb.DRAW))
    return next(candidate for candidate in candidates if candidate not in legal)


class BadReplyServicer(_common.LegalServicer):
    def misbehave(self, request, context):
        mode = self.args.mode
        number = request.decision_number
        if mode == "empty":
            return pb.DecisionReply(decision_number=number, action=pb.Action())
        if mode == "unknown-kind":
            return pb.DecisionReply(decision_number=number, action=pb.Action(kind=UNKNOWN_KIND))
        if mode == "illegal":
            return pb.DecisionReply(decision_number=number, action=illegal_action(request))
        if mode == "stale":
            reply = _common.legal_reply(request)
            reply.decision_number = number - 1
            return reply
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "this bot refuses to decide")
        return None


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--mode", required=True, choices=["empty", "unknown-kind", "illegal", "stale", "error"])
    _common.run(BadReplyServicer(_common.parse(options), "bad-reply"))
