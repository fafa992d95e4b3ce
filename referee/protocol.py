"""Conversion between the engine's values and the protocol's messages (proto/referee/v2/bot.proto).

Both directions live here: the referee encodes observations, events and
actions; the Python bot kit decodes them back into the engine's own types, so
a Python bot can use :func:`referee.hands.hand_rank` and friends directly.
Decoding what a bot sent raises :class:`MalformedMessage` with the reason.

The ``fill_*`` and ``*_to_pb`` functions build messages field by field from
the engine's values (an :class:`Observation` for a seat's view): they are the
reference. The referee's hot path uses :class:`RequestEncoder`, which writes
each DecisionRequest straight to wire bytes from the game's state, encoding
every constant part (cards, actions, a game's events, the seat table) once;
tests/test_request_encoding.py checks that its bytes equal the reference
message's, built from ``Game.observation``, on every decision of many games.
The other way, the referee reads the usual reply (a decision number and a
known action, nothing else) straight from its bytes with
:func:`decision_from_bytes`, and any other reply with the library; the same
tests check that the two read the same.

Events are numbered: the game's ``events[i]`` is sent with ``sequence``
``i + 1``. A SHOWDOWN event carries the hands revealed at that hand's
showdown (the game's ``hand_results[hand_number - 1]``: every hand ends with
exactly one result, so results are indexed by hand number).
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.cards import DECK, Card
from referee.errors import RefereeError
from referee.games.base import (
    TAKE,
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
from referee.games.bastard_brag import FACE_UP_SLOT, BastardBrag, BastardBragObservation
from referee.games.stop_the_bus import StopTheBus, StopTheBusObservation
from referee.hands import HandRank
from referee.v2 import bot_pb2 as pb

PROTOCOL_VERSION = 2
SERVICE = "referee.v2.BotService"
PLAY_METHOD = f"/{SERVICE}/Play"

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
HAND_ENDING_FROM_PB = {value: reason for reason, value in HAND_ENDING_TO_PB.items()}

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
            f"{where}: rank {rank}, suit {suit} is not a card (rank must be 2..14, suit SUIT_CLUBS..SUIT_SPADES)"
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
    # Every action there is, written the one way a protocol library writes it, is found by its
    # bytes; anything else (an invalid action, or a valid one with stray fields) is read field by field.
    found = _ACTION_BY_BYTES.get(message.SerializeToString())
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


_ACTION_BY_BYTES: dict[bytes, Action] = {action_to_pb(act).SerializeToString(): act for act in _every_action()}


# ----- events and observations ------------------------------------------------


def showdown_result(game: Game, event: Event) -> HandResult:
    """The result of the hand whose SHOWDOWN ``event`` is (every hand has exactly one result)."""
    return game.hand_results[event.hand_number - 1]


def out_of_game_after(game: Game, hand_number: int) -> frozenset[int]:
    """Seats out of the game once hand ``hand_number`` was over (eliminated or forfeited by then)."""
    return frozenset(seat for result in game.hand_results[:hand_number] for seat in result.eliminated)


def fill_showdown(message: pb.Showdown, result: HandResult, out_of_game: frozenset[int]) -> None:
    """Write what a hand's showdown revealed: its ending, every hand compared, every seat after."""
    message.ending = HAND_ENDING_TO_PB[result.ended_by]
    for seat, cards in sorted(result.hands.items()):
        revealed = message.hands.add(seat=seat, rank_name=str(result.ranks[seat]))
        for card in cards:
            revealed.cards.add(rank=card.rank, suit=card.suit + _SUIT_OFFSET)
    for seat, lives in enumerate(result.lives_after):
        message.seats.add(
            seat=seat, lives=lives, floating=result.floating_after[seat], in_game=seat not in out_of_game
        )


def fill_event(message: pb.Event, game: Game, index: int) -> None:
    """Write the game's ``events[index]`` into an ``Event`` message, numbered ``index + 1``."""
    event = game.events[index]
    message.sequence = index + 1
    message.hand_number = event.hand_number
    message.kind = EVENT_KIND_TO_PB[event.kind]
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
    if event.kind is EventKind.SHOWDOWN:
        fill_showdown(message.showdown, showdown_result(game, event), out_of_game_after(game, event.hand_number))


def fill_events(target, game: Game, first: int, stop: int | None = None) -> None:
    """Append the game's events ``first`` up to ``stop`` (default: all) to a repeated ``Event`` field."""
    for index in range(first, len(game.events) if stop is None else stop):
        fill_event(target.add(), game, index)


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


def decision_request_to_pb(
    game: Game,
    game_id: str,
    decision_number: int,
    first_event: int,
    move_time_ms: int,
    time_bank_ms: int,
    default: Action | None = None,
) -> pb.DecisionRequest:
    """The reference DecisionRequest for the game's current seat, built from ``Game.observation``.

    :class:`RequestEncoder` writes the same bytes faster; a test holds them equal.
    """
    seat = game.current_seat
    obs = game.observation(seat)
    message = pb.DecisionRequest(
        game_id=game_id, decision_number=decision_number, seat=seat, move_time_ms=move_time_ms,
        time_bank_ms=time_bank_ms,
    )  # fmt: skip
    fill_observation(message.observation, obs)
    fill_events(message.events, game, first_event)
    for act in obs.legal_actions:
        action_to_pb(act, message.legal_actions.add())
    if default is not None:
        action_to_pb(default, message.default_action)
    return message


def game_end_to_pb(game: Game, game_id: str, first_event: int, is_void: bool) -> pb.GameEnd:
    """The reference GameEnd of a game that is over, for a seat whose messages so far carried the events
    before ``first_event``.

    :meth:`RequestEncoder.game_end` writes the same bytes faster; a test holds them equal.
    """
    result = game.result()
    message = pb.GameEnd(
        game_id=game_id, placements=result.placements, hands_played=result.hands_played,
        forfeited=result.forfeited, is_void=is_void,
    )  # fmt: skip
    fill_events(message.events, game, first_event)
    return message


def observation_from_pb(
    message: pb.Observation, events: Sequence[Event] = (), legal: Sequence[Action] = ()
) -> Observation:
    """Read an ``Observation`` message back into the engine's observation type.

    ``events`` becomes ``hand_events`` as given (the bot kit keeps the
    current hand's events from the stream).
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


# ----- the referee's fast path: DecisionRequests as wire bytes ----------------------
#
# Protocol buffers' wire format (https://protobuf.dev/programming-guides/encoding/):
# a field is a key, varint(number << 3 | wire type), then a varint (type 0) or a
# varint length and that many bytes (type 2: strings, messages, each element of a
# repeated message). Fields appear in field-number order, as the protobuf
# library writes them, and proto3 leaves out a plain scalar that is zero or
# false (an ``optional`` one is written whenever it is set), so these bytes are
# exactly what ``SerializeToString`` gives for the reference message.

_VARINT, _LENGTH_DELIMITED = 0, 2
_ONE_BYTE = tuple(bytes((value,)) for value in range(0x80))


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _scalar(number: int, value: int) -> bytes:
    """A scalar field: nothing when zero (proto3 leaves it out), else its key and value."""
    if value < 0x80:
        return _SMALL_SCALAR[number][value]
    return _key(number, _VARINT) + _varint(value)


# Scalar fields 1..15 with values below 128, made once: _SMALL_SCALAR[number][value].
_SMALL_SCALAR = (None,) + tuple(
    (b"",) + tuple(_key(number, _VARINT) + _ONE_BYTE[value] for value in range(1, 0x80)) for number in range(1, 16)
)


def _optional(number: int, value: int | None) -> bytes:
    """An ``optional`` scalar: written whenever it is set, zero included."""
    return b"" if value is None else _key(number, _VARINT) + _varint(value)


def _embedded(number: int, body: bytes) -> bytes:
    """A message field (or one element of a repeated one) holding ``body``."""
    return _key(number, _LENGTH_DELIMITED) + _varint(len(body)) + body


def _packed(number: int, values: Sequence[int]) -> bytes:
    """A repeated scalar field, packed (proto3's default): nothing when empty, else its key and the values."""
    return _embedded(number, b"".join(map(_varint, values))) if values else b""


def _card_fields(number: int) -> dict[Card, bytes]:
    """Every card as a Card field numbered ``number``."""
    return {card: _embedded(number, _scalar(1, card.rank) + _scalar(2, card.suit + _SUIT_OFFSET)) for card in DECK}


# Cards as the fields that hold them: Action.card, Event.card and .taken, Observation.hand,
# StopTheBusView.discard_top and .drawn_card, CentreSlot.card.
_ACTION_CARD, _EVENT_CARD, _EVENT_TAKEN, _HAND_CARD = _card_fields(2), _card_fields(5), _card_fields(6), _card_fields(7)
_DISCARD_TOP, _DRAWN_CARD, _CENTRE_CARD = _card_fields(1), _card_fields(4), _card_fields(3)
_REVEALED_CARD = _card_fields(2)  # RevealedHand.cards

_PHASE_FIELD = {phase: _scalar(6, PHASE_TO_PB[phase]) for phase in Phase}  # Observation.phase
_TOOK_DISCARD = _scalar(5, True)  # StopTheBusView.took_discard


def _action_body(act: Action) -> bytes:
    body = _scalar(1, ACTION_KIND_TO_PB[act.kind])
    if act.card is not None:
        body += _ACTION_CARD[act.card]
    return body + _optional(3, act.slot)


def _event_body(game: Game, index: int) -> bytes:
    """The bytes of ``fill_event(message, game, index)``: the game's ``events[index]``, numbered."""
    event = game.events[index]
    body = (
        _scalar(1, index + 1)
        + _scalar(2, event.hand_number)
        + _scalar(3, EVENT_KIND_TO_PB[event.kind])
        + _optional(4, event.seat)
    )
    if event.card is not None:
        body += _EVENT_CARD[event.card]
    if event.taken is not None:
        body += _EVENT_TAKEN[event.taken]
    body += _optional(7, event.slot) + _optional(8, event.count)
    if event.kind is EventKind.SHOWDOWN:  # once a hand, on the way from a hand's last reply to the next request
        body += _embedded(9, _showdown_body(showdown_result(game, event), out_of_game_after(game, event.hand_number)))
    return body


def _showdown_body(result: HandResult, out_of_game: frozenset[int]) -> bytes:
    """The bytes of the Showdown that ``fill_showdown(message, result, out_of_game)`` writes."""
    parts = [_scalar(1, HAND_ENDING_TO_PB[result.ended_by])]
    ranks = result.ranks
    for seat, cards in sorted(result.hands.items()):
        revealed = b"".join((_scalar(1, seat), *map(_REVEALED_CARD.__getitem__, cards), _rank_name_field(ranks[seat])))
        parts.append(_embedded(2, revealed))
    floating = result.floating_after
    for seat, lives in enumerate(result.lives_after):
        key = (seat, lives, floating[seat], seat not in out_of_game)
        state = _SHOWDOWN_SEAT.get(key)
        if state is None:
            state = _SHOWDOWN_SEAT[key] = _embedded(3, b"".join(map(_scalar, range(1, 5), key)))
        parts.append(state)
    return b"".join(parts)


# Showdown.seats elements, by (seat, lives, floating, in game): a few hundred at most.
_SHOWDOWN_SEAT: dict[tuple[int, int, bool, bool], bytes] = {}
# RevealedHand.rank_name fields, by rank: a rank's name is made once (there are a few thousand ranks).
_RANK_NAME_FIELD: dict[HandRank, bytes] = {}


def _rank_name_field(rank: HandRank) -> bytes:
    field = _RANK_NAME_FIELD.get(rank)
    if field is None:
        field = _RANK_NAME_FIELD[rank] = _embedded(3, str(rank).encode())
    return field


# Each action as an element of DecisionRequest.legal_actions (field 6) and as
# DecisionRequest.default_action (field 9), by id: Action's hash goes through its
# kind's Python-level enum hash, and ids are safe because each entry keeps its
# action alive. Actions come from referee.games.base.action(), so these stay small.
_LEGAL_FIELD: dict[int, tuple[Action, bytes]] = {}
_DEFAULT_FIELD: dict[int, tuple[Action, bytes]] = {}


def _legal_field(act: Action) -> bytes:
    entry = _LEGAL_FIELD.get(id(act))
    if entry is None:
        entry = _LEGAL_FIELD[id(act)] = (act, _embedded(6, _action_body(act)))
    return entry[1]


def _default_field(act: Action) -> bytes:
    entry = _DEFAULT_FIELD.get(id(act))
    if entry is None:
        entry = _DEFAULT_FIELD[id(act)] = (act, _embedded(9, _action_body(act)))
    return entry[1]


# BastardBragView.centre elements: (slot, the card shown or None) -> bytes.
_CENTRE_SLOT: dict[tuple[int, Card | None], bytes] = {
    (slot, card): _embedded(
        1, _scalar(1, slot) + _scalar(2, slot == FACE_UP_SLOT) + (_CENTRE_CARD[card] if card else b"")
    )
    for slot in range(FACE_UP_SLOT + 1)
    for card in (None, *DECK)
}


class RequestEncoder:
    """Writes one game's DecisionRequests as wire bytes, equal to :func:`decision_request_to_pb`'s.

    The reference is the message built field by field from
    :meth:`Game.observation` (``fill_observation``, ``fill_events``,
    ``action_to_pb``), the one place that decides what a seat may see. This
    encoder reads the same values straight from the game, skipping the
    observation object (a dict, a frozen dataclass and a copy of the hand's
    events at every decision): tests/test_request_encoding.py plays random
    games of both games at every table size, with forfeits, and checks at
    every decision that its bytes equal the reference's, so a change to what
    a seat may see fails that test until this follows.

    What does not change is encoded once: the game id, move time and turn
    limit, each card and action, each public event (a seat's request carries
    the events since its last decision, so each event goes to every seat),
    the start of the observation for a seat in a hand, the seat table (lives,
    floating, in game, in hand) until it changes.
    """

    def __init__(self, game: Game, game_id: str, move_time_ms: int) -> None:
        if not isinstance(game, (StopTheBus, BastardBrag)):  # pragma: no cover - a new game needs its view here
            raise TypeError(f"no request encoding for {type(game).__name__}")
        self._game = game
        self._stop_the_bus = isinstance(game, StopTheBus)
        self._game_id_field = _embedded(1, game_id.encode()) if game_id else b""
        self._move_time_field = _scalar(7, move_time_ms)
        self._game_field = _scalar(1, GAME_TO_PB[game.name])
        self._num_players_field = _scalar(3, game.num_players)
        self._turn_limit_field = _scalar(11, game.turn_limit)
        self._event_bodies: list[bytes] = []  # the game's events so far, each as an Event's bytes
        self._event_fields: list[bytes] = []  # the same, each as a DecisionRequest.events element
        self._openings: dict[tuple, bytes] = {}  # (seat, hand, dealer, phase) -> Observation fields 1..6
        self._seat_tables: dict[tuple, bytes] = {}  # (lives, floating, in game, in hand) -> Observation.seats

    def request(
        self, decision_number: int, time_bank_ms: int, first_event: int, default: Action | None = None
    ) -> bytes:
        """The DecisionRequest asking the game's current seat for decision ``decision_number``.

        It carries the seat's observation and legal actions, the game's
        events from index ``first_event`` on, and ``default`` as the default
        action.
        """
        game = self._game
        event_fields = self._event_fields
        if len(event_fields) < len(game.events):
            self._catch_up_events()
        seat = game.current_seat
        observation = self._observation(game, seat)
        request = [
            self._game_id_field,
            _scalar(2, decision_number),
            _scalar(3, seat),
            b"\x22",  # field 4, the observation
            _varint(len(observation)),
            observation,
            *event_fields[first_event:],
            *map(_legal_field, game.legal_actions()),
            self._move_time_field,
            _scalar(8, time_bank_ms),
        ]
        if default is not None:
            request.append(_default_field(default))
        return b"".join(request)

    def game_end(self, first_event: int, is_void: bool) -> bytes:
        """The GameEnd of the game, which is over, for a seat whose messages so far carried the events before
        ``first_event``: its result, and the events from ``first_event`` on."""
        self._catch_up_events()
        result = self._game.result()
        return b"".join((
            self._game_id_field,
            _packed(2, result.placements),
            _scalar(3, result.hands_played),
            *(_embedded(4, body) for body in self._event_bodies[first_event:]),
            _packed(5, result.forfeited),
            _scalar(6, is_void),
        ))  # fmt: skip

    def _catch_up_events(self) -> None:
        game, bodies = self._game, self._event_bodies
        for index in range(len(bodies), len(game.events)):
            body = _event_body(game, index)
            bodies.append(body)
            self._event_fields.append(_embedded(5, body))

    def _observation(self, game: Game, seat: int) -> bytes:
        """What ``Game.observation(seat)`` holds, but the legal actions and events, as Observation bytes."""
        phase = game.phase
        key = (seat, game.hand_number, game.dealer, phase is Phase.FINAL)  # (an enum's hash is slow; never OVER here)
        opening = self._openings.get(key)
        if opening is None:
            opening = self._openings[key] = b"".join(
                (self._game_field, _scalar(2, seat), self._num_players_field, _scalar(4, game.hand_number),
                 _scalar(5, game.dealer), _PHASE_FIELD[phase])
            )  # fmt: skip
        parts = [
            opening,
            *map(_HAND_CARD.__getitem__, game.hands[seat]),
            self._seat_table(game),
            _optional(9, game.ender),
            _scalar(10, game.turns_this_hand),
            self._turn_limit_field,
        ]
        if self._stop_the_bus:
            # StopTheBus._observe: the pile's top and sizes; the card just drawn, to the seat that drew it.
            discard_pile = game.discard_pile
            view = (_DISCARD_TOP[discard_pile[-1]] if discard_pile else b"") + (
                _scalar(2, len(game.stock)) + _scalar(3, len(discard_pile))
            )
            pending = game.pending if seat == game.current_seat else None
            if pending is not None:
                view += _DRAWN_CARD[pending[1]] + (_TOOK_DISCARD if pending[0] is TAKE else b"")
            parts.append(b"\x62" + _varint(len(view)) + view)  # field 12, stop_the_bus
        else:
            # BastardBrag._observe: a face-down card only to the seat that put it there.
            centre, known_to = game.centre, game.centre_known_to
            view = (
                _CENTRE_SLOT[0, centre[0] if known_to[0] == seat else None]
                + _CENTRE_SLOT[1, centre[1] if known_to[1] == seat else None]
                + _CENTRE_SLOT[FACE_UP_SLOT, centre[FACE_UP_SLOT]]
            )
            parts.append(b"\x6a" + _varint(len(view)) + view)  # field 13, bastard_brag
        return b"".join(parts)

    def _seat_table(self, game: Game) -> bytes:
        key = (tuple(game.lives), tuple(game.floating), tuple(game.in_game), tuple(game.in_hand))
        table = self._seat_tables.get(key)
        if table is None:
            lives, floating, in_game, in_hand = key
            table = self._seat_tables[key] = b"".join(
                _embedded(8, b"".join((_scalar(1, seat), _scalar(2, lives[seat]), _scalar(3, floating[seat]),
                                       _scalar(4, in_game[seat]), _scalar(5, in_hand[seat]))))
                for seat in range(len(lives))
            )  # fmt: skip
        return table


def play_request(sequence: int, field: int, body: bytes) -> bytes:
    """A PlayRequest's bytes: ``sequence`` and the message ``body`` in oneof ``field`` (2..6)."""
    return _scalar(1, sequence) + _embedded(field, body)


# ----- the referee's fast path: a reply's decision read from its wire bytes ------------

_DECISION_KEY = 2 << 3 | _LENGTH_DELIMITED  # PlayResponse.decision
_DECISION_NUMBER_KEY = 1 << 3 | _VARINT  # Decision.decision_number
_DECISION_ACTION_KEY = 2 << 3 | _LENGTH_DELIMITED  # Decision.action
_UINT32_LIMIT = 1 << 32
_ONE_BYTE_LENGTHS = 2 + 0x7F  # the longest reply whose decision's length, and so its action's, fits in one byte


def decision_from_bytes(data: bytes) -> tuple[int, Action] | None:
    """The decision number and action of the PlayResponse ``data``, read without the protobuf library;
    None unless ``data`` is a decision with a number and a known action and nothing else, in the form
    every protobuf library writes one (then read the reply with the library, which says what is wrong).

    Such bytes are all but every reply a referee gets, and mean what the library reads in them:
    a PlayResponse whose ``decision`` has that ``decision_number`` and an ``action`` whose bytes are
    the one encoding of an action (``_ACTION_BY_BYTES``), with no ``error``. Reading them here costs
    a few byte comparisons, not three messages built and the action serialized again.
    """
    size = len(data)
    if not 6 <= size <= _ONE_BYTE_LENGTHS:
        return None  # so each length below is one byte
    if data[0] != _DECISION_KEY or data[1] != size - 2 or data[2] != _DECISION_NUMBER_KEY:
        return None  # the length must be the whole rest: a decision and nothing after it
    number = shift = 0
    index = 3
    while True:
        if index >= size or shift > 28:
            return None
        byte = data[index]
        index += 1
        number |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
    if number >= _UINT32_LIMIT or index + 2 > size or data[index] != _DECISION_ACTION_KEY:
        return None
    if data[index + 1] != size - index - 2:
        return None  # the action must run to the end: no error, no other field after it
    found = _ACTION_BY_BYTES.get(data[index + 2 :])
    return None if found is None else (number, found)


DECISION_REQUEST_FIELD = 4  # PlayRequest.decision_request
