"""The benchmark bot: answers every decision at once, on the generated stubs alone.

It does the least a correct bot can do per call (the gRPC server parses the
request, the bot picks ``legal_actions[decision_number % len(legal_actions)]``
and the server serializes the reply), so that bench/overhead.py measures the
referee and the transport rather than a bot. Cycling through the legal
actions by decision number, rather than always taking the first, ends hands
the way real bots do (the first legal action never stops the bus or
knocks), so games have their usual share of hand ends and notifications.
The work per call is the same whatever the request says.

It is served by :func:`referee.botkit.serve`, the same gRPC server the Python
bot kit and the sample bots use. Run by the benchmarks with
``REFEREE_BOT_ADDRESS`` set, like any bot.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.botkit import bot_address, serve  # noqa: E402
from referee.v1 import bot_pb2 as pb  # noqa: E402
from referee.v1 import bot_pb2_grpc as pb_grpc  # noqa: E402


class EchoServicer(pb_grpc.BotServicer):
    """Plays the legal action at index decision_number modulo the number of legal actions."""

    def __init__(self) -> None:
        self._handshake_reply = pb.HandshakeReply(
            protocol_version=pb.PROTOCOL_VERSION, games=[pb.STOP_THE_BUS, pb.BASTARD_BRAG], name="echo", version="1.0"
        )
        self._notify_reply = pb.NotifyReply()

    def Handshake(self, request, context):  # noqa: N802 - gRPC method name
        return self._handshake_reply

    def Decide(self, request, context):  # noqa: N802
        legal = request.legal_actions
        number = request.decision_number
        return pb.DecisionReply(decision_number=number, action=legal[number % len(legal)])

    def Notify(self, request, context):  # noqa: N802
        return self._notify_reply


if __name__ == "__main__":
    serve(EchoServicer(), bot_address())
