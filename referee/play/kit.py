"""The Python bot kit: write one function from observation to action, and play.

    from referee.play.kit import run_bot

    def decide(obs):
        return obs.legal_actions[0]

    if __name__ == "__main__":
        run_bot(decide, name="first-legal")

``run_bot`` takes what the bot says of itself in its handshake: ``name``
(required), ``version`` (``"1.0"`` by default) and ``author``; and ``games``,
the games it plays, by their names (``"stop_the_bus"``, ``"bastard_brag"``;
both by default). A league seats it only at a game it lists: a league of
another game refuses it at its handshake (``does not play bastard_brag``),
and ``referee check-bot`` checks it at the games it lists alone. A bot of
one game says so: ``run_bot(decide, name="bus-only", games=["stop_the_bus"])``.

``obs`` is the engine's own observation type
(:class:`referee.engine.games.StopTheBusObservation` or
:class:`referee.engine.games.BastardBragObservation`): your hand as
:class:`referee.engine.cards.Card` values, every seat's lives, the piles or the
centre, ``obs.legal_actions`` and ``obs.hand_events``, the whole public
history of the current hand (the kit keeps it, so your function needs no
memory). Return one of ``obs.legal_actions``.

The kit serves the protocol of ``proto/referee/v2/bot.proto`` on the address
in ``REFEREE_BOT_ADDRESS`` (or ``--address``): it answers the handshake,
keeps each game's public history from the stream (:class:`GameHistory`,
checking the events' sequence numbers), and calls your optional hooks:
``on_game_start(GameStart)``, ``on_event(Event)`` for every public event in
order (a showdown's event carries the revealed hands),
``on_fault(FaultNotice)`` and ``on_game_end(GameEnd)``, all protocol
messages. It calls your functions one at a time, never at once.

If ``decide`` raises, the kit writes the traceback to stderr (your log) and
tells the referee it could not decide, with the error's one-line summary:
the referee records a malformed-reply fault quoting it.

A bot may leave itself a note on a decision, for its author's eyes alone: call
``note("...")`` (``from referee.botkit import note``) while ``decide`` runs,
as often as it likes; the texts go, joined by line ends, with that decision's
reply (``Decision.note``), and its author reads them beside the decision in
their private replay of the game (never anyone else; docs/bot-protocol.md,
"Notes"). The referee keeps 1024 bytes of a note (the kit cuts it there) and
64 KB of a bot's notes in a game; a note is never a fault.

A bot that thinks for as long as it may (a search) asks for its clock:
``run_bot(decide, name=..., timed=True)`` calls ``decide(obs, clock)``, the
:class:`MoveClock` of the request (its move time, its bank left, when it
arrived, and what the previous decision was charged).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import grpc.aio

from referee.engine.games.game import Action, Event, Observation
from referee.protocol.messages import (
    GAME_TO_PB,
    NOTE_BYTES,
    PROTOCOL_VERSION,
    action_from_pb,
    action_to_pb,
    cut_note,
    event_from_pb,
    observation_from_pb,
)
from referee.v2 import bot_pb2 as pb
from referee.v2 import bot_pb2_grpc as pb_grpc

__all__ = [
    "ADDRESS_VARIABLE",
    "BotServicer",
    "DecideFunction",
    "GameHistory",
    "Message",
    "MoveClock",
    "SequenceGap",
    "TimedDecideFunction",
    "bot_address",
    "note",
    "run_bot",
    "serve",
    "serve_async",
]

ADDRESS_VARIABLE = "REFEREE_BOT_ADDRESS"

DecideFunction = Callable[[Observation], Action]

_notes: list[str] = []  # the notes made during the decision being made (the kit makes one at a time)


def note(text: object) -> None:
    """Leave a note on the decision being made (see the module's text): for its author's private replay alone."""
    if len(_notes) < NOTE_BYTES:  # a note past the cap is cut anyway: a bot noting in a loop grows nothing
        _notes.append(str(text))


def _taken_note() -> str:
    """The notes made during this decision, joined and cut to the referee's cap; none are left."""
    if not _notes:
        return ""
    joined, _ = cut_note("\n".join(_notes))
    _notes.clear()
    return joined


@dataclass(frozen=True)
class MoveClock:
    """The time of one decision, for a bot that thinks for as long as it may.

    The referee charges the time the bot's process uses from the request's
    arrival (docs/bot-protocol.md, "Time"); ``arrived`` is that moment on
    :func:`time.perf_counter`, so wall time since then is never less than
    what is charged. This decision may be charged ``move_time_ms`` plus
    ``time_bank_ms`` (plus the grace of ``GameStart.time_limits``) before it
    is a timeout; what it is charged beyond ``move_time_ms`` comes out of the
    bank. ``last_charged_ms`` is what the referee charged the bot's previous
    decision in this game (0 for the first): set beside the time that decision
    meant to use, it says how the machine treats the bot.
    """

    move_time_ms: int  # the time for this move
    time_bank_ms: int  # the bank left in this game, spent by moves that run over
    arrived: float  # time.perf_counter() as the request arrived
    last_charged_ms: int = 0  # what the previous decision in this game was charged (0 for the first)

    def elapsed_s(self) -> float:
        """Seconds since the request arrived."""
        return time.perf_counter() - self.arrived


TimedDecideFunction = Callable[[Observation, MoveClock], Action]


class SequenceGap(Exception):
    """The stream skipped an event or a message: the bot's picture of the game cannot be trusted."""


@dataclass
class GameHistory:
    """One game's public history as the stream delivered it: every event, in order, checked for gaps."""

    game_id: str = ""
    events: list[pb.Event] = field(default_factory=list)  # every event so far, sequence 1, 2, 3 ...
    hand_events: list[Event] = field(default_factory=list)  # the current hand's, as engine values

    def add(self, message: pb.Event) -> None:
        """Take the next event; raise :class:`SequenceGap` unless it is numbered one past the last."""
        expected = len(self.events) + 1
        if message.sequence != expected:
            raise SequenceGap(f"game {self.game_id}: event {message.sequence} arrived where {expected} was due")
        self.events.append(message)
        event = event_from_pb(message)
        if self.hand_events and self.hand_events[-1].hand_number != event.hand_number:
            self.hand_events = []
        self.hand_events.append(event)

    def current_hand(self, hand_number: int) -> tuple[Event, ...]:
        """The public events of hand ``hand_number`` (the current hand)."""
        if self.hand_events and self.hand_events[-1].hand_number != hand_number:
            return ()
        return tuple(self.hand_events)

    def showdowns(self) -> list[pb.Event]:
        """Every showdown event so far, with its revealed hands."""
        return [event for event in self.events if event.kind == pb.EVENT_KIND_SHOWDOWN]


class BotServicer(pb_grpc.BotServiceServicer):
    """Serves the v2 stream for one ``decide`` function and its hooks."""

    def __init__(
        self,
        decide: DecideFunction,
        name: str,
        version: str,
        games: Iterable[str],
        author: str = "",
        on_game_start: Callable[[pb.GameStart], None] | None = None,
        on_event: Callable[[pb.Event], None] | None = None,
        on_fault: Callable[[pb.FaultNotice], None] | None = None,
        on_game_end: Callable[[pb.GameEnd], None] | None = None,
        *,
        timed: bool = False,
    ) -> None:
        self._decide = decide
        self._timed = timed  # decide takes the MoveClock too (it is then a TimedDecideFunction)
        self._handshake = pb.PlayResponse(
            handshake=pb.HandshakeResponse(
                protocol_versions=[PROTOCOL_VERSION],
                games=[GAME_TO_PB[game] for game in games],
                name=name,
                version=version,
                author=author,
            )
        )
        self._on_game_start = on_game_start
        self._on_event = on_event
        self._on_fault = on_fault
        self._on_game_end = on_game_end
        self.history = GameHistory()

    async def Play(  # noqa: N802 - gRPC method name
        self, request_iterator: AsyncIterator[pb.PlayRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[pb.PlayResponse]:
        expected = 1
        async for request in request_iterator:
            if request.sequence != expected:
                print(f"referee stream: message {request.sequence} arrived where {expected} was due", file=sys.stderr)
            expected = request.sequence + 1
            kind = request.WhichOneof("message")
            if kind == "decision_request":
                yield self.answer(request.decision_request)
            elif kind == "handshake":
                yield self.handshake_response(request.handshake)
            elif kind == "game_start":
                self.start_game(request.game_start)
            elif kind == "fault_notice":
                self.take_fault(request.fault_notice)
            elif kind == "game_end":
                self.end_game(request.game_end)

    def start_game(self, message: pb.GameStart) -> None:
        """Take a game's start: a new history, and the hook."""
        self.history = GameHistory(message.game_id)
        _call(self._on_game_start, message)

    def take_fault(self, message: pb.FaultNotice) -> None:
        """Take a fault notice: the hook."""
        _call(self._on_fault, message)

    def end_game(self, message: pb.GameEnd) -> None:
        """Take a game's end: its last events into the history, then the hook."""
        try:
            self._take_events(message.events)
        except SequenceGap as gap:
            print(f"referee stream: {gap}", file=sys.stderr)
        _call(self._on_game_end, message)

    def handshake_response(self, handshake: pb.Handshake) -> pb.PlayResponse:
        """The answer to the referee's handshake (a subclass may answer otherwise)."""
        return self._handshake

    def _take_events(self, events: Iterable[pb.Event]) -> None:
        for event in events:
            self.history.add(event)
            _call(self._on_event, event)

    def answer(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        """Take a decision request's events into the history, then answer it."""
        try:
            self._take_events(request.events)
        except SequenceGap as gap:
            print(f"referee stream: {gap}", file=sys.stderr)
        return self.decision_response(request)

    def decision_response(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        """The answer to a decision request: ``decide``'s action, or the error it raised (a subclass may answer otherwise)."""
        arrived = time.perf_counter()
        number = request.decision_number
        _notes.clear()  # a note made outside decide (a hook) is not this decision's
        try:
            legal = tuple(action_from_pb(message) for message in request.legal_actions)
            observation = request.observation
            obs = observation_from_pb(observation, self.history.current_hand(observation.hand_number), legal)
            if self._timed:
                clock = MoveClock(request.move_time_ms, request.time_bank_ms, arrived, request.last_charged_ms)
                chosen = self._decide(obs, clock)  # type: ignore[call-arg]
            else:
                chosen = self._decide(obs)
            return pb.PlayResponse(
                decision=pb.Decision(decision_number=number, action=action_to_pb(chosen), note=_taken_note())
            )
        except Exception as error:  # noqa: BLE001 - any failure of the bot's code is reported, not fatal
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            summary = "".join(traceback.format_exception_only(type(error), error)).strip()
            return pb.PlayResponse(decision=pb.Decision(decision_number=number, error=summary, note=_taken_note()))


Message = TypeVar("Message")


def _call(hook: Callable[[Message], None] | None, message: Message) -> None:
    """Call an optional hook; its exceptions go to the log, with the traceback, and play goes on."""
    if hook is None:
        return
    try:
        hook(message)
    except Exception:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()


async def serve_async(
    servicer: pb_grpc.BotServiceServicer, address: str, extra_handlers: Sequence[grpc.GenericRpcHandler] = ()
) -> None:
    """Serve ``servicer`` (and any ``extra_handlers``) on ``address`` until SIGTERM or SIGINT."""
    server = grpc.aio.server()
    # grpcio-tools writes the servicer functions without annotations (mypy-protobuf would, but is not used here).
    pb_grpc.add_BotServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    if extra_handlers:
        server.add_generic_rpc_handlers(tuple(extra_handlers))
    if server.add_insecure_port(address) == 0 and not address.startswith("unix:"):
        raise SystemExit(f"cannot listen on {address}")
    await server.start()
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    await stopped.wait()
    await server.stop(grace=None)


def serve(
    servicer: pb_grpc.BotServiceServicer, address: str, extra_handlers: Sequence[grpc.GenericRpcHandler] = ()
) -> None:
    """Serve ``servicer`` on ``address`` until SIGTERM or SIGINT."""
    asyncio.run(serve_async(servicer, address, extra_handlers))


def bot_address(argv: list[str] | None = None) -> str:
    """Return the address to serve: ``--address`` if given, else ``$REFEREE_BOT_ADDRESS``."""
    parser = argparse.ArgumentParser(description="A bot for the Brag referee.")
    parser.add_argument("--address", help=f"gRPC address to listen on (default: ${ADDRESS_VARIABLE})")
    args, _ = parser.parse_known_args(argv)
    address = args.address or os.environ.get(ADDRESS_VARIABLE)
    if not address:
        sys.exit(f"no address to listen on: set {ADDRESS_VARIABLE} (the referee does) or pass --address")
    return address


def run_bot(
    decide: DecideFunction | TimedDecideFunction,
    *,
    name: str,
    version: str = "1.0",
    games: Iterable[str] = ("stop_the_bus", "bastard_brag"),
    author: str = "",
    on_game_start: Callable[[pb.GameStart], None] | None = None,
    on_event: Callable[[pb.Event], None] | None = None,
    on_fault: Callable[[pb.FaultNotice], None] | None = None,
    on_game_end: Callable[[pb.GameEnd], None] | None = None,
    argv: list[str] | None = None,
    timed: bool = False,
) -> None:
    """Serve ``decide`` as a bot until the referee stops it.

    ``name``, ``version`` and ``author`` are what its handshake says of it; ``games`` the games it plays, by name
    (both by default: a league of a game it does not list refuses it at its handshake); the hooks are called as the
    module's doc says; ``argv`` is the command line read for ``--address`` (by default the process's); ``timed``:
    call ``decide(obs, clock)`` with the request's :class:`MoveClock`.
    """
    servicer = BotServicer(
        decide,  # type: ignore[arg-type]
        name,
        version,
        games,
        author,
        on_game_start,
        on_event,
        on_fault,
        on_game_end,
        timed=timed,
    )
    serve(servicer, bot_address(argv))
