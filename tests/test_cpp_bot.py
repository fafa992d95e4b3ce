"""The C++ kit and sample bot as real processes: built from their manifest with Debian's gRPC, in a
league against the Python bots, under check-bot, and on a v2 stream driven by hand."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.engine.cards import DECK, parse_cards
from referee.engine.games import Action, StopTheBus
from referee.protocol.messages import action_from_pb
from referee.v2 import bot_pb2 as pb
from tests.bot_kits import (
    GAMES,
    SAMPLE_BOTS,
    BotProcess,
    StreamClient,
    assert_played_cleanly,
    bot_stream,
    built_copy,
    check_bot,
    compile_cpp_probe,
    exercise_probe,
    missing_programs,
    run_league,
)
from tests.reference_encoder import decision_request_to_pb

CPP_BOT = SAMPLE_BOTS / "cpp"
ARTEFACTS = ("build",)
PROGRAMS = {  # program: the Debian package that has it
    "g++": "g++",
    "make": "make",
    "pkg-config": "pkg-config",
    "protoc": "protobuf-compiler",
    "grpc_cpp_plugin": "protobuf-compiler-grpc",
}


@pytest.fixture(autouse=True, scope="module")
def _toolchain() -> None:
    """Skip where the toolchain or gRPC's C++ library is missing. Asked when the file's tests run, not as every
    test worker collects them: pkg-config takes half a second of CPU to answer for gRPC."""
    missing = missing_programs(PROGRAMS)
    if missing:
        pytest.skip(missing)
    if subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        pytest.skip("the gRPC C++ library is not installed: install libgrpc++-dev (as root: make system-deps)")


@pytest.fixture(scope="module")
def cpp_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample bot's folder, copied without build/ and built with its manifest's build command (once a
    session: this is a copy of the session's build, bot_kits.built_kit)."""
    return built_copy(tmp_path_factory, CPP_BOT, tmp_path_factory.mktemp("cpp") / "cpp", ARTEFACTS)


@pytest.fixture
def stream(cpp_bot: Path, tmp_path: Path) -> Iterator[StreamClient]:
    with bot_stream(["./build/bot"], cpp_bot, tmp_path) as client:
        yield client


@pytest.mark.parametrize("game", GAMES)
def test_plays_a_league_against_the_python_bots(cpp_bot, tmp_path, game):
    run = run_league(tmp_path, game, cpp_bot)
    assert_played_cleanly(run, "cpp")


def test_check_bot_passes_in_both_games(cpp_bot, tmp_path):
    check_bot(["./build/bot"], cpp_bot, tmp_path / "check")


def test_building_again_changes_nothing(cpp_bot):
    # The build is idempotent: a second run of the manifest's build finds everything up to date.
    before = (cpp_bot / "build" / "bot").stat().st_mtime_ns
    completed = subprocess.run(["make", "-j2"], cwd=cpp_bot, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0 and "Nothing to be done" in completed.stdout, completed.stdout
    assert (cpp_bot / "build" / "bot").stat().st_mtime_ns == before


def test_handshake_names_the_protocol_version_and_both_games(stream):
    reply = stream.handshake()
    assert list(reply.protocol_versions) == [2]
    assert set(reply.games) == {pb.GAME_STOP_THE_BUS, pb.GAME_BASTARD_BRAG}
    assert (reply.name, reply.version, reply.author) == ("cpp-heuristic", "2.0.0", "sample")


def test_stops_at_once_with_the_best_hand_there_is(stream):
    # Seat 0 is dealt 3C 3D 3H, the highest prial (see tests/test_node_bot.py): stop the bus at once.
    head = list(parse_cards("3C 3S 3D 2H 3H 5C 4D"))
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])
    stream.handshake()
    stream.send(game_start=pb.GameStart(game_id="prial", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
    decision = stream.decide(decision_request_to_pb(game, "prial", 1, 0, 1000, 10_000))
    assert action_from_pb(decision.action) == Action.parse("stop")


PROBE = r"""
#include <iostream>
#include "referee_kit.h"
namespace v2 = referee::v2;
static void say(const std::string& text) { std::cerr << "hook " << text << std::endl; }
int main() {
  referee::kit::BotOptions options;
  options.name = "probe";
  options.on_game_start = [](const v2::GameStart& start) {
    say("start " + start.game_id() + " seed=" + std::to_string(start.random_seed() + 1));
  };
  options.on_event = [](const v2::Event& event) {
    say("event " + std::to_string(event.sequence()) + " " + v2::EventKind_Name(event.kind()));
  };
  options.on_fault = [](const v2::FaultNotice& notice) {
    say("fault " + v2::FaultKind_Name(notice.kind()) + " forfeited=" + (notice.forfeited() ? "true" : "false"));
  };
  options.on_game_end = [](const v2::GameEnd& end) {
    say("end " + end.game_id() + " events=" + std::to_string(end.events_size()));
  };
  return referee::kit::run_bot([](const referee::kit::Turn& turn) {
    if (turn.request.decision_number() == 1) return turn.legal_actions.at(99);  // std::out_of_range
    std::string sequences;
    for (const v2::Event* event : turn.hand_events) sequences += (sequences.empty() ? "" : ",") + std::to_string(event->sequence());
    say("decide " + std::to_string(turn.request.decision_number()) + " hand_events=" + sequences);
    return turn.legal_actions[0];
  }, options);
}
"""


def test_the_kit_calls_hooks_in_order_reports_a_failing_decide_and_logs_gaps(cpp_bot, tmp_path):
    # A probe bot compiled against the built kit (see tests/bot_kits.py for what it does).
    probe = compile_cpp_probe(cpp_bot, PROBE, tmp_path)
    bot = BotProcess([str(probe)], tmp_path, tmp_path)
    try:
        exercise_probe(bot, "std::out_of_range: vector::_M_range_check")
    finally:
        bot.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_exits_cleanly_on_a_signal_with_the_stream_open(cpp_bot, tmp_path, signum):
    bot = BotProcess(["./build/bot"], cpp_bot, tmp_path)
    stream = StreamClient(bot)
    try:
        stream.handshake()
        assert bot.stop(signum) == 0, bot.log_text()
    finally:
        stream.close()
