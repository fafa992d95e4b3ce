"""A bot that still speaks protocol v1: it serves only the old unary ``referee.v1.Bot`` service.

The referee, which speaks v2 only, must refuse it with a handshake fault that
says the protocol moved to v2 and where the guide is.
"""

from __future__ import annotations

import asyncio

import _common
import grpc
import grpc.aio


async def serve(address: str) -> None:
    async def empty(request: bytes, context) -> bytes:
        return b""

    # The v1 service's calls, answering with empty messages (no serializers: bytes in, bytes out).
    handlers = {name: grpc.unary_unary_rpc_method_handler(empty) for name in ("Handshake", "Decide", "Notify")}
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("referee.v1.Bot", handlers)])
    server.add_insecure_port(address)
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(serve(_common.parse(_common.parser(__doc__)).address))
