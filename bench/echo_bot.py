"""The benchmark bot: answers every decision at once, on the generated stubs alone.

It does the least a correct bot can do per decision (the gRPC server parses
the request, the bot picks one of ``legal_actions`` by arithmetic on
``decision_number`` and the server serializes the reply), so that
bench/overhead.py measures the referee and the transport rather than a bot.
The work per call is the same whatever the request says.

``--policy scattered`` (the default) picks the legal action at a
pseudo-random index, a multiplicative hash of the decision number: it plays
like the random sample bot, so hands and games last about as long as
theirs (Stop the Bus, 3 seats: 6 decisions a hand, 64 a game; Bastard Brag,
4 seats: 23 and 236) and games have their usual share of hand ends,
game ends and game starts. ``--policy first`` always takes the first
legal action, which never stops the bus or knocks: every hand runs to the
turn limit (hundreds of decisions), so it shows the cost of a decision alone.

It is served by :func:`referee.play.kit.serve`, the same gRPC server the Python
bot kit and the sample bots use, and serves beside the v2 stream a plain
unary call, ``bench.Echo/Decide`` (a DecisionRequest in, a Decision out),
that the benchmark compares a decision with. Run by the benchmarks with
``REFEREE_BOT_ADDRESS`` set, like any bot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grpc

from referee.play.kit import bot_address, serve
from referee.v2 import bot_pb2 as pb
from referee.v2 import bot_pb2_grpc as pb_grpc

POLICIES = ("scattered", "first")
# The bare unary call bench/overhead.py compares a decision with: a DecisionRequest in, a Decision out.
UNARY_SERVICE = "bench.Echo"
UNARY_METHOD = f"/{UNARY_SERVICE}/Decide"


class EchoServicer(pb_grpc.BotServiceServicer):
    """Answers each decision at once with the legal action its policy picks."""

    def __init__(self, policy: str) -> None:
        self._handshake = pb.PlayResponse(
            handshake=pb.HandshakeResponse(
                protocol_versions=[2], games=[pb.GAME_STOP_THE_BUS, pb.GAME_BASTARD_BRAG], name="echo", version="1.0"
            )
        )
        self._multiplier = 2654435761 if policy == "scattered" else 0  # Knuth's multiplicative hash, or index 0

    def decision(self, request: pb.DecisionRequest) -> pb.Decision:
        legal = request.legal_actions
        number = request.decision_number
        return pb.Decision(decision_number=number, action=legal[(number * self._multiplier >> 16) % len(legal)])

    async def Play(self, request_iterator, context):  # noqa: N802 - gRPC method name
        async for request in request_iterator:
            kind = request.WhichOneof("message")
            if kind == "decision_request":
                yield pb.PlayResponse(decision=self.decision(request.decision_request))
            elif kind == "handshake":
                yield self._handshake

    async def unary_decide(self, request: pb.DecisionRequest, context) -> pb.Decision:
        return self.decision(request)

    def unary_handler(self) -> grpc.GenericRpcHandler:
        handler = grpc.unary_unary_rpc_method_handler(
            self.unary_decide,
            request_deserializer=pb.DecisionRequest.FromString,
            response_serializer=pb.Decision.SerializeToString,
        )
        return grpc.method_handlers_generic_handler(UNARY_SERVICE, {"Decide": handler})


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--policy", choices=POLICIES, default=POLICIES[0], help="how to pick the legal action")
    args, _ = options.parse_known_args()
    echo = EchoServicer(args.policy)
    serve(echo, bot_address(), extra_handlers=[echo.unary_handler()])
