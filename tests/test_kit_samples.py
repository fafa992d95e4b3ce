"""Every kit's sample bot (Node.js, C++, Go), built once for all of these: it shows the clock its request told it (the
time left, the move's and the bank's, and what its previous decision was charged, DecisionRequest.last_charged_ms) in
its log; and it notes what it chose and why. Every kit lets decide leave a private note on its decision
(Decision.note): the texts of its calls joined by line ends, cut by the kit to the referee's 1024 bytes, sent with an
error reply too and not at all without a call."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from referee.engine.cards import DECK, parse_cards
from referee.engine.games import Action, StopTheBus
from referee.protocol.messages import action_from_pb
from referee.v2 import bot_pb2 as pb
from tests import test_cpp_bot, test_go_bot, test_node_bot
from tests.bot_kits import (
    NPM_ENV,
    BotProcess,
    StreamClient,
    bot_stream,
    build_go_probe,
    built_copy,
    compile_cpp_probe,
    go_environment,
    missing_programs,
)
from tests.reference_encoder import decision_request_to_pb


def _cpp_skip_reason() -> str | None:
    missing = missing_programs(test_cpp_bot.PROGRAMS)
    if missing:
        return missing
    if subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        return "the gRPC C++ library is not installed: install libgrpc++-dev (as root: make system-deps)"
    return None


def _build(tmp_path_factory: pytest.TempPathFactory, kit: str, target: Path) -> tuple[Path, list[str]]:
    """The kit's sample bot, copied and built as its tests build it (a copy of the session's build of it),
    and the command that runs it."""
    if kit == "node":
        environment = {**os.environ, **NPM_ENV}
        folder = built_copy(tmp_path_factory, test_node_bot.NODE_BOT, target, test_node_bot.ARTEFACTS, environment)
        return folder, ["node", "bot.js"]
    if kit == "cpp":
        return built_copy(tmp_path_factory, test_cpp_bot.CPP_BOT, target, test_cpp_bot.ARTEFACTS), ["./build/bot"]
    folder = built_copy(tmp_path_factory, test_go_bot.GO_BOT, target, test_go_bot.ARTEFACTS, go_environment())
    return folder, ["./build/bot"]


SKIP_REASONS = {
    "node": test_node_bot._skip_reason,
    "cpp": _cpp_skip_reason,
    "go": test_go_bot._skip_reason,
}


NOTE_BYTES = 1024  # the most of one note the referee keeps (referee/records/notes.py)
KITS = ["node", "cpp", "go"]


@pytest.fixture(scope="module", params=KITS)
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, list[str]]:
    """The kit's name, its sample bot's folder (copied and built as its tests build it) and its command."""
    kit: str = request.param
    reason = SKIP_REASONS[kit]()
    if reason is not None:
        pytest.skip(reason)
    folder, command = _build(tmp_path_factory, kit, tmp_path_factory.mktemp("notes") / kit)
    return kit, folder, command


def test_the_sample_bot_logs_the_time_left_and_the_last_charge(
    built: tuple[str, Path, list[str]], tmp_path: Path
) -> None:
    kit, folder, command = built
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


def a_weak_deal() -> StopTheBus:
    """Stop the Bus for two, seat 0 first with 2C 7D 9H (nothing worth stopping on), 5S turned up."""
    head = list(parse_cards("2C KS 7D QH 9H JC 5S"))
    return StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])


def assert_noted(decision: pb.Decision, game: StopTheBus) -> str:
    """The decision is legal and its note is one the sample bots write: at most 1024 bytes, starting with what
    it chose (its kind as the samples write it, "discard", "exchange all"; then its card, if it has one)."""
    chosen = action_from_pb(decision.action)
    assert game.is_legal(chosen), decision
    note = decision.note
    assert note and len(note.encode("utf-8")) <= NOTE_BYTES, note
    words = pb.ActionKind.Name(decision.action.kind).removeprefix("ACTION_KIND_").lower().replace("_", " ")
    assert note.startswith(words), f"the note {note!r} does not say what the bot chose ({chosen})"
    if chosen.card is not None:
        assert f"{words} {chosen.card}" in note, f"the note {note!r} does not name the card of {chosen}"
    return note


def test_the_sample_bot_notes_what_it_chose_and_why(built: tuple[str, Path, list[str]], tmp_path: Path) -> None:
    kit, folder, command = built
    game = a_weak_deal()
    with bot_stream(command, folder, tmp_path) as stream:
        stream.handshake()
        stream.send(game_start=pb.GameStart(game_id="notes", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
        first = decision_request_to_pb(game, "notes", 1, 0, 1000, 10_000)
        decision = stream.decide(first)
        assert decision.decision_number == 1
        notes = [assert_noted(decision, game)]
        # A draw or a take: the bot holds four cards and discards one, which its note names.
        game.apply(action_from_pb(decision.action))
        assert game.current_seat == 0 and all(
            action.kind.value == "discard" for action in game.observation(0).legal_actions
        )
        discard = stream.decide(decision_request_to_pb(game, "notes", 2, len(first.events), 1000, 10_000))
        assert discard.decision_number == 2
        notes.append(assert_noted(discard, game))
    print(f"{kit}: {notes}")


# ----- the kit: joined, cut, with an error, none ----------------------------------------------------------
#
# A probe bot on each kit: on decision 1 it notes 700 "é" twice (2801 bytes joined) and fails; on decision 2 it
# notes nothing; on decision 3 it notes "first" and "second"; it plays the first legal action.

NODE_PROBE = """\
'use strict';
const { runBot } = require('referee-bot-kit');
runBot((obs) => {
  if (obs.decision_number === 1) {
    obs.note('\\u00e9'.repeat(700));
    obs.note('\\u00e9'.repeat(700));
    throw new RangeError('no idea');
  }
  if (obs.decision_number === 3) {
    obs.note('first');
    obs.note('second');
  }
  return obs.legal_actions[0];
}, { name: 'note-probe' });
"""

CPP_PROBE = r"""
#include <stdexcept>
#include <string>
#include "referee_kit.h"
int main() {
  return referee::kit::run_bot([](const referee::kit::Turn& turn) {
    if (turn.request.decision_number() == 1) {
      std::string e;
      for (int i = 0; i < 700; i++) e += "\xC3\xA9";
      turn.note(e);
      turn.note(e);
      throw std::runtime_error("no idea");
    }
    if (turn.request.decision_number() == 3) {
      turn.note("first");
      turn.note("second");
    }
    return turn.legal_actions[0];
  }, {.name = "note-probe"});
}
"""

GO_PROBE = """\
package main

import (
	"errors"
	"os"
	"strings"

	"bragbot/kit"
	pb "referee/v2"
)

func main() {
	os.Exit(kit.Run(func(turn *kit.Turn) (*pb.Action, error) {
		switch turn.Request.GetDecisionNumber() {
		case 1:
			turn.Note(strings.Repeat("\\u00e9", 700))
			turn.Note(strings.Repeat("\\u00e9", 700))
			return nil, errors.New("no idea")
		case 3:
			turn.Note("first")
			turn.Notef("%s", "second")
		}
		return turn.LegalActions[0], nil
	}, kit.Options{Name: "note-probe"}))
}
"""


def build_probe(kit: str, folder: Path, directory: Path) -> tuple[list[str], Path]:
    """The note probe on the kit of the built sample bot ``folder``: its command and the folder to run it in."""
    if kit == "node":
        (folder / "note_probe.js").write_text(NODE_PROBE)
        return ["node", "note_probe.js"], folder
    if kit == "cpp":
        return [str(compile_cpp_probe(folder, CPP_PROBE, directory))], directory
    return [str(build_go_probe(folder, GO_PROBE, "noteprobe", directory))], directory


def test_the_kit_joins_cuts_and_sends_notes_with_an_error_and_none_without(
    built: tuple[str, Path, list[str]], tmp_path: Path
) -> None:
    kit, folder, _ = built
    command, cwd = build_probe(kit, folder, tmp_path)
    game = a_weak_deal()
    bot = BotProcess(command, cwd, tmp_path)
    stream = StreamClient(bot)
    try:
        stream.handshake()
        stream.send(game_start=pb.GameStart(game_id="probe", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
        first = decision_request_to_pb(game, "probe", 1, 0, 1000, 10_000)
        failed = stream.decide(first)
        count = len(first.events)
        plain = stream.decide(decision_request_to_pb(game, "probe", 2, count, 1000, 10_000))
        joined = stream.decide(decision_request_to_pb(game, "probe", 3, count, 1000, 10_000))
    finally:
        stream.close()
        bot.stop()
    # 2801 bytes cut at a character, within 1024 bytes with the mark: 509 two-byte characters and " [cut]".
    assert failed.error and not failed.HasField("action"), failed
    assert failed.note == "\u00e9" * 509 + " [cut]", failed.note
    assert plain.HasField("action") and plain.note == "" and not plain.error, plain
    assert action_from_pb(joined.action) == Action.parse("draw") and joined.note == "first\nsecond", joined
