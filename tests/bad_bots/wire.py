"""Serves the Bot service with raw bytes (identity serializers), to reply what no protobuf stub would send.

Modes, on chosen decisions: ``garbage`` (bytes that do not parse as a
DecisionReply) and ``huge`` (a valid DecisionReply padded with an unknown
field to 2 MiB, over the referee's 1 MiB receive limit). Other decisions get
a legal reply. ``garbage-handshake`` answers the handshake with garbage.
"""

from __future__ import annotations

from concurrent import futures

import grpc

import _common
from referee.protocol import GAME_TO_PB, PROTOCOL_VERSION
from referee.v1 import bot_pb2 as pb

# A field tag whose varint never ends: no protobuf parser accepts it.
GARBAGE = b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
HUGE_BYTES = 2 << 20
UNKNOWN_FIELD = 1000


def padded(reply: pb.DecisionReply, size: int) -> bytes:
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


def main() -> None:
    options = _common.parser(__doc__)
    options.add_argument("--mode", required=True, choices=["garbage", "huge", "garbage-handshake"])
    args = _common.parse(options)
    schedule = _common.Schedule(args.at)
    handshake = pb.HandshakeReply(
        protocol_version=PROTOCOL_VERSION, games=list(GAME_TO_PB.values()), name="wire", version="1.0"
    ).SerializeToString()
    if args.mode == "garbage-handshake":
        handshake = GARBAGE

    def decide(request_bytes: bytes, context) -> bytes:
        request = pb.DecisionRequest.FromString(request_bytes)
        reply = _common.legal_reply(request)
        if not schedule.next_misbehaves():
            return reply.SerializeToString()
        return GARBAGE if args.mode == "garbage" else padded(reply, HUGE_BYTES)

    handlers = {
        "Handshake": grpc.unary_unary_rpc_method_handler(lambda request, context: handshake),
        "Decide": grpc.unary_unary_rpc_method_handler(decide),
        "Notify": grpc.unary_unary_rpc_method_handler(lambda request, context: b""),
    }  # no serializers: handlers take and return bytes
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("referee.v1.Bot", handlers)])
    server.add_insecure_port(args.address)
    server.start()
    server.wait_for_termination()


if __name__ == "__main__":
    main()
