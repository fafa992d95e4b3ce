"""Serves the v2 stream with raw bytes (identity serializers), to reply what no protobuf stub would send.

Modes, on chosen decisions: ``garbage`` (bytes that do not parse as a
PlayResponse) and ``huge`` (a valid PlayResponse padded with an unknown
field to 2 MiB, over the referee's 1 MiB receive limit). Other decisions get
a legal reply. ``garbage-handshake`` answers the handshake with garbage.
"""

from __future__ import annotations

import asyncio

import _common
import grpc
import grpc.aio

from referee.protocol.messages import GAME_TO_PB, PROTOCOL_VERSION
from referee.v2 import bot_pb2 as pb

# A field tag whose varint never ends: no protobuf parser accepts it.
GARBAGE = b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
HUGE_BYTES = 2 << 20
UNKNOWN_FIELD = 1000


def padded(reply: pb.PlayResponse, size: int) -> bytes:
    """``reply`` serialized, then an unknown length-delimited field of ``size`` bytes (parsers keep it)."""
    tag = (UNKNOWN_FIELD << 3) | 2
    return reply.SerializeToString() + _varint(tag) + _varint(size) + b"x" * size


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


async def serve(args) -> None:
    schedule = _common.Schedule(args.at)
    handshake = pb.PlayResponse(
        handshake=pb.HandshakeResponse(
            protocol_versions=[PROTOCOL_VERSION], games=list(GAME_TO_PB.values()), name="wire", version="1.0"
        )
    ).SerializeToString()
    if args.mode == "garbage-handshake":
        handshake = GARBAGE

    async def play(request_iterator, context):
        async for request_bytes in request_iterator:
            request = pb.PlayRequest.FromString(request_bytes)
            kind = request.WhichOneof("message")
            if kind == "handshake":
                yield handshake
            elif kind == "decision_request":
                reply = _common.legal_reply(request.decision_request)
                if not schedule.next_misbehaves():
                    yield reply.SerializeToString()
                else:
                    yield GARBAGE if args.mode == "garbage" else padded(reply, HUGE_BYTES)

    # No serializers: the handler takes and gives bytes.
    handlers = {"Play": grpc.stream_stream_rpc_method_handler(play)}
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("referee.v2.BotService", handlers)])
    server.add_insecure_port(args.address)
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    options = _common.parser(__doc__)
    options.add_argument("--mode", required=True, choices=["garbage", "huge", "garbage-handshake"])
    asyncio.run(serve(_common.parse(options)))


if __name__ == "__main__":
    main()
