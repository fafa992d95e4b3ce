"""Writes a private note on every decision (Decision.note), as long as ``--bytes`` says, sent whole (no kit cuts it).

Each note starts with the decision's number and the marker ``flood-note``, then ``--bytes`` bytes of two-byte
characters (é), so that a cut at any byte count but an even one falls inside a character. On the decisions of
``--at`` the note goes with an illegal action instead of a legal one, to show that a faulting reply's note is
kept too. With ``--patient`` it never stops the bus or knocks (the first legal action that does not), so that its
game goes on. The referee must keep 1024 bytes of each note, 64 KB of the game's, and never call it a fault.
"""

from __future__ import annotations

import _common
from bad_reply import illegal_action

from referee.v2 import bot_pb2 as pb

MARK = "flood-note"
ENDING_KINDS = (pb.ACTION_KIND_STOP, pb.ACTION_KIND_KNOCK)
ENDINGS = [pb.Action(kind=kind) for kind in ENDING_KINDS]


class NoterServicer(_common.LegalServicer):
    def decision_response(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        reply = super().decision_response(request)
        if self.args.patient and reply.decision.action in ENDINGS:
            waiting = [action for action in request.legal_actions if action.kind not in ENDING_KINDS]
            reply = _common.reply(request.decision_number, waiting[0]) if waiting else reply
        reply.decision.note = f"{request.decision_number} {MARK} " + "é" * (self.args.bytes // 2)
        return reply

    def misbehave(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        return _common.reply(request.decision_number, illegal_action(request))


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--bytes", type=int, default=5000, help="the bytes of é each note holds after its start")
    options.add_argument("--patient", action="store_true", help="never stop the bus or knock (not with --at)")
    options.set_defaults(at="")  # by default every reply is legal
    _common.run(NoterServicer(_common.parse(options), "noter"))
