"""Conversion between the engine's values and the protocol's messages (proto/referee/v2/bot.proto).

Both directions live here, through the protobuf library: the referee encodes
actions and builds the messages it sends besides its requests (handshake,
game start, fault notice); the Python bot kit decodes them back into the
engine's own types, so a Python bot can use :func:`referee.engine.hands.hand_rank`
and friends directly. Decoding what a bot sent raises
:class:`MalformedMessage` with the reason.

The referee's requests and game ends are written by the hand-written codec
of :mod:`referee.protocol.codec`, from the tables here; the tests hold its bytes equal
to the reference encoder's (``tests/reference_encoder.py``), which builds the
same messages field by field through the protobuf library.

Events are numbered: the game's ``events[i]`` is sent with ``sequence``
``i + 1``. A SHOWDOWN event carries the hands revealed at that hand's
showdown (the game's ``hand_results[hand_number - 1]``: every hand ends with
exactly one result, so results are indexed by hand number).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee import __version__
from referee.common.errors import RefereeError
from referee.engine.cards import DECK, Card
from referee.engine.games.bastard_brag import FACE_UP_SLOT, BastardBragObservation
from referee.engine.games.game import (
    Action,
    ActionKind,
    EndReason,
    Event,
    EventKind,
    Game,
    HandResult,
    Observation,
    Phase,
    action,
)
from referee.engine.games.stop_the_bus import StopTheBusObservation
from referee.protocol.clock import Timing
from referee.protocol.faults import BotFault, FaultKind, FaultPolicy, PolicyMode
from referee.protocol.setup import GameSetup
from referee.v2 import bot_pb2 as pb

PROTOCOL_VERSION = 2
SERVICE = "referee.v2.BotService"
PLAY_METHOD = f"/{SERVICE}/Play"

# A bot's private note on a decision (Decision.note): the most of one note, and of one seat's notes in a game,
# the referee keeps (referee.records.notes); a kit cuts a note to NOTE_BYTES before sending it.
NOTE_BYTES = 1024
GAME_NOTE_BYTES = 64 * 1024
CUT_MARK = " [cut]"  # what ends a note that was cut


def cut_note(text: str, limit: int = NOTE_BYTES) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` bytes of UTF-8 at a character boundary, and whether anything was cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, False
    # Decoding with "ignore" drops the bytes of a character the cut split: what is left is whole characters.
    return data[:limit].decode("utf-8", "ignore"), True


GAME_TO_PB = {"stop_the_bus": pb.GAME_STOP_THE_BUS, "bastard_brag": pb.GAME_BASTARD_BRAG}
GAME_FROM_PB = {value: name for name, value in GAME_TO_PB.items()}

ACTION_KIND_TO_PB = {
    ActionKind.DRAW: pb.ACTION_KIND_DRAW,
    ActionKind.TAKE: pb.ACTION_KIND_TAKE,
    ActionKind.DISCARD: pb.ACTION_KIND_DISCARD,
    ActionKind.STOP: pb.ACTION_KIND_STOP,
    ActionKind.PASS: pb.ACTION_KIND_PASS,
    ActionKind.EXCHANGE: pb.ACTION_KIND_EXCHANGE,
    ActionKind.EXCHANGE_ALL: pb.ACTION_KIND_EXCHANGE_ALL,
    ActionKind.KNOCK: pb.ACTION_KIND_KNOCK,
}
ACTION_KIND_FROM_PB = {value: kind for kind, value in ACTION_KIND_TO_PB.items()}

EVENT_KIND_TO_PB = {
    EventKind.DEAL: pb.EVENT_KIND_DEAL,
    EventKind.DRAW: pb.EVENT_KIND_DRAW,
    EventKind.TAKE: pb.EVENT_KIND_TAKE,
    EventKind.DISCARD: pb.EVENT_KIND_DISCARD,
    EventKind.STOP: pb.EVENT_KIND_STOP,
    EventKind.PASS: pb.EVENT_KIND_PASS,
    EventKind.RECYCLE: pb.EVENT_KIND_RECYCLE,
    EventKind.EXCHANGE: pb.EVENT_KIND_EXCHANGE,
    EventKind.EXCHANGE_ALL: pb.EVENT_KIND_EXCHANGE_ALL,
    EventKind.KNOCK: pb.EVENT_KIND_KNOCK,
    EventKind.STOCK_EXHAUSTED: pb.EVENT_KIND_STOCK_EXHAUSTED,
    EventKind.TURN_LIMIT: pb.EVENT_KIND_TURN_LIMIT,
    EventKind.SHOWDOWN: pb.EVENT_KIND_SHOWDOWN,
    EventKind.ELIMINATED: pb.EVENT_KIND_ELIMINATED,
    EventKind.FORFEIT: pb.EVENT_KIND_FORFEIT,
    EventKind.GAME_OVER: pb.EVENT_KIND_GAME_OVER,
}
EVENT_KIND_FROM_PB = {value: kind for kind, value in EVENT_KIND_TO_PB.items()}

PHASE_TO_PB = {Phase.NORMAL: pb.PHASE_NORMAL, Phase.FINAL: pb.PHASE_FINAL, Phase.OVER: pb.PHASE_OVER}
PHASE_FROM_PB = {value: phase for phase, value in PHASE_TO_PB.items()}

HAND_ENDING_TO_PB = {
    EndReason.STOP: pb.HAND_ENDING_STOP,
    EndReason.KNOCK: pb.HAND_ENDING_KNOCK,
    EndReason.STOCK_EXHAUSTED: pb.HAND_ENDING_STOCK_EXHAUSTED,
    EndReason.TURN_LIMIT: pb.HAND_ENDING_TURN_LIMIT,
}

FAULT_KIND_TO_PB = {kind: getattr(pb, f"FAULT_KIND_{kind.name}") for kind in FaultKind}
POLICY_TO_PB = {PolicyMode.FORFEIT: pb.FAULT_POLICY_FORFEIT, PolicyMode.DEFAULT_ACTION: pb.FAULT_POLICY_DEFAULT_ACTION}

# The protocol numbers suits from 1 (0 means unset); the engine from 0.
SUIT_OFFSET = 1


class MalformedMessage(RefereeError, ValueError):
    """A message from the other side does not hold a valid value."""


# ----- cards and actions ----------------------------------------------------


def card_to_pb(card: Card, message: pb.Card | None = None) -> pb.Card:
    """Return (or fill) a protocol ``Card``."""
    # protoc's stubs type an enum field as its wrapper class, where the message holds (and takes) an int.
    if message is None:
        return pb.Card(rank=card.rank, suit=card.suit + SUIT_OFFSET)  # type: ignore[arg-type]
    message.rank = card.rank
    message.suit = card.suit + SUIT_OFFSET  # type: ignore[assignment]
    return message


def card_from_pb(message: pb.Card, where: str = "card") -> Card:
    """Read a protocol ``Card``; raise :class:`MalformedMessage` naming ``where`` if it is not a card."""
    rank, suit = message.rank, message.suit
    if not (2 <= rank <= 14 and 1 <= suit <= 4):
        raise MalformedMessage(
            f"{where}: rank {rank}, suit {suit} is not a card (rank must be 2..14, suit SUIT_CLUBS..SUIT_SPADES)"
        )
    return DECK[(rank - 2) * 4 + suit - SUIT_OFFSET]


def action_to_pb(act: Action, message: pb.Action | None = None) -> pb.Action:
    """Return (or fill) a protocol ``Action``."""
    if message is None:
        message = pb.Action()
    message.kind = ACTION_KIND_TO_PB[act.kind]
    if act.card is not None:
        message.card.rank = act.card.rank
        message.card.suit = act.card.suit + SUIT_OFFSET  # type: ignore[assignment]  # an int: see card_to_pb
    if act.slot is not None:
        message.slot = act.slot
    return message


_NEEDS_CARD = {ActionKind.DISCARD, ActionKind.EXCHANGE, ActionKind.EXCHANGE_ALL}


def action_from_pb(message: pb.Action) -> Action:
    """Read a protocol ``Action``; raise :class:`MalformedMessage` if it is empty or unknown."""
    # Every action there is, written the one way a protocol library writes it, is found by its
    # bytes; anything else (an invalid action, or a valid one with stray fields) is read field by field.
    found = ACTION_BY_BYTES.get(message.SerializeToString())
    if found is not None:
        return found
    return _read_action(message)


def _read_action(message: pb.Action) -> Action:
    kind = ACTION_KIND_FROM_PB.get(message.kind)
    if kind is None:
        if message.kind == pb.ACTION_KIND_UNSPECIFIED:
            raise MalformedMessage("empty action: the reply's action has no kind")
        raise MalformedMessage(
            f"unknown action kind {message.kind}; known kinds are 1..8 (ACTION_KIND_DRAW..ACTION_KIND_KNOCK)"
        )
    if kind not in _NEEDS_CARD:
        return action(kind)
    if not message.HasField("card"):
        raise MalformedMessage(f"action {kind.value!r} needs a card, and none was given")
    card = card_from_pb(message.card, f"action {kind.value!r}")
    if kind is ActionKind.EXCHANGE:
        if not message.HasField("slot"):
            raise MalformedMessage("action 'exchange' needs a centre slot (0, 1 or 2), and none was given")
        if message.slot > FACE_UP_SLOT:
            raise MalformedMessage(f"action 'exchange': centre slot must be 0, 1 or 2, got {message.slot}")
        return action(kind, card, message.slot)
    return action(kind, card)


def _every_action() -> list[Action]:
    actions = [action(kind) for kind in ActionKind if kind not in _NEEDS_CARD]
    for card in DECK:
        actions.append(action(ActionKind.DISCARD, card))
        actions.extend(action(ActionKind.EXCHANGE, card, slot) for slot in range(FACE_UP_SLOT + 1))
        actions.append(action(ActionKind.EXCHANGE_ALL, card))
    return actions


ACTION_BY_BYTES: dict[bytes, Action] = {action_to_pb(act).SerializeToString(): act for act in _every_action()}


# ----- events and observations ------------------------------------------------


def showdown_result(game: Game, event: Event) -> HandResult:
    """The result of the hand whose SHOWDOWN ``event`` is (every hand has exactly one result)."""
    return game.hand_results[event.hand_number - 1]


def out_of_game_after(game: Game, hand_number: int) -> frozenset[int]:
    """Seats out of the game once hand ``hand_number`` was over (eliminated or forfeited by then)."""
    return frozenset(seat for result in game.hand_results[:hand_number] for seat in result.eliminated)


def event_from_pb(message: pb.Event) -> Event:
    """Read a protocol ``Event`` back into the engine's :class:`Event` (its showdown is read apart)."""
    return Event(
        EVENT_KIND_FROM_PB[message.kind],
        message.hand_number,
        message.seat if message.HasField("seat") else None,
        card_from_pb(message.card) if message.HasField("card") else None,
        card_from_pb(message.taken) if message.HasField("taken") else None,
        message.slot if message.HasField("slot") else None,
        message.count if message.HasField("count") else None,
    )


def observation_from_pb(
    message: pb.Observation, events: Sequence[Event] = (), legal: Sequence[Action] = ()
) -> Observation:
    """Read an ``Observation`` message back into the engine's observation type.

    ``events`` becomes ``hand_events`` as given (the bot kit keeps the
    current hand's events from the stream).
    """
    seats = message.seats
    common: dict[str, Any] = {
        "game": GAME_FROM_PB[message.game],
        "seat": message.seat,
        "num_players": message.num_players,
        "hand_number": message.hand_number,
        "dealer": message.dealer,
        "phase": PHASE_FROM_PB[message.phase],
        "current_seat": message.seat if legal else None,
        "hand": tuple(card_from_pb(card) for card in message.hand),
        "lives": tuple(seat.lives for seat in seats),
        "floating": tuple(seat.floating for seat in seats),
        "in_game": tuple(seat.in_game for seat in seats),
        "in_hand": tuple(seat.in_hand for seat in seats),
        "ender": message.ender if message.HasField("ender") else None,
        "turns_this_hand": message.turns_this_hand,
        "turn_limit": message.turn_limit,
        "hand_events": tuple(events),
        "legal_actions": tuple(legal),
    }
    if message.WhichOneof("view") == "stop_the_bus":
        view = message.stop_the_bus
        return StopTheBusObservation(
            **common,
            discard_top=card_from_pb(view.discard_top) if view.HasField("discard_top") else None,
            stock_count=view.stock_count,
            discard_count=view.discard_count,
            drawn_card=card_from_pb(view.drawn_card) if view.HasField("drawn_card") else None,
            took_discard=view.took_discard,
        )
    slots = {entry.slot: entry for entry in message.bastard_brag.centre}
    shown = [
        card_from_pb(slots[slot].card) if slot in slots and slots[slot].HasField("card") else None for slot in range(3)
    ]
    # The face-up slot is always shown; a message without it is read as it always was (the bot kit's view).
    return BastardBragObservation(**common, centre=(shown[0], shown[1], shown[2]))  # type: ignore[arg-type]


# ----- the messages the referee sends besides decision requests ----------------------


def time_limits(timing: Timing) -> pb.TimeLimits:
    """A game's time limits, as the handshake and every game start tell them."""
    return pb.TimeLimits(move_time_ms=timing.move_time_ms, time_bank_ms=timing.time_bank_ms, grace_ms=timing.grace_ms)


def handshake_message(setup: GameSetup) -> pb.Handshake:
    """The Handshake a bot is sent first: the protocol versions, this referee's version, the game, the limits."""
    return pb.Handshake(
        protocol_versions=[PROTOCOL_VERSION],
        referee_version=__version__,
        game=GAME_TO_PB[setup.game],
        num_players=setup.num_players,
        time_limits=time_limits(setup.timing),
        turn_limit=setup.turn_limit,
    )


def game_start(
    game: Game, game_id: str, seat: int, players: Sequence[str], timing: Timing, random_seed: int, policy: FaultPolicy
) -> pb.GameStart:
    """The GameStart of ``seat``: the game, the table, the limits, the seat's own random seed and the fault policy."""
    return pb.GameStart(
        game_id=game_id,
        game=GAME_TO_PB[game.name],
        num_players=game.num_players,
        seat=seat,
        players=players,
        time_limits=time_limits(timing),
        turn_limit=game.turn_limit,
        random_seed=random_seed,
        fault_policy=POLICY_TO_PB[policy.mode],
        max_faults=policy.max_faults,
    )


def fault_notice(
    game_id: str, decision_number: int, fault: BotFault, faults_this_game: int, replaced_by: Action | None
) -> pb.FaultNotice:
    """The notice of a bot's fault: what it was, and the action played instead (None: the bot forfeits)."""
    notice = pb.FaultNotice(
        game_id=game_id,
        decision_number=decision_number,
        kind=FAULT_KIND_TO_PB[fault.kind],
        detail=fault.detail,
        forfeited=replaced_by is None,
        faults_this_game=faults_this_game,
    )
    if replaced_by is not None:
        action_to_pb(replaced_by, notice.replaced_by)
    return notice
