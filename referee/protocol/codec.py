"""The referee's hand-written wire codec: DecisionRequests and GameEnds written as bytes, replies read from bytes.

Protocol buffers' wire format (https://protobuf.dev/programming-guides/encoding/):
a field is a key, varint(number << 3 | wire type), then a varint (type 0) or a
varint length and that many bytes (type 2: strings, messages, each element of a
repeated message). Fields appear in field-number order, as the protobuf
library writes them, and proto3 leaves out a plain scalar that is zero or
false (an ``optional`` one is written whenever it is set), so these bytes are
exactly what ``SerializeToString`` gives for the reference message of
:mod:`referee.protocol.messages`. Every field number comes from the generated module's
``*_FIELD_NUMBER`` constants; tests/test_request_encoding.py holds the bytes
equal to the reference's on every decision of many games. What the fast paths
save is measured by bench/overhead.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.engine.cards import DECK, Card
from referee.engine.games.bastard_brag import FACE_UP_SLOT, BastardBrag
from referee.engine.games.game import Action, EventKind, Game, HandResult, Phase
from referee.engine.games.stop_the_bus import StopTheBus
from referee.engine.hands import HandRank
from referee.protocol.clock import TimeControl
from referee.protocol.messages import (
    ACTION_BY_BYTES,
    ACTION_KIND_TO_PB,
    EVENT_KIND_TO_PB,
    GAME_TO_PB,
    HAND_ENDING_TO_PB,
    PHASE_TO_PB,
    SUIT_OFFSET,
    out_of_game_after,
    showdown_result,
)
from referee.v2 import bot_pb2 as pb

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


# Scalar fields 1..15 with values below 128, made once: _SMALL_SCALAR[number][value].
_SMALL_SCALAR: tuple[tuple[bytes, ...], ...] = (
    (),
    *tuple(
        (b"", *tuple(_key(number, _VARINT) + _ONE_BYTE[value] for value in range(1, 128))) for number in range(1, 16)
    ),
)


def _scalar(number: int, value: int) -> bytes:
    """A scalar field: nothing when zero (proto3 leaves it out), else its key and value."""
    if value < 0x80:
        return _SMALL_SCALAR[number][value]
    return _key(number, _VARINT) + _varint(value)


def _optional(number: int, value: int | None) -> bytes:
    """An ``optional`` scalar: written whenever it is set, zero included."""
    return b"" if value is None else _key(number, _VARINT) + _varint(value)


def _embedded(number: int, body: bytes) -> bytes:
    """A message field (or one element of a repeated one) holding ``body``."""
    return _key(number, _LENGTH_DELIMITED) + _varint(len(body)) + body


def _packed(number: int, values: Sequence[int]) -> bytes:
    """A repeated scalar field, packed (proto3's default): nothing when empty, else its key and the values."""
    return _embedded(number, b"".join(map(_varint, values))) if values else b""


# The messages whose fields are written here, by their generated classes (field numbers and nothing else).
_REQUEST, _OBSERVATION, _EVENT, _ACTION = pb.DecisionRequest, pb.Observation, pb.Event, pb.Action
_CARD, _SHOWDOWN, _REVEALED, _SEAT = pb.Card, pb.Showdown, pb.RevealedHand, pb.SeatState
_STOP_THE_BUS, _CENTRE_SLOT, _GAME_END = pb.StopTheBusView, pb.CentreSlot, pb.GameEnd


def _card_fields(number: int) -> dict[Card, bytes]:
    """Every card as a Card field numbered ``number``."""
    return {
        card: _embedded(
            number,
            _scalar(_CARD.RANK_FIELD_NUMBER, card.rank) + _scalar(_CARD.SUIT_FIELD_NUMBER, card.suit + SUIT_OFFSET),
        )
        for card in DECK
    }


# Cards as the fields that hold them.
_ACTION_CARD = _card_fields(_ACTION.CARD_FIELD_NUMBER)
_EVENT_CARD = _card_fields(_EVENT.CARD_FIELD_NUMBER)
_EVENT_TAKEN = _card_fields(_EVENT.TAKEN_FIELD_NUMBER)
_HAND_CARD = _card_fields(_OBSERVATION.HAND_FIELD_NUMBER)
_DISCARD_TOP = _card_fields(_STOP_THE_BUS.DISCARD_TOP_FIELD_NUMBER)
_DRAWN_CARD = _card_fields(_STOP_THE_BUS.DRAWN_CARD_FIELD_NUMBER)
_CENTRE_CARD = _card_fields(_CENTRE_SLOT.CARD_FIELD_NUMBER)
_REVEALED_CARD = _card_fields(_REVEALED.CARDS_FIELD_NUMBER)

_PHASE_FIELD = {phase: _scalar(_OBSERVATION.PHASE_FIELD_NUMBER, PHASE_TO_PB[phase]) for phase in Phase}
_TOOK_DISCARD = _scalar(_STOP_THE_BUS.TOOK_DISCARD_FIELD_NUMBER, True)
_OBSERVATION_KEY = _key(_REQUEST.OBSERVATION_FIELD_NUMBER, _LENGTH_DELIMITED)
_STOP_THE_BUS_KEY = _key(_OBSERVATION.STOP_THE_BUS_FIELD_NUMBER, _LENGTH_DELIMITED)
_BASTARD_BRAG_KEY = _key(_OBSERVATION.BASTARD_BRAG_FIELD_NUMBER, _LENGTH_DELIMITED)


def _action_body(act: Action) -> bytes:
    body = _scalar(_ACTION.KIND_FIELD_NUMBER, ACTION_KIND_TO_PB[act.kind])
    if act.card is not None:
        body += _ACTION_CARD[act.card]
    return body + _optional(_ACTION.SLOT_FIELD_NUMBER, act.slot)


def _event_body(game: Game, index: int) -> bytes:
    """The bytes of ``fill_event(message, game, index)``: the game's ``events[index]``, numbered."""
    event = game.events[index]
    body = (
        _scalar(_EVENT.SEQUENCE_FIELD_NUMBER, index + 1)
        + _scalar(_EVENT.HAND_NUMBER_FIELD_NUMBER, event.hand_number)
        + _scalar(_EVENT.KIND_FIELD_NUMBER, EVENT_KIND_TO_PB[event.kind])
        + _optional(_EVENT.SEAT_FIELD_NUMBER, event.seat)
    )
    if event.card is not None:
        body += _EVENT_CARD[event.card]
    if event.taken is not None:
        body += _EVENT_TAKEN[event.taken]
    body += _optional(_EVENT.SLOT_FIELD_NUMBER, event.slot) + _optional(_EVENT.COUNT_FIELD_NUMBER, event.count)
    if event.kind is EventKind.SHOWDOWN:  # once a hand, on the way from a hand's last reply to the next request
        showdown = _showdown_body(showdown_result(game, event), out_of_game_after(game, event.hand_number))
        body += _embedded(_EVENT.SHOWDOWN_FIELD_NUMBER, showdown)
    return body


def _showdown_body(result: HandResult, out_of_game: frozenset[int]) -> bytes:
    """The bytes of the Showdown that ``fill_showdown(message, result, out_of_game)`` writes."""
    parts = [_scalar(_SHOWDOWN.ENDING_FIELD_NUMBER, HAND_ENDING_TO_PB[result.ended_by])]
    ranks = result.ranks
    for seat, cards in sorted(result.hands.items()):
        revealed = b"".join(
            (
                _scalar(_REVEALED.SEAT_FIELD_NUMBER, seat),
                *map(_REVEALED_CARD.__getitem__, cards),
                _rank_name_field(ranks[seat]),
            )
        )
        parts.append(_embedded(_SHOWDOWN.HANDS_FIELD_NUMBER, revealed))
    floating = result.floating_after
    for seat, lives in enumerate(result.lives_after):
        key = (seat, lives, floating[seat], seat not in out_of_game)
        state = _SHOWDOWN_SEAT.get(key)
        if state is None:
            state = _SHOWDOWN_SEAT[key] = _embedded(
                _SHOWDOWN.SEATS_FIELD_NUMBER, b"".join(map(_scalar, _SEAT_FIELDS, key))
            )
        parts.append(state)
    return b"".join(parts)


# SeatState's fields in order (a showdown's seats leave in_hand out).
_SEAT_FIELDS = (
    _SEAT.SEAT_FIELD_NUMBER,
    _SEAT.LIVES_FIELD_NUMBER,
    _SEAT.FLOATING_FIELD_NUMBER,
    _SEAT.IN_GAME_FIELD_NUMBER,
    _SEAT.IN_HAND_FIELD_NUMBER,
)
# Showdown.seats elements, by (seat, lives, floating, in game): a few hundred at most.
_SHOWDOWN_SEAT: dict[tuple[int, int, bool, bool], bytes] = {}
# RevealedHand.rank_name fields, by rank: a rank's name is made once (there are a few thousand ranks).
_RANK_NAME_FIELD: dict[HandRank, bytes] = {}


def _rank_name_field(rank: HandRank) -> bytes:
    field = _RANK_NAME_FIELD.get(rank)
    if field is None:
        field = _RANK_NAME_FIELD[rank] = _embedded(_REVEALED.RANK_NAME_FIELD_NUMBER, str(rank).encode())
    return field


# Each action as an element of DecisionRequest.legal_actions and as DecisionRequest.default_action, by id:
# Action's hash goes through its kind's Python-level enum hash, and ids are safe because each entry keeps
# its action alive. Actions come from referee.engine.games.game.action(), so these stay small.
_LEGAL_FIELD: dict[int, tuple[Action, bytes]] = {}
_DEFAULT_FIELD: dict[int, tuple[Action, bytes]] = {}


def _legal_field(act: Action) -> bytes:
    entry = _LEGAL_FIELD.get(id(act))
    if entry is None:
        entry = _LEGAL_FIELD[id(act)] = (act, _embedded(_REQUEST.LEGAL_ACTIONS_FIELD_NUMBER, _action_body(act)))
    return entry[1]


def _default_field(act: Action) -> bytes:
    entry = _DEFAULT_FIELD.get(id(act))
    if entry is None:
        entry = _DEFAULT_FIELD[id(act)] = (act, _embedded(_REQUEST.DEFAULT_ACTION_FIELD_NUMBER, _action_body(act)))
    return entry[1]


# BastardBragView.centre elements: (slot, the card shown or None) -> bytes.
_CENTRE_SLOT_FIELD: dict[tuple[int, Card | None], bytes] = {
    (slot, card): _embedded(
        pb.BastardBragView.CENTRE_FIELD_NUMBER,
        _scalar(_CENTRE_SLOT.SLOT_FIELD_NUMBER, slot)
        + _scalar(_CENTRE_SLOT.FACE_UP_FIELD_NUMBER, slot == FACE_UP_SLOT)
        + (_CENTRE_CARD[card] if card else b""),
    )
    for slot in range(FACE_UP_SLOT + 1)
    for card in (None, *DECK)
}


class RequestEncoder:
    """Writes one game's DecisionRequests as wire bytes, equal to the reference encoder's (tests/reference_encoder.py).

    The reference is the message built field by field from
    :meth:`Game.observation` (``fill_observation``, ``fill_events``,
    ``action_to_pb``). This encoder reads the same values from the game,
    skipping the observation object (a dict, a frozen dataclass and a copy of
    the hand's events at every decision); what the seat may see of the table
    comes from the game's :meth:`~referee.engine.games.game.Game.table_view`, which
    the observation uses too. tests/test_request_encoding.py plays random
    games of both games at every table size, with forfeits, and checks at
    every decision that its bytes equal the reference's.

    What does not change is encoded once: the game id, move time and turn
    limit, each card and action, each public event (a seat's request carries
    the events since its last decision, so each event goes to every seat),
    the start of the observation for a seat in a hand, the seat table (lives,
    floating, in game, in hand) until it changes.
    """

    def __init__(self, game: Game, game_id: str) -> None:
        if not isinstance(game, (StopTheBus, BastardBrag)):  # pragma: no cover - a new game needs its view here
            raise TypeError(f"no request encoding for {type(game).__name__}")
        self._game = game
        self._stop_the_bus = isinstance(game, StopTheBus)
        self._game_id_field = _embedded(_REQUEST.GAME_ID_FIELD_NUMBER, game_id.encode()) if game_id else b""
        self._game_field = _scalar(_OBSERVATION.GAME_FIELD_NUMBER, GAME_TO_PB[game.name])
        self._num_players_field = _scalar(_OBSERVATION.NUM_PLAYERS_FIELD_NUMBER, game.num_players)
        self._turn_limit_field = _scalar(_OBSERVATION.TURN_LIMIT_FIELD_NUMBER, game.turn_limit)
        self._move_time_fields: dict[int, bytes] = {}  # move time -> its field (the same for every seat)
        self._event_bodies: list[bytes] = []  # the game's events so far, each as an Event's bytes
        self._event_fields: list[bytes] = []  # the same, each as a DecisionRequest.events element
        self._openings: dict[tuple[int, int, int, bool], bytes] = {}  # (seat, hand, dealer, final) -> fields 1..6
        # (lives, floating, in game, in hand) -> Observation.seats
        self._seat_tables: dict[
            tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...], tuple[bool, ...]], bytes
        ] = {}

    def request(
        self, decision_number: int, clock: TimeControl, first_event: int, default: Action | None = None
    ) -> bytes:
        """The DecisionRequest asking the game's current seat for decision ``decision_number``.

        It carries the seat's observation and legal actions, the game's
        events from index ``first_event`` on, the seat's ``clock`` (move time
        and bank left, and what its previous decision was charged), and ``default`` as the default action.
        """
        game = self._game
        event_fields = self._event_fields
        if len(event_fields) < len(game.events):
            self._catch_up_events()
        seat = game.current_seat
        assert seat is not None  # a request is only made while the game is on
        move_time_field = self._move_time_fields.get(clock.move_time_ms)
        if move_time_field is None:
            move_time_field = self._move_time_fields[clock.move_time_ms] = _scalar(
                _REQUEST.MOVE_TIME_MS_FIELD_NUMBER, clock.move_time_ms
            )
        observation = self._observation(game, seat)
        request = [
            self._game_id_field,
            _scalar(_REQUEST.DECISION_NUMBER_FIELD_NUMBER, decision_number),
            _scalar(_REQUEST.SEAT_FIELD_NUMBER, seat),
            _OBSERVATION_KEY,
            _varint(len(observation)),
            observation,
            *event_fields[first_event:],
            *map(_legal_field, game.legal_actions()),
            move_time_field,
            _scalar(_REQUEST.TIME_BANK_MS_FIELD_NUMBER, clock.bank_ms),
        ]
        if default is not None:
            request.append(_default_field(default))
        last_charged_ms = clock.last_charged_ms
        if last_charged_ms:
            request.append(_scalar(_REQUEST.LAST_CHARGED_MS_FIELD_NUMBER, last_charged_ms))
        return b"".join(request)

    def game_end(self, first_event: int, is_void: bool) -> bytes:
        """The GameEnd of the game, which is over, for a seat whose messages so far carried the events before
        ``first_event``: its result, and the events from ``first_event`` on."""
        self._catch_up_events()
        result = self._game.result()
        return b"".join(
            (
                self._game_id_field,
                _packed(_GAME_END.PLACEMENTS_FIELD_NUMBER, result.placements),
                _scalar(_GAME_END.HANDS_PLAYED_FIELD_NUMBER, result.hands_played),
                *(_embedded(_GAME_END.EVENTS_FIELD_NUMBER, body) for body in self._event_bodies[first_event:]),
                _packed(_GAME_END.FORFEITED_FIELD_NUMBER, result.forfeited),
                _scalar(_GAME_END.IS_VOID_FIELD_NUMBER, is_void),
            )
        )

    def _catch_up_events(self) -> None:
        game, bodies = self._game, self._event_bodies
        for index in range(len(bodies), len(game.events)):
            body = _event_body(game, index)
            bodies.append(body)
            self._event_fields.append(_embedded(_REQUEST.EVENTS_FIELD_NUMBER, body))

    def _observation(self, game: StopTheBus | BastardBrag, seat: int) -> bytes:
        """What ``Game.observation(seat)`` holds, but the legal actions and events, as Observation bytes."""
        phase = game.phase
        key = (seat, game.hand_number, game.dealer, phase is Phase.FINAL)  # (an enum's hash is slow; never OVER here)
        opening = self._openings.get(key)
        if opening is None:
            opening = self._openings[key] = b"".join(
                (
                    self._game_field,
                    _scalar(_OBSERVATION.SEAT_FIELD_NUMBER, seat),
                    self._num_players_field,
                    _scalar(_OBSERVATION.HAND_NUMBER_FIELD_NUMBER, game.hand_number),
                    _scalar(_OBSERVATION.DEALER_FIELD_NUMBER, game.dealer),
                    _PHASE_FIELD[phase],
                )
            )
        parts = [
            opening,
            *map(_HAND_CARD.__getitem__, game.hands[seat]),
            self._seat_table(game),
            _optional(_OBSERVATION.ENDER_FIELD_NUMBER, game.ender),
            _scalar(_OBSERVATION.TURNS_THIS_HAND_FIELD_NUMBER, game.turns_this_hand),
            self._turn_limit_field,
        ]
        if isinstance(game, StopTheBus):
            discard_top, stock_count, discard_count, drawn_card, took_discard = game.table_view(seat)
            view = (
                (_DISCARD_TOP[discard_top] if discard_top is not None else b"")
                + _scalar(_STOP_THE_BUS.STOCK_COUNT_FIELD_NUMBER, stock_count)
                + _scalar(_STOP_THE_BUS.DISCARD_COUNT_FIELD_NUMBER, discard_count)
            )
            if drawn_card is not None:
                view += _DRAWN_CARD[drawn_card] + (_TOOK_DISCARD if took_discard else b"")
            parts.append(_STOP_THE_BUS_KEY + _varint(len(view)) + view)
        else:
            view = b"".join(map(_CENTRE_SLOT_FIELD.__getitem__, enumerate(game.table_view(seat))))
            parts.append(_BASTARD_BRAG_KEY + _varint(len(view)) + view)
        return b"".join(parts)

    def _seat_table(self, game: Game) -> bytes:
        key = (tuple(game.lives), tuple(game.floating), tuple(game.in_game), tuple(game.in_hand))
        table = self._seat_tables.get(key)
        if table is None:
            table = self._seat_tables[key] = b"".join(
                _embedded(_OBSERVATION.SEATS_FIELD_NUMBER, b"".join(map(_scalar, _SEAT_FIELDS, (seat, *state))))
                for seat, state in enumerate(zip(*key, strict=True))
            )
        return table


def play_request(sequence: int, field: int, body: bytes) -> bytes:
    """A PlayRequest's bytes: ``sequence`` and the message ``body`` in its oneof ``field`` (a
    ``pb.PlayRequest.*_FIELD_NUMBER``)."""
    return _scalar(pb.PlayRequest.SEQUENCE_FIELD_NUMBER, sequence) + _embedded(field, body)


# ----- the referee's fast path: a reply's decision read from its wire bytes ------------

_DECISION_KEY = pb.PlayResponse.DECISION_FIELD_NUMBER << 3 | _LENGTH_DELIMITED
_DECISION_NUMBER_KEY = pb.Decision.DECISION_NUMBER_FIELD_NUMBER << 3 | _VARINT
_DECISION_ACTION_KEY = pb.Decision.ACTION_FIELD_NUMBER << 3 | _LENGTH_DELIMITED
assert max(_DECISION_KEY, _DECISION_NUMBER_KEY, _DECISION_ACTION_KEY) < 0x80  # each key is one byte
_UINT32_LIMIT = 1 << 32
_ONE_BYTE_LENGTHS = 2 + 0x7F  # the longest reply whose decision's length, and so its action's, fits in one byte


def decision_from_bytes(data: bytes) -> tuple[int, Action] | None:
    """The decision number and action of the PlayResponse ``data``, read without the protobuf library;
    None unless ``data`` is a decision with a number and a known action and nothing else, in the form
    every protobuf library writes one (then read the reply with the library, which says what is wrong).

    Such bytes are all but every reply a referee gets, and mean what the library reads in them:
    a PlayResponse whose ``decision`` has that ``decision_number`` and an ``action`` whose bytes are
    the one encoding of an action (``ACTION_BY_BYTES``), with no ``error``. Reading them here costs
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
    found = ACTION_BY_BYTES.get(data[index + 2 :])
    return None if found is None else (number, found)
