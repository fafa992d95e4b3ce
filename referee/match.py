"""One game, end to end: drive the engine, ask the bots, apply the fault policy, log everything.

The game log is JSON lines, one object per line, each with a ``type``:
``game_start`` (game, seats, seed, first dealer, limits, policy),
``decision`` (decision number, hand, seat, the legal actions offered, the
action played, its latency in ms, and ``"default": true`` when the fault
policy chose it), ``fault`` (decision number, or null before the first;
seat, bot, kind, detail; the next record shows what the policy did),
``forfeit`` (seat, reason), ``hand`` (every hand revealed with its rank,
the loser, lives after) and ``game_end`` (placements). :func:`verify_log`
replays a log through the engine and reports any difference.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots import BotSpec
from referee.session import BotSession, GameSetup, Timing
from referee.cards import Card, format_cards, parse_cards
from referee.errors import RefereeError
from referee.faults import BotFault, FaultKind, FaultPolicy, PolicyMode, default_action
from referee.games import Game, HandResult, game_class
from referee.games.base import Action
from referee.protocol import (
    GAME_TO_PB,
    MalformedMessage,
    RequestEncoder,
    action_from_pb,
    game_over_to_pb,
    hand_result_to_pb,
)
from referee.v1 import bot_pb2 as pb

LOG_VERSION = 1


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
    faults: list[Counter]  # by seat: fault kind value -> count
    forfeits: dict[int, str]  # seat -> reason
    latencies_ms: list[list[float]]  # by seat: every decision's latency
    hand_results: list[HandResult] = field(repr=False, default_factory=list)

    def place_of(self, seat: int) -> int:
        return self.placements.index(seat) + 1


class GameLog:
    """A JSON-lines game log; a ``None`` path logs nothing."""

    def __init__(self, path: Path | None) -> None:
        self._file = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115 - closed in close()

    def write(self, record: dict) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, separators=(",", ":")) + "\n")

    def write_decision(
        self, number: int, hand: int, seat: int, legal: Sequence[Action], played: Action, ms: float, default: bool
    ) -> None:
        """Write a decision record: the line ``write(decision_record(...))`` writes, made without ``json``.

        Decisions are most of a log, so their lines are put together from
        each action's JSON text, made once (tests check the two agree).
        """
        if self._file is not None:
            self._file.write(
                f'{{"type":"decision","n":{number},"hand":{hand},"seat":{seat},'
                f'"legal":[{",".join(map(_json_text, legal))}],"action":{_json_text(played)},"ms":{round(ms, 3)!r}'
                + (',"default":true}\n' if default else "}\n")
            )

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def decision_record(
    number: int, hand: int, seat: int, legal: Sequence[Action], played: Action, ms: float, default: bool
) -> dict:
    """The log record of a decision (:meth:`GameLog.write_decision` writes it faster)."""
    record = {"type": "decision", "n": number, "hand": hand, "seat": seat, "legal": [_text(act) for act in legal],
              "action": _text(played), "ms": round(ms, 3)}  # fmt: skip
    if default:
        record["default"] = True
    return record


# Each action's text and JSON text, by id: Action's hash goes through its kind's Python-level
# enum hash, and ids are safe because each entry keeps its action alive. Actions come from
# referee.games.base.action(), which makes each one once, so these stay small.
_ACTION_TEXT: dict[int, tuple[Action, str]] = {}
_ACTION_JSON: dict[int, tuple[Action, str]] = {}


def _text(act: Action) -> str:
    entry = _ACTION_TEXT.get(id(act))
    if entry is None:
        entry = _ACTION_TEXT[id(act)] = (act, str(act))
    return entry[1]


def _json_text(act: Action) -> str:
    entry = _ACTION_JSON.get(id(act))
    if entry is None:
        entry = _ACTION_JSON[id(act)] = (act, json.dumps(str(act)))
    return entry[1]


def hand_record(result: HandResult) -> dict:
    """The log (and report) form of a hand's result."""
    return {
        "type": "hand",
        "hand": result.hand_number,
        "dealer": result.dealer,
        "ended_by": result.ended_by.value,
        "ender": result.ender,
        "turns": result.turns,
        "hands": {str(seat): format_cards(cards) for seat, cards in sorted(result.hands.items())},
        "ranks": {str(seat): str(rank) for seat, rank in sorted(result.ranks.items())},
        "loser": result.loser,
        "lives": list(result.lives_after),
        "floating": list(result.floating_after),
        "eliminated": list(result.eliminated),
    }


class Match:
    """Plays one game between bots that are already started (or failed to start)."""

    def __init__(
        self,
        game_name: str,
        bots: Sequence[BotSession | BotFault],
        *,
        seed: int,
        game_id: str,
        timing: Timing = Timing(),
        turn_limit: int = 200,
        policy: FaultPolicy = FaultPolicy(),
        log_path: Path | None = None,
        first_dealer: int | None = None,
        decks: Sequence[Sequence[Card]] | None = None,
        players: Sequence[str] | None = None,
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
        self.faults = [Counter() for _ in range(n)]
        self.forfeits: dict[int, str] = {}
        self.latencies = [[] for _ in range(n)]
        self.bank_ms = [timing.time_bank_ms] * n
        self._events_sent = [0] * n
        self._hands_reported = 0
        self._encoder = RequestEncoder(self.game, game_id, timing.move_time_ms)
        self._default_policy = policy.mode is PolicyMode.DEFAULT_ACTION
        # Decisions played and not yet logged, and whether anything waits for _catch_up.
        self._unlogged: list[tuple[int, int, int, tuple[Action, ...], Action, float, bool]] = []
        self._behind = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # Notifications: addressed but not yet sent, sent and not yet answered, and each seat's latest
        # (a seat's notifications go one after another, so it gets them in order).
        self._outbox: deque[tuple[int, BotSession, pb.Notification]] = deque()
        self._notifications: set[asyncio.Future] = set()
        self._latest_notification: dict[int, asyncio.Future] = {}
        self._game_started_sent: list[asyncio.Future | None] = [None] * n  # until the seat's first decision
        self.decisions = 0
        self.log = GameLog(log_path)
        self.log.write(
            {
                "type": "game_start",
                "log_version": LOG_VERSION,
                "game_id": game_id,
                "game": game_name,
                "num_players": n,
                "seed": seed,
                "first_dealer": self.game.dealer,
                "turn_limit": turn_limit,
                "players": self.players,
                "timing": {"move_time_ms": timing.move_time_ms, "time_bank_ms": timing.time_bank_ms},
                "policy": {"mode": policy.mode.value, "max_faults": policy.max_faults},
                "decks": [format_cards(deck) for deck in decks] if decks else None,
            }
        )

    async def play(self) -> MatchResult:
        """Play the game to the end and return its result; never raises because of a bot."""
        game = self.game
        self._loop = asyncio.get_running_loop()
        try:
            for seat, bot in enumerate(self.bots):
                if isinstance(bot, BotFault):
                    # Every failure is counted; once one seat is left the game is over and it cannot forfeit.
                    self._record_fault(seat, bot)
                    if not game.is_over:
                        self._forfeit(seat, f"{bot.kind.value}: {bot.detail}")
            # A seat's first decision waits for its own GameStarted to be answered, not for everyone's.
            self._address(self._game_started)
            self._send_notifications()
            self._game_started_sent = [self._latest_notification.get(seat) for seat in range(len(self.bots))]
            while not game.is_over:
                await self._decision()
            self._catch_up()
            result = game.result()
            self.log.write(
                {
                    "type": "game_end",
                    "placements": list(result.placements),
                    "hands_played": result.hands_played,
                    "decisions": self.decisions,
                    "faults": [dict(counter) for counter in self.faults],
                }
            )
            game_over = game_over_to_pb(result, self.game_id)
            self._address(lambda seat: game_over)
            self._send_notifications()
            await self._finish_notifications()
        finally:
            for task in self._notifications:
                task.cancel()  # only left when play() itself was cancelled or failed
            self._write_unlogged()
            self.log.close()
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
        )

    # ----- one decision: the hot path ----------------------------------------------
    #
    # Between a bot's reply and the next request only what the request needs is done:
    # check the reply, apply it, encode the next request. The rest (logging the
    # decision, reporting a finished hand, sending notifications) waits for
    # _catch_up, which runs once the next request is on its way, while that bot
    # thinks, and always before its reply is read.

    async def _decision(self) -> None:
        game = self.game
        seat = game.current_seat
        bot = self.bots[seat]
        game_started = self._game_started_sent[seat]
        if game_started is not None:
            self._game_started_sent[seat] = None
            if not game_started.done():
                await asyncio.wait((game_started,))
        self.decisions += 1
        number = self.decisions
        legal = game.legal_actions()
        fallback = default_action(game) if self._default_policy else None
        bank_ms = self.bank_ms[seat]
        # What the seat is shown is Game.observation(seat), encoded straight from the game (see RequestEncoder).
        request = self._encoder.request(number, bank_ms, self._events_sent[seat], fallback)
        self._events_sent[seat] = len(game.events)
        timeout = (self.timing.move_time_ms + bank_ms + self.timing.grace_ms) / 1000
        if self._behind:
            self._loop.call_soon(self._catch_up_after_send)
        started = time.perf_counter()
        try:
            reply = await bot.decide(request, timeout)
            elapsed_ms = (time.perf_counter() - started) * 1000
            if self._behind:
                self._catch_up()  # only if the event loop ran it late: the log keeps its order either way
            if reply.decision_number != number:
                raise BotFault(
                    FaultKind.STALE,
                    f"replied to decision {reply.decision_number}, but decision {number} was asked",
                    bot.spec.name,
                )
            try:
                chosen = action_from_pb(reply.action)
            except MalformedMessage as error:
                raise BotFault(FaultKind.MALFORMED, str(error), bot.spec.name) from None
            if chosen not in legal:
                raise BotFault(
                    FaultKind.ILLEGAL,
                    f"{game._why_illegal(chosen)} (legal: {', '.join(map(_text, legal))})",
                    bot.spec.name,
                )
        except BotFault as fault:
            elapsed_ms = (time.perf_counter() - started) * 1000
            self._catch_up()
            self._spend_bank(seat, bank_ms, elapsed_ms)
            self.latencies[seat].append(elapsed_ms)
            self._record_fault(seat, fault, number)
            if fallback is not None and self.faults_this_game(seat) < self.policy.max_faults:
                self._unlogged.append((number, game.hand_number, seat, legal, fallback, elapsed_ms, True))
                self._behind = True
                game.apply(fallback)
            else:
                self._forfeit(seat, f"{fault.kind.value}: {fault.detail}")
            return
        if elapsed_ms > self.timing.move_time_ms:
            self._spend_bank(seat, bank_ms, elapsed_ms)
        self._unlogged.append((number, game.hand_number, seat, legal, chosen, elapsed_ms, False))
        self._behind = True
        game.apply(chosen)

    def _spend_bank(self, seat: int, bank_ms: int, elapsed_ms: float) -> None:
        over = elapsed_ms - self.timing.move_time_ms
        if over > 0:
            self.bank_ms[seat] = max(0, int(bank_ms - over))

    def _catch_up_after_send(self) -> None:
        # grpc.aio sends a request from a task that starts in the event loop's next round: one
        # more round puts the catching up after the send. The reply can only be read later still.
        self._loop.call_soon(self._catch_up)

    def _catch_up(self) -> None:
        """Log the decisions played since the last call, then report the hands finished since (log, notify)."""
        if not self._behind:
            return
        self._behind = False
        self._write_unlogged()
        if len(self.game.hand_results) > self._hands_reported:
            self._report_hands()
        if self._outbox:
            self._send_notifications()

    def _write_unlogged(self) -> None:
        write_decision, latencies = self.log.write_decision, self.latencies
        for number, hand, seat, legal, played, elapsed_ms, default in self._unlogged:
            write_decision(number, hand, seat, legal, played, elapsed_ms, default)
            if not default:  # a default action's latency was recorded with its fault
                latencies[seat].append(elapsed_ms)
        self._unlogged.clear()

    def faults_this_game(self, seat: int) -> int:
        return sum(self.faults[seat].values())

    # ----- faults and forfeits ------------------------------------------------------

    def _record_fault(self, seat: int, fault: BotFault, decision: int | None = None) -> None:
        self.faults[seat][fault.kind.value] += 1
        self.log.write(
            {"type": "fault", "n": decision, "seat": seat, "bot": self.players[seat], "kind": fault.kind.value,
             "detail": fault.detail}
        )  # fmt: skip

    def _forfeit(self, seat: int, reason: str) -> None:
        self._behind = True  # a forfeit can end a hand, to be reported
        self.forfeits[seat] = reason
        self.log.write({"type": "forfeit", "seat": seat, "reason": reason})
        self.game.forfeit(seat, reason)

    # ----- notifications ----------------------------------------------------------

    def _game_started(self, seat: int) -> pb.Notification:
        note = pb.Notification()
        started = note.game_started
        started.game_id = self.game_id
        started.game = GAME_TO_PB[self.game.name]
        started.num_players = self.game.num_players
        started.seat = seat
        started.players.extend(self.players)
        started.time_limits.move_time_ms = self.timing.move_time_ms
        started.time_limits.time_bank_ms = self.timing.time_bank_ms
        started.turn_limit = self.game.turn_limit
        return note

    def _report_hands(self) -> None:
        """Log every hand finished since the last call, and address its result to the bots (see _send_notifications)."""
        game = self.game
        while self._hands_reported < len(game.hand_results):
            result = game.hand_results[self._hands_reported]
            self._hands_reported += 1
            self.log.write(hand_record(result))
            note = hand_result_to_pb(result, self.game_id, game.in_game)
            self._address(lambda seat, note=note: note)

    def _notify_targets(self) -> list[tuple[int, BotSession]]:
        return [
            (seat, bot)
            for seat, bot in enumerate(self.bots)
            if isinstance(bot, BotSession) and bot.healthy and seat not in self.forfeits
        ]

    def _address(self, make: Callable[[int], pb.Notification]) -> None:
        """Queue the notification ``make(seat)`` for every seat still playing."""
        for seat, bot in self._notify_targets():
            self._outbox.append((seat, bot, make(seat)))

    def _send_notifications(self) -> None:
        """Start sending the queued notifications, without waiting for them.

        Notifications are best effort, and waiting for every bot to take each
        hand's result would hold up the next decision by a round trip, so the
        game goes on while they travel: a bot may get a hand's result after
        its next decision request. Each seat gets its notifications in order,
        one after another. :meth:`_finish_notifications` waits for them at
        the game's end, so none is left in flight when a bot process moves on
        to its next game.
        """
        timeout = self.timing.notify_timeout_ms / 1000
        while self._outbox:
            seat, bot, note = self._outbox.popleft()
            task = asyncio.ensure_future(_notify_after(self._latest_notification.get(seat), bot, note, timeout))
            self._latest_notification[seat] = task
            self._notifications.add(task)
            task.add_done_callback(self._notifications.discard)

    async def _finish_notifications(self) -> None:
        """Wait for the notifications in flight, up to the notify timeout; give up on any still unanswered."""
        if self._notifications:
            _, unanswered = await asyncio.wait(self._notifications, timeout=self.timing.notify_timeout_ms / 1000)
            for task in unanswered:
                task.cancel()
            if unanswered:
                await asyncio.wait(unanswered)  # the cancellations take a moment to finish


async def _notify_after(
    previous: asyncio.Future | None, bot: BotSession, note: pb.Notification, timeout: float
) -> None:
    """Send ``note`` once the seat's previous notification is answered (or given up)."""
    if previous is not None and not previous.done():
        await asyncio.wait((previous,))  # returns however it ended, cancelled included
    await bot.notify(note, timeout)


def _bot_name(bot: BotSession | BotFault) -> str:
    return bot.spec.name if isinstance(bot, BotSession) else bot.bot


async def start_bots(
    specs: Sequence[BotSpec], setup: GameSetup, log_dir: Path | None = None
) -> list[BotSession | BotFault]:
    """Start every bot at once; a bot that fails is returned as its :class:`BotFault`."""

    async def start(index: int, spec: BotSpec) -> BotSession | BotFault:
        log_path = log_dir / f"seat{index}-{spec.name}.log" if log_dir else None
        bot = BotSession(spec, log_path)
        try:
            await bot.start(setup)
        except BotFault as fault:
            return fault
        return bot

    return list(await asyncio.gather(*(start(i, spec) for i, spec in enumerate(specs))))


async def stop_bots(bots: Sequence[BotSession | BotFault]) -> None:
    await asyncio.gather(*(bot.stop() for bot in bots if isinstance(bot, BotSession)))


async def play_game(
    game_name: str,
    specs: Sequence[BotSpec],
    *,
    seed: int,
    game_id: str = "game",
    timing: Timing = Timing(),
    turn_limit: int = 200,
    policy: FaultPolicy = FaultPolicy(),
    log_path: Path | None = None,
    bot_log_dir: Path | None = None,
    first_dealer: int | None = None,
    decks: Sequence[Sequence[Card]] | None = None,
) -> MatchResult:
    """Start the bots, play one game, stop the bots (always), and return the result."""
    setup = GameSetup(game_name, len(specs), timing, turn_limit)
    bots: list[BotSession | BotFault] = []
    try:
        bots = await start_bots(specs, setup, bot_log_dir)
        match = Match(
            game_name, bots, seed=seed, game_id=game_id, timing=timing, turn_limit=turn_limit, policy=policy,
            log_path=log_path, first_dealer=first_dealer, decks=decks, players=[spec.name for spec in specs],
        )  # fmt: skip
        return await match.play()
    finally:
        await stop_bots(bots)


# ----- re-verification ---------------------------------------------------------------


def verify_log(path: Path) -> list[str]:
    """Replay a game log through the engine; return every difference found (empty: the log is sound)."""
    problems: list[str] = []
    game: Game | None = None
    hands_checked = 0
    with open(path, encoding="utf-8") as lines:
        for line_number, line in enumerate(lines, start=1):
            where = f"{path}:{line_number}"
            try:
                record = json.loads(line)
                kind = record["type"]
            except (ValueError, KeyError, TypeError):
                problems.append(f"{where}: not a log record (a JSON object with a type): {line.strip()[:80]!r}")
                break
            try:
                if kind == "game_start":
                    decks = [parse_cards(deck) for deck in record["decks"]] if record.get("decks") else None
                    game = game_class(record["game"])(
                        record["num_players"], record["seed"], first_dealer=record["first_dealer"], decks=decks,
                        turn_limit=record["turn_limit"],
                    )  # fmt: skip
                    continue
                if game is None:
                    return [f"{where}: the log does not start with game_start"]
                if kind == "decision":
                    if record["seat"] != game.current_seat:
                        problems.append(
                            f"{where}: seat {record['seat']} decided, but it was seat {game.current_seat}'s turn"
                        )
                        break
                    offered = [_text(act) for act in game.legal_actions()]
                    if offered != record["legal"]:
                        problems.append(f"{where}: legal actions logged {record['legal']}, engine gives {offered}")
                    game.apply(Action.parse(record["action"]))
                elif kind == "forfeit":
                    game.forfeit(record["seat"], record["reason"])
                elif kind == "hand":
                    if hands_checked >= len(game.hand_results):
                        problems.append(f"{where}: hand {record['hand']} logged, but the engine has not finished it")
                        continue
                    expected = hand_record(game.hand_results[hands_checked])
                    hands_checked += 1
                    if expected != record:
                        problems.append(f"{where}: hand result differs: logged {record}, engine gives {expected}")
                elif kind == "game_end":
                    if not game.is_over:
                        problems.append(f"{where}: game_end logged, but the engine's game is not over")
                    elif list(game.result().placements) != record["placements"]:
                        problems.append(
                            f"{where}: placements logged {record['placements']}, "
                            f"engine gives {list(game.result().placements)}"
                        )
            except (KeyError, TypeError, ValueError, RefereeError) as error:
                # A missing field, a value of the wrong type, an unreadable or illegal action, a forfeit
                # the engine refuses: the replay cannot go on past this record.
                problems.append(f"{where}: cannot replay this {kind} record: {_error_text(error)}")
                break
    if game is not None and not game.is_over:
        problems.append(f"{path}: the log ends before the game does")
    return problems


def _error_text(error: Exception) -> str:
    return f"missing field {error}" if isinstance(error, KeyError) else str(error)
