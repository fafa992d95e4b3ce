"""``referee replay-to``: a recorded game replayed to a bot from one seat, and where its answers differ.

A game's log (:mod:`referee.records.gamelog`) holds everything the game was made of:
its deal (the seed, or the decks), every decision with the action played
and the time charged, every fault and forfeit. From it a
:class:`referee.play.match.Match`, the code that played the game, plays it again:
each other seat answers as the log says it did (the action it chose, or the
fault it made, charged the time it was charged, so every time bank runs as it
ran), and the replayed seat's messages go to the bot under test, started in
its sandbox as a league starts a bot. So the bot receives what that seat
received: the handshake, the game's start, each decision request with its
events and time bank, each fault notice, the game's end. Each of its answers
is compared with the one recorded, with the fault it would have been
charged; whatever it answers, the game goes on as recorded (the bot is told
the recorded moves, its own included).

Two things differ from the league: ``PlayRequest.sequence`` starts at 1 (the
league's process may have played games before this one), and the handshake
names this referee's version.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from referee.apps.check_report import Report
from referee.apps.checkbot import Submission, build_bot
from referee.common.errors import RefereeError
from referee.engine.cards import parse_cards
from referee.engine.games import Game
from referee.engine.games.game import Action
from referee.play.match import Match, illegal_action_fault
from referee.play.processes import BotSpec, log_tail
from referee.play.session import BotSession, Player, Reply
from referee.protocol.clock import TimeControl, Timing
from referee.protocol.faults import BotFault, FaultKind, FaultPolicy, PolicyMode
from referee.protocol.setup import GameSetup
from referee.records.gamelog import action_text, read_game_log, verify_log
from referee.v2 import bot_pb2 as pb


class ReplayError(RefereeError):
    """A game log that cannot be replayed: not a game log, a log the engine does not replay, or no such seat."""


@dataclass(frozen=True)
class Recorded:
    """What a seat did at one decision, as its log says: the action it chose, or its fault and what followed."""

    number: int
    hand: int | None
    chosen: Action | None  # the bot's own action; None after a fault
    fault: dict[str, Any] | None  # the fault record
    replaced: bool  # after a fault: the default action was played for it (else it forfeited)
    ms: float  # the time charged (0 when it forfeited: the log does not record it)
    wall_ms: float

    def text(self) -> str:
        if self.fault is None:
            assert self.chosen is not None  # a decision without a fault has its action
            return action_text(self.chosen)
        return f"{self.fault['kind']} fault: {self.fault['detail']}"


def recorded_decisions(records: list[dict[str, Any]]) -> tuple[dict[int, Recorded], dict[int, dict[str, Any]]]:
    """Every decision of a game's log records by number, and the start-up faults by seat."""
    decisions: dict[int, Recorded] = {}
    start_faults: dict[int, dict[str, Any]] = {}
    fault: dict[str, Any] | None = None  # the last fault, until the record that says what followed it
    for record in records:
        kind = record["type"]
        if kind == "fault":
            if record["n"] is None:
                start_faults[record["seat"]] = record
            else:
                fault = record
        elif kind == "decision":
            number = record["n"]
            own = fault if fault is not None and fault["n"] == number else None
            chosen = None if record.get("default") else Action.parse(record["action"])
            decisions[number] = Recorded(
                number, record["hand"], chosen, own, own is not None, record["ms"], record.get("wall_ms", record["ms"])
            )
            fault = None
        elif kind == "forfeit" and fault is not None and fault["seat"] == record["seat"]:
            decisions[fault["n"]] = Recorded(fault["n"], None, None, fault, False, 0.0, 0.0)
            fault = None
    return decisions, start_faults


class _RecordedSeat:
    """A seat of the replay that answers as the log says it did, charged the time it was charged."""

    def __init__(self, name: str, decisions: dict[int, Recorded]) -> None:
        self.name = name
        self.decisions = decisions
        self.connected = True  # what the policy saw after a fault: replaced by the default action, or forfeited
        self.recorded_usable = True  # whether the league's session could still take notices

    def game_start(self, message: pb.GameStart) -> None:
        """A recorded seat takes no message."""

    def fault_notice(self, message: pb.FaultNotice) -> None:
        """A recorded seat takes no message."""

    def game_end(self, body: bytes) -> None:
        """A recorded seat takes no message."""

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply:
        if while_waiting is not None:
            while_waiting()
        return self.recorded(number)

    def recorded(self, number: int) -> Reply:
        """The recorded answer to decision ``number``, charged as it was: its action, or its fault."""
        done = self.decisions.get(number)
        if done is None:
            raise ReplayError(f"decision {number}: the log records no answer of {self.name}")
        if done.fault is None:
            return Reply(done.chosen, done.ms, done.wall_ms)
        self.connected = done.replaced
        if done.fault["kind"] in (FaultKind.TIMEOUT.value, FaultKind.CRASH.value):
            self.recorded_usable = False  # the league's session no longer sent it notices
        return Reply(
            None, done.ms, done.wall_ms, BotFault(FaultKind(done.fault["kind"]), done.fault["detail"], self.name)
        )


@dataclass
class Answer:
    """One decision of the replayed seat: what it answered in the game, and what the bot answers now."""

    number: int
    hand: int | None
    recorded: str
    now: str
    recorded_ms: float
    now_ms: float
    same: bool
    fault: dict[str, Any] | None = None  # the fault the answer would be charged now: kind and detail

    def line(self) -> str:
        where = f"decision {self.number}" + (f" (hand {self.hand})" if self.hand is not None else "")
        if self.same:
            return f"{where}: as recorded: {self.now} ({self.now_ms:.1f} ms; recorded {self.recorded_ms:.1f} ms)"
        return f"{where}: recorded {self.recorded} ({self.recorded_ms:.1f} ms); now {self.now} ({self.now_ms:.1f} ms)"


class _ReplayedSeat(_RecordedSeat):
    """The seat replayed to the bot under test: every message goes to it; its answers are compared, then the
    game goes on as recorded."""

    def __init__(self, name: str, decisions: dict[int, Recorded], session: BotSession) -> None:
        super().__init__(name, decisions)
        self.session = session
        self.game: Game | None = None  # the game replayed, once the match is made
        self.answers: list[Answer] = []

    def game_start(self, message: pb.GameStart) -> None:
        if self.recorded_usable:
            self.session.game_start(message)

    def fault_notice(self, message: pb.FaultNotice) -> None:
        if self.recorded_usable:
            self.session.fault_notice(message)

    def game_end(self, body: bytes) -> None:
        if self.recorded_usable:
            self.session.game_end(body)

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply:
        game = self.game
        assert game is not None  # set once the match is made, before its first decision
        legal = game.legal_actions()
        reply = await self.session.decide(request, number, clock, while_waiting)
        chosen, fault = reply.action, reply.fault
        if chosen is not None and chosen not in legal:
            fault = illegal_action_fault(game, chosen, legal, self.name)
            chosen = None
        done = self.decisions.get(number)
        if done is not None:
            if chosen is not None:
                now = action_text(chosen)
            else:
                assert fault is not None  # a reply without an action carries its fault
                now = f"{fault.kind.value} fault: {fault.detail}"
            same = (done.fault is None and fault is None and chosen == done.chosen) or (
                done.fault is not None and fault is not None and done.fault["kind"] == fault.kind.value
            )
            self.answers.append(
                Answer(
                    number,
                    done.hand if done.hand is not None else game.hand_number,
                    done.text(),
                    now,
                    done.ms,
                    round(reply.charged_ms, 3),
                    same,
                    {"kind": fault.kind.value, "detail": fault.detail} if fault is not None else None,
                )
            )
        return self.recorded(number)


@dataclass
class ReplayReport:
    """What the replay found: the handshake, each decision of the seat, and where the bot stopped answering."""

    game_id: str
    seat: int
    recorded_name: str
    lines: list[str] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    problem: str | None = None  # the bot could not be replayed to (it did not start, say)
    logs: Path | None = None  # where the bot's output is kept (when there is a difference or a problem)

    @property
    def differences(self) -> list[Answer]:
        return [answer for answer in self.answers if not answer.same]

    def json(self, bot: str) -> dict[str, Any]:
        first = self.differences[0] if self.differences else None
        return {
            "game_id": self.game_id,
            "seat": self.seat,
            "recorded_name": self.recorded_name,
            "bot": bot,
            "problem": self.problem,
            "decisions": len(self.answers),
            "differences": len(self.differences),
            "first_difference": first.__dict__ if first else None,
            "answers": [answer.__dict__ for answer in self.answers],
            "logs": str(self.logs) if self.logs is not None else None,
        }


async def replay_to(
    log_path: Path,
    seat: int,
    bot: BotSpec,
    *,
    startup_timeout_ms: int = Timing.startup_timeout_ms,
    log_dir: Path | None = None,
    out: TextIO | None = None,
    every: bool = False,
) -> ReplayReport:
    """Replay the game of ``log_path`` to ``bot`` in ``seat``; print the differences (``every``: every decision)."""
    out = out or sys.stdout
    records = _records(log_path)
    start = records[0]
    if not 0 <= seat < start["num_players"]:
        raise ReplayError(f"--seat {seat}: {start['game_id']} has seats 0 to {start['num_players'] - 1}")
    decisions, start_faults = recorded_decisions(records)
    players = list(start["players"])
    report = ReplayReport(start["game_id"], seat, players[seat])

    def say(line: str) -> None:
        report.lines.append(line)
        print(line, file=out, flush=True)

    timing = Timing(**start["timing"], startup_timeout_ms=startup_timeout_ms)
    say(
        f"replaying {start['game_id']} ({start['game']}, {start['num_players']} seats, seed {start['seed']}) to "
        f"seat {seat}, recorded as {players[seat]}{_described(start, seat)}: {bot.describe()}"
    )
    given = log_dir is not None
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="replay-to-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    session = BotSession(bot, log_dir / f"seat{seat}-{bot.name}.log")
    try:
        try:
            await session.start(GameSetup(start["game"], start["num_players"], timing, start["turn_limit"]))
        except BotFault as fault:
            report.problem = f"{fault.kind.value}: {fault.detail}" + log_tail(session.log_path)
            say(f"the bot did not start: {report.problem}")
            return report
        response = session.handshake_response
        assert response is not None  # started: the handshake was answered
        say(f"handshake ok: {response.name} {response.version}" + (f" by {response.author}" if response.author else ""))
        if seat in start_faults:
            failed = start_faults[seat]
            report.problem = (
                f"in the recorded game seat {seat} failed before its first decision ({failed['kind']}: "
                f"{failed['detail']}); now it started and answered the handshake"
            )
            say(report.problem)
            return report
        await _play(start, records, decisions, start_faults, seat, session, report)
        for answer in report.answers:
            if every or not answer.same:
                say(answer.line())
        say(_summary(report))
    finally:
        await session.stop()
        # A bot that could not even be launched wrote no output: there is nothing to point to.
        wanted = given or report.problem is not None or bool(report.differences)
        if wanted and session.log_path is not None and session.log_path.exists():
            report.logs = session.log_path
            say(f"the bot's output is kept in {session.log_path}")
        elif not given:
            shutil.rmtree(log_dir, ignore_errors=True)
    return report


async def replay_command(
    log_path: Path,
    seat: int,
    bot: BotSpec | Submission,
    *,
    as_json: bool = False,
    every: bool = False,
    startup_timeout_ms: int = Timing.startup_timeout_ms,
    log_dir: Path | None = None,
) -> int:
    """``referee replay-to``: build the bot if it is a submission folder, replay the game to it, print the
    report (as JSON, ``as_json``: the progress goes to stderr); return the exit status (0: no answer differs)."""
    out = sys.stderr if as_json else sys.stdout
    if isinstance(bot, Submission):
        built = await build_bot(bot, Report(out))
        if built is None:
            return 1
        bot = built
    report = await replay_to(
        log_path, seat, bot, startup_timeout_ms=startup_timeout_ms, log_dir=log_dir, out=out, every=every
    )
    if as_json:
        print(json.dumps(report.json(bot.describe()), indent=2))
    return 1 if report.problem or report.differences else 0


async def _play(
    start: dict[str, Any],
    records: list[dict[str, Any]],
    decisions: dict[int, Recorded],
    start_faults: dict[int, dict[str, Any]],
    seat: int,
    session: BotSession,
    report: ReplayReport,
) -> None:
    """Play the recorded game again through Match, the replayed seat's messages to ``session``."""
    players = list(start["players"])
    by_seat: list[dict[int, Recorded]] = [{} for _ in players]
    owner = {
        record["n"]: record["seat"]
        for record in records
        if record["type"] in ("decision", "fault") and record.get("n") is not None
    }
    for number, done in decisions.items():
        by_seat[owner[number]][number] = done
    replayed = _ReplayedSeat(players[seat], by_seat[seat], session)
    seats: list[Player | BotFault] = [
        BotFault(FaultKind(start_faults[index]["kind"]), start_faults[index]["detail"], name)
        if index in start_faults
        else replayed
        if index == seat
        else _RecordedSeat(name, by_seat[index])
        for index, name in enumerate(players)
    ]
    policy = FaultPolicy(PolicyMode(start["policy"]["mode"]), start["policy"]["max_faults"])
    match = Match(
        start["game"],
        seats,
        seed=start["seed"],
        game_id=start["game_id"],
        timing=Timing(**start["timing"]),
        turn_limit=start["turn_limit"],
        policy=policy,
        first_dealer=start["first_dealer"],
        decks=[parse_cards(deck) for deck in start["decks"]] if start["decks"] else None,
        players=players,
    )
    replayed.game = match.game
    await match.play()
    report.answers = replayed.answers


def _records(log_path: Path) -> list[dict[str, Any]]:
    records = read_game_log(log_path)
    if not records or records[0].get("type") != "game_start":
        raise ReplayError(f"{log_path}: not a game log: it does not start with a game_start record")
    problems = verify_log(log_path)
    if problems:
        raise ReplayError(
            f"{log_path}: the log does not replay through the rules engine, so it cannot be replayed "
            f"to a bot: {problems[0]}"
        )
    return records


def _described(start: dict[str, Any], seat: int) -> str:
    """`` (NAME VERSION)``: what the recorded bot said of itself in its handshake, if the log has it."""
    described = (start.get("bots") or [None] * start["num_players"])[seat]
    return f" ({described['name']} {described['version']})" if described else ""


def _summary(report: ReplayReport) -> str:
    count = len(report.answers)
    made = f"seat {report.seat} made {count} decision{'' if count == 1 else 's'}"
    differences = report.differences
    if not differences:
        return f"{made}: the bot answered every one as recorded"
    first = differences[0]
    return f"{made}: {len(differences)} answered otherwise than recorded; the first: {first.line()}"
