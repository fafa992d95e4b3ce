"""What the bot-kit tests share: a submission folder copied out and built from its manifest, a real
league against the Python sample bots, `referee check-bot`, and a plain v2 stream client.

A kit's folder is copied (without its build artefacts) to a temporary folder before the league builds
it, so a test also shows that the folder builds from what it carries alone, writing nothing elsewhere
in the repository: under the sandbox a bot sees only its own folder. Each sample kit is built this way once per
test session (``built_kit``, shared by the test workers) and each module that uses it gets its own copy of
the built folder (``built_copy``), as up to date as the build left it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import yaml

from referee.engine.games import game_class
from referee.records.results import GameRecord, bin_midpoint
from referee.v2 import bot_pb2 as pb
from referee.v2 import bot_pb2_grpc as pb_grpc
from tests.cli import referee_in_process

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_BOTS = ROOT / "sample_bots"
PYTHON_BOTS = SAMPLE_BOTS / "python"
CANONICAL_PROTO = ROOT / "proto" / "referee" / "v2" / "bot.proto"
REFEREE = [sys.executable, "-m", "referee.cli"]
GAMES = ("stop_the_bus", "bastard_brag")
LEAGUE_TIMEOUT_S = 600  # a league here is six short games, after a build that may compile gRPC code
READY_TIMEOUT_S = 15.0
REPLY_TIMEOUT_S = 10.0


def copy_submission(source: Path, target: Path, ignore: tuple[str, ...]) -> Path:
    """Copy the submission folder ``source`` to ``target``, leaving out the build artefacts ``ignore``."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*ignore), symlinks=True)
    return target


# npm ci takes packages from its cache when it has them (npm fetches what is missing).
NPM_ENV = {"npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}


def build_copy(source: Path, target: Path, ignore: tuple[str, ...], environment: dict[str, str] | None = None) -> Path:
    """Copy a submission without its build artefacts ``ignore`` and run its manifest's build command in the copy.

    ``environment`` is the build's whole environment (the referee's by default).
    """
    folder = copy_submission(source, target, ignore)
    build = yaml.safe_load((folder / "bot.yaml").read_text())["build"]
    started = time.monotonic()
    completed = subprocess.run(
        build,
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ if environment is None else environment,
    )
    assert completed.returncode == 0, f"{build!r} failed:\n{completed.stdout}{completed.stderr}"
    print(f"{source.name}: {build!r} built the bot in {time.monotonic() - started:.1f} s")
    return folder


def built_kit(
    tmp_path_factory: pytest.TempPathFactory,
    source: Path,
    ignore: tuple[str, ...],
    environment: dict[str, str] | None = None,
) -> Path:
    """The submission ``source`` built once per test session by ``build_copy`` (from a copy without ``ignore``).

    The first test worker to ask builds it under the session's temporary root, which the workers of one run
    share (pytest-xdist's "making session-scoped fixtures execute only once"), holding a lock on the build
    so the others wait for it; a marker beside the folder says the build finished, and later askers reuse
    it. A failed build leaves no folder, and its output fails every test that asks for it. Read only:
    a test that writes into the folder takes a copy (``built_copy``). Every caller builds a given ``source``
    with the same ``ignore`` and the same build environment.
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    key = hashlib.sha256(repr((str(source.resolve()), ignore)).encode()).hexdigest()[:12]
    stem = root / f"kit-{source.name}-{key}"
    folder, done, failed = stem / source.name, root / f"{stem.name}.built", root / f"{stem.name}.failed"
    with (root / f"{stem.name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the lock file closes, or its holder dies
        if failed.exists():
            raise AssertionError(f"the session's build of {source} failed:\n{failed.read_text()}")
        if not done.exists():
            shutil.rmtree(stem, ignore_errors=True)  # what a worker that died while building left
            try:
                build_copy(source, folder, ignore, environment)
            except Exception as error:
                shutil.rmtree(stem, ignore_errors=True)
                failed.write_text(f"{type(error).__name__}: {error}")
                raise
            done.touch()
    return folder


def built_copy(
    tmp_path_factory: pytest.TempPathFactory,
    source: Path,
    target: Path,
    ignore: tuple[str, ...],
    environment: dict[str, str] | None = None,
) -> Path:
    """A copy at ``target`` of the session's build of ``source`` (``built_kit``), for a test to write into.

    The copy keeps symbolic links as links and every file's modification time, so the build's tool finds
    it up to date as the build left it.
    """
    shutil.copytree(built_kit(tmp_path_factory, source, ignore, environment), target, symlinks=True)
    return target


def go_environment() -> dict[str, str]:
    """The environment a Go build runs in here: the referee's, without any GO* setting of the machine's own (a
    GOPATH, GOFLAGS or GOPROXY there would change what the build finds)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("GO")}


def compile_cpp_probe(built: Path, source: str, directory: Path) -> Path:
    """The C++ probe program ``source`` compiled in ``directory`` against the kit of the built C++ sample
    ``built`` (its generated code's and the kit's objects): the program's path."""
    (directory / "probe.cc").write_text(source)
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"], capture_output=True, text=True, check=True
    ).stdout.split()
    build = built / "build"
    objects = [str(build / name) for name in ("bot.pb.o", "bot.grpc.pb.o", "referee_kit.o")]
    program = directory / "probe"
    includes = [f"-I{build / 'gen'}", f"-I{built / 'kit'}"]
    compile_command = ["g++", "-std=c++20", "-O1", *includes, "-o", str(program), str(directory / "probe.cc")]
    compiled = subprocess.run([*compile_command, *objects, *flags], capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    return program


def build_go_probe(built: Path, source: str, package: str, directory: Path) -> Path:
    """The Go probe program ``source`` (package main, called ``package``) built in ``directory`` against the kit
    and the generated code of the built Go sample ``built``, offline and in GOPATH mode as the sample builds:
    the program's path."""
    folder = directory / "gopath" / "src" / package
    folder.mkdir(parents=True)
    (folder / "main.go").write_text(source)
    environment = go_environment() | {
        "GO111MODULE": "off",
        "GOPATH": f"{directory / 'gopath'}:{built / 'build' / 'gopath'}:{built}:/usr/share/gocode",
        "GOPROXY": "off",
        "GOCACHE": str(built / "build" / "go-cache"),
    }
    program = directory / "probe"
    compiled = subprocess.run(
        ["go", "build", "-o", str(program), package], capture_output=True, text=True, timeout=300, env=environment
    )
    assert compiled.returncode == 0, compiled.stderr
    return program


@contextlib.contextmanager
def bot_stream(command: list[str], folder: Path, directory: Path) -> Iterator[StreamClient]:
    """A started bot and a v2 stream to it, past nothing (the test sends the handshake); both closed after."""
    bot = BotProcess(command, folder, directory)
    client = StreamClient(bot)
    try:
        yield client
    finally:
        client.close()
        bot.stop()


def missing_programs(programs: dict[str, str]) -> str | None:
    """Why a kit's tests must be skipped: the programs not on PATH and the Debian packages that give them."""
    missing = [program for program in programs if shutil.which(program) is None]
    if not missing:
        return None
    packages = sorted({programs[program] for program in missing})
    return (
        f"{', '.join(missing)} not found: install {' '.join(packages)} "
        f"(as root, `make system-deps` or `apt-get install -y {' '.join(packages)}`)"
    )


# ----- a league ---------------------------------------------------------------------------


@dataclass
class LeagueRun:
    """One finished `referee run` of a small league: where its results are and what it printed."""

    output: Path
    stdout: str
    stderr: str
    games: list[dict]

    def seat_of(self, record: dict, name: str) -> int:
        return record["seats"].index(name)

    def latencies_ms(self, name: str) -> list[float]:
        """Every decision time of the bot ``name`` over the league's games (each its bin's midpoint, as recorded)."""
        times: list[float] = []
        for record in self.games:
            if name in record["seats"]:
                bins = GameRecord.of(record).latency_bins or ()
                times.extend(map(bin_midpoint, bins[self.seat_of(record, name)]))
        return times

    def build_log(self, name: str) -> str:
        return (self.output / "logs" / f"build-{name}.log").read_text(errors="replace")

    def bot_logs(self, name: str) -> str:
        return "".join(
            path.read_text(errors="replace") for path in sorted((self.output / "logs").glob(f"{name}-*.log"))
        )


def run_league(directory: Path, game: str, submission: Path, *, env: dict[str, str] | None = None) -> LeagueRun:
    """Run a league of the submission folder against the Python heuristic and random bots.

    Three bots at one table, every seat rotation: three games, the submission in each seat once.
    """
    league = directory / f"{game}.yaml"
    output = directory / f"results-{game}"
    league.write_text(
        f"""\
name: kit-{game}
game: {game}
seed: 11
table_size: 3
rounds: 1
move_time_ms: 1000
concurrency: 2
output: {output}
bots:
  - path: {submission}
  - name: heuristic
    command: python {PYTHON_BOTS / "heuristic_bot.py"}
  - name: random
    command: python {PYTHON_BOTS / "random_bot.py"}
""",
        encoding="utf-8",
    )
    completed = subprocess.run(
        [*REFEREE, "run", str(league), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=LEAGUE_TIMEOUT_S,
        env={**os.environ, **(env or {})},
        cwd=directory,
    )
    results = output / "games.jsonl"
    assert completed.returncode == 0, (
        f"referee run failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    )
    games = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return LeagueRun(output, completed.stdout, completed.stderr, sorted(games, key=lambda record: record["index"]))


def assert_played_cleanly(run: LeagueRun, name: str, games: int = 3) -> None:
    """The bot ``name`` was built, sat at every game, made decisions, and never faulted or forfeited;
    its log shows no failed decide and no stream error; every game log replays exactly under
    `referee verify`. Prints the bot's latencies."""
    assert "left out of the league" not in run.stderr, run.stderr
    assert len(run.games) == games, f"{len(run.games)} games finished, expected {games}:\n{run.stderr}"
    for record in run.games:
        assert name in record["seats"], f"{record['game_id']}: {name} did not play (seats {record['seats']})"
        seat = run.seat_of(record, name)
        assert record["faults"][seat] == {}, (
            f"{record['game_id']}: {name} faulted: {record['faults'][seat]}\n{run.bot_logs(name)}"
        )
        assert str(seat) not in record["forfeits"], f"{record['game_id']}: {name} forfeited: {record['forfeits']}"
        assert record["timing"]["latency_bins"][seat], f"{record['game_id']}: {name} made no decision"
        log = run.output / "games" / f"{record['game_id']}.jsonl"
        verified = referee_in_process("verify", str(log))
        assert verified.returncode == 0, f"referee verify {log}:\n{verified.stdout}{verified.stderr}"
    logs = run.bot_logs(name)
    assert "decide failed" not in logs and "referee stream:" not in logs, logs
    print(f"{name}: {latency_summary(run.latencies_ms(name))}")


def latency_summary(times: list[float]) -> str:
    """ "median M ms, p99 P ms over N decisions", for a test's output."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"median {statistics.median(ordered):.2f} ms, p99 {p99:.2f} ms over {len(ordered)} decisions"


# ----- check-bot --------------------------------------------------------------------------


# The table sizes a kit's sample is checked at: each game's smallest and largest (Stop the Bus 2 and 9, Bastard Brag
# 3 and 10), where a kit that sizes what it keeps by the table would fail first, and 3, played by both games;
# test_faults.py checks a bot at every size.
KIT_CHECK_SEATS = ("2", "3", "9", "10")


def check_bot(command: list[str], cwd: Path, log_dir: Path) -> subprocess.CompletedProcess:
    """Run `referee check-bot -- COMMAND` in ``cwd`` (both games, at :data:`KIT_CHECK_SEATS`); assert it found no
    problem."""
    seats = [option for size in KIT_CHECK_SEATS for option in ("--seats", size)]
    completed = subprocess.run(
        [*REFEREE, "check-bot", *seats, "--logs", str(log_dir), "--", *command],
        capture_output=True,
        text=True,
        timeout=LEAGUE_TIMEOUT_S,
        cwd=cwd,
    )
    report = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"check-bot found problems:\n{report}"
    assert "no problems found" in completed.stdout, report
    for game in GAMES:
        for size in KIT_CHECK_SEATS:
            if game_class(game).min_players <= int(size) <= game_class(game).max_players:
                assert f"- {game} at {size} seats, game 1" in completed.stdout, f"no {game} at {size} seats:\n{report}"
    return completed


# ----- one bot process and a plain stream to it -----------------------------------------------


class BotProcess:
    """A bot program started by hand on a Unix socket in ``directory``, its output in a log file."""

    def __init__(self, command: list[str], cwd: Path, directory: Path) -> None:
        self.socket = directory / "bot.sock"
        self.address = f"unix:{self.socket}"
        self.log = directory / "bot.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                env={**os.environ, "REFEREE_BOT_ADDRESS": self.address},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout: float = REPLY_TIMEOUT_S) -> str:
        """Wait until the bot's log holds ``text``; return the log."""
        deadline = time.monotonic() + timeout
        while text not in self.log_text():
            assert time.monotonic() < deadline, f"the bot's log never said {text!r}; it holds:\n{self.log_text()}"
            time.sleep(0.02)
        return self.log_text()

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` and return the exit status (killing the bot if it outlives 10 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"the bot did not exit within 10 s of signal {signum}; log:\n{self.log_text()}"
            ) from None


class StreamClient:
    """The referee's side of the v2 stream, by hand: send PlayRequests, read PlayResponses."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.channel = grpc.insecure_channel(bot.address)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=READY_TIMEOUT_S)
        except grpc.FutureTimeoutError:
            self.channel.close()
            raise AssertionError(f"the bot did not listen within {READY_TIMEOUT_S} s; log:\n{bot.log_text()}") from None
        self.sequence = 0
        self._outbox: queue.Queue = queue.Queue()
        self._replies: queue.Queue = queue.Queue()
        self._call = pb_grpc.BotServiceStub(self.channel).Play(iter(self._outbox.get, None))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for reply in self._call:
                self._replies.put(reply)
        except grpc.RpcError as error:
            self._replies.put(error)
        self._replies.put(None)

    def send(self, **message) -> None:
        """Send one PlayRequest holding ``message`` (e.g. ``game_start=...``), numbered in turn."""
        self.sequence += 1
        self._outbox.put(pb.PlayRequest(sequence=self.sequence, **message))

    def receive(self) -> pb.PlayResponse:
        try:
            reply = self._replies.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(
                f"no reply within {REPLY_TIMEOUT_S} s; the bot's log:\n{self.bot.log_text()}"
            ) from None
        assert isinstance(reply, pb.PlayResponse), f"the stream ended ({reply}); the bot's log:\n{self.bot.log_text()}"
        return reply

    def handshake(self, game: int = pb.GAME_STOP_THE_BUS, num_players: int = 2) -> pb.HandshakeResponse:
        self.send(
            handshake=pb.Handshake(
                protocol_versions=[2],
                referee_version="test",
                game=game,
                num_players=num_players,
                time_limits=pb.TimeLimits(move_time_ms=1000, time_bank_ms=10_000, grace_ms=50),
                turn_limit=200,
            )
        )
        reply = self.receive()
        assert reply.WhichOneof("message") == "handshake", reply
        return reply.handshake

    def decide(self, request: pb.DecisionRequest) -> pb.Decision:
        self.send(decision_request=request)
        reply = self.receive()
        assert reply.WhichOneof("message") == "decision", reply
        return reply.decision

    def end_and_wait(self) -> None:
        """End the referee's side of the stream, as the referee does when it is done with a process, and
        assert that the bot ends its own side (the referee waits 1 s for it; a busy test machine, longer)."""
        self._outbox.put(None)
        try:
            ending = self._replies.get(timeout=5.0)
        except queue.Empty:
            raise AssertionError(f"the bot did not end its side of the stream; log:\n{self.bot.log_text()}") from None
        assert ending is None, f"the stream ended with {ending!r}, not cleanly"

    def close(self) -> None:
        self._outbox.put(None)
        self.channel.close()


# ----- the probe bot: every kit's hooks, failures and gap checks -------------------------------------
#
# Each kit's tests build a small "probe" bot on the kit, a real program that behaves exactly so:
# - its handshake name is "probe";
# - decide fails on decision 1 (an exception, a panic: however the language fails); otherwise it writes
#   "hook decide N hand_events=S1,S2,..." (N the decision number, S the sequence numbers of the
#   events the kit gives it for the current hand) to stderr and returns the first legal action;
# - on_game_start writes "hook start GAME_ID seed=X", X = random_seed + 1 in unsigned 64-bit arithmetic;
# - on_event writes "hook event SEQUENCE EVENT_KIND_NAME";
# - on_fault writes "hook fault FAULT_KIND_NAME forfeited=true|false";
# - on_game_end writes "hook end GAME_ID events=COUNT" (COUNT: the events game_end carried).

PROBE_SEED = 2**64 - 2  # above 2**53 (a JavaScript number would lose it), and + 1 still fits 64 bits


def exercise_probe(bot: BotProcess, error_prefix: str) -> None:
    """Drive a probe bot through two games' messages on a real stream and check everything it did.

    ``error_prefix`` is how the kit's Decision.error starts for the language's failure in decide.
    """
    from referee.engine.games import StopTheBus  # the engine, for real requests
    from referee.protocol.messages import action_from_pb
    from tests.reference_encoder import decision_request_to_pb

    stream = StreamClient(bot)
    try:
        assert stream.handshake().name == "probe"
        game = StopTheBus(2, seed=4)
        stream.send(
            game_start=pb.GameStart(game_id="h", game=pb.GAME_STOP_THE_BUS, num_players=2, random_seed=PROBE_SEED)
        )
        request = decision_request_to_pb(game, "h", 1, 0, 1000, 10_000)
        count = len(request.events)
        failed = stream.decide(request)
        assert failed.decision_number == 1 and not failed.HasField("action"), failed
        assert failed.error.startswith(error_prefix), f"Decision.error {failed.error!r} should start {error_prefix!r}"
        assert "\n" not in failed.error
        again = decision_request_to_pb(game, "h", 2, count, 1000, 10_000)  # no new events
        answered = stream.decide(again)
        assert answered.decision_number == 2 and game.is_legal(action_from_pb(answered.action)), answered
        stream.send(
            fault_notice=pb.FaultNotice(game_id="h", decision_number=2, kind=pb.FAULT_KIND_ILLEGAL, forfeited=True)
        )
        end = pb.GameEnd(game_id="h")
        end.events.add(sequence=count + 1, hand_number=1, kind=pb.EVENT_KIND_FORFEIT, seat=0)
        stream.send(game_end=end)
        # A second game whose first event is missing, in a message after one that never came.
        stream.send(game_start=pb.GameStart(game_id="gaps", game=pb.GAME_STOP_THE_BUS, num_players=2))
        gapped = decision_request_to_pb(StopTheBus(2, seed=5), "gaps", 2, 0, 1000, 10_000)
        gapped.events[0].sequence = 2
        for index in range(1, len(gapped.events)):
            gapped.events[index].sequence = index + 2
        stream.sequence += 1
        assert stream.decide(gapped).HasField("action")
        log = bot.wait_for_log("hook decide 2 hand_events=2")
        stream.end_and_wait()
    finally:
        stream.close()
    assert f"decision 1 of game h: decide failed: {error_prefix}" in log, log
    assert f"referee stream: message {stream.sequence} arrived where {stream.sequence - 1} was due" in log, log
    assert "referee stream: game gaps: event 2 arrived where 1 was due" in log, log
    hooks = [line.removeprefix("hook ") for line in log.splitlines() if line.startswith("hook ")]
    sequences = ",".join(str(number) for number in range(1, count + 1))
    assert hooks[: count + 6] == [
        f"start h seed={PROBE_SEED + 1}",
        *[f"event {event.sequence} {pb.EventKind.Name(event.kind)}" for event in request.events],
        f"decide 2 hand_events={sequences}",
        "fault FAULT_KIND_ILLEGAL forfeited=true",
        f"event {count + 1} EVENT_KIND_FORFEIT",
        "end h events=1",
        "start gaps seed=1",
    ], log
