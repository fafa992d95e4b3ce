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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots import BotProcess, BotSpec, GameSetup, Timing
from referee.cards import Card, format_cards, parse_cards
from referee.errors import RefereeError
from referee.faults import BotFault, FaultKind, FaultPolicy, PolicyMode, default_action
from referee.games import Game, HandResult, game_class
from referee.games.base import Action
from referee.protocol import (
    GAME_TO_PB,
    MalformedMessage,
    action_from_pb,
    action_to_pb,
    fill_events,
    fill_observation,
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

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


_ACTION_TEXT: dict[Action, str] = {}


def _text(act: Action) -> str:
    text = _ACTION_TEXT.get(act)
    if text is None:
        text = _ACTION_TEXT[act] = str(act)
    return text


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
        bots: Sequence[BotProcess | BotFault],
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
        try:
            for seat, bot in enumerate(self.bots):
                if isinstance(bot, BotFault):
                    # Every failure is counted; once one seat is left the game is over and it cannot forfeit.
                    self._record_fault(seat, bot)
                    if not game.is_over:
                        self._forfeit(seat, f"{bot.kind.value}: {bot.detail}")
            await self._notify_all(self._game_started)
            while not game.is_over:
                await self._decision()
                if len(game.hand_results) > self._hands_reported:
                    await self._report_hands()
            await self._report_hands()
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
            await self._notify_all(lambda seat: game_over_to_pb(result, self.game_id))
        finally:
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

    async def _decision(self) -> None:
        game = self.game
        seat = game.current_seat
        bot = self.bots[seat]
        self.decisions += 1
        number = self.decisions
        obs = game.observation(seat)
        legal = obs.legal_actions
        fallback = default_action(game) if self.policy.mode is PolicyMode.DEFAULT_ACTION else None
        request = pb.DecisionRequest(
            game_id=self.game_id,
            hand_number=obs.hand_number,
            decision_number=number,
            seat=seat,
            move_time_ms=self.timing.move_time_ms,
            time_bank_ms=self.bank_ms[seat],
        )
        fill_observation(request.observation, obs)
        fill_events(request.events, game.events[self._events_sent[seat] :])
        self._events_sent[seat] = len(game.events)
        add_legal = request.legal_actions.add
        for act in legal:
            action_to_pb(act, add_legal())
        if fallback is not None:
            action_to_pb(fallback, request.default_action)
        timeout = (self.timing.move_time_ms + self.bank_ms[seat] + self.timing.grace_ms) / 1000
        started = time.perf_counter()
        fault = None
        try:
            reply = await bot.decide(request, timeout)
            elapsed_ms = (time.perf_counter() - started) * 1000
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
        except BotFault as error:
            fault = error
            elapsed_ms = (time.perf_counter() - started) * 1000
        self.latencies[seat].append(elapsed_ms)
        over = elapsed_ms - self.timing.move_time_ms
        if over > 0:
            self.bank_ms[seat] = max(0, int(self.bank_ms[seat] - over))
        if fault is None:
            self.log.write(
                {"type": "decision", "n": number, "hand": obs.hand_number, "seat": seat,
                 "legal": [_text(act) for act in legal], "action": _text(chosen), "ms": round(elapsed_ms, 3)}
            )  # fmt: skip
            game.apply(chosen)
            return
        self._record_fault(seat, fault, number)
        if fallback is not None and self.faults_this_game(seat) < self.policy.max_faults:
            self.log.write(
                {"type": "decision", "n": number, "hand": obs.hand_number, "seat": seat,
                 "legal": [_text(act) for act in legal], "action": _text(fallback), "ms": round(elapsed_ms, 3),
                 "default": True}
            )  # fmt: skip
            game.apply(fallback)
            return
        self._forfeit(seat, f"{fault.kind.value}: {fault.detail}")

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

    async def _report_hands(self) -> None:
        game = self.game
        while self._hands_reported < len(game.hand_results):
            result = game.hand_results[self._hands_reported]
            self._hands_reported += 1
            self.log.write(hand_record(result))
            note = hand_result_to_pb(result, self.game_id, game.in_game)
            await self._notify_all(lambda seat: note)

    async def _notify_all(self, make) -> None:
        timeout = self.timing.notify_timeout_ms / 1000
        targets = [
            (seat, bot)
            for seat, bot in enumerate(self.bots)
            if isinstance(bot, BotProcess) and bot.healthy and seat not in self.forfeits
        ]
        if targets:
            await asyncio.gather(*(bot.notify(make(seat), timeout) for seat, bot in targets))


def _bot_name(bot: BotProcess | BotFault) -> str:
    return bot.spec.name if isinstance(bot, BotProcess) else bot.bot


async def start_bots(
    specs: Sequence[BotSpec], setup: GameSetup, log_dir: Path | None = None
) -> list[BotProcess | BotFault]:
    """Start every bot at once; a bot that fails is returned as its :class:`BotFault`."""

    async def start(index: int, spec: BotSpec) -> BotProcess | BotFault:
        log_path = log_dir / f"seat{index}-{spec.name}.log" if log_dir else None
        bot = BotProcess(spec, log_path)
        try:
            await bot.start(setup)
        except BotFault as fault:
            return fault
        return bot

    return list(await asyncio.gather(*(start(i, spec) for i, spec in enumerate(specs))))


async def stop_bots(bots: Sequence[BotProcess | BotFault]) -> None:
    await asyncio.gather(*(bot.stop() for bot in bots if isinstance(bot, BotProcess)))


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
    bots: list[BotProcess | BotFault] = []
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
