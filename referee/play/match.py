"""One game, end to end: drive the engine, ask the bots, apply the fault policy, log everything.

A :class:`Match` plays one game between bots that are already started (their
:class:`referee.play.session.BotSession`), or that failed to start (their
:class:`referee.protocol.faults.BotFault`: such a seat forfeits at once). Every fact a
bot may know reaches it on its stream in order: the game start, each
decision request with the public events since its last message, a notice of
each of its own faults, and the game's end with the events it has not yet
seen. The game log (:mod:`referee.records.gamelog`) is written when the game ends.

A game in which fewer than two bots ever got to make a decision is *void*:
it is recorded, with the reason, but rates nobody.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from referee.common.printable import printable
from referee.engine.cards import Card
from referee.engine.games import Game, HandResult, StopTheBus, game_class
from referee.engine.games.game import DEFAULT_TURN_LIMIT, Action, ActionKind
from referee.engine.seeding import derive_seed
from referee.play.processes import BotSpec
from referee.play.session import BotSession, Player, Reply
from referee.protocol.clock import TimeControl, Timing
from referee.protocol.codec import RequestEncoder
from referee.protocol.faults import BotFault, FaultKind, FaultPolicy, Forfeit, PolicyMode
from referee.protocol.messages import fault_notice, game_start
from referee.protocol.setup import GameSetup
from referee.records.gamelog import GameLog, action_text, deal_record_of, deal_state, game_start_record, hand_record
from referee.records.notes import GameNotes

if TYPE_CHECKING:
    from referee.v2 import bot_pb2 as pb


@dataclass
class MatchResult:
    """What one game produced, for reports and leaderboards."""

    game_id: str
    game: str
    seed: int
    players: list[str]  # bot name by seat
    placements: list[int]  # seats, first to last
    hands_played: int
    decisions: int
    faults: list[Counter[FaultKind]]  # by seat: fault kind -> count
    forfeits: dict[int, Forfeit]  # seat -> why it left the game
    latencies_ms: list[list[float]]  # by seat: every decision's charged time
    hand_results: list[HandResult] = field(repr=False, default_factory=list)
    void_reason: str | None = None  # set when the game does not count

    @property
    def void(self) -> bool:
        return self.void_reason is not None

    def place_of(self, seat: int) -> int:
        return self.placements.index(seat) + 1


def bot_random_seed(game_seed: int, seat: int) -> int:
    """The seed a seat's bot is given for its own randomness: one-way from the game's seed, so it tells
    nothing about the deal, and the same in every replay of the game."""
    return derive_seed(game_seed, "bot-random", seat)


class Match:
    """Plays one game between bots that are already started (or failed to start)."""

    def __init__(
        self,
        game_name: str,
        bots: Sequence[Player | BotFault],
        *,
        seed: int,
        game_id: str,
        timing: Timing = Timing(),
        turn_limit: int = DEFAULT_TURN_LIMIT,
        policy: FaultPolicy = FaultPolicy(),
        log_path: Path | None = None,
        first_dealer: int | None = None,
        decks: Sequence[Sequence[Card]] | None = None,
        players: Sequence[str] | None = None,
        observer: Callable[[dict[str, Any]], None] | None = None,
        notes_path: Path | None = None,
    ) -> None:
        self.game: Game = game_class(game_name)(
            len(bots), seed, first_dealer=first_dealer, decks=decks, turn_limit=turn_limit
        )
        self.bots = list(bots)
        self.seed = seed
        self.game_id = game_id
        self.timing = timing
        self.policy = policy
        self.players = list(players) if players else [_bot_name(bot) for bot in bots]
        n = len(bots)
        self.faults: list[Counter[FaultKind]] = [Counter() for _ in range(n)]
        self.forfeits: dict[int, Forfeit] = {}
        self.latencies: list[list[float]] = [[] for _ in range(n)]
        self.clocks = [TimeControl.of(timing) for _ in range(n)]
        self.asked = [False] * n  # whether each seat ever got to make a decision
        self.decisions = 0
        self._events_sent = [0] * n
        self._unannounced: list[int] = []  # seats whose bot has not yet been sent the GameStart
        self._hands_logged = 0
        self._hand_logged = 0  # the last hand whose deal is logged
        self._encoder = RequestEncoder(self.game, game_id)
        self._default_policy = policy.mode is PolicyMode.DEFAULT_ACTION
        # observer: shown each log record as it is made (referee play --verbose); None costs nothing.
        self.log = GameLog(log_path, observer)
        # The bots' private notes, apart from the log (referee.records.notes); written only where notes_path is given.
        self.notes = GameNotes(game_id, self.players)
        self._notes_path = notes_path
        start = game_start_record(
            game=self.game, game_id=game_id, players=self.players, timing=timing, policy=policy, decks=decks
        )
        start["bots"] = [_self_description(bot) for bot in self.bots]  # each bot's own name and version
        self.log.write(start)
        self._log_progress()
        # Where each bot's output stood as the game began, so that its author can be shown what it wrote in it.
        self._output_from = [
            bot.process.output_lines if isinstance(bot, BotSession) and bot.log_path is not None else None
            for bot in self.bots
        ]

    async def play(self) -> MatchResult:
        """Play the game to the end and return its result; never raises because of a bot."""
        game = self.game
        finished = False
        loop = asyncio.get_running_loop()
        # The log's file is made in a worker thread while the game is played (creating a file can take
        # longer than a decision); at the end its lines are formatted here and compressed and written in a
        # thread. No notice is waited for: each goes out before its seat's next message.
        preparing = loop.run_in_executor(None, self.log.prepare)
        preparing.add_done_callback(_retrieve)
        try:
            for seat, bot in enumerate(self.bots):
                if isinstance(bot, BotFault):
                    # Every failure is counted; once one seat is left the game is over and it cannot forfeit.
                    self._record_fault(seat, bot)
                    if not game.is_over:
                        self._forfeit(seat, Forfeit.of(bot))
            # Each seat is sent its GameStart before its first decision; the others while the first seat thinks
            # (see _while_waiting), so that their bots taking the news do not hold up its first decision.
            self._unannounced = [seat for seat, _ in self._sessions() if seat not in self.forfeits]
            while not game.is_over:
                await self._decision()
            result = game.result()
            void_reason = self._void_reason()
            record = {
                "type": "game_end",
                "at": round(time.time(), 3),
                "placements": list(result.placements),
                "hands_played": result.hands_played,
                "decisions": self.decisions,
                "faults": [{kind.value: count for kind, count in counter.items()} for counter in self.faults],
            }
            if void_reason:
                record["void"] = True
                record["void_reason"] = void_reason
            output = self._output_lines()
            if any(output):
                record["output"] = output
            self.log.write(record)
            await preparing  # a folder the log cannot be made in fails the game here, as closing would
            self._announce_all()  # a seat never asked learns of the game before its end
            for seat, bot in self._sessions():
                bot.game_end(self._game_end(seat, void_reason))
            self.log.catch_up()
            # Compressing the log (referee.records.gamelog) takes about half a millisecond, which the other games' decisions
            # would wait for on this loop: a worker thread does it, the compressor letting go of Python's lock.
            await loop.run_in_executor(None, self.log.close)
            if self._notes_path is not None and self.notes:
                await loop.run_in_executor(None, self.notes.write, self._notes_path)
            finished = True
        finally:
            if not finished:
                self.log.discard()  # cancelled, or the log could not be written: the game will be played again
        return MatchResult(
            game_id=self.game_id,
            game=game.name,
            seed=self.seed,
            players=self.players,
            placements=list(result.placements),
            hands_played=result.hands_played,
            decisions=self.decisions,
            faults=self.faults,
            forfeits=self.forfeits,
            latencies_ms=self.latencies,
            hand_results=list(game.hand_results),
            void_reason=void_reason,
        )

    def _output_lines(self) -> list[dict[str, Any] | None]:
        """By seat: the bot's output file (in the league's ``logs/``) and the lines of it received during the game."""
        output: list[dict[str, Any] | None] = []
        for bot, first in zip(self.bots, self._output_from, strict=True):
            if first is None or not isinstance(bot, BotSession) or bot.log_path is None:
                output.append(None)
            else:
                output.append({"log": bot.log_path.name, "lines": [first, bot.process.output_lines]})
        return output

    def _sessions(self) -> list[tuple[int, Player]]:
        """The seats whose bot started, with its session."""
        return [(seat, bot) for seat, bot in enumerate(self.bots) if not isinstance(bot, BotFault)]

    def _void_reason(self) -> str | None:
        asked = sum(self.asked)
        if asked >= 2:
            return None
        failed = [
            f"{self.players[seat]} ({self.forfeits[seat]})"
            for seat in range(len(self.bots))
            if not self.asked[seat] and seat in self.forfeits
        ]
        who = "no bot" if asked == 0 else "only one bot"
        return f"{who} got to make a decision" + (f"; {'; '.join(failed)}" if failed else "")

    # ----- one decision: the hot path ----------------------------------------------

    async def _decision(self) -> None:
        game = self.game
        seat = game.current_seat
        assert seat is not None  # asked only while the game is on
        bot = self.bots[seat]
        assert not isinstance(bot, BotFault)  # a bot that failed to start forfeited before the first decision
        self.asked[seat] = True
        self.decisions += 1
        number = self.decisions
        hand = game.hand_number
        if self._unannounced:
            self._announce(seat)
        legal = game.legal_actions()
        holding = tuple(game.hands[seat])
        fallback = game.default_action() if self._default_policy else None
        clock = self.clocks[seat]
        # What the seat is shown is Game.observation(seat), encoded straight from the game (see RequestEncoder).
        request = self._encoder.request(number, clock, self._events_sent[seat], fallback)
        self._events_sent[seat] = len(game.events)
        reply = await bot.decide(request, number, clock, self._while_waiting)
        if reply.note:
            self.notes.take(number, seat, reply.note)
        clock.spend(reply.charged_ms)
        self.latencies[seat].append(reply.charged_ms)
        chosen = reply.action
        if chosen is None or chosen not in legal:
            fault = reply.fault if chosen is None else illegal_action_fault(game, chosen, legal, bot.name)
            assert fault is not None  # a reply without an action carries its fault
            self._fault(seat, bot, fault, number, holding, legal, fallback, reply)
            return
        game.apply(chosen)
        drew = _drawn(game) if chosen.kind is ActionKind.DRAW else None
        self.log.decision(number, hand, seat, holding, legal, chosen, reply.charged_ms, reply.wall_ms, False, drew)
        if game.hand_number != self._hand_logged or game.is_over:
            self._log_progress()

    def _while_waiting(self) -> None:
        """Work that no decision waits for, done while a bot thinks: the other seats' game starts (once), the
        log's lines, the next hand's shuffle."""
        if self._unannounced:
            self._announce_all()
        self.log.catch_up()
        self.game.deal_ahead()

    def _announce(self, seat: int) -> None:
        """Send ``seat`` its GameStart if it was not sent yet: every message of the game to a seat follows it."""
        if seat in self._unannounced:
            self._unannounced.remove(seat)
            self._player(seat).game_start(self._game_start(seat))  # on its way: the seat's next write follows it

    def _announce_all(self) -> None:
        unannounced, self._unannounced = self._unannounced, []
        for seat in unannounced:
            self._player(seat).game_start(self._game_start(seat))

    def _player(self, seat: int) -> Player:
        """The player of a seat whose bot started (only such seats are sent messages)."""
        bot = self.bots[seat]
        assert not isinstance(bot, BotFault)
        return bot

    def _fault(
        self,
        seat: int,
        bot: Player,
        fault: BotFault,
        number: int,
        holding: tuple[Card, ...],
        legal: Sequence[Action],
        fallback: Action | None,
        reply: Reply,
    ) -> None:
        """Record a decision's fault, tell the bot, and apply the policy: the default action or a forfeit."""
        game = self.game
        self._record_fault(seat, fault, number)
        faults = sum(self.faults[seat].values())
        # A bot whose stream is gone cannot answer again: it forfeits at once, whatever the policy.
        replacement = fallback if fallback is not None and faults < self.policy.max_faults and bot.connected else None
        bot.fault_notice(fault_notice(self.game_id, number, fault, faults, replacement))
        if replacement is not None:
            hand = game.hand_number
            game.apply(replacement)
            drew = _drawn(game) if replacement.kind is ActionKind.DRAW else None
            self.log.decision(
                number, hand, seat, holding, legal, replacement, reply.charged_ms, reply.wall_ms, True, drew
            )
        else:
            self._forfeit(seat, Forfeit.of(fault))
        if game.hand_number != self._hand_logged or game.is_over:
            self._log_progress()

    def _log_progress(self) -> None:
        """Log the hands finished and the hand dealt since the last call."""
        game = self.game
        while self._hands_logged < len(game.hand_results):
            # A HandResult is frozen; when the hand ended, for what may be shown of its deals (referee.records.visibility).
            self.log.write_later(hand_record, game.hand_results[self._hands_logged], time.time())
            self._hands_logged += 1
        if game.hand_number != self._hand_logged and not game.is_over:
            self._hand_logged = game.hand_number
            self.log.write_later(deal_record_of, deal_state(game))

    # ----- faults and forfeits ------------------------------------------------------

    def _record_fault(self, seat: int, fault: BotFault, decision: int | None = None) -> None:
        self.faults[seat][fault.kind] += 1
        record = {
            "type": "fault",
            "n": decision,
            "seat": seat,
            "bot": self.players[seat],
            "kind": fault.kind.value,
            "detail": fault.detail,
        }
        bot = self.bots[seat]
        if isinstance(bot, BotSession) and bot.log_path is not None:
            # Where the bot's output stood, so a reader can find the lines it wrote around the fault.
            record["log"] = bot.log_path.name
            record["log_line"] = bot.process.output_lines
        self.log.write(record)

    def _forfeit(self, seat: int, forfeit: Forfeit) -> None:
        self.forfeits[seat] = forfeit
        reason = str(forfeit)
        self.log.write({"type": "forfeit", "seat": seat, "reason": reason})
        self.game.forfeit(seat, reason)
        self._log_progress()

    # ----- the stream's other messages ------------------------------------------------

    def _game_start(self, seat: int) -> pb.GameStart:
        return game_start(
            self.game, self.game_id, seat, self.players, self.timing, bot_random_seed(self.seed, seat), self.policy
        )

    def _game_end(self, seat: int, void_reason: str | None) -> bytes:
        """The seat's GameEnd, as bytes: the result and the events it has not yet been sent."""
        return self._encoder.game_end(self._events_sent[seat], void_reason is not None)


def illegal_action_fault(game: Game, chosen: Action, legal: Sequence[Action], bot: str) -> BotFault:
    """The illegal fault of ``bot`` choosing ``chosen``, which is not among the ``legal`` actions: why, and what was legal."""
    return BotFault(FaultKind.ILLEGAL, f"{game.why_illegal(chosen)} (legal: {', '.join(map(action_text, legal))})", bot)


def _drawn(game: Game) -> Card | None:
    """The card the current seat just drew from the stock (Stop the Bus), for the log."""
    return game.pending[1] if isinstance(game, StopTheBus) and game.pending is not None else None


def _retrieve(future: asyncio.Future[None]) -> None:
    """Mark a future's exception as seen (it is raised where it matters, or the game was cancelled)."""
    if not future.cancelled():
        future.exception()


def _self_description(bot: Player | BotFault) -> dict[str, str] | None:
    """What a bot said of itself in its handshake (name, version, author), or None."""
    response = getattr(bot, "handshake_response", None)
    if response is None:
        return None
    return {
        "name": printable(response.name),
        "version": printable(response.version),
        "author": printable(response.author),
    }


def _bot_name(bot: Player | BotFault) -> str:
    return bot.bot if isinstance(bot, BotFault) else bot.name


async def start_bots(
    specs: Sequence[BotSpec], setup: GameSetup, log_dir: Path | None = None, seats: Sequence[int] | None = None
) -> list[BotSession | BotFault]:
    """Start every bot at once; a bot that fails is returned as its :class:`BotFault`.

    Each bot's output goes to ``log_dir/seatN-NAME.log``, N its seat: ``seats[index]``, or its index.
    """

    async def start(index: int, spec: BotSpec) -> BotSession | BotFault:
        log_path = log_dir / f"seat{seats[index] if seats else index}-{spec.name}.log" if log_dir else None
        bot = BotSession(spec, log_path)
        try:
            await bot.start(setup)
        except BotFault as fault:
            return fault
        return bot

    return await start_all([start(index, spec) for index, spec in enumerate(specs)], stop_bots)


Started = TypeVar("Started")


async def start_all(
    starts: Sequence[Awaitable[Started]], undo: Callable[[list[Started]], Awaitable[object]]
) -> list[Started]:
    """Run every start at once and return their results in order.

    Interrupted (Ctrl-C), or a start failed unexpectedly: every start ends
    first (a cancelled one cleans up after itself), then ``undo`` is given
    the results of those that succeeded, so that no bot is left half started.
    """
    tasks = [asyncio.ensure_future(start) for start in starts]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await asyncio.wait(tasks)
        await undo([task.result() for task in tasks if not task.cancelled() and task.exception() is None])
        raise


async def stop_bots(bots: Sequence[BotSession | BotFault | None]) -> None:
    """Stop every bot that started (the others are faults, or seats never filled)."""
    await asyncio.gather(*(bot.stop() for bot in bots if isinstance(bot, BotSession)))


async def play_game(
    game_name: str,
    specs: Sequence[BotSpec],
    *,
    seed: int,
    game_id: str = "game",
    timing: Timing = Timing(),
    turn_limit: int = DEFAULT_TURN_LIMIT,
    policy: FaultPolicy = FaultPolicy(),
    log_path: Path | None = None,
    bot_log_dir: Path | None = None,
    first_dealer: int | None = None,
    decks: Sequence[Sequence[Card]] | None = None,
    observer: Callable[[dict[str, Any]], None] | None = None,
    notes_path: Path | None = None,
) -> MatchResult:
    """Start the bots, play one game, stop the bots (always), and return the result.

    ``observer`` is shown each log record as it is made (see :class:`Match`); the bots' notes, if any, are
    written to ``notes_path`` (:mod:`referee.records.notes`).
    """
    setup = GameSetup(game_name, len(specs), timing, turn_limit)
    bots: list[BotSession | BotFault] = []
    try:
        bots = await start_bots(specs, setup, bot_log_dir)
        match = Match(
            game_name,
            bots,
            seed=seed,
            game_id=game_id,
            timing=timing,
            turn_limit=turn_limit,
            policy=policy,
            log_path=log_path,
            first_dealer=first_dealer,
            decks=decks,
            players=[spec.name for spec in specs],
            observer=observer,
            notes_path=notes_path,
        )
        return await match.play()
    finally:
        await stop_bots(bots)
