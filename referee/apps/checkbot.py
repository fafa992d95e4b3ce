"""``referee check-bot``: test a bot the way a league will play it, before it is submitted.

The bot is a submission folder (``DIR``, with its ``bot.yaml``), built as a
league builds it: copied, built in the copy with the manifest's ``build``,
and run from the copy in its sandbox (:mod:`referee.leaguefile.submissions`; the build
is kept in a cache and reused while the folder is unchanged). Or it is a
command (``-- CMD``). It is started once for each game it says it plays and
each table size of that game (Stop the Bus 2 to 9 seats, Bastard Brag 3 to
10), and plays several games in a row in that one process, as a league
reuses a process, under a default league's clock and fault policy (or
``--fault-policy``). Its opponents are the sample bots, run inside the
referee (:mod:`referee.play.inprocess`: they ship with it, so nothing but the bot
under test needs to be installed), or the bots ``--opponent`` names (``self``:
more processes of the bot under test, whose faults are its own; a sample
bot's name, such as ``search``: that sample bot, inside the referee).

Every check has a verdict (:class:`Check`): the manifest, the build, the
handshake, each game, and each problem found in it with the decision it
concerns. Problems are a manifest or build that fails, a start-up or
handshake fault, every fault, every forfeit (with the bot's last output
lines; a forfeit a fault caused is said with the fault), every slow decision
(charged over half the move time by the honest clock, which does not count
the time the bot waited for a CPU or the referee ran late; a decision that
faulted is a fault, not also a slow decision) and slow handling of the
messages between decisions (a game's start or end). Found in several games,
a problem is one line saying in how many, the first kept whole
(:meth:`Report.lines`). The exit status is 1 when there is any. ``--json``
prints the opponents, those lines and every check as JSON, for a CI job.

The game logs and the bot's output go to ``--logs DIR``; without it, to a
temporary folder that is kept (and named) when a problem is found, and
removed otherwise, so every path a problem names exists.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from referee.apps.check_report import FAIL, NOTE, PASS, SKIP, Check, Report
from referee.common.errors import LeagueError
from referee.common.printable import printable, printable_line
from referee.common.resources import SAMPLE_OPPONENTS
from referee.engine.games import GAMES
from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.play.inprocess import InProcessBot, sample_bot, sample_opponents
from referee.play.match import Match, stop_bots
from referee.play.processes import BotSpec, log_tail, output_hint
from referee.play.sandbox import DEFAULT_LIMITS
from referee.play.session import BotSession, Player
from referee.protocol.clock import Timing
from referee.protocol.faults import BotFault, FaultPolicy
from referee.protocol.messages import GAME_FROM_PB, GAME_NOTE_BYTES, NOTE_BYTES, PROTOCOL_VERSION
from referee.protocol.setup import GameSetup
from referee.records.gamelog import read_log
from referee.records.notes import GameNotes, notes_beside

CANDIDATE = "candidate"
SELF = "self"  # --opponent self: another process of the bot under test
SLOW_FRACTION = 0.5  # a decision over half the move time is reported as slow
NOTE_SHOWN = 100  # characters of the first note a game's line shows (the rest are in its notes file)
# The first decision after a game starts carries the handling of the game's start (and the previous
# game's end): reported when it takes this much longer than the bot's usual decision, the 90th percentile
# of the others (USUAL_SHARE).
SLOW_MESSAGES_MS = 100.0
USUAL_SHARE = 0.9
# Slow handling of a game's start is in every game's first decision, a pause of the machine (another program, the
# bot's runtime collecting its garbage) in one: so the fastest first decision is weighed, and with one game at a table
# size, one sample that could be either, it must be this many times the margin.
ONE_SAMPLE_FACTOR = 3
BUILD_TIMEOUT_S = 300.0  # a league's default build_timeout_s


@dataclass(frozen=True)
class Submission:
    """A submission folder to check: read its bot.yaml, build it (or reuse the cached build), run it from the copy."""

    folder: str  # as given
    bot: Mapping[str, Any]  # the BotSpec fields the command line sets: transport, sandbox, network, shared
    cache: Path  # where builds are kept between checks
    build_timeout_s: float = BUILD_TIMEOUT_S


@dataclass(frozen=True)
class CheckSettings:
    """How the bot is checked: games per table size, the seed, the clock, the policy, what to cover, the opponents."""

    games_per_size: int = 2
    seed: int = 1
    timing: Timing = Timing()
    turn_limit: int = DEFAULT_TURN_LIMIT
    policy: FaultPolicy = FaultPolicy()
    games: tuple[str, ...] = ()  # empty: every game the bot plays
    seats: tuple[int, ...] = ()  # empty: every table size
    # Commands to start, submission folders to build, or SELF; empty: the sample bots, in process.
    opponents: tuple[BotSpec | Submission | str, ...] = ()


# ----- the check ---------------------------------------------------------------------------------


async def check_bot(
    bot: BotSpec | Submission, settings: CheckSettings, log_dir: Path | None, as_json: bool = False
) -> int:
    """Check the bot; print what happens and the problems (or, ``as_json``, the JSON report); return the exit
    status (0: no problem)."""
    report = Report(sys.stderr if as_json else sys.stdout)
    given = log_dir is not None
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="check-bot-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    described = bot.folder if isinstance(bot, Submission) else bot.describe()
    try:
        report.say(f"checking {described}")
        candidate = await build_bot(bot, report) if isinstance(bot, Submission) else bot
        if candidate is not None:
            opponents = await _opponents(settings.opponents, report)
            if opponents is not None:
                await _check(candidate, dataclasses.replace(settings, opponents=opponents), log_dir, report)
    finally:
        kept = given or (bool(report.problems) and any(log_dir.iterdir()))  # an empty folder tells nothing
        if kept:
            report.say(f"the game logs and the bot's output are kept in {log_dir}")
        else:
            shutil.rmtree(log_dir, ignore_errors=True)
    status = report.summary()
    if as_json:
        print(json.dumps(report.json(described, log_dir if kept else None), indent=2))
    return status


async def build_bot(submission: Submission, report: Report) -> BotSpec | None:
    """The bot of a submission folder, built as a league builds it; None (and the problem reported) if it cannot be."""
    from referee.leaguefile.config import LeagueBot, load_submission
    from referee.leaguefile.submissions import build_submission, run_from

    try:
        manifest = load_submission(submission.folder)
    except LeagueError as error:
        print(error, file=sys.stderr)  # the one line a bad league file gets, on stderr as it would be
        report.problem(str(error), Check("manifest", FAIL, str(error)))
        return None
    report.add(Check("manifest", PASS, f"{manifest.manifest}: {manifest.name} {manifest.version}"))
    spec = BotSpec(
        name=manifest.name,
        command=manifest.run,
        cwd=str(manifest.folder),
        limits=DEFAULT_LIMITS,
        folders=(str(manifest.folder),),
        **submission.bot,
    )
    league_bot = LeagueBot(spec=spec, submission=manifest, declared_at=manifest.manifest, written={})
    # One build cache per submission folder, named for the folder, so two folders of one name never share a build.
    output = submission.cache / f"{manifest.name}-{_short_digest(str(manifest.folder))}"
    if manifest.build is not None:
        report.say(
            f"build: {manifest.build}, in a copy under {output} (the last build stands while the folder is unchanged)"
        )
    result, copy = await build_submission(
        league_bot, output, output / "logs", submission.build_timeout_s, rebuild_changed=True
    )
    facts = {"reused": result.reused, "copy": str(copy)}
    if not result.ok:
        report.problem(f"build: {result.message}", Check("build", FAIL, result.message, facts=facts))
        return None
    report.say(f"build ok: {result.message}")
    report.add(Check("build", PASS, result.message, facts=facts))
    return dataclasses.replace(run_from(league_bot, copy).spec, name=CANDIDATE)


async def _opponents(given: tuple[BotSpec | Submission | str, ...], report: Report) -> tuple[BotSpec | str, ...] | None:
    """The opponents to play, submission folders built, each named in the report; None if one cannot be built."""
    if not given:
        report.opponents = [f"{name} (the sample bot, in the referee)" for name in SAMPLE_OPPONENTS]
        report.say(f"opponents: the sample bots {' and '.join(SAMPLE_OPPONENTS)}, in turn, inside the referee")
        return ()
    opponents: list[BotSpec | str] = []
    for opponent in given:
        if isinstance(opponent, Submission):
            built = await build_bot(opponent, Report(io.StringIO()))  # its build's words are not the bot's
            if built is None:
                text = f"opponent {opponent.folder} could not be built (referee check-bot {opponent.folder} says why)"
                report.problem(text, Check("opponent", FAIL, text))
                return None
            opponents.append(dataclasses.replace(built, name=Path(opponent.folder).resolve().name))
            report.opponents.append(f"{opponent.folder} (a submission folder, built)")
        else:
            opponents.append(opponent)
            if isinstance(opponent, BotSpec):
                report.opponents.append(opponent.describe())
            elif opponent == SELF:
                report.opponents.append(f"{SELF} (another process of the bot)")
            else:
                report.opponents.append(f"{opponent} (the sample bot, in the referee)")
    report.say("opponents, the seats taking them in turn: " + "; ".join(report.opponents))
    return tuple(opponents)


async def check_built(candidate: BotSpec, settings: CheckSettings, log_dir: Path, out: TextIO) -> Report:
    """Check a bot already built (a ladder's new version), saying what happens to ``out``; return every check."""
    report = Report(out)
    await _check(candidate, settings, log_dir, report)
    return report


def _short_digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


async def _check(candidate: BotSpec, settings: CheckSettings, log_dir: Path, report: Report) -> None:
    declared = await _handshake(candidate, settings, log_dir / "handshake.log", report)
    if declared is None:
        report.say("nothing more is checked until the bot starts and answers the handshake")
        return
    for game_name in sorted(GAMES):
        if settings.games and game_name not in settings.games:
            continue
        if game_name not in declared:
            report.say(f"- {game_name}: the bot's handshake does not list it; skipped")
            report.add(Check("game", SKIP, "the bot's handshake does not list it", game=game_name))
            continue
        game = GAMES[game_name]
        for seats in range(game.min_players, game.max_players + 1):
            if settings.seats and seats not in settings.seats:
                continue
            await _Table(candidate, settings, game_name, seats, log_dir, report).check()


async def _handshake(candidate: BotSpec, settings: CheckSettings, log_path: Path, report: Report) -> set[str] | None:
    """Start the bot once and handshake; return the games it plays (None after a start-up or handshake fault)."""
    bot = BotSession(candidate, log_path)
    fault = None
    try:
        await bot.start(GameSetup("stop_the_bus", 3, settings.timing, settings.turn_limit))
    except BotFault as error:
        fault = error
    finally:
        await bot.stop()
    response = bot.handshake_response
    if response is not None and PROTOCOL_VERSION in response.protocol_versions:
        by = f" by {response.author}" if response.author else ""
        report.say(printable(f"handshake ok: {response.name or '(no name)'} {response.version}{by}"))
        games = {GAME_FROM_PB[game] for game in response.games if game in GAME_FROM_PB}
        facts = {"name": response.name, "version": response.version, "author": response.author, "games": sorted(games)}
        if not games:
            text = "the handshake lists no game the referee runs (GAME_STOP_THE_BUS, GAME_BASTARD_BRAG)"
            report.problem(text, Check("handshake", FAIL, text, facts=facts))
            return None
        report.add(Check("handshake", PASS, f"{response.name} {response.version}{by}", facts=facts))
        return games
    kind = fault.kind.value if fault is not None else "handshake"
    detail = fault.detail if fault is not None else "no handshake reply"
    report.problem(
        f"{kind}: {detail}", Check(kind, FAIL, detail, facts={"log": str(log_path)}), particulars=log_tail(log_path)
    )
    return None


class _Table:
    """``games_per_size`` games at one table size in one process of the bot, its seat rotating."""

    def __init__(
        self, candidate: BotSpec, settings: CheckSettings, game: str, seats: int, log_dir: Path, report: Report
    ) -> None:
        self.candidate = candidate
        self.settings = settings
        self.game = game
        self.seats = seats
        self.log_dir = log_dir
        self.report = report
        self.setup = GameSetup(game, seats, settings.timing, settings.turn_limit)
        self.label = f"{game} at {seats} seats"
        self.bot: BotSession | None = None
        self.processes = 0
        # The opponents given (--opponent), one per seat, cycling; SELF is another process of the candidate.
        given = settings.opponents
        self.opponent_specs = (
            [self._opponent(given[index % len(given)], index) for index in range(seats - 1)] if given else []
        )
        # A sample bot named as an opponent plays inside the referee: it is there from the start, never restarted.
        self.opponents: list[BotSession | InProcessBot | BotFault | None] = [
            spec if isinstance(spec, InProcessBot) else None for spec in self.opponent_specs
        ]
        self.opponent_processes = [0] * len(self.opponent_specs)
        self.first_decisions: list[float] = []
        self.other_decisions: list[float] = []

    def _opponent(self, given: BotSpec | Submission | str, index: int) -> BotSpec | InProcessBot:
        assert not isinstance(given, Submission)  # built by _opponents() before any table is checked
        if given == SELF:
            return dataclasses.replace(self.candidate, name=f"{SELF}-{index + 1}")
        if isinstance(given, str):  # a sample bot's name
            return sample_bot(given, f"{given}-{index + 1}")
        return dataclasses.replace(given, name=f"{given.name}-{index + 1}")

    def _is_self(self, name: str) -> bool:
        return name.startswith(f"{SELF}-")

    def _own(self, fault: dict[str, Any], seat: int) -> bool:
        """Whether a fault of the game's log is the bot's own: at its seat, or of a copy of it (--opponent self)."""
        return bool(fault["seat"] == seat or self._is_self(fault["bot"]))

    async def check(self) -> None:
        try:
            for number in range(self.settings.games_per_size):
                if not await self._ready():
                    return
                await self._play(number)
        finally:
            await stop_bots([bot for bot in (self.bot, *self.opponents) if isinstance(bot, BotSession)])
        self._slow_messages()

    async def _ready(self) -> bool:
        """Start the bot (again, if its last game left it unusable) and the opponents given; False on a problem."""
        if self.bot is None or not self.bot.usable:
            if self.bot is not None:
                await self.bot.stop()
            self.processes += 1
            # Named for the process, which plays several games in a row: the games' lines say which it is.
            log_path = self.log_dir / f"{self.game}-{self.seats}-process-{self.processes}.log"
            # Every decision on the honest clock: a decision is slow here at half its move time, and a machine
            # busy with other work must not make the bot look slow (a pause of 600 ms once failed a bot
            # answering in 8 ms, while a test suite ran on every core).
            self.bot = BotSession(self.candidate, log_path, charge_every_decision=True)
            try:
                await self.bot.start(self.setup)
            except BotFault as fault:
                self.bot = None
                detail, hint = _without_output_hint(fault.detail, log_path)
                self.report.problem(
                    f"{fault.kind.value}: {detail}",
                    Check(
                        fault.kind.value,
                        FAIL,
                        fault.detail,
                        game=self.game,
                        seats=self.seats,
                        facts={"log": str(log_path)},
                    ),
                    where=self.label,
                    particulars=hint + log_tail(log_path),
                )
                return False
        if not self.opponent_specs:
            return True
        # Opponents given on the command line: started once for the table, again after a game that left one unusable.
        restart = [
            index
            for index, bot in enumerate(self.opponents)
            if not (isinstance(bot, InProcessBot) or (isinstance(bot, BotSession) and bot.usable))
        ]
        await stop_bots([bot for index in restart if isinstance(bot := self.opponents[index], BotSession)])
        started = await asyncio.gather(*(self._start_opponent(index) for index in restart))
        for index, bot in zip(restart, started, strict=True):
            self.opponents[index] = bot
        failed = [bot for bot in self.opponents if isinstance(bot, BotFault)]
        if failed:
            text = "; ".join(f"{fault.bot}: {fault.kind.value}: {fault.detail}" for fault in failed)
            self.report.problem(
                f"an opponent could not start, so the table is not checked: {text}",
                Check("opponent", FAIL, text, game=self.game, seats=self.seats),
                where=self.label,
            )
            return False
        return True

    async def _start_opponent(self, index: int) -> BotSession | BotFault:
        spec = self.opponent_specs[index]
        assert isinstance(spec, BotSpec)  # sample bots in the referee are never started
        self.opponent_processes[index] += 1
        log_path = self.log_dir / f"{self.game}-{self.seats}-{spec.name}-{self.opponent_processes[index]}.log"
        bot = BotSession(spec, log_path)
        try:
            await bot.start(self.setup)
        except BotFault as fault:
            return BotFault(fault.kind, fault.detail + log_tail(log_path), spec.name)
        return bot

    async def _play(self, number: int) -> None:
        settings, seats, bot = self.settings, self.seats, self.bot
        assert bot is not None  # started by _ready() before each game
        seat = (number + seats // 2) % seats
        players: list[Player | BotFault] = (
            [opponent for opponent in self.opponents if opponent is not None]
            if self.opponent_specs
            else list(sample_opponents(seats - 1))
        )
        players.insert(seat, bot)
        seed = settings.seed + 1000 * seats + number
        game_id = f"check-{self.game}-{seats}-{number + 1}"
        game_log = self.log_dir / f"{game_id}.jsonl"
        match = Match(
            self.game,
            players,
            seed=seed,
            game_id=game_id,
            timing=settings.timing,
            turn_limit=settings.turn_limit,
            policy=settings.policy,
            log_path=game_log,
            notes_path=notes_beside(game_log),
            players=[
                CANDIDATE if player is bot else player.bot if isinstance(player, BotFault) else player.name
                for player in players
            ],
        )
        result = await match.play()
        records = read_log(game_log)
        answered = [
            record
            for record in records
            if record["type"] == "decision" and record["seat"] == seat and not record.get("default")
        ]
        times = [record["ms"] for record in answered]
        game_label = f"{self.label}, game {number + 1} (seat {seat}, seed {seed})"
        where: dict[str, Any] = {"game": self.game, "seats": seats, "game_id": game_id, "seat": seat}
        game_check = self.report.add(
            Check(
                "game",
                PASS,
                "",
                **where,
                facts={
                    "seed": seed,
                    "placed": result.place_of(seat),
                    "decisions": len(result.latencies_ms[seat]),
                    "slowest_ms": max(times, default=0.0),
                    "log": str(game_log),
                },
            )
        )
        self.report.games += 1
        decisions = len(result.latencies_ms[seat])
        timed = f", slowest {max(times):.1f} ms" if times else (", none answered" if decisions else "")
        forfeit = str(result.forfeits[seat]) if seat in result.forfeits else None
        limit = settings.timing.move_time_ms * SLOW_FRACTION
        slow = [record for record in answered if record["ms"] > limit]
        own = [record for record in records if record["type"] == "fault" and self._own(record, seat)]
        failed = _what_failed(own, forfeit, len(slow))
        self.report.say(
            f"- {game_label}: {f'FAILED ({failed}): ' if failed else ''}placed {result.place_of(seat)} of {seats}, "
            f"{decisions} decision{'' if decisions == 1 else 's'}{timed}"
        )
        self._say_notes(match.notes, seat)
        problems = len(self.report.problems)
        told = self._faults(records, seat, game_label, where, forfeit, bot.log_path)
        if forfeit is not None:
            check = Check("forfeit", FAIL, forfeit, **where, facts={"log": str(bot.log_path)})
            if told:  # the fault that cost the game is the problem: the forfeit is said with it, not again
                self.report.add(check)
            else:
                self.report.problem(
                    f"forfeited the game: {forfeit}",
                    check,
                    where=game_label,
                    particulars=log_tail(bot.log_path),
                    in_a_game=True,
                )
        if slow:
            self.report.problem(
                f"{len(slow)} slow decision{'' if len(slow) == 1 else 's'} (over half the "
                f"{settings.timing.move_time_ms} ms move time; slowest {max(r['ms'] for r in slow):.0f} ms)",
                *(
                    Check(
                        "slow decision",
                        FAIL,
                        f"{record['ms']:.0f} ms",
                        **where,
                        decision=record["n"],
                        facts={"ms": record["ms"]},
                    )
                    for record in slow
                ),
                where=game_label,
                in_a_game=True,
            )
        if len(self.report.problems) > problems:
            game_check.verdict = FAIL
        if times:
            self.first_decisions.append(times[0])
            self.other_decisions.extend(times[1:])

    def _say_notes(self, notes: GameNotes, seat: int) -> None:
        """Say what the bot noted in the game (its notes are for its author: check-bot's reader), if anything."""
        own = [(n, text) for n, noted_seat, text in notes.notes if noted_seat == seat]
        counts = notes.seats[seat]
        if not own:
            return
        capped = [f"{counts.cut} cut at {NOTE_BYTES} bytes"] if counts.cut else []
        if counts.dropped:
            capped.append(f"{counts.dropped} past the game's {GAME_NOTE_BYTES // 1024} KB, not kept")
        first_n, first = own[0]
        first = printable_line(first)
        shown = first if len(first) <= NOTE_SHOWN else first[: NOTE_SHOWN - 1] + "…"
        caps = f" ({'; '.join(capped)})" if capped else ""
        where = notes_beside(self.log_dir / f"{notes.game_id}.jsonl")
        self.report.say(f"  notes: {len(own)}{caps}; on decision {first_n}: {shown!r} (all in {where})")

    def _faults(
        self,
        records: list[dict[str, Any]],
        seat: int,
        game_label: str,
        where: dict[str, Any],
        forfeit: str | None,
        log_path: Path | None,
    ) -> bool:
        """Report the bot's faults in a game (and its copies', under --opponent self); note the other opponents'.
        Return whether one of them is what ``forfeit`` (the bot's forfeit of the game, if any) was for."""
        faults = [record for record in records if record["type"] == "fault"]
        own = [record for record in faults if self._own(record, seat)]
        told = False
        for kind in sorted({record["kind"] for record in own}):
            of_kind = [record for record in own if record["kind"] == kind]
            hints: list[str] = []
            details: list[str] = []
            for record in of_kind:
                detail, hint = _without_output_hint(record["detail"], log_path)
                hints.append(hint)
                as_opponent = "" if record["seat"] == seat else f" (as opponent {record['bot']}, seat {record['seat']})"
                details.append(detail + as_opponent)
            cost = ""
            if forfeit is not None and not told and forfeit.startswith(f"{kind}:"):
                cost, told = "; the bot forfeited the game", True
            self.report.problem(
                f"{len(of_kind)} {kind} fault{'s' if len(of_kind) > 1 else ''}: {'; '.join(details)}{cost}",
                *(
                    Check(
                        "fault",
                        FAIL,
                        record["detail"],
                        **{**where, "seat": record["seat"]},
                        decision=record["n"],
                        facts={"kind": kind, "bot": record["bot"]},
                    )
                    for record in of_kind
                ),
                where=game_label,
                in_a_game=True,
                particulars=next(filter(None, hints), "") + (log_tail(log_path) if cost else ""),
            )
        for record in faults:
            if record not in own:
                text = f"{record['bot']} (seat {record['seat']}): {record['kind']}: {record['detail']}"
                self.report.say(f"  note: an opponent faulted, which is not a problem of the bot checked: {text}")
                self.report.add(
                    Check(
                        "opponent fault",
                        NOTE,
                        record["detail"],
                        **{**where, "seat": record["seat"]},
                        decision=record["n"],
                        facts={"kind": record["kind"], "bot": record["bot"]},
                    )
                )
        return told

    def _slow_messages(self) -> None:
        if not (self.first_decisions and self.other_decisions):
            return
        # Against the slow end of the other decisions, not their middle: a bot that thinks long on some decisions
        # (a search, sure of most choices at once) is not slow with its messages for thinking long on a first one.
        others = sorted(self.other_decisions)
        usual = others[min(len(others) - 1, int(USUAL_SHARE * len(others)))]
        first = min(self.first_decisions)
        margin = SLOW_MESSAGES_MS * (ONE_SAMPLE_FACTOR if len(self.first_decisions) == 1 else 1)
        if first - usual > margin:
            games = len(self.first_decisions)
            detail = (
                f"the first decision of a game (after its game_start, and the previous game's game_end) took "
                f"{first:.0f} ms{f' or more in each of {games} games' if games > 1 else ''}, when 9 in 10 of the "
                f"others took at most {usual:.1f} ms; do the work of a game's start or end faster, as it is charged "
                "to the first decision"
            )
            self.report.problem(
                f"slow handling of the messages between decisions: {detail}",
                Check("slow messages", FAIL, detail, game=self.game, seats=self.seats),
                where=self.label,
            )


def _what_failed(own: list[dict[str, Any]], forfeit: str | None, slow: int) -> str:
    """What went wrong for the bot in one game, for its line (empty: nothing): its faults by kind, each with the
    decision of the first, the forfeit, the slow decisions."""
    found = []
    kinds = list(dict.fromkeys(record["kind"] for record in own))  # in the order first met
    for kind in kinds:
        of_kind = [record for record in own if record["kind"] == kind]
        first = of_kind[0]["n"]
        found.append(
            f"a {kind} fault at decision {first}"
            if len(of_kind) == 1
            else f"{len(of_kind)} {kind} faults, the first at decision {first}"
        )
    if forfeit is not None:
        cost = any(forfeit.startswith(f"{kind}:") for kind in kinds)
        found.append("which forfeited the game" if cost else f"forfeited the game: {forfeit}")
    if slow:
        found.append(f"{slow} slow decision{'' if slow == 1 else 's'}")
    return ", ".join(found)


def _without_output_hint(detail: str, log_path: Path | None) -> tuple[str, str]:
    """``detail`` without the `` (its output is in PATH)`` that ends it for ``log_path``, and that hint apart: the
    same fault reads the same in every game, its output's place told once."""
    hint = output_hint(log_path)
    if hint and hint in detail:
        return detail.replace(hint, ""), hint
    return detail, ""


def default_cache() -> Path:
    """Where check-bot keeps its builds of submission folders: ``$XDG_CACHE_HOME/referee/check-bot``."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "referee" / "check-bot"
