"""Every kit's sample bot shows the clock its request told it: the time left (the move's and the bank's) and what
its previous decision was charged (DecisionRequest.last_charged_ms), in its log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from referee.engine.cards import DECK, parse_cards
from referee.engine.games.stop_the_bus import StopTheBus
from referee.v2 import bot_pb2 as pb
from tests import test_cpp_bot, test_go_bot, test_node_bot
from tests.bot_kits import NPM_ENV, bot_stream, build_copy, missing_programs
from tests.reference_encoder import decision_request_to_pb


def _cpp_skip_reason() -> str | None:
    missing = missing_programs(test_cpp_bot.PROGRAMS)
    if missing:
        return missing
    if subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        return "the gRPC C++ library is not installed: install libgrpc++-dev (as root: make system-deps)"
    return None


def _build(kit: str, target: Path) -> tuple[Path, list[str]]:
    """The kit's sample bot, copied and built as its tests build it, and the command that runs it."""
    if kit == "node":
        environment = {**os.environ, **NPM_ENV}
        return build_copy(test_node_bot.NODE_BOT, target, test_node_bot.ARTEFACTS, environment), ["node", "bot.js"]
    if kit == "cpp":
        return build_copy(test_cpp_bot.CPP_BOT, target, test_cpp_bot.ARTEFACTS), ["./build/bot"]
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GO")}
    return build_copy(test_go_bot.GO_BOT, target, test_go_bot.ARTEFACTS, environment), ["./build/bot"]


SKIP_REASONS = {
    "node": test_node_bot._skip_reason,
    "cpp": _cpp_skip_reason,
    "go": test_go_bot._skip_reason,
}


@pytest.mark.parametrize("kit", ["node", "cpp", "go"])
def test_the_sample_bot_logs_the_time_left_and_the_last_charge(kit: str, tmp_path: Path) -> None:
    reason = SKIP_REASONS[kit]()
    if reason is not None:
        pytest.skip(reason)
    folder, command = _build(kit, tmp_path / "build" / kit)
    head = list(parse_cards("3C 3S 3D 2H 3H 5C 4D"))
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])
    run = tmp_path / "run"
    run.mkdir()
    with bot_stream(command, folder, run) as stream:
        stream.handshake()
        stream.send(game_start=pb.GameStart(game_id="clock", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
        request = decision_request_to_pb(game, "clock", 1, 0, 1000, 9876, last_charged_ms=37)
        assert stream.decide(request).decision_number == 1
        log = stream.bot.wait_for_log("charged 37 ms")
    (line,) = [line for line in log.splitlines() if "clock:" in line]
    assert "move 1000 ms, bank 9876 ms left; the previous decision was charged 37 ms" in line, log
