"""Answers the handshake wrongly: another protocol version, games it does not list, or no answer at all."""

from __future__ import annotations

import threading

import _common
from referee.protocol import GAME_TO_PB
from referee.v1 import bot_pb2 as pb


class HandshakeServicer(_common.LegalServicer):
    def Handshake(self, request, context):  # noqa: N802 - gRPC method name
        if self.args.hang:
            threading.Event().wait()
        games = [GAME_TO_PB[name] for name in self.args.games.split(",") if name]
        return pb.HandshakeReply(protocol_version=self.args.protocol_version, games=games, name="handshake")


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--protocol-version", type=int, default=pb.PROTOCOL_VERSION)
    options.add_argument("--games", default="stop_the_bus,bastard_brag", help="games to claim, comma separated")
    options.add_argument("--hang", action="store_true", help="never answer the handshake")
    _common.run(HandshakeServicer(_common.parse(options), "handshake"))
