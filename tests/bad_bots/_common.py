"""What the misbehaving test bots share: their options, a legal player that counts decisions, and serving.

Every bot here is a real program speaking real gRPC. Each takes ``--marker``
(ignored, so tests can find the process and its children in /proc), ``--at``
(which of its own decisions misbehave: "3", "2,4" or "all"; counted from 1 in
this process), ``--spawn-child`` (start a child that only sleeps, to check
that stopping a bot stops what it started) and ``--record FILE``.

``--record FILE`` writes JSON lines: first ``{"address", "dir_mode"}`` (the
address the bot was given and, for a Unix socket, the permission bits of its
directory, in octal), then one ``{"received", "request"}`` per decision
asked (the time it arrived, ``time.time()``, and the serialized
DecisionRequest in base64), written before the bot answers or misbehaves.

The bots serve the v2 stream through ``referee.play.kit.BotServicer``: a
misbehaviour answers a decision request with the ``PlayResponse`` it returns
(or never returns, or ends the process).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import stat
import subprocess
import sys
import threading
import time

from referee.play.kit import BotServicer, bot_address, serve
from referee.v2 import bot_pb2 as pb

ALL = "all"


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every bad bot takes."""
    options = argparse.ArgumentParser(description=description)
    options.add_argument("--marker", default="", help="ignored: lets tests find this process")
    options.add_argument("--at", default="1", help='own decisions that misbehave: "3", "2,4" or "all"')
    options.add_argument(
        "--in-game", type=int, help="misbehave only in this process's Nth game (from 1); --at counts in it"
    )
    options.add_argument("--seats", type=int, help="misbehave only at tables of this many seats")
    options.add_argument("--seat", type=int, help="misbehave only when seated in this seat (from 0)")
    options.add_argument("--every-game", action="store_true", help="--at counts again from each game's start")
    options.add_argument("--spawn-child", action="store_true", help="start a child process that sleeps")
    options.add_argument("--address", help="listen here instead of $REFEREE_BOT_ADDRESS")
    options.add_argument("--record", help="append what this bot is given to this file (JSON lines)")
    return options


def parse(options: argparse.ArgumentParser) -> argparse.Namespace:
    args = options.parse_args()
    args.address = bot_address(["--address", args.address] if args.address else [])
    if args.spawn_child:
        spawn_sleeping_child(args.marker)
    if args.record:
        dir_mode = None
        if args.address.startswith("unix:"):
            directory = os.path.dirname(args.address.removeprefix("unix:"))
            dir_mode = f"{stat.S_IMODE(os.stat(directory).st_mode):o}"
        _append(args.record, {"address": args.address, "dir_mode": dir_mode})
    return args


_record_lock = threading.Lock()


def _append(path: str, record: dict) -> None:
    with _record_lock, open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def spawn_sleeping_child(marker: str) -> None:
    """Start a child that sleeps for ten minutes; its command line carries the marker."""
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", "bad-bot-child", marker],
        stdin=subprocess.DEVNULL,
    )


def legal_reply(request: pb.DecisionRequest) -> pb.PlayResponse:
    """A correct reply: one of the legal actions, chosen at random but repeatably."""
    chooser = random.Random(f"{request.game_id}/{request.decision_number}")
    chosen = chooser.choice(request.legal_actions)
    return reply(request.decision_number, chosen)


def reply(number: int, action: pb.Action) -> pb.PlayResponse:
    """The PlayResponse answering decision ``number`` with ``action``."""
    return pb.PlayResponse(decision=pb.Decision(decision_number=number, action=action))


class Schedule:
    """Counts this process's decisions and says which ones misbehave."""

    def __init__(self, at: str) -> None:
        self._all = at == ALL
        self._at = set() if self._all else {int(number) for number in at.split(",") if number}
        self._count = 0
        self._lock = threading.Lock()

    def next_misbehaves(self) -> bool:
        """Count one decision; true when this one is to misbehave."""
        with self._lock:
            self._count += 1
            return self._all or self._count in self._at


class LegalServicer(BotServicer):
    """Plays legal random actions, except on the chosen decisions, where :meth:`misbehave` answers."""

    def __init__(self, args: argparse.Namespace, name: str) -> None:
        # The kit's decide function goes unused: decision_response below answers from the raw request.
        super().__init__(
            lambda obs: obs.legal_actions[0], name, "1.0", ("stop_the_bus", "bastard_brag"), on_game_start=self._started
        )
        self.args = args
        self.schedule = Schedule(args.at)
        self.games_started = 0

    def _started(self, message: pb.GameStart) -> None:
        self.games_started += 1
        if self.args.every_game or (self.args.in_game is not None and self.games_started == self.args.in_game):
            self.schedule = Schedule(self.args.at)  # --at counts from this game's first decision

    def _in_scope(self, request: pb.DecisionRequest) -> bool:
        """Whether this decision is one where the bot may misbehave (its game and table size)."""
        if self.args.in_game is not None and self.games_started != self.args.in_game:
            return False
        if self.args.seat is not None and request.observation.seat != self.args.seat:
            return False
        return self.args.seats is None or request.observation.num_players == self.args.seats

    def decision_response(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        if self.args.record:
            encoded = base64.b64encode(request.SerializeToString()).decode()
            _append(self.args.record, {"received": time.time(), "request": encoded})
        if self._in_scope(request) and self.schedule.next_misbehaves():
            return self.misbehave(request)
        return legal_reply(request)

    def misbehave(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        return legal_reply(request)


def run(servicer: LegalServicer) -> None:
    serve(servicer, servicer.args.address)


def exit_now(code: int) -> None:
    """Leave at once, as a crash does: no cleanup, no flushing."""
    os._exit(code)
