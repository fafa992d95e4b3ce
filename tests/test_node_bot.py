"""The sample Node.js bot as a real process: handshake, whole games over gRPC, and a clean exit on a signal."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from referee.cards import DECK, parse_cards
from referee.games import Action, BastardBrag, Game, StopTheBus
from referee.protocol import (
    GAME_TO_PB,
    PROTOCOL_VERSION,
    action_from_pb,
    action_to_pb,
    fill_events,
    fill_observation,
    game_over_to_pb,
    hand_result_to_pb,
)
from referee.v1 import bot_pb2 as pb
from referee.v1 import bot_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
NODE_BOT = ROOT / "sample_bots" / "node"
READY_TIMEOUT = 15.0
CALL_TIMEOUT = 5.0


def _skip_reason() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH: install Node.js 18+ to test the Node sample bot"
    if not (NODE_BOT / "node_modules").is_dir():
        return f"{NODE_BOT / 'node_modules'} is missing: run `npm ci` (or `npm install`) in sample_bots/node"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def load_random_bot():
    """Import sample_bots/python/random_bot.py by path (sample_bots is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "sample_random_bot", ROOT / "sample_bots" / "python" / "random_bot.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


random_bot = load_random_bot()


class NodeBot:
    """One running ``node bot.js`` process and a client stub connected to it."""

    def __init__(self, directory: Path) -> None:
        self.socket = directory / "bot.sock"
        self.log = directory / "bot.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                ["node", str(NODE_BOT / "bot.js")],
                env={**os.environ, "REFEREE_BOT_ADDRESS": f"unix:{self.socket}"},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.channel = grpc.insecure_channel(f"unix:{self.socket}")
        try:
            grpc.channel_ready_future(self.channel).result(timeout=READY_TIMEOUT)
        except grpc.FutureTimeoutError:
            self.close()
            pytest.fail(f"the Node bot did not start serving within {READY_TIMEOUT} s; its log:\n{self.log_text()}")
        self.stub = pb_grpc.BotStub(self.channel)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        self.channel.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeBot]:
    bot = NodeBot(tmp_path_factory.mktemp("node"))
    try:
        yield bot
    finally:
        bot.close()


# ----- driving a game over gRPC ---------------------------------------------------


def decision_request(game: Game, game_id: str, decision_number: int, since: int) -> pb.DecisionRequest:
    """The request the referee sends the current seat: its view, the events from index ``since``, the legal actions."""
    seat = game.current_seat
    request = pb.DecisionRequest(
        game_id=game_id,
        hand_number=game.hand_number,
        decision_number=decision_number,
        seat=seat,
        move_time_ms=1000,
        time_bank_ms=5000,
    )
    fill_observation(request.observation, game.observation(seat))
    fill_events(request.events, game.events[since:])
    for legal in game.legal_actions():
        action_to_pb(legal, request.legal_actions.add())
    action_to_pb(game.legal_actions()[0], request.default_action)
    return request


def play_over_grpc(bot: NodeBot, game: Game, game_id: str, node_seat: int) -> int:
    """Play ``game`` to the end: ``node_seat`` asks the Node bot, other seats the random bot. Return its decisions."""
    started = pb.Notification()
    started.game_started.game_id = game_id
    started.game_started.game = GAME_TO_PB[game.name]
    started.game_started.num_players = game.num_players
    started.game_started.seat = node_seat
    bot.stub.Notify(started, timeout=CALL_TIMEOUT)
    decision_number, asked, since, hands_told = 0, 0, 0, 0
    while not game.is_over:
        decision_number += 1
        seat = game.current_seat
        if seat == node_seat:
            request = decision_request(game, game_id, decision_number, since)
            since = len(game.events)
            reply = bot.stub.Decide(request, timeout=CALL_TIMEOUT)
            assert reply.decision_number == decision_number, "the reply must echo the request's decision_number"
            chosen = action_from_pb(reply.action)
            assert game.is_legal(chosen), f"{game_id} decision {decision_number}: {chosen} is not legal"
            asked += 1
        else:
            chosen = random_bot.decide(game.observation(seat))
        game.apply(chosen)
        for result in game.hand_results[hands_told:]:
            bot.stub.Notify(hand_result_to_pb(result, game_id, game.in_game), timeout=CALL_TIMEOUT)
        hands_told = len(game.hand_results)
    bot.stub.Notify(game_over_to_pb(game.result(), game_id), timeout=CALL_TIMEOUT)
    return asked


# ----- tests -----------------------------------------------------------------------------


def test_handshake_names_the_protocol_version_and_both_games(node_bot):
    request = pb.HandshakeRequest(
        protocol_version=PROTOCOL_VERSION, game=pb.STOP_THE_BUS, num_players=2, referee_version="test"
    )
    reply = node_bot.stub.Handshake(request, timeout=CALL_TIMEOUT)
    assert reply.protocol_version == PROTOCOL_VERSION
    assert set(reply.games) == {pb.STOP_THE_BUS, pb.BASTARD_BRAG}
    assert reply.name == "node-heuristic"


@pytest.mark.parametrize(
    "game_class, players, node_seat",
    [
        (StopTheBus, 2, 0),
        (StopTheBus, 2, 1),
        (StopTheBus, 4, 2),
        (BastardBrag, 3, 0),
        (BastardBrag, 3, 2),
        (BastardBrag, 4, 1),
    ],
)
def test_plays_whole_games_with_legal_actions(node_bot, game_class, players, node_seat):
    # One process plays game after game, as under the referee; each game has its own id.
    for seed in (1, 2):
        game = game_class(players, seed=seed)
        game_id = f"{game_class.name}-{players}-{node_seat}-{seed}"
        assert play_over_grpc(node_bot, game, game_id, node_seat) > 0
        assert game.is_over
    assert node_bot.process.poll() is None, f"the Node bot exited; its log:\n{node_bot.log_text()}"
    # bot.js falls back to the first legal action if its strategy throws, and says so in its log.
    assert "first legal action" not in node_bot.log_text()


def test_beats_the_random_bot_heads_up_at_stop_the_bus(node_bot):
    # Seeds 0..19, seats alternating; chance is 10 wins, measured 20.
    wins = 0
    for seed in range(20):
        game = StopTheBus(2, seed=seed)
        play_over_grpc(node_bot, game, f"versus-random-{seed}", node_seat=seed % 2)
        wins += game.result().winner == seed % 2
    assert wins >= 15


def test_a_huge_decision_number_is_echoed_exactly(node_bot):
    # decision_number is a uint64: above 2**53 a JavaScript number would lose the low digits.
    game = StopTheBus(2, seed=5)
    huge = 2**62 + 7
    reply = node_bot.stub.Decide(decision_request(game, "huge", huge, 0), timeout=CALL_TIMEOUT)
    assert reply.decision_number == huge
    assert game.is_legal(action_from_pb(reply.action))


def test_stops_at_once_with_the_best_hand_there_is(node_bot):
    # Dealer 1, so seat 0 plays first; the deal alternates seat 0, seat 1 for three rounds, then 4D is
    # turned up: seat 0 holds 3C 3D 3H, the highest prial, and the Node bot should stop the bus at once.
    head = list(parse_cards("3C 3S 3D 2H 3H 5C 4D"))
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])
    assert game.observation(0).hand == parse_cards("3C 3D 3H")
    reply = node_bot.stub.Decide(decision_request(game, "prial", 1, 0), timeout=CALL_TIMEOUT)
    assert action_from_pb(reply.action) == Action.parse("stop")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_exits_cleanly_on_a_signal(tmp_path, signum):
    bot = NodeBot(tmp_path)
    try:
        bot.process.send_signal(signum)
        assert bot.process.wait(timeout=10) == 0, f"exit status {bot.process.returncode}; log:\n{bot.log_text()}"
    finally:
        bot.close()
