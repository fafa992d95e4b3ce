"""Answers the handshake wrongly: another protocol version, games it does not list, or no answer at all."""

from __future__ import annotations

import threading

import _common

from referee.protocol.messages import GAME_TO_PB
from referee.v2 import bot_pb2 as pb


class HandshakeServicer(_common.LegalServicer):
    def handshake_response(self, handshake):
        if self.args.hang:
            threading.Event().wait()
        games = [GAME_TO_PB[name] for name in self.args.games.split(",") if name]
        return pb.PlayResponse(
            handshake=pb.HandshakeResponse(
                protocol_versions=[self.args.protocol_version], games=games, name="handshake"
            )
        )


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--protocol-version", type=int, default=2)
    options.add_argument("--games", default="stop_the_bus,bastard_brag", help="games to claim, comma separated")
    options.add_argument("--hang", action="store_true", help="never answer the handshake")
    _common.run(HandshakeServicer(_common.parse(options), "handshake"))
