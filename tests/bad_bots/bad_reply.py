"""Replies with a well-formed message that is still wrong, on chosen decisions.

Modes: ``empty`` (an action with no kind), ``unknown-kind`` (kind 99),
``illegal`` (a known action the rules do not allow now), ``stale`` (the wrong
decision_number), ``error`` (a gRPC error status instead of a reply),
``duplicate`` (a legal reply sent twice, the second ``--delay-ms`` later,
while the referee goes on: it may ask the bot's next decision meanwhile).
"""

from __future__ import annotations

import asyncio

import _common

from referee.v2 import bot_pb2 as pb

UNKNOWN_KIND = 99


def illegal_action(request: pb.DecisionRequest) -> pb.Action:
    """A known action that is not legal now: KNOCK is never legal in Stop the Bus, DRAW never in Bastard Brag."""
    legal = list(request.legal_actions)
    candidates = (pb.Action(kind=pb.ACTION_KIND_KNOCK), pb.Action(kind=pb.ACTION_KIND_DRAW))
    return next(candidate for candidate in candidates if candidate not in legal)


class BadReplyServicer(_common.LegalServicer):
    def __init__(self, args, name: str) -> None:
        super().__init__(args, name)
        self._again: list[pb.PlayResponse] = []  # replies to send a second time (mode duplicate)

    async def Play(self, request_iterator, context):  # noqa: N802 - gRPC method name
        if self.args.mode != "duplicate":
            async for response in super().Play(request_iterator, context):
                yield response
            return
        # The requests are read on while a duplicate waits, so that the next request can arrive first.
        outbox: asyncio.Queue = asyncio.Queue()

        async def answer() -> None:
            async for response in super(BadReplyServicer, self).Play(request_iterator, context):
                await outbox.put(response)
                for again in self._again:
                    asyncio.get_running_loop().call_later(self.args.delay_ms / 1000, outbox.put_nowait, again)
                self._again.clear()
            await asyncio.sleep(self.args.delay_ms / 1000)
            await outbox.put(None)

        task = asyncio.ensure_future(answer())
        while (response := await outbox.get()) is not None:
            yield response
        await task

    def misbehave(self, request):
        mode = self.args.mode
        number = request.decision_number
        if mode == "duplicate":
            reply = _common.legal_reply(request)
            self._again.append(reply)
            return reply
        if mode == "empty":
            return _common.reply(number, pb.Action())
        if mode == "unknown-kind":
            return _common.reply(number, pb.Action(kind=UNKNOWN_KIND))
        if mode == "illegal":
            return _common.reply(number, illegal_action(request))
        if mode == "stale":
            reply = _common.legal_reply(request)
            reply.decision.decision_number = number + 1000
            return reply
        if mode == "no-decision":
            return pb.PlayResponse()
        return pb.PlayResponse(
            decision=pb.Decision(decision_number=number, error="RuntimeError: this bot refuses to decide")
        )


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument(
        "--mode",
        required=True,
        choices=["empty", "unknown-kind", "illegal", "stale", "error", "no-decision", "duplicate"],
    )
    options.add_argument("--delay-ms", type=int, default=0, help="mode duplicate: the second reply's delay")
    _common.run(BadReplyServicer(_common.parse(options), "bad-reply"))
