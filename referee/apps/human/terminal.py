"""``referee play --human SEAT``: a person plays one seat at the terminal; bots play the others.

The person's seat is an :class:`referee.play.inprocess.InProcessBot`: it is handed
the bytes a bot in that seat is sent, read by the Python kit as a Python bot
reads them, so the person sees what a bot in the seat sees and no more: the
observation :meth:`referee.engine.games.Game.observation` makes (the one function
that says what a seat may see; the other seats' cards stay hidden) and the
public events. At each of the person's turns the screen is drawn afresh (on a
terminal, the old one is cleared): what happened since the last turn, the
seats' lives, the table as the seat sees it, the seat's hand, and the legal
actions, numbered, every card as people read it (``10♥``:
:func:`referee.engine.cards.pretty_cards`); the person answers with a number (or
the action's text, ``discard Q♠`` or ``discard qs``). At the terminal the
seat is on no clock; in the browser (:mod:`referee.apps.human.browser`) it may
have the bots' (``referee play --human-clock``). At the game's end the screen shows the last events and the
placements.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TextIO

from referee.common.errors import MalformedActionError, RefereeError
from referee.engine.cards import Card, pretty_cards
from referee.engine.games import BastardBragObservation, Observation, StopTheBusObservation
from referee.engine.games.game import Action, ActionKind, Phase
from referee.engine.hands import hand_rank
from referee.play.inprocess import InProcessBot
from referee.play.match import Match, MatchResult, start_bots, stop_bots
from referee.play.processes import BotSpec
from referee.play.session import BotSession, Reply
from referee.protocol.clock import TimeControl, Timing
from referee.protocol.faults import BotFault, FaultKind, FaultPolicy
from referee.protocol.messages import card_from_pb
from referee.protocol.setup import GameSetup
from referee.v2 import bot_pb2 as pb

CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen
RULE = "-" * 64
MOST_EVENTS = 24  # lines of "since your last turn" shown; the earliest beyond this are summed up
GAME_NAMES = {"stop_the_bus": "Stop the Bus", "bastard_brag": "Bastard Brag"}


class LeftTheGame(RefereeError):
    """The person at the terminal left the game (``q``, or the end of input)."""


class Screen(Protocol):
    """A person's screen other than the terminal (the browser's, :class:`referee.apps.human.browser.BrowserTable`): where
    the seat's screens go and where the answer to each decision comes from, by the decision's number."""

    def asked(self, decision: int, limit_s: float) -> None:
        """Decision ``decision`` is asked of the seat, which a bot would have ``limit_s`` seconds to answer (a screen
        on a clock ends the decision then, answering it :data:`TIME_UP`)."""
        ...

    def show(self, decision: int | None, lines: Sequence[str], labels: Sequence[str]) -> None:
        """Show a screen: ``decision``'s, with its legal actions' ``labels`` as the choices; or (None, no labels) the
        game's end. Called from the seat's thread."""
        ...

    def answer(self, decision: int) -> str:
        """The person's one answer to ``decision`` (a choice's number from 1, or q), or :data:`TIME_UP` once the
        decision's time ran out; waited for in the seat's thread."""
        ...


class HumanSeat(InProcessBot):
    """A seat played by a person at the terminal: each turn, the seat's view and its legal actions, by number."""

    def __init__(
        self,
        name: str,
        ask: Callable[[str], str] = input,
        out: TextIO = sys.stdout,
        clear: bool | None = None,
        screen: Screen | None = None,
    ) -> None:
        """``ask`` reads the person's answer to a prompt; each screen goes to ``out`` (cleared first when ``clear``,
        by default on a terminal); or, with ``screen`` (the browser's seat, :mod:`referee.apps.human.browser`), both
        go through it instead."""
        super().__init__(name, self._choose, on_game_start=self._started, on_event=self._seen, on_game_end=self._ended)
        self._ask = ask
        self._out = out
        self._clear = out.isatty() if clear is None else clear
        self._screen = screen
        self._players: list[str] = []
        self._seat = 0
        self._since: list[str] = []  # what happened since the person's last turn, in words
        # The decision each of the seat's threads answers: a thread let go after its decision was cancelled may
        # still be drawing while the next one is asked, and must neither draw nor take an answer as the next's.
        self._asking = threading.local()
        self._timed_out: set[int] = set()  # decisions whose time ran out before the person answered
        self._left = False  # the person left the game (q, or the end of input)

    async def decide(
        self, request: bytes, number: int, clock: TimeControl, while_waiting: Callable[[], None] | None = None
    ) -> Reply:
        """The person's move; a timeout fault if the screen's clock ended the decision before the person moved."""
        if self._screen is None:
            return await super().decide(request, number, clock, while_waiting)
        limit_ms = clock.limit_ms
        self._screen.asked(number, limit_ms / 1000)
        # The screen settles each decision once, a click or the deadline, whichever it takes first, and the seat's
        # thread returns as soon as it is settled: so the move the referee plays is the one the page was told of.
        reply = await super().decide(request, number, clock, while_waiting)
        if number in self._timed_out:
            self._timed_out.discard(number)
            return Reply(None, limit_ms, limit_ms, BotFault(FaultKind.TIMEOUT, f"no move in {limit_ms} ms", self.name))
        return reply

    async def answer(self, request: pb.DecisionRequest) -> pb.PlayResponse:
        """The kit's reply, in a thread of its own: the person takes their time, the referee goes on meanwhile."""
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[pb.PlayResponse] = loop.create_future()

        def run() -> None:
            self._asking.decision = request.decision_number
            try:
                reply = self.servicer.answer(request)
            except BaseException as error:  # noqa: BLE001 - handed to the game's loop, which raises it
                loop.call_soon_threadsafe(_settle, answered, None, error)
            else:
                loop.call_soon_threadsafe(_settle, answered, reply, None)

        # A daemon thread: one blocked in input() must not hold up the referee's exit (Ctrl-C).
        threading.Thread(target=run, name="human-seat", daemon=True).start()
        reply = await answered
        if self._left:
            raise LeftTheGame("you left the game")
        return reply

    # ----- the kit's hooks: what the seat is told -------------------------------------------------

    def _started(self, start: pb.GameStart) -> None:
        self._players = list(start.players)
        self._seat = start.seat
        self._since = [
            f"{GAME_NAMES[_game_name(start.game)]}, {start.num_players} players: "
            + ", ".join(self._name(seat) for seat in range(start.num_players))
        ]

    def _seen(self, event: pb.Event) -> None:
        self._since.extend(describe_event(event, self._name))

    def _ended(self, end: pb.GameEnd) -> None:
        places = ", ".join(f"{place}. {self._name(seat)}" for place, seat in enumerate(end.placements, start=1))
        void = " (void: it does not count)" if end.is_void else ""
        self._draw(
            [
                f"Game over after {end.hands_played} hand{'s' * (end.hands_played != 1)}{void}",
                RULE,
                "Since your last turn",
                *self._events(),
                RULE,
                f"Placings: {places}",
            ]
        )

    # ----- a turn ---------------------------------------------------------------------------------

    def _choose(self, view: Observation) -> Action:
        number: int = self._asking.decision
        legal = view.legal_actions
        labels = [action_label(act, view) for act in legal]
        lines = [
            f"{GAME_NAMES[view.game]} - hand {view.hand_number} - decision {number} - you are seat {view.seat}",
            RULE,
            "Since your last turn",
            *self._events(),
            RULE,
            *self._table(view),
        ]
        self._since = []
        self._draw(lines, labels, number)
        prompt = f"Your move (1-{len(legal)}, or q to leave): "
        while True:
            text = self._read(prompt, number)
            if text == TIME_UP:
                self._timed_out.add(number)
                return legal[0]  # never played: decide() answers the referee with the timeout instead
            chosen = _chosen(text, legal)
            if chosen is LEAVE:
                self._left = True  # answer() ends the game
                return legal[0]
            if isinstance(chosen, Action):
                return chosen
            prompt = (
                f"Type a number from 1 to {len(legal)} (or an action such as {typed_form(legal[-1])}), or q to leave: "
            )

    def _table(self, view: Observation) -> list[str]:
        width = max(len(self._name(seat)) for seat in range(view.num_players))
        lines = []
        for seat in range(view.num_players):
            state = (
                "out of the game" if not view.in_game[seat] else "in the hand" if view.in_hand[seat] else "sitting out"
            )
            lives = f"{view.lives[seat]} li{'ves' if view.lives[seat] != 1 else 'fe'}"
            extra = (", floating" if view.floating[seat] else "") + (", dealer" if seat == view.dealer else "")
            extra += ", stopped the bus" if seat == view.ender and view.game == "stop_the_bus" else ""
            extra += ", knocked" if seat == view.ender and view.game == "bastard_brag" else ""
            marker = "  <- you" if seat == view.seat else ""
            lines.append(f"  {self._name(seat):<{width}}  {lives}, {state}{extra}{marker}")
        if isinstance(view, StopTheBusObservation):
            top = f"{view.discard_top.pretty} on top" if view.discard_top else "empty"
            lines.append(f"Discard pile: {top} ({_cards(view.discard_count)}) - stock: {_cards(view.stock_count)}")
            if view.drawn_card is not None:
                held = [card for card in view.hand if card != view.drawn_card]
                source = "took from the discard pile" if view.took_discard else "drew"
                lines.append(f"Your hand: {pretty_cards(held)}, and {view.drawn_card.pretty} you {source}")
                return lines
        elif isinstance(view, BastardBragObservation):
            slots = [card.pretty if card is not None else "??" for card in view.centre]
            lines.append(f"Centre: {slots[0]} {slots[1]} face down, {slots[2]} face up")
        lines.append(
            f"Your hand: {pretty_cards(view.hand)}   {hand_rank(view.hand)}"
            if len(view.hand) == 3
            else f"Your hand: {pretty_cards(view.hand)}"
        )
        if view.phase is Phase.FINAL:
            lines.append("Final turns: the hand ends when every other seat has had one")
        return lines

    def _events(self) -> list[str]:
        events = self._since or ["(nothing)"]
        if len(events) > MOST_EVENTS:
            events = [f"({len(events) - MOST_EVENTS + 1} earlier lines not shown)", *events[-MOST_EVENTS + 1 :]]
        return [f"  {line}" for line in events]

    def _read(self, prompt: str, decision: int) -> str:
        """The person's answer to ``decision``: from the screen, else typed at the terminal (q at the end of input)."""
        if self._screen is not None:
            return self._screen.answer(decision)
        try:
            return self._ask(prompt).strip()
        except EOFError:
            return "q"

    def _draw(self, lines: Sequence[str], labels: Sequence[str] = (), decision: int | None = None) -> None:
        """Show a screen: its lines, then the legal actions (numbered, at a terminal)."""
        if self._screen is not None:
            self._screen.show(decision, lines, labels)
            return
        choices = [RULE, *(f"  {index:>2}  {label}" for index, label in enumerate(labels, start=1))] if labels else []
        self._out.write((CLEAR if self._clear else "\n") + "\n".join([*lines, *choices]) + "\n")
        self._out.flush()

    def _name(self, seat: int) -> str:
        if seat == self._seat:
            return f"seat {seat} (you)"
        return f"seat {seat} {self._players[seat] if seat < len(self._players) else '?'}"


LEAVE = object()
TIME_UP = "\x00time is up"  # what a screen answers a decision whose time ran out (never typed)


def _chosen(text: str, legal: Sequence[Action]) -> Action | object | None:
    """The action a person typed: its number, or its text form; LEAVE for q; None for anything else."""
    if text.lower() in ("q", "quit", "exit"):
        return LEAVE
    if text.isdigit() and 1 <= int(text) <= len(legal):
        return legal[int(text) - 1]
    try:
        typed = Action.parse(text)
    except MalformedActionError:
        return None
    return typed if typed in legal else None


def _settle(
    future: asyncio.Future[pb.PlayResponse], result: pb.PlayResponse | None, error: BaseException | None
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    elif result is not None:
        future.set_result(result)


def _game_name(game: pb.Game) -> str:
    return {pb.GAME_STOP_THE_BUS: "stop_the_bus", pb.GAME_BASTARD_BRAG: "bastard_brag"}[game]


# ----- words ------------------------------------------------------------------------------------------


def action_label(act: Action, view: Observation) -> str:
    """A legal action in words, as the seat sees the table: ``take 7♥ from the discard pile``."""
    kind = act.kind
    if kind is ActionKind.DRAW:
        return "draw from the stock"
    if kind is ActionKind.TAKE:
        assert isinstance(view, StopTheBusObservation) and view.discard_top is not None  # a take of Stop the Bus
        return f"take {view.discard_top.pretty} from the discard pile"
    if kind is ActionKind.STOP:
        return "stop the bus"
    if kind is ActionKind.PASS:
        return "pass"
    if kind is ActionKind.KNOCK:
        return "knock"
    assert act.card is not None  # the other actions give a card
    given = act.card.pretty
    if kind is ActionKind.DISCARD:
        kept = [card for card in view.hand if card != act.card]
        return f"discard {given}, keep {pretty_cards(kept)}   {hand_rank(kept)}"
    assert isinstance(view, BastardBragObservation)  # the other actions are Bastard Brag's
    centre = view.centre
    if kind is ActionKind.EXCHANGE:
        assert act.slot is not None  # an exchange names its slot
        taken = centre[act.slot]
        kept = [card for card in view.hand if card != act.card] + ([taken] if taken is not None else [])
        rank = f"   {hand_rank(kept)}" if len(kept) == 3 else ""
        if taken is None:  # a face-down card the seat has not seen
            return f"give {given} for the face-down card in slot {act.slot}{rank}"
        if act.slot == 2:
            return f"give {given} for {taken.pretty}, face up{rank}"
        return f"give {given} for {taken.pretty} (face down, slot {act.slot}){rank}"
    # exchange-all: the hand for the centre, the given card laid face up
    return f"swap your hand for the centre, laying {given} face up"


def typed_form(act: Action) -> str:
    """An action as a person may type it: its text form with the card as people read it (``discard 10♥``).

    :meth:`Action.parse` reads it back, as it reads ``discard 10h`` and ``discard TH``.
    """
    words = [act.kind.value, *([act.card.pretty] if act.card is not None else [])]
    return " ".join([*words, *([str(act.slot)] if act.slot is not None else [])])


def describe_event(event: pb.Event, name: Callable[[int], str]) -> list[str]:
    """A public event in words (a showdown takes a line per hand shown)."""
    kind = event.kind
    seat = name(event.seat) if event.HasField("seat") else ""
    card = card_from_pb(event.card).pretty if event.HasField("card") else ""
    if kind == pb.EVENT_KIND_DEAL:
        return [f"hand {event.hand_number}: {seat} deals; {card} is turned up"]
    if kind == pb.EVENT_KIND_DRAW:
        return [f"{seat} draws from the stock"]
    if kind == pb.EVENT_KIND_TAKE:
        return [f"{seat} takes {card} from the discard pile"]
    if kind == pb.EVENT_KIND_DISCARD:
        return [f"{seat} discards {card}"]
    if kind == pb.EVENT_KIND_EXCHANGE:
        if event.slot == 2:
            return [f"{seat} gives {card} for {card_from_pb(event.taken).pretty}, face up"]
        return [f"{seat} exchanges a card for the face-down card in slot {event.slot}"]
    if kind == pb.EVENT_KIND_EXCHANGE_ALL:
        return [f"{seat} swaps the hand for the centre, laying {card} face up"]
    if kind == pb.EVENT_KIND_RECYCLE:
        return [f"the stock is empty: {event.count} discards are shuffled into a new stock"]
    if kind == pb.EVENT_KIND_SHOWDOWN:
        return _showdown(event, name)
    words = {
        pb.EVENT_KIND_STOP: f"{seat} stops the bus",
        pb.EVENT_KIND_PASS: f"{seat} passes",
        pb.EVENT_KIND_KNOCK: f"{seat} knocks",
        pb.EVENT_KIND_STOCK_EXHAUSTED: "the stock is out: showdown",
        pb.EVENT_KIND_TURN_LIMIT: f"the turn limit ({event.count}) is reached: showdown",
        pb.EVENT_KIND_ELIMINATED: f"{seat} is out of the game",
        pb.EVENT_KIND_FORFEIT: f"{seat} forfeits (a fault)",
        pb.EVENT_KIND_GAME_OVER: f"{seat} wins the game",
    }
    return [words.get(kind, pb.EventKind.Name(kind))]


def _showdown(event: pb.Event, name: Callable[[int], str]) -> list[str]:
    showdown = event.showdown
    width = max((len(name(hand.seat)) for hand in showdown.hands), default=0)
    lines = [f"showdown of hand {event.hand_number}:"]
    for hand in showdown.hands:
        cards: list[Card] = [card_from_pb(card) for card in hand.cards]
        lines.append(f"  {name(hand.seat):<{width}}  {pretty_cards(cards)}  {hand.rank_name}")
    after = {state.seat: state for state in showdown.seats}
    loser = after.get(event.seat)
    if loser is not None:
        if loser.lives == 0 and not loser.floating:
            lines.append(f"  {name(event.seat)} loses its last life")
        else:
            left = f"{loser.lives} li{'fe' if loser.lives == 1 else 'ves'} left" + (
                ", now floating" if loser.floating else ""
            )
            lines.append(f"  {name(event.seat)} loses a life ({left})")
    return lines


def _cards(count: int) -> str:
    return f"{count} card{'' if count == 1 else 's'}"


async def play_as_human(
    game: str,
    seat: int,
    specs: Sequence[BotSpec],
    *,
    seed: int,
    timing: Timing,
    turn_limit: int,
    policy: FaultPolicy,
    log_path: Path | None,
    bot_log_dir: Path | None,
    seat_name: str = "you",
    person: HumanSeat | None = None,
) -> MatchResult:
    """Start the bots (``specs``: the other seats, in order), play one game with a person in ``seat`` (at the
    terminal, or ``person``: a seat of its own, such as the browser's), stop the bots."""
    seats = [index for index in range(len(specs) + 1) if index != seat]
    bots: list[BotSession | BotFault] = []
    try:
        bots = await start_bots(specs, GameSetup(game, len(specs) + 1, timing, turn_limit), bot_log_dir, seats)
        players = [*bots[:seat], person or HumanSeat(seat_name), *bots[seat:]]
        match = Match(
            game,
            players,
            seed=seed,
            game_id=f"play-{seed}",
            timing=timing,
            turn_limit=turn_limit,
            policy=policy,
            log_path=log_path,
            players=[*(spec.name for spec in specs[:seat]), seat_name, *(spec.name for spec in specs[seat:])],
        )
        return await match.play()
    finally:
        await stop_bots(bots)
