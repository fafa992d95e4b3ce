"""Plays legal moves, but once the referee ends its side of the stream, never ends its own: it lingers.

The referee waits a moment for a bot's side to end (so the bot sees the
last messages), then stops it whatever it does.
"""

from __future__ import annotations

import asyncio

import _common


class LingeringServicer(_common.LegalServicer):
    async def Play(self, request_iterator, context):  # noqa: N802 - gRPC method name
        async for response in super().Play(request_iterator, context):
            yield response
        await asyncio.sleep(3600)


if __name__ == "__main__":
    _common.run(LingeringServicer(_common.parse(_common.parser(__doc__)), "lingering"))
