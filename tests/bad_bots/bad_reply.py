"""Replies with a well-formed message that is still wrong, on chosen decisions.

Modes: ``empty`` (an action with no kind), ``unknown-kind`` (kind 99),
``illegal`` (a known action the rules do not allow now), ``stale`` (the wrong
decision_number), ``error`` (a gRPC error status instead of a reply).
"""

from __future__ import annotations

import _common
from referee.v2 import bot_pb2 as pb

UNKNOWN_KIND = 99


def illegal_action(request: pb.DecisionRequest) -> pb.Action:
    """A known action that is not legal now: KNOCK is never legal in Stop the Bus, DRAW never in Bastard Brag."""
    legal = list(request.legal_actions)
    candidates = (pb.Action(kind=pb.ACTION_KIND_KNOCK), pb.Action(kind=pb.ACTION_KIND_DRAW))
    return next(candidate for candidate in candidates if candidate not in legal)


class BadReplyServicer(_common.LegalServicer):
    def misbehave(self, request):
        mode = self.args.mode
        number = request.decision_number
        if mode == "empty":
            return _common.reply(number, pb.Action())
        if mode == "unknown-kind":
            return _common.reply(number, pb.Action(kind=UNKNOWN_KIND))
        if mode == "illegal":
            return _common.reply(number, illegal_action(request))
        if mode == "stale":
            reply = _common.legal_reply(request)
            reply.decision.decision_number = number + 1000
            return reply
        if mode == "no-decision":
            return pb.PlayResponse()
        return pb.PlayResponse(decision=pb.Decision(decision_number=number, error="RuntimeError: this bot refuses to decide"))


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--mode", required=True, choices=["empty", "unknown-kind", "illegal", "stale", "error", "no-decision"])
    _common.run(BadReplyServicer(_common.parse(options), "bad-reply"))
