"""The Python bot kit: write one function from observation to action, and play.

    from referee.botkit import run_bot

    def decide(obs):
        return obs.legal_actions[0]

    if __name__ == "__main__":
        run_bot(decide, name="first-legal")

``obs`` is the engine's own observation type
(:class:`referee.games.StopTheBusObservation` or
:class:`referee.games.BastardBragObservation`): your hand as
:class:`referee.cards.Card` values, every seat's lives, the piles or the
centre, ``obs.legal_actions`` and ``obs.hand_events``, the whole public
history of the current hand (the kit keeps it, so your function needs no
memory). Return one of ``obs.legal_actions``.

The kit serves the protocol of ``proto/referee/v1/bot.proto`` on the address
in ``REFEREE_BOT_ADDRESS`` (or ``--address``), answers the handshake, and
calls your optional ``on_hand_result(HandResult message)`` and
``on_game_over(GameOver message)`` hooks. It never calls your functions at
the same time; a hand's result may reach ``on_hand_result`` after the next
hand's first ``decide`` (the referee does not wait for notifications).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent import futures

import grpc

from referee.games.base import Action, Event, Observation
from referee.protocol import (
    GAME_TO_PB,
    PROTOCOL_VERSION,
    action_from_pb,
    action_to_pb,
    event_from_pb,
    observation_from_pb,
)
from referee.v1 import bot_pb2 as pb
from referee.v1 import bot_pb2_grpc as pb_grpc

ADDRESS_VARIABLE = "REFEREE_BOT_ADDRESS"

DecideFunction = Callable[[Observation], Action]


class _HandHistory:
    """Collects the public events of the current hand of one game, from the per-decision deltas."""

    def __init__(self) -> None:
        self.game_id = ""
        self.hand_number = 0
        self.events: list[Event] = []

    def update(self, game_id: str, hand_number: int, new_events: Iterable[Event]) -> tuple[Event, ...]:
        if game_id != self.game_id:
            self.game_id, self.hand_number, self.events = game_id, 0, []
        for event in new_events:
            if event.hand_number != self.hand_number:
                self.hand_number, self.events = event.hand_number, []
            self.events.append(event)
        if hand_number != self.hand_number:
            self.hand_number, self.events = hand_number, []
        return tuple(self.events)


class BotServicer(pb_grpc.BotServicer):
    """Serves the protocol for one ``decide`` function."""

    def __init__(
        self,
        decide: DecideFunction,
        name: str,
        version: str,
        games: Iterable[str],
        author: str = "",
        on_hand_result: Callable[[pb.HandResult], None] | None = None,
        on_game_over: Callable[[pb.GameOver], None] | None = None,
    ) -> None:
        self._decide = decide
        self._reply = pb.HandshakeReply(
            protocol_version=PROTOCOL_VERSION,
            games=[GAME_TO_PB[game] for game in games],
            name=name,
            version=version,
            author=author,
        )
        self._on_hand_result = on_hand_result
        self._on_game_over = on_game_over
        self._history = _HandHistory()
        self._lock = threading.Lock()

    def Handshake(self, request, context):  # noqa: N802 - gRPC method name
        return self._reply

    def Decide(self, request, context):  # noqa: N802
        legal = tuple(action_from_pb(message) for message in request.legal_actions)
        new_events = [event_from_pb(message) for message in request.events]
        # The referee does not wait for a notification before the next decision, so a Notify may
        # run beside a Decide: the lock keeps the bot's own functions from ever running at once.
        with self._lock:
            events = self._history.update(request.game_id, request.hand_number, new_events)
            obs = observation_from_pb(request.observation, events, legal)
            chosen = self._decide(obs)
        return pb.DecisionReply(decision_number=request.decision_number, action=action_to_pb(chosen))

    def Notify(self, request, context):  # noqa: N802
        kind = request.WhichOneof("kind")
        if kind == "hand_result" and self._on_hand_result is not None:
            with self._lock:
                self._on_hand_result(request.hand_result)
        elif kind == "game_over" and self._on_game_over is not None:
            with self._lock:
                self._on_game_over(request.game_over)
        return pb.NotifyReply()


def serve(servicer: pb_grpc.BotServicer, address: str) -> None:
    """Serve ``servicer`` on ``address`` until SIGTERM or SIGINT."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_BotServicer_to_server(servicer, server)
    if server.add_insecure_port(address) == 0 and not address.startswith("unix:"):
        raise SystemExit(f"cannot listen on {address}")
    server.start()
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    stopped.wait()
    server.stop(grace=0)


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
    decide: DecideFunction,
    *,
    name: str,
    version: str = "1.0",
    games: Iterable[str] = ("stop_the_bus", "bastard_brag"),
    author: str = "",
    on_hand_result: Callable[[pb.HandResult], None] | None = None,
    on_game_over: Callable[[pb.GameOver], None] | None = None,
    argv: list[str] | None = None,
) -> None:
    """Serve ``decide`` as a bot until the referee stops it."""
    servicer = BotServicer(decide, name, version, games, author, on_hand_result, on_game_over)
    serve(servicer, bot_address(argv))
