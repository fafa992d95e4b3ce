"""Players inside the referee: a seat of a game played by a Python function, through the Python bot kit's code.

An :class:`InProcessBot` takes a seat in a :class:`referee.match.Match` as a
bot process does, without a process or a stream: it is handed the very
bytes a bot's stream carries (each ``DecisionRequest``, ``GameStart``,
``FaultNotice`` and ``GameEnd``) and reads them with the kit's
:class:`referee.botkit.BotServicer`, so its ``decide`` function sees what a
Python bot in that seat sees (the engine's observation, with the current
hand's events), and its hooks are called as a bot's are. ``check-bot`` plays
its default opponents so (:func:`sample_opponents`: the sample bots, which
ship with the referee), and ``referee play --human`` a person
(:mod:`referee.human`). An in-process player is on no clock and never
faults, except as a bot on a stream would: a ``decide`` that raises is a
malformed reply.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from functools import cache

from referee.botkit import BotServicer, DecideFunction
from referee.clock import TimeControl
from referee.faults import BotFault
from referee.games import GAMES
from referee.resources import sample_bot_path
from referee.session import Reply, decision_action
from referee.v2 import bot_pb2 as pb

SAMPLE_BOTS = ("heuristic", "random")


@cache
def sample_decide(name: str) -> DecideFunction:
    """The ``decide`` function of a sample bot shipped with the referee (``random`` or ``heuristic``)."""
    path = sample_bot_path(f"{name}_bot.py")
    spec = importlib.util.spec_from_file_location(f"referee_sample_{name}", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the sample bots ship with the referee
        raise ImportError(f"cannot load the sample bot {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    decide: DecideFunction = module.decide
    return decide


class InProcessBot:
    """A seat played inside the referee by ``decide`` (and the kit's hooks), as a Python kit bot would play it."""

    def __init__(
        self,
        name: str,
        decide: DecideFunction,
        *,
        on_game_start: Callable[[pb.GameStart], None] | None = None,
        on_event: Callable[[pb.Event], None] | None = None,
        on_fault: Callable[[pb.FaultNotice], None] | None = None,
        on_game_end: Callable[[pb.GameEnd], None] | None = None,
    ) -> None:
        self.name = name
        self.servicer = BotServicer(
            decide,
            name,
            "1.0",
            tuple(GAMES),
            on_game_start=on_game_start,
            on_event=on_event,
            on_fault=on_fault,
            on_game_end=on_game_end,
        )
        self.connected = self.usable = True

    def game_start(self, message: pb.GameStart) -> None:
        self.servicer.start_game(message)

    def fault_notice(self, message: pb.FaultNotice) -> None:
        self.servicer.take_fault(message)

    def game_end(self, body: bytes) -> None:
        """Take the GameEnd whose bytes are ``body``."""
        self.servicer.end_game(pb.GameEnd.FromString(body))

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply:
        """The kit's reply to an encoded request, charged its wall time (a person's thinking included)."""
        if while_waiting is not None:
            while_waiting()
        started = time.perf_counter()
        decision = (await self.answer(pb.DecisionRequest.FromString(request))).decision
        wall_ms = (time.perf_counter() - started) * 1000
        try:
            return Reply(decision_action(decision, self.name), wall_ms, wall_ms)
        except BotFault as fault:  # as a bot on a stream: an error is a malformed fault
            return Reply(None, wall_ms, wall_ms, fault)

    async def answer(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        """The kit's reply to ``request`` (a player that waits for a person answers in a thread)."""
        return self.servicer.answer(request)

    async def stop(self) -> None:
        """Nothing to stop."""


def sample_opponents(count: int) -> list[InProcessBot]:
    """``count`` sample opponents, heuristic and random in turn."""
    return [InProcessBot(f"{SAMPLE_BOTS[i % 2]}-{i + 1}", sample_decide(SAMPLE_BOTS[i % 2])) for i in range(count)]
