"""Players inside the referee: a seat of a game played by a Python function, through the Python bot kit's code.

An :class:`InProcessBot` takes a seat in a :class:`referee.play.match.Match` as a
bot process does, without a process or a stream: it is handed the very
bytes a bot's stream carries (each ``DecisionRequest``, ``GameStart``,
``FaultNotice`` and ``GameEnd``) and reads them with the kit's
:class:`referee.play.kit.BotServicer`, so its ``decide`` function sees what a
Python bot in that seat sees (the engine's observation, with the current
hand's events), and its hooks are called as a bot's are. ``check-bot`` plays
its default opponents so (:func:`sample_opponents`: the sample bots, which
ship with the referee), and ``referee play --human`` a person
(:mod:`referee.apps.human.terminal`). An in-process player is on no clock and never
faults, except as a bot on a stream would: a ``decide`` that raises is a
malformed reply.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from functools import cache
from types import ModuleType

from referee.common.resources import SAMPLE_BOT_NAMES, SAMPLE_OPPONENTS, sample_bot_path
from referee.engine.games import GAMES
from referee.play.kit import BotServicer, DecideFunction
from referee.play.session import Reply, decision_action
from referee.protocol.clock import TimeControl
from referee.protocol.faults import BotFault
from referee.v2 import bot_pb2 as pb


@cache
def _sample_module(name: str) -> ModuleType:
    """A sample bot's module, loaded once from the file that ships with the referee."""
    if name not in SAMPLE_BOT_NAMES:
        raise ValueError(f"no sample bot is called {name!r}: the sample bots are {', '.join(SAMPLE_BOT_NAMES)}")
    path = sample_bot_path(f"{name}_bot.py")
    spec = importlib.util.spec_from_file_location(f"referee_sample_{name}", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the sample bots ship with the referee
        raise ImportError(f"cannot load the sample bot {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_decide(name: str) -> DecideFunction:
    """The ``decide`` function of a sample bot shipped with the referee (one of :data:`SAMPLE_BOT_NAMES`;
    the search bot's takes the clock as an optional second argument, and thinks 200 ms without it)."""
    decide: DecideFunction = _sample_module(name).decide
    return decide


def sample_bot(name: str, seat_name: str) -> InProcessBot:
    """The sample bot ``name`` as a seat called ``seat_name``. A bot that thinks for as long as it may (its
    module sets ``TIMED``) is given each request's clock, as the kit gives it to the bot run as a process."""
    module = _sample_module(name)
    return InProcessBot(seat_name, module.decide, timed=bool(getattr(module, "TIMED", False)))


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
        timed: bool = False,
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
            timed=timed,
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
            return Reply(decision_action(decision, self.name), wall_ms, wall_ms, note=decision.note)
        except BotFault as fault:  # as a bot on a stream: an error is a malformed fault
            return Reply(None, wall_ms, wall_ms, fault, decision.note)

    async def answer(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        """The kit's reply to ``request`` (a player that waits for a person answers in a thread)."""
        return self.servicer.answer(request)

    async def stop(self) -> None:
        """Nothing to stop."""


def sample_opponents(count: int) -> list[InProcessBot]:
    """``count`` sample opponents, those of :data:`SAMPLE_OPPONENTS` (heuristic and random) in turn."""
    names = [SAMPLE_OPPONENTS[index % len(SAMPLE_OPPONENTS)] for index in range(count)]
    return [sample_bot(name, f"{name}-{index + 1}") for index, name in enumerate(names)]
