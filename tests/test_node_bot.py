"""The Node.js kit and sample bot as real processes: built from their manifest, in a league against the
Python bots, under check-bot, and on a v2 stream driven by hand (handshake, a decision, hooks, gaps,
a failing decide, signals)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.engine.cards import DECK, parse_cards
from referee.engine.games import Action, StopTheBus
from referee.protocol.messages import action_from_pb
from referee.v2 import bot_pb2 as pb
from tests.bot_kits import (
    GAMES,
    NPM_ENV,
    REFEREE,
    SAMPLE_BOTS,
    BotProcess,
    StreamClient,
    assert_played_cleanly,
    bot_stream,
    built_copy,
    check_bot,
    exercise_probe,
    run_league,
)
from tests.reference_encoder import decision_request_to_pb

NODE_BOT = SAMPLE_BOTS / "node"
ARTEFACTS = ("node_modules",)


def _skip_reason() -> str | None:
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            return f"{program} is not on PATH: install Node.js 18+ and npm (Debian: apt-get install -y nodejs npm)"
    return None


pytestmark = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample bot's folder, copied without node_modules and built with its manifest's build command (once a
    session: this is a copy of the session's build, bot_kits.built_kit)."""
    environment = {**os.environ, **NPM_ENV}
    return built_copy(tmp_path_factory, NODE_BOT, tmp_path_factory.mktemp("node") / "node", ARTEFACTS, environment)


@pytest.fixture
def stream(node_bot: Path, tmp_path: Path) -> Iterator[StreamClient]:
    with bot_stream(["node", "bot.js"], node_bot, tmp_path) as client:
        yield client


def write_bot(directory: Path, kit: Path, body: str) -> Path:
    """A small bot program on the kit (a real program, for the behaviours the sample bot never shows)."""
    script = directory / "bot.js"
    directory.chmod(0o755)  # pytest makes it 0700; a bot run by a root referee is a user of its own, who must read it
    script.write_text(f"'use strict';\nconst kit = require({json.dumps(str(kit))});\n{body}\n")
    return script


# ----- the submission: built from its manifest, in a league, under check-bot ------------------------


def test_the_folder_holds_what_it_needs_and_no_registry_host():
    lock = json.loads((NODE_BOT / "package-lock.json").read_text())
    resolved = [entry["resolved"] for entry in lock["packages"].values() if "resolved" in entry]
    assert resolved == ["kit"], f"package-lock.json names where packages come from: {resolved}"
    assert "omit-lockfile-registry-resolved=true" in (NODE_BOT / ".npmrc").read_text()
    # The kit loads the protocol from its own folder, never from the repository's proto/.
    assert "../" not in (NODE_BOT / "kit" / "index.js").read_text()
    assert (NODE_BOT / "kit" / "proto" / "referee" / "v2" / "bot.proto").is_file()


@pytest.mark.parametrize("game", GAMES)
def test_plays_a_league_against_the_python_bots(node_bot, tmp_path, game):
    run = run_league(tmp_path, game, node_bot, env=NPM_ENV)
    assert_played_cleanly(run, "node")
    assert "added" in run.build_log("node")  # the league ran the manifest's build


def test_check_bot_passes_in_both_games(node_bot, tmp_path):
    check_bot(["node", "bot.js"], node_bot, tmp_path / "check")


# ----- the stream by hand ----------------------------------------------------------------------


def test_handshake_names_the_protocol_version_and_both_games(stream):
    reply = stream.handshake()
    assert list(reply.protocol_versions) == [2]
    assert set(reply.games) == {pb.GAME_STOP_THE_BUS, pb.GAME_BASTARD_BRAG}
    assert (reply.name, reply.version) == ("node-heuristic", "2.0.0")


def test_stops_at_once_with_the_best_hand_there_is(stream):
    # Dealer 1, so seat 0 plays first; the deal alternates seat 0, seat 1 for three rounds, then 4D is
    # turned up: seat 0 holds 3C 3D 3H, the highest prial, and the bot should stop the bus at once.
    head = list(parse_cards("3C 3S 3D 2H 3H 5C 4D"))
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[head + [card for card in DECK if card not in head]])
    assert game.observation(0).hand == parse_cards("3C 3D 3H")
    stream.handshake()
    stream.send(game_start=pb.GameStart(game_id="prial", game=pb.GAME_STOP_THE_BUS, num_players=2, seat=0))
    decision = stream.decide(decision_request_to_pb(game, "prial", 1, 0, 1000, 10_000))
    assert decision.decision_number == 1
    assert action_from_pb(decision.action) == Action.parse("stop")


def test_a_failing_decide_reaches_the_referee_as_a_malformed_reply_quoting_it(node_bot, tmp_path):
    script = write_bot(
        tmp_path, node_bot / "kit", "kit.runBot(() => { throw new RangeError('no idea'); }, { name: 'thrower' });"
    )
    log = tmp_path / "game.jsonl"
    completed = subprocess.run(
        [
            *REFEREE,
            "play",
            "--game",
            "stop_the_bus",
            "--seed",
            "2",
            "--quiet",
            "--log",
            str(log),
            # The built bot's folder (its kit, its node_modules) as an argument: a bot's sandbox shows the
            # folders its arguments name.
            "--bot-logs",
            str(tmp_path / "logs"),
            "--bot",
            f"node {script} {node_bot}",
            "--name",
            "thrower",
            "--bot",
            f"{sys.executable} {SAMPLE_BOTS / 'python' / 'random_bot.py'}",
            "--name",
            "random",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr  # a bot faulted
    assert "seat 0 (thrower) failed: 1 malformed" in completed.stderr, completed.stderr
    faults = [json.loads(line) for line in log.read_text().splitlines() if '"fault"' in line]
    assert faults and faults[0]["kind"] == "malformed", faults
    assert "RangeError: no idea" in faults[0]["detail"], faults[0]
    bot_log = next((tmp_path / "logs").glob("seat0-*"))
    assert "RangeError: no idea\n    at " in bot_log.read_text(), bot_log.read_text()


PROBE = """
const say = (text) => process.stderr.write(`hook ${text}\\n`);
kit.runBot((obs) => {
  if (obs.decision_number === 1) return obs.no_such_field.kind;  // a TypeError
  say(`decide ${obs.decision_number} hand_events=${obs.hand_events.map((event) => event.sequence).join(',')}`);
  return obs.legal_actions[0];
}, {
  name: 'probe',
  onGameStart: (start) => say(`start ${start.game_id} seed=${BigInt(start.random_seed) + 1n}`),
  onEvent: (event) => say(`event ${event.sequence} ${event.kind}`),
  onFault: (notice) => say(`fault ${notice.kind} forfeited=${notice.forfeited}`),
  onGameEnd: (end) => say(`end ${end.game_id} events=${end.events.length}`),
});"""


def test_the_kit_calls_hooks_in_order_reports_a_failing_decide_and_logs_gaps(node_bot, tmp_path):
    # See tests/bot_kits.py for what the probe does and what exercise_probe checks.
    script = write_bot(tmp_path, node_bot / "kit", PROBE)
    bot = BotProcess(["node", str(script)], tmp_path, tmp_path)
    try:
        exercise_probe(bot, "TypeError: Cannot read properties of undefined (reading 'kind')")
        # The whole stack is in the log, down to the line of the bot that threw.
        line = next(number for number, text in enumerate(script.read_text().splitlines(), 1) if "no_such_field" in text)
        assert f"{script}:{line}:" in bot.log_text(), bot.log_text()
    finally:
        bot.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_exits_cleanly_on_a_signal_with_the_stream_open(node_bot, tmp_path, signum):
    bot = BotProcess(["node", "bot.js"], node_bot, tmp_path)
    stream = StreamClient(bot)
    try:
        stream.handshake()
        assert bot.stop(signum) == 0, bot.log_text()
    finally:
        stream.close()
