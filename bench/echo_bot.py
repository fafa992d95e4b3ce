"""The benchmark bot: answers every decision at once, on the generated stubs alone.

It does the least a correct bot can do per call (the gRPC server parses the
request, the bot picks one of ``legal_actions`` by arithmetic on
``decision_number`` and the server serializes the reply), so that
bench/overhead.py measures the referee and the transport rather than a bot.
The work per call is the same whatever the request says.

``--policy scattered`` (the default) picks the legal action at a
pseudo-random index, a multiplicative hash of the decision number: it plays
like the random sample bot, so hands and games last about as long as
theirs (Stop the Bus, 3 seats: 6 decisions a hand, 64 a game; Bastard Brag,
4 seats: 23 and 236) and games have their usual share of hand ends,
notifications and game starts. ``--policy first`` always takes the first
legal action, which never stops the bus or knocks: every hand runs to the
turn limit (hundreds of decisions), so it shows the cost of a decision alone.

It is served by :func:`referee.botkit.serve`, the same gRPC server the Python
bot kit and the sample bots use. Run by the benchmarks with
``REFEREE_BOT_ADDRESS`` set, like any bot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.botkit import bot_address, serve  # noqa: E402
from referee.v1 import bot_pb2 as pb  # noqa: E402
from referee.v1 import bot_pb2_grpc as pb_grpc  # noqa: E402

POLICIES = ("scattered", "first")


class EchoServicer(pb_grpc.BotServicer):
    """Answers each decision at once with the legal action its policy picks."""

    def __init__(self, policy: str) -> None:
        self._handshake_reply = pb.HandshakeReply(
            protocol_version=pb.PROTOCOL_VERSION, games=[pb.STOP_THE_BUS, pb.BASTARD_BRAG], name="echo", version="1.0"
        )
        self._notify_reply = pb.NotifyReply()
        self._multiplier = 2654435761 if policy == "scattered" else 0  # Knuth's multiplicative hash, or index 0

    def Handshake(self, request, context):  # noqa: N802 - gRPC method name
        return self._handshake_reply

    def Decide(self, request, context):  # noqa: N802
        legal = request.legal_actions
        number = request.decision_number
        return pb.DecisionReply(decision_number=number, action=legal[(number * self._multiplier >> 16) % len(legal)])

    def Notify(self, request, context):  # noqa: N802
        return self._notify_reply


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--policy", choices=POLICIES, default=POLICIES[0], help="how to pick the legal action")
    args, _ = options.parse_known_args()
    serve(EchoServicer(args.policy), bot_address())
