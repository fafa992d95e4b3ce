"""The Go kit and sample bot as real processes: built offline from their manifest with Debian's Go
packages, in a league against the Python bots, under check-bot, and on a v2 stream driven by hand."""

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
    build_go_probe,
    built_copy,
    check_bot,
    exercise_probe,
    go_environment,
    missing_programs,
    run_league,
)
from tests.reference_encoder import decision_request_to_pb

GO_BOT = SAMPLE_BOTS / "go"
ARTEFACTS = ("build",)
GOCODE = Path("/usr/share/gocode/src")
PROGRAMS = {  # program: the Debian package that has it
    "go": "golang-go",
    "make": "make",
    "protoc": "protobuf-compiler",
    "protoc-gen-go": "protoc-gen-go",
    "protoc-gen-go-grpc": "protoc-gen-go-grpc",
}
LIBRARIES = {  # a directory under /usr/share/gocode/src: the Debian package that installs it
    "google.golang.org/grpc": "golang-google-grpc-dev",
    "google.golang.org/protobuf": "golang-google-protobuf-dev",
    # Without it the bot builds, and panics at its first call.
    "github.com/golang/protobuf/proto": "golang-github-golang-protobuf-1-5-dev",
}


def _skip_reason() -> str | None:
    missing = missing_programs(PROGRAMS)
    if missing:
        return missing
    packages = [package for directory, package in LIBRARIES.items() if not (GOCODE / directory).is_dir()]
    if packages:
        return f"Go libraries missing under {GOCODE}: install {' '.join(packages)} (as root: make system-deps)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample bot's folder, copied without build/ and built with its manifest's build command (once a
    session: this is a copy of the session's build, bot_kits.built_kit)."""
    return built_copy(tmp_path_factory, GO_BOT, tmp_path_factory.mktemp("go") / "go", ARTEFACTS, go_environment())


@pytest.fixture
def stream(go_bot: Path, tmp_path: Path) -> Iterator[StreamClient]:
    with bot_stream(["./build/bot"], go_bot, tmp_path) as client:
        yield client


@pytest.mark.parametrize("game", GAMES)
def test_plays_a_league_against_the_python_bots(go_bot, tmp_path, game):
    run = run_league(tmp_path, game, go_bot)
    assert_played_cleanly(run, "go")


def test_check_bot_passes_in_both_games(go_bot, tmp_path):
    check_bot(["./build/bot"], go_bot, tmp_path / "check")


def test_the_build_writes_only_in_its_folder_and_again_changes_nothing(go_bot):
    # Everything the build made is under build/ (its Go cache too); a second build finds it up to date.
    made = {path.relative_to(go_bot).parts[0] for path in go_bot.rglob("*")} - {"build"}
    assert made == {path.name for path in GO_BOT.iterdir()} - {"build"}
    before = (go_bot / "build" / "bot").stat().st_mtime_ns
    completed = subprocess.run(["make"], cwd=go_bot, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0 and "Nothing to be done" in completed.stdout, completed.stdout
    assert (go_bot / "build" / "bot").stat().st_mtime_ns == before
    assert (go_bot / "build" / "go-cache").is_dir()


def test_handshake_names_the_protocol_version_and_both_games(stream):
    reply = stream.handshake()
    assert list(reply.protocol_versions) == [2]
    assert set(reply.games) == {pb.GAME_STOP_THE_BUS, pb.GAME_BASTARD_BRAG}
    assert (reply.name, reply.version, reply.author) == ("go-heuristic", "2.0.0", "sample")


def test_stops_at_once_with_the_best_hand_there_is(stream):
    # Seat 0 is dealt 3C 3D 3H, the highest prial (see tests/test_node_bot.py): stop the bus at once.
    head = list(parse_cards("3C 3S 3D 2H 3H 5C 4D"))
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])
    stream.handshake()
    stream.send(game_start=pb.GameStart(game_id="prial", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
    decision = stream.decide(decision_request_to_pb(game, "prial", 1, 0, 1000, 10_000))
    assert action_from_pb(decision.action) == Action.parse("stop")


PROBE = """\
package main

import (
	"fmt"
	"os"
	"strings"

	"bragbot/kit"
	pb "referee/v2"
)

func say(format string, args ...interface{}) { fmt.Fprintf(os.Stderr, "hook "+format+"\\n", args...) }

func main() {
	os.Exit(kit.Run(func(turn *kit.Turn) (*pb.Action, error) {
		index := 99
		if turn.Request.GetDecisionNumber() == 1 {
			return turn.LegalActions[index], nil // a panic: index out of range
		}
		var sequences []string
		for _, event := range turn.HandEvents {
			sequences = append(sequences, fmt.Sprint(event.GetSequence()))
		}
		say("decide %d hand_events=%s", turn.Request.GetDecisionNumber(), strings.Join(sequences, ","))
		return turn.LegalActions[0], nil
	}, kit.Options{
		Name:        "probe",
		OnGameStart: func(start *pb.GameStart) { say("start %s seed=%d", start.GetGameId(), start.GetRandomSeed()+1) },
		OnEvent:     func(event *pb.Event) { say("event %d %s", event.GetSequence(), event.GetKind()) },
		OnFault:     func(notice *pb.FaultNotice) { say("fault %s forfeited=%t", notice.GetKind(), notice.GetForfeited()) },
		OnGameEnd:   func(end *pb.GameEnd) { say("end %s events=%d", end.GetGameId(), len(end.GetEvents())) },
	}))
}
"""


def test_the_kit_calls_hooks_in_order_reports_a_failing_decide_and_logs_gaps(go_bot, tmp_path):
    # A probe bot built against the kit and the generated code of the built sample (see tests/bot_kits.py).
    probe = build_go_probe(go_bot, PROBE, "probe", tmp_path)
    bot = BotProcess([str(probe)], tmp_path, tmp_path)
    try:
        exercise_probe(bot, "panic: runtime error: index out of range [99] with length")
        assert "kit.(*streamHandler).callDecide" in bot.log_text()  # the panic's stack is in the log
    finally:
        bot.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_exits_cleanly_on_a_signal_with_the_stream_open(go_bot, tmp_path, signum):
    bot = BotProcess(["./build/bot"], go_bot, tmp_path)
    stream = StreamClient(bot)
    try:
        stream.handshake()
        assert bot.stop(signum) == 0, bot.log_text()
    finally:
        stream.close()
