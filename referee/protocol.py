"""Conversion between the engine's values and the protocol's messages (proto/referee/v1/bot.proto).

Both directions live here: the referee encodes observations, events and
actions; the Python bot kit decodes them back into the engine's own types, so
a Python bot can use :func:`referee.hands.hand_rank` and friends directly.
Decoding what a bot sent raises :class:`MalformedMessage` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from referee.cards import DECK, Card
from referee.errors import RefereeError
from referee.games.base import (
    Action,
    ActionKind,
    Event,
    EventKind,
    GameResult,
    HandResult,
    Observation,
    Phase,
    action,
)
from referee.games.bastard_brag import FACE_UP_SLOT, BastardBragObservation
from referee.games.stop_the_bus import StopTheBusObservation
from referee.v1 import bot_pb2 as pb

PROTOCOL_VERSION = pb.PROTOCOL_VERSION

GAME_TO_PB = {"stop_the_bus": pb.STOP_THE_BUS, "bastard_brag": pb.BASTARD_BRAG}
GAME_FROM_PB = {value: name for name, value in GAME_TO_PB.items()}

ACTION_KIND_TO_PB = {
    ActionKind.DRAW: pb.DRAW,
    ActionKind.TAKE: pb.TAKE,
    ActionKind.DISCARD: pb.DISCARD,
    ActionKind.STOP: pb.STOP,
    ActionKind.PASS: pb.PASS,
    ActionKind.EXCHANGE: pb.EXCHANGE,
    ActionKind.EXCHANGE_ALL: pb.EXCHANGE_ALL,
    ActionKind.KNOCK: pb.KNOCK,
}
ACTION_KIND_FROM_PB = {value: kind for kind, value in ACTION_KIND_TO_PB.items()}

EVENT_KIND_TO_PB = {
    EventKind.DEAL: pb.DEAL,
    EventKind.DRAW: pb.DRAW_STOCK,
    EventKind.TAKE: pb.TAKE_DISCARD,
    EventKind.DISCARD: pb.DISCARDED,
    EventKind.STOP: pb.STOPPED,
    EventKind.PASS: pb.PASSED,
    EventKind.RECYCLE: pb.RECYCLE,
    EventKind.EXCHANGE: pb.EXCHANGED,
    EventKind.EXCHANGE_ALL: pb.EXCHANGED_ALL,
    EventKind.KNOCK: pb.KNOCKED,
    EventKind.STOCK_EXHAUSTED: pb.STOCK_EXHAUSTED,
    EventKind.TURN_LIMIT: pb.TURN_LIMIT,
    EventKind.SHOWDOWN: pb.SHOWDOWN,
    EventKind.ELIMINATED: pb.ELIMINATED,
    EventKind.FORFEIT: pb.FORFEITED,
    EventKind.GAME_OVER: pb.GAME_OVER,
}
EVENT_KIND_FROM_PB = {value: kind for kind, value in EVENT_KIND_TO_PB.items()}

PHASE_TO_PB = {Phase.NORMAL: pb.NORMAL, Phase.FINAL: pb.FINAL, Phase.OVER: pb.OVER}
PHASE_FROM_PB = {value: phase for phase, value in PHASE_TO_PB.items()}

# The protocol numbers suits from 1 (0 means unset); the engine from 0.
_SUIT_OFFSET = 1


class MalformedMessage(RefereeError, ValueError):
    """A message from the other side does not hold a valid value."""


# ----- cards and actions ----------------------------------------------------


def card_to_pb(card: Card, message: pb.Card | None = None) -> pb.Card:
    """Return (or fill) a protocol ``Card``."""
    if message is None:
        return pb.Card(rank=card.rank, suit=card.suit + _SUIT_OFFSET)
    message.rank = card.rank
    message.suit = card.suit + _SUIT_OFFSET
    return message


def card_from_pb(message: pb.Card, where: str = "card") -> Card:
    """Read a protocol ``Card``; raise :class:`MalformedMessage` naming ``where`` if it is not a card."""
    rank, suit = message.rank, message.suit
    if not (2 <= rank <= 14 and 1 <= suit <= 4):
        raise MalformedMessage(
            f"{where}: rank {rank}, suit {suit} is not a card (rank must be 2..14, suit CLUBS..SPADES)"
        )
    return DECK[(rank - 2) * 4 + suit - _SUIT_OFFSET]


def action_to_pb(act: Action, message: pb.Action | None = None) -> pb.Action:
    """Return (or fill) a protocol ``Action``."""
    if message is None:
        message = pb.Action()
    message.kind = ACTION_KIND_TO_PB[act.kind]
    if act.card is not None:
        message.card.rank = act.card.rank
        message.card.suit = act.card.suit + _SUIT_OFFSET
    if act.slot is not None:
        message.slot = act.slot
    return message


_NEEDS_CARD = {ActionKind.DISCARD, ActionKind.EXCHANGE, ActionKind.EXCHANGE_ALL}


def action_from_pb(message: pb.Action) -> Action:
    """Read a protocol ``Action``; raise :class:`MalformedMessage` if it is empty or unknown."""
    kind = ACTION_KIND_FROM_PB.get(message.kind)
    if kind is None:
        if message.kind == pb.ACTION_KIND_UNSPECIFIED:
            raise MalformedMessage("empty action: the reply's action has no kind")
        raise MalformedMessage(f"unknown action kind {message.kind}; known kinds are 1..8 (DRAW..KNOCK)")
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


# ----- events and observations ------------------------------------------------


def fill_events(target, events: Iterable[Event]) -> None:
    """Append ``events`` to a repeated ``Event`` field."""
    for event in events:
        message = target.add(kind=EVENT_KIND_TO_PB[event.kind], hand_number=event.hand_number)
        if event.seat is not None:
            message.seat = event.seat
        if event.card is not None:
            card_to_pb(event.card, message.card)
        if event.taken is not None:
            card_to_pb(event.taken, message.taken)
        if event.slot is not None:
            message.slot = event.slot
        if event.count is not None:
            message.count = event.count


def event_from_pb(message: pb.Event) -> Event:
    """Read a protocol ``Event`` back into the engine's :class:`Event`."""
    return Event(
        EVENT_KIND_FROM_PB[message.kind],
        message.hand_number,
        message.seat if message.HasField("seat") else None,
        card_from_pb(message.card) if message.HasField("card") else None,
        card_from_pb(message.taken) if message.HasField("taken") else None,
        message.slot if message.HasField("slot") else None,
        message.count if message.HasField("count") else None,
    )


def fill_seats(target, lives: Sequence[int], floating: Sequence[bool], in_game, in_hand) -> None:
    """Append every seat's public state to a repeated ``SeatState`` field."""
    for seat in range(len(lives)):
        target.add(seat=seat, lives=lives[seat], floating=floating[seat], in_game=in_game[seat], in_hand=in_hand[seat])


def fill_observation(message: pb.Observation, obs: Observation) -> None:
    """Write ``obs`` into an ``Observation`` message (legal actions and events are sent apart)."""
    message.game = GAME_TO_PB[obs.game]
    message.seat = obs.seat
    message.num_players = obs.num_players
    message.hand_number = obs.hand_number
    message.dealer = obs.dealer
    message.phase = PHASE_TO_PB[obs.phase]
    hand = message.hand
    for card in obs.hand:
        hand.add(rank=card.rank, suit=card.suit + _SUIT_OFFSET)
    fill_seats(message.seats, obs.lives, obs.floating, obs.in_game, obs.in_hand)
    if obs.ender is not None:
        message.ender = obs.ender
    message.turns_this_hand = obs.turns_this_hand
    message.turn_limit = obs.turn_limit
    if isinstance(obs, StopTheBusObservation):
        view = message.stop_the_bus
        if obs.discard_top is not None:
            card_to_pb(obs.discard_top, view.discard_top)
        view.stock_count = obs.stock_count
        view.discard_count = obs.discard_count
        if obs.drawn_card is not None:
            card_to_pb(obs.drawn_card, view.drawn_card)
            view.took_discard = obs.took_discard
    else:
        centre = message.bastard_brag.centre
        for slot, card in enumerate(obs.centre):
            entry = centre.add(slot=slot, face_up=slot == FACE_UP_SLOT)
            if card is not None:
                card_to_pb(card, entry.card)


def observation_from_pb(
    message: pb.Observation, events: Sequence[Event] = (), legal: Sequence[Action] = ()
) -> Observation:
    """Read an ``Observation`` message back into the engine's observation type.

    The message carries the events since the seat's last decision rather than
    the hand's whole history; ``events`` becomes ``hand_events`` as given.
    """
    seats = message.seats
    common = dict(
        game=GAME_FROM_PB[message.game],
        seat=message.seat,
        num_players=message.num_players,
        hand_number=message.hand_number,
        dealer=message.dealer,
        phase=PHASE_FROM_PB[message.phase],
        current_seat=message.seat if legal else None,
        hand=tuple(card_from_pb(card) for card in message.hand),
        lives=tuple(seat.lives for seat in seats),
        floating=tuple(seat.floating for seat in seats),
        in_game=tuple(seat.in_game for seat in seats),
        in_hand=tuple(seat.in_hand for seat in seats),
        ender=message.ender if message.HasField("ender") else None,
        turns_this_hand=message.turns_this_hand,
        turn_limit=message.turn_limit,
        hand_events=tuple(events),
        legal_actions=tuple(legal),
    )
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
    centre = tuple(
        card_from_pb(slots[slot].card) if slot in slots and slots[slot].HasField("card") else None for slot in range(3)
    )
    return BastardBragObservation(**common, centre=centre)


# ----- results ----------------------------------------------------------------


def hand_result_to_pb(result: HandResult, game_id: str, in_game: Sequence[bool]) -> pb.Notification:
    """Return the ``Notify(HandResult)`` message of a finished hand."""
    note = pb.Notification()
    message = note.hand_result
    message.game_id = game_id
    message.hand_number = result.hand_number
    message.dealer = result.dealer
    message.ended_by = result.ended_by.value
    for seat, cards in sorted(result.hands.items()):
        revealed = message.hands.add(seat=seat, rank_name=str(result.ranks[seat]))
        for card in cards:
            revealed.cards.add(rank=card.rank, suit=card.suit + _SUIT_OFFSET)
    if result.loser is not None:
        message.loser = result.loser
    fill_seats(message.seats, result.lives_after, result.floating_after, in_game, [False] * len(in_game))
    message.eliminated.extend(result.eliminated)
    return note


def game_over_to_pb(result: GameResult, game_id: str) -> pb.Notification:
    """Return the ``Notify(GameOver)`` message of a finished game."""
    note = pb.Notification()
    note.game_over.game_id = game_id
    note.game_over.placements.extend(result.placements)
    note.game_over.hands_played = result.hands_played
    return note
