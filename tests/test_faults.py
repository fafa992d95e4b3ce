"""Misbehaving bots as real processes over real gRPC: each fault is caught and named, the policy applies, nothing leaks.

Every test here runs real bot programs from tests/bad_bots/ next to the
sample random bot. The ``bots`` fixture (conftest.py) checks after each test
that no bot process (nor any child a bot forked) remains and that every
private socket directory was removed.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from referee.engine.games import Phase
from referee.play.match import MatchResult
from referee.play.processes import DEFAULT_LOG_CAP_BYTES
from referee.protocol.clock import Timing
from referee.protocol.faults import FaultPolicy, PolicyMode
from referee.protocol.messages import action_from_pb, observation_from_pb
from referee.records.gamelog import verify_log
from referee.v2 import bot_pb2 as pb
from tests.conftest import FAST, PYTHON, SAMPLE_BOTS, Bots, play, read_log, read_recording

SEED = 3
BAD_SEAT = 1
# Start-up faults need a short start-up timeout, yet long enough for a good bot on a busy machine.
# Start-up is timed from launch: 4 s leaves a Python bot room to import gRPC on a loaded 2-core machine.
FAST_STARTUP = Timing(move_time_ms=300, time_bank_ms=300, grace_ms=200, startup_timeout_ms=4000)


def play_with(
    bots: Bots, tmp_path: Path, bad, *, game: str = "stop_the_bus", timing: Timing = FAST, policy=FaultPolicy()
) -> tuple[MatchResult, list[dict]]:
    """Play a three-seat game: the bad bot at BAD_SEAT, sample random bots elsewhere; return the result and the log."""
    specs = [bots.sample(name="random-a"), bad, bots.sample(name="random-b")]
    log = tmp_path / "game.jsonl"
    result = play(game, specs, seed=SEED, timing=timing, policy=policy, log_path=log, bot_log_dir=tmp_path)
    return result, read_log(log)


def records(log: list[dict], kind: str, seat: int | None = None) -> list[dict]:
    return [record for record in log if record["type"] == kind and (seat is None or record["seat"] == seat)]


def assert_complete_game(result: MatchResult, log: list[dict], log_path: Path) -> None:
    """The game ended with a full ranking, logged, and the log replays through the engine."""
    assert sorted(result.placements) == list(range(len(result.players)))
    (end,) = records(log, "game_end")
    assert end["placements"] == result.placements
    assert verify_log(log_path) == []


def assert_forfeited_last(result: MatchResult, log: list[dict], seat: int, kind: str) -> None:
    """``seat`` was removed for a ``kind`` fault and ranks below every seat still in the game at that moment."""
    assert result.forfeits[seat].kind.value == kind
    (forfeit,) = records(log, "forfeit", seat)
    assert forfeit["reason"] == str(result.forfeits[seat]) == f"{kind}: {result.forfeits[seat].detail}"
    forfeit_line = log.index(forfeit)
    out_before = {out for record in log[:forfeit_line] if record["type"] == "hand" for out in record["eliminated"]}
    still_in = set(range(len(result.players))) - out_before - {seat}
    assert all(result.place_of(other) < result.place_of(seat) for other in still_in)


# ----- faults during a game, under the forfeit policy ---------------------------------

IN_GAME_FAULTS = [
    # (game, bot script, arguments, fault kind, words in the detail, the bot's own decision that misbehaves)
    # One real bot per fault kind, end to end (and the malformed reply that only gRPC's own limit makes):
    # every other way a reply can be late, stale, duplicated or malformed is played in memory, to the
    # microsecond, by test_session_races.py.
    pytest.param("stop_the_bus", "slow.py", ("--at", "2", "--forever"), "timeout", "(limit 800 ms;", 2, id="hangs"),
    pytest.param(
        "stop_the_bus",
        "crash.py",
        ("--at", "2", "--spawn-child"),
        "crash",
        "process exit code 3",
        2,
        id="crashes-leaving-a-child",
    ),
    pytest.param(
        "stop_the_bus",
        "wire.py",
        ("--mode", "garbage", "--at", "2"),
        "malformed",
        "bytes that are not a PlayResponse",
        2,
        id="garbage-bytes",
    ),
    pytest.param(
        "stop_the_bus",
        "wire.py",
        ("--mode", "huge", "--at", "2"),
        "malformed",
        "a reply over the 1048576 byte limit broke the stream",
        2,
        id="huge-reply",
    ),
    pytest.param(
        "stop_the_bus",
        "bad_reply.py",
        ("--mode", "illegal", "--at", "2"),
        "illegal",
        "'knock' is not an action of Stop the Bus",
        2,
        id="illegal-action",
    ),
    pytest.param(
        "stop_the_bus",
        "bad_reply.py",
        ("--mode", "stale", "--at", "2"),
        "stale",
        "but decision",
        2,
        id="stale-decision-number",
    ),
    pytest.param(
        "bastard_brag",
        "bad_reply.py",
        ("--mode", "illegal", "--at", "2"),
        "illegal",
        "(legal: exchange",
        2,
        id="brag-illegal-action",
    ),
]


@pytest.mark.parametrize(("game", "script", "args", "kind", "words", "nth"), IN_GAME_FAULTS)
def test_a_fault_during_the_game_forfeits_the_bot_and_the_game_goes_on(
    bots: Bots, tmp_path: Path, game: str, script: str, args: tuple[str, ...], kind: str, words: str, nth: int
) -> None:
    result, log = play_with(bots, tmp_path, bots.bad(script, *args), game=game)

    assert result.faults == [Counter(), Counter({kind: 1}), Counter()]
    (fault,) = records(log, "fault")
    assert (fault["seat"], fault["kind"]) == (BAD_SEAT, kind)
    assert words in fault["detail"]
    # The fault is the bot's nth decision: it had played nth - 1 decisions before it.
    own_decisions = [record["n"] for record in records(log, "decision", BAD_SEAT)]
    assert len([number for number in own_decisions if number < fault["n"]]) == nth - 1
    assert fault["n"] not in own_decisions
    assert_forfeited_last(result, log, BAD_SEAT, kind)
    assert_complete_game(result, log, tmp_path / "game.jsonl")
    assert result.decisions > fault["n"]  # the others played on after the forfeit


def test_a_bot_that_dies_at_start_leaves_its_last_words_in_its_log(bots: Bots, tmp_path: Path) -> None:
    result, log = play_with(bots, tmp_path, bots.bad("exit_at_start.py", "--code", "4", name="dies"))
    (fault,) = records(log, "fault", BAD_SEAT)
    assert fault["kind"] == "startup"
    log_name = f"seat{BAD_SEAT}-dies.log"
    assert "exit code 4" in fault["detail"] and log_name in fault["detail"]  # the fault says where to look
    assert (tmp_path / log_name).read_text() == "exit_at_start: cannot load my model, giving up\n"
    assert_forfeited_last(result, log, BAD_SEAT, "startup")


# ----- faults before the game: start-up and handshake ------------------------------------

START_FAULTS = [
    # What only a real process and gRPC show: a program that exits or never listens, a server without the
    # Play method, a handshake that never comes. A handshake reply the referee cannot play with (another
    # protocol version, another game, bytes that do not parse) is test_session_races.py's.
    pytest.param("exit_at_start.py", (), "startup", "exited with exit code 2 before listening", id="exits-at-start"),
    # The address the bot was given, in its sandbox: not the referee's path to the socket on the host.
    pytest.param(
        "no_listen.py",
        (),
        "startup",
        "did not listen on unix:/run/referee/bot.sock (its REFEREE_BOT_ADDRESS)",
        id="never-listens",
    ),
    pytest.param(
        "v1_bot.py",
        (),
        "handshake",
        "does not serve /referee.v2.BotService/Play (UNIMPLEMENTED",
        id="speaks-protocol-v1",
    ),
    pytest.param("handshake.py", ("--hang",), "handshake", "no handshake reply within 4 s", id="handshake-hangs"),
]


@pytest.mark.parametrize(("script", "args", "kind", "words"), START_FAULTS)
def test_a_bot_that_fails_to_start_forfeits_before_the_first_decision(
    bots: Bots, tmp_path: Path, script: str, args: tuple[str, ...], kind: str, words: str
) -> None:
    result, log = play_with(bots, tmp_path, bots.bad(script, *args), timing=FAST_STARTUP)

    assert result.faults == [Counter(), Counter({kind: 1}), Counter()]
    (fault,) = records(log, "fault")
    assert (fault["seat"], fault["kind"], fault["n"]) == (BAD_SEAT, kind, None)
    assert words in fault["detail"]
    assert records(log, "decision", BAD_SEAT) == []
    assert result.latencies_ms[BAD_SEAT] == []
    assert_forfeited_last(result, log, BAD_SEAT, kind)
    assert_complete_game(result, log, tmp_path / "game.jsonl")


def test_a_command_that_does_not_exist_is_a_startup_fault(bots: Bots, tmp_path: Path) -> None:
    missing = bots.spec(["/nonexistent/referee-test-bot", bots.marker], "missing")
    result, log = play_with(bots, tmp_path, missing, timing=FAST_STARTUP)
    (fault,) = records(log, "fault")
    assert fault["kind"] == "startup"
    assert "no such program '/nonexistent/referee-test-bot'" in fault["detail"]
    assert_forfeited_last(result, log, BAD_SEAT, "startup")


def test_when_no_bot_starts_every_failure_is_still_counted(bots: Bots, tmp_path: Path) -> None:
    log_path = tmp_path / "game.jsonl"
    specs = [
        bots.bad("exit_at_start.py", name="first"),
        bots.bad("handshake.py", "--protocol-version", "7", name="second"),
    ]
    result = play("stop_the_bus", specs, seed=SEED, timing=FAST_STARTUP, log_path=log_path)
    log = read_log(log_path)

    assert result.faults == [Counter({"startup": 1}), Counter({"handshake": 1})]
    assert [(fault["seat"], fault["kind"]) for fault in records(log, "fault")] == [(0, "startup"), (1, "handshake")]
    # The first forfeit ends the game; the seat left over ranks first although it failed too.
    assert list(result.forfeits) == [0] and result.placements == [1, 0]
    assert result.decisions == 0
    assert_complete_game(result, log, log_path)


# ----- the default_action policy ---------------------------------------------------------


def documented_default(request: pb.DecisionRequest) -> str:
    """The default action as bot.proto and faults.default_action describe it, from what the bot was shown."""
    obs = observation_from_pb(request.observation)
    if obs.game == "bastard_brag":
        return f"exchange {min(obs.hand)} 2"  # the lowest card for the face-up centre card
    if obs.drawn_card is None:
        return "pass" if obs.phase is Phase.FINAL else "draw"
    if not obs.took_discard:
        return f"discard {obs.drawn_card}"  # the hand stays as it was
    return f"discard {min(card for card in obs.hand if card != obs.drawn_card)}"


def test_default_action_policy_plays_the_documented_action_for_a_late_reply(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "slow.jsonl"
    # Late on its 2nd and 5th decisions (1,400 ms: past the first deadline of 1,000 ms, and past 900 ms once
    # the first lateness has spent the bank), prompt otherwise. The bot answers its stream in order, so
    # the request after each late one waits until it wakes: 1,400 - 900 ms later at worst, within the limit.
    # Each side has 400 ms to spare or more: a loaded machine's referee may discount some of its own lateness
    # from a late reply (850 ms against a deadline of 800 once went uncounted so, and 800 against 500, the
    # suite on three workers, where these figures were half as wide).
    timing = Timing(move_time_ms=600, time_bank_ms=100, grace_ms=300, startup_timeout_ms=20_000)
    slow = bots.bad("slow.py", "--at", "2,5", "--sleep-ms", "1400", "--record", str(recording))
    policy = FaultPolicy(PolicyMode.DEFAULT_ACTION, max_faults=3)
    result, log = play_with(bots, tmp_path, slow, policy=policy, timing=timing)

    assert result.faults[BAD_SEAT] == Counter({"timeout": 2})
    assert BAD_SEAT not in result.forfeits
    faults = records(log, "fault", BAD_SEAT)
    assert len(faults) == 2
    _, requests = read_recording(recording)
    asked = {request.decision_number: request for _, request in requests}
    decisions = {record["n"]: record for record in records(log, "decision")}
    for fault in faults:
        played = decisions[fault["n"]]
        assert played["seat"] == BAD_SEAT and played["default"] is True
        request = asked[fault["n"]]
        assert played["action"] == str(action_from_pb(request.default_action)) == documented_default(request)
    # Every other decision of the bot was its own; the game's end counts both faults.
    own = [record for record in records(log, "decision", BAD_SEAT) if record["n"] not in {f["n"] for f in faults}]
    assert own and not any(record.get("default") for record in own)
    assert records(log, "game_end")[0]["faults"][BAD_SEAT] == {"timeout": 2}
    assert_complete_game(result, log, tmp_path / "game.jsonl")


def test_default_action_policy_forfeits_after_max_faults(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "illegal.jsonl"
    illegal = bots.bad("bad_reply.py", "--mode", "illegal", "--at", "all", "--record", str(recording))
    policy = FaultPolicy(PolicyMode.DEFAULT_ACTION, max_faults=3)
    result, log = play_with(bots, tmp_path, illegal, game="bastard_brag", policy=policy)

    assert result.faults[BAD_SEAT] == Counter({"illegal": 3})
    faults = records(log, "fault", BAD_SEAT)
    first, second, third = (fault["n"] for fault in faults)
    decisions = {record["n"]: record for record in records(log, "decision")}
    _, requests = read_recording(recording)
    asked = {request.decision_number: request for _, request in requests}
    for number in (first, second):
        assert decisions[number]["default"] is True
        assert decisions[number]["action"] == documented_default(asked[number])
    # The third fault is not answered with a default action: the bot leaves the game at once.
    assert third not in decisions
    (forfeit,) = records(log, "forfeit", BAD_SEAT)
    assert log.index(forfeit) == log.index(faults[2]) + 1
    assert records(log, "decision", BAD_SEAT)[-1]["n"] < third
    assert_forfeited_last(result, log, BAD_SEAT, "illegal")
    assert_complete_game(result, log, tmp_path / "game.jsonl")


# ----- time: move time, time bank, grace -------------------------------------------------


def test_an_overrun_within_the_time_bank_is_no_fault_and_shrinks_the_bank(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "slow.jsonl"
    timing = Timing(move_time_ms=200, time_bank_ms=800, grace_ms=500, startup_timeout_ms=3000)
    # 500 ms on its first decision: 300 ms over the move time, well inside the 1500 ms deadline.
    slow = bots.bad("slow.py", "--at", "1", "--sleep-ms", "500", "--record", str(recording))
    result, log = play_with(bots, tmp_path, slow, timing=timing)

    assert result.faults[BAD_SEAT] == Counter() and result.forfeits == {}
    _, requests = read_recording(recording)
    (first_left, first), (second_left, second) = requests[:2]
    assert (first.move_time_ms, first.time_bank_ms) == (200, 800)
    first_ms = records(log, "decision", BAD_SEAT)[0]["ms"]
    # Sleeping is time the bot chose to spend: the honest clock charges it, less only the referee's own lag as the
    # reply was read (the loop's lateness then, which may have begun while the bot still slept: 67 ms once, with
    # four test workers on two CPUs). A clock that charged the CPU time alone, or only the time past the move,
    # would charge 300 ms or less.
    assert 400 <= first_ms <= records(log, "decision", BAD_SEAT)[0]["wall_ms"]
    expected_bank = 800 - (first_ms - 200)
    assert abs(second.time_bank_ms - expected_bank) <= 1
    assert second.move_time_ms == 200
    assert_complete_game(result, log, tmp_path / "game.jsonl")


# ----- output and stopping ----------------------------------------------------------------

_CAP_NOTE = re.compile(rb"\n\[referee: log capped at (\d+) bytes; (\d+) more bytes discarded\]\n\Z")


def test_a_flooding_bot_has_its_log_capped_and_plays_on(bots: Bots, tmp_path: Path) -> None:
    # 4 MiB of output on each of its first two decisions; a roomy move time, as writing takes a while.
    flood = bots.bad("flood.py", "--at", "1,2", "--megabytes", "4")
    timing = Timing(move_time_ms=3000, time_bank_ms=0, grace_ms=200, startup_timeout_ms=3000)
    result, log = play_with(bots, tmp_path, flood, timing=timing)

    assert result.faults == [Counter(), Counter(), Counter()] and result.forfeits == {}
    assert len(records(log, "decision", BAD_SEAT)) > 2
    bot_log = (tmp_path / f"seat{BAD_SEAT}-flood.log").read_bytes()
    note = _CAP_NOTE.search(bot_log)
    assert note is not None, bot_log[-200:]
    assert int(note[1]) == DEFAULT_LOG_CAP_BYTES
    assert len(bot_log) == DEFAULT_LOG_CAP_BYTES + len(note[0]) and len(note[0]) < 100
    assert bot_log.startswith(b"flood flood")
    assert DEFAULT_LOG_CAP_BYTES + int(note[2]) >= 2 * 4 * 1024 * 1024
    assert_complete_game(result, log, tmp_path / "game.jsonl")


def test_a_referee_killed_by_sigkill_leaves_no_bot_behind(bots: Bots, tmp_path: Path) -> None:
    recording = tmp_path / "hang.jsonl"
    hanging = bots.command("slow.py", "--at", "1", "--forever", "--spawn-child", "--record", str(recording))
    prompt = bots.command(SAMPLE_BOTS / "random_bot.py")
    referee = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "referee.cli",
            "play",
            "--game",
            "stop_the_bus",
            "--seed",
            str(SEED),
            "--quiet",
            "--bot-logs",
            str(tmp_path / "logs"),
            "--move-time-ms",
            "60000",
            "--share",
            str(tmp_path),
            "--bot",
            shlex.join(hanging),
            "--bot",
            shlex.join(prompt),
        ],
        env=bots.subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Wait until the game is stuck on the hanging bot's first decision.
        deadline = time.monotonic() + 15
        while not (recording.exists() and len(recording.read_text().splitlines()) >= 2):
            assert referee.poll() is None and time.monotonic() < deadline, "the game never reached the hanging bot"
            time.sleep(0.05)
        running = bots.processes()
        assert any("bad-bot-child" in line for line in running)
        assert sum(str(SAMPLE_BOTS / "random_bot.py") in line and "python" in line for line in running) >= 1
        # Their sockets are in their sandboxes, not on the host: a killed referee leaves no socket folder.
        assert not any(entry.name.startswith("referee-") for entry in bots.socket_root.iterdir())
        referee.kill()
        referee.wait()
        # Each sandbox dies with the referee (--die-with-parent), and its PID namespace with everything in it.
        assert bots.leftovers(wait=5.0) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()


# ----- check-bot -----------------------------------------------------------------------------

# Quick checks cover one table size of one game; the sample bot is checked in full once.
QUICK = ["--game", "stop_the_bus", "--seats", "3", "--startup-timeout-ms", "3000"]


def check_bot(bots: Bots, command: list[str], *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "referee.cli", "check-bot", *options, "--", *command],
        env=bots.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_bot_passes_a_good_bot_at_every_table_size_of_both_games_and_leaves_nothing(bots: Bots) -> None:
    checked = check_bot(bots, bots.command(SAMPLE_BOTS / "random_bot.py"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "handshake ok: random" in checked.stdout
    assert "no problems found" in checked.stdout
    for seats in range(2, 10):
        assert f"stop_the_bus at {seats} seats, game 2" in checked.stdout
    for seats in range(3, 11):
        assert f"bastard_brag at {seats} seats, game 2" in checked.stdout
    assert "bastard_brag at 2 seats" not in checked.stdout and "stop_the_bus at 10 seats" not in checked.stdout
    # The in-process opponents take every message of each game as a stream's bot would: nothing is left
    # unawaited, and no history of one game runs into the next.
    assert "Warning" not in checked.stderr and "referee stream" not in checked.stderr, checked.stderr
    # Its temporary folder is gone (the fixture checks no process is left).
    assert list(bots.socket_root.iterdir()) == []


@pytest.mark.parametrize(
    ("script", "args", "options", "words"),
    [
        pytest.param(
            "crash.py",
            ("--in-game", "2", "--at", "2"),
            QUICK,
            ["game 2 (seat", "1 crash fault: process exit code 3; the bot forfeited the game"],
            id="crashes-in-its-second-game",
        ),
        pytest.param(
            "bad_reply.py",
            ("--mode", "illegal", "--seats", "4", "--at", "1"),
            ["--game", "bastard_brag", "--seats", "3", "--seats", "4", "--seats", "5", "--games", "1"],
            ["bastard_brag at 4 seats, game 1", "1 illegal fault"],
            id="breaks-at-four-seats",
        ),
        pytest.param(
            "exit_at_start.py",
            (),
            QUICK,
            ["startup: exited with exit code 2 before listening", "its last output", "cannot load my model"],
            id="exits-at-start",
        ),
        pytest.param(
            "handshake.py",
            ("--protocol-version", "7"),
            QUICK,
            ["handshake: speaks protocol versions 7; this referee speaks version 2"],
            id="wrong-version",
        ),
        pytest.param("v1_bot.py", (), QUICK, ["the bot protocol moved to version 2"], id="speaks-v1"),
        pytest.param(
            "bad_reply.py", ("--mode", "stale", "--at", "1"), QUICK, ["stale fault", "but decision"], id="stale"
        ),
        pytest.param("slow.py", ("--at", "1", "--sleep-ms", "600"), QUICK, ["slow decision"], id="slow"),
        pytest.param(
            "slow.py",
            ("--at", "1", "--forever"),
            [*QUICK, "--games", "1", "--time-bank-ms", "0"],
            ["1 timeout fault", "the bot forfeited the game"],
            id="hangs",
        ),
    ],
)
def test_check_bot_fails_a_bad_bot_and_says_why(
    bots: Bots, tmp_path: Path, script: str, args: tuple[str, ...], options: list[str], words: list[str]
) -> None:
    checked = check_bot(bots, bots.command(script, *args), *options)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "problem" in checked.stdout
    for phrase in words:
        assert phrase in checked.stdout
    assert "Traceback" not in checked.stdout + checked.stderr
    assert "skipped" not in checked.stdout  # a bot that failed to start or handshake is not said to skip a game
    if "timeout fault" in checked.stdout:
        assert "slow decision" not in checked.stdout  # a timeout is a fault, not also a slow decision
    # The logs are kept, in the folder named, and every file a problem points to is there.
    kept = kept_logs(checked)
    named = re.findall(rf"({re.escape(str(kept))}/[^\s)]+)", checked.stdout)
    assert all(Path(path).exists() for path in named), named
    shutil.rmtree(kept)
    assert list(bots.socket_root.iterdir()) == []  # no other temporary folder is left


def test_check_bot_keeps_the_logs_when_asked(bots: Bots, tmp_path: Path) -> None:
    checked = check_bot(bots, bots.command("crash.py", "--at", "3"), *QUICK, "--logs", str(tmp_path / "logs"))
    assert checked.returncode == 1
    assert f"the game logs and the bot's output are kept in {tmp_path / 'logs'}" in checked.stdout
    assert (tmp_path / "logs" / "check-stop_the_bus-3-1.jsonl").exists()
    assert "process exit code 3; the bot forfeited the game (in 2 of 2 games; the first: " in checked.stdout
    assert f"(its output is in {tmp_path / 'logs' / 'stop_the_bus-3-process-1.log'})" in checked.stdout


def test_check_bot_reports_slow_handling_of_a_games_start_apart_from_slow_decisions(bots: Bots) -> None:
    # It sleeps 400 ms on the first decision of each game (as if loading a model when the game starts).
    checked = check_bot(
        bots, bots.command("slow.py", "--sleep-ms", "400", "--at", "1", "--every-game"), *QUICK, "--games", "3"
    )
    assert checked.returncode == 1, checked.stdout
    assert "slow handling of the messages between decisions" in checked.stdout
    shutil.rmtree(kept_logs(checked))


def test_check_bot_asks_more_of_one_games_first_decision_before_it_calls_the_messages_slow(bots: Bots) -> None:
    # One game: its first decision is one sample, which a pause of the machine could make; 200 ms is not enough.
    paused = check_bot(bots, bots.command("slow.py", "--sleep-ms", "200", "--at", "1"), *QUICK, "--games", "1")
    assert paused.returncode == 0 and "slow handling" not in paused.stdout, paused.stdout
    loading = check_bot(bots, bots.command("slow.py", "--sleep-ms", "500", "--at", "1"), *QUICK, "--games", "1")
    assert loading.returncode == 1 and "slow handling of the messages between decisions" in loading.stdout
    shutil.rmtree(kept_logs(loading))
    # Two games, the first's start paused 400 ms and the second's not: a pause, not a slow start (that is in each).
    once = check_bot(bots, bots.command("slow.py", "--sleep-ms", "400", "--at", "1"), *QUICK, "--games", "2")
    assert once.returncode == 0 and "slow handling" not in once.stdout, once.stdout


def test_check_bot_does_not_call_a_bot_that_thinks_long_on_some_decisions_slow_with_its_messages(bots: Bots) -> None:
    # It thinks 200 ms on every third decision, the first of each game included, as a search sure of the rest.
    thinking = bots.command("slow.py", "--sleep-ms", "200", "--at", ",".join(map(str, range(1, 60, 3))), "--every-game")
    checked = check_bot(bots, thinking, *QUICK, "--games", "2")
    assert checked.returncode == 0, checked.stdout
    assert "slow handling" not in checked.stdout


def kept_logs(checked: subprocess.CompletedProcess) -> Path:
    """The folder where check-bot says it kept the logs (it exists)."""
    (kept,) = re.findall(r"^the game logs and the bot's output are kept in (\S+)$", checked.stdout, re.MULTILINE)
    assert Path(kept).is_dir(), kept
    return Path(kept)
