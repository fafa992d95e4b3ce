"""The numeric observation of each game: a seat's :class:`~referee.engine.games.Observation` as a fixed-size vector.

One function per game builds it (:func:`encode_stop_the_bus`,
:func:`encode_bastard_brag`), from the engine's observation only, so that it
shows exactly what the seat may know, and a bot can build the same vector
from the observation its kit hands it. Every value is a ``float32`` in
``[0, 1]``; the size is fixed per game, whatever the table size (seats past
the table's are zeros), so one policy can play every table size.

Seats are relative: block ``r`` describes the seat ``r`` places to the
observer's left (``(seat + r) % num_players``), block 0 the observer itself.
A card's position in a 52-wide block is :attr:`referee.engine.cards.Card.index`
(``2C`` 0, ``2D`` 1, ..., ``AS`` 51). :data:`STOP_THE_BUS_FIELDS` and
:data:`BASTARD_BRAG_FIELDS` name every field with its offset and width;
``docs/environments.md`` tells what each means.

What the hand's public events show (the cards in the discard pile, the cards
each seat took face up) is followed event by event in an
:class:`EncoderMemory`, so that a step costs the new events only: pass the
same memory for the observations of one game (as the environments do) and it
catches up from where it stopped; it starts afresh on a new hand, or on an
observation whose history does not extend what it has seen.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from referee.common.errors import EnvArgumentError
from referee.engine.cards import DECK
from referee.engine.games import (
    BastardBrag,
    BastardBragObservation,
    Event,
    EventKind,
    Observation,
    Phase,
    StopTheBus,
    StopTheBusObservation,
)
from referee.engine.games.game import STARTING_LIVES

Vector = npt.NDArray[np.float32]

CARDS = 52
FACE_UP_SLOT = 2


@dataclass(frozen=True)
class Field:
    """One field of the numeric observation: its name, where it starts and how many values it has."""

    name: str
    offset: int
    width: int
    meaning: str


def _layout(parts: Sequence[tuple[str, int, str]]) -> tuple[Field, ...]:
    fields = []
    offset = 0
    for name, width, meaning in parts:
        fields.append(Field(name, offset, width, meaning))
        offset += width
    return tuple(fields)


# ----- the layouts ----------------------------------------------------------------------------------------

STOP_THE_BUS_SEAT_FIELDS = ("present", "in_game", "in_hand", "lives", "floating", "dealer", "to_act", "stopped")
BASTARD_BRAG_SEAT_FIELDS = ("present", "in_game", "in_hand", "lives", "played", "dealer", "to_act", "knocked")
SEAT_WIDTH = 8


def _seat_parts(max_players: int, names: Sequence[str]) -> list[tuple[str, int, str]]:
    return [(f"seat[{r}].{name}", 1, name) for r in range(max_players) for name in names]


STOP_THE_BUS_FIELDS = _layout(
    [
        *_seat_parts(StopTheBus.max_players, STOP_THE_BUS_SEAT_FIELDS),
        ("final_turns", 1, "1 once the bus is stopped"),
        ("turns", 1, "turns_this_hand / turn_limit, at most 1"),
        ("hand", CARDS, "the seat's own cards (four mid-turn)"),
        ("drawn", CARDS, "mid-turn: the card just drawn or taken"),
        ("took_discard", 1, "mid-turn: 1 if that card came from the discard pile"),
        ("discard_top", CARDS, "the face-up top of the discard pile"),
        ("stock_count", 1, "cards in the stock / 52"),
        ("discard_count", 1, "cards in the discard pile / 52"),
        ("discard_pile", CARDS, "every card in the discard pile, top included"),
        *(
            (f"taken[{r}]", CARDS, "cards seat r took from the pile this hand and has not discarded")
            for r in range(1, StopTheBus.max_players)
        ),
    ]
)
BASTARD_BRAG_FIELDS = _layout(
    [
        *_seat_parts(BastardBrag.max_players, BASTARD_BRAG_SEAT_FIELDS),
        ("final_turns", 1, "1 once someone has knocked"),
        ("turns", 1, "turns_this_hand / turn_limit, at most 1"),
        ("hand", CARDS, "the seat's own cards"),
        ("centre[0]", CARDS, "face-down slot 0, while this seat put its card there"),
        ("centre[1]", CARDS, "face-down slot 1, while this seat put its card there"),
        ("centre[2]", CARDS, "the face-up card (slot 2)"),
        *(
            (f"taken[{r}]", CARDS, "cards seat r took face up this hand, not since given back face up")
            for r in range(1, BastardBrag.max_players)
        ),
    ]
)
STOP_THE_BUS_SIZE = STOP_THE_BUS_FIELDS[-1].offset + STOP_THE_BUS_FIELDS[-1].width
BASTARD_BRAG_SIZE = BASTARD_BRAG_FIELDS[-1].offset + BASTARD_BRAG_FIELDS[-1].width


# ----- what the events show ---------------------------------------------------------------------------------

_FLOAT = 4  # bytes of a float32
_PLANE = CARDS * _FLOAT  # bytes of a 52-wide block


class EncoderMemory:
    """What one game's public events of the current hand show, followed event by event.

    ``pile`` holds the cards of the discard pile (Stop the Bus), ``taken`` the
    cards each absolute seat took face up and still holds as far as the events
    show (52 float32 values a seat, one after another), ``played[s]`` whether
    seat ``s`` has had a turn this hand (Bastard Brag). Shared by every seat
    of one game: all of it is public.
    """

    def __init__(self, max_players: int) -> None:
        self.pile: list[int] = []  # card indices, bottom first
        self.pile_plane = bytearray(_PLANE)
        self.pile_values = memoryview(self.pile_plane).cast("f")
        self.taken = bytearray(max_players * _PLANE)
        self.taken_bytes = memoryview(self.taken)
        self.taken_values = self.taken_bytes.cast("f")
        self.played: list[bool] = [False] * max_players
        self._hand_number = -1
        self._done = 0  # events taken so far
        self._first: Event | None = None
        self._last: Event | None = None

    def clear(self) -> None:
        """Forget everything: the next observation is read from its hand's first event."""
        self._hand_number = -1
        self._done = 0
        self._first = self._last = None

    def catch_up(self, observation: Observation, follow: Callable[[EncoderMemory, Event], None]) -> None:
        """Take the events of ``observation``'s hand not yet taken (all of them if it is not what was seen)."""
        events = observation.hand_events
        done = self._done
        # Events are values the engine makes once; a history that holds the very first and last events
        # seen, at the same places, is the one seen, extended (a clone's events are its original's).
        if (
            observation.hand_number != self._hand_number
            or len(events) < done
            or (done and (events[0] is not self._first or events[done - 1] is not self._last))
        ):
            self._restart(observation.hand_number)
            done = 0
        for index in range(done, len(events)):
            follow(self, events[index])
        self._done = len(events)
        if events:
            self._first = events[0]
            self._last = events[-1]

    def clear_seat(self, seat: int) -> None:
        """Forget the cards ``seat`` is known to hold."""
        self.taken_bytes[seat * _PLANE : (seat + 1) * _PLANE] = bytes(_PLANE)

    def _restart(self, hand_number: int) -> None:
        self._hand_number = hand_number
        self._done = 0
        self.pile = []
        self.pile_values[:] = _ZEROS[:CARDS]
        self.taken_bytes[:] = bytes(len(self.taken))
        self.played = [False] * len(self.played)


_ZEROS = memoryview(bytearray(CARDS * _FLOAT)).cast("f")


def _follow_stop_the_bus(memory: EncoderMemory, event: Event) -> None:
    kind = event.kind
    card = event.card
    if kind is EventKind.DISCARD and card is not None and event.seat is not None:
        memory.taken_values[event.seat * CARDS + card.index] = 0.0
        memory.pile.append(card.index)
        memory.pile_values[card.index] = 1.0
    elif kind is EventKind.TAKE and card is not None and event.seat is not None:
        if memory.pile:
            memory.pile_values[memory.pile.pop()] = 0.0
        memory.taken_values[event.seat * CARDS + card.index] = 1.0
    elif kind is EventKind.DEAL and card is not None:
        memory.pile = [card.index]
        memory.pile_values[card.index] = 1.0
    elif kind is EventKind.RECYCLE:
        for index in memory.pile[:-1]:
            memory.pile_values[index] = 0.0
        memory.pile = memory.pile[-1:]
    elif kind is EventKind.FORFEIT and event.seat is not None:
        memory.clear_seat(event.seat)


def _follow_bastard_brag(memory: EncoderMemory, event: Event) -> None:
    kind = event.kind
    seat = event.seat
    if seat is None:
        return
    if kind is EventKind.EXCHANGE:
        memory.played[seat] = True
        if event.slot == FACE_UP_SLOT and event.card is not None and event.taken is not None:
            memory.taken_values[seat * CARDS + event.card.index] = 0.0
            memory.taken_values[seat * CARDS + event.taken.index] = 1.0
    elif kind is EventKind.EXCHANGE_ALL:
        memory.played[seat] = True
        memory.clear_seat(seat)  # the whole hand went to the centre
        if event.taken is not None:
            memory.taken_values[seat * CARDS + event.taken.index] = 1.0
    elif kind is EventKind.KNOCK:
        memory.played[seat] = True
    elif kind is EventKind.FORFEIT:
        memory.clear_seat(seat)


# ----- the encodings ----------------------------------------------------------------------------------------

_FLOAT32 = np.dtype(np.float32)
_INDEX = {card: card.index for card in DECK}  # cheaper than Card.index, a property
_LIVES_SCALE = 1.0 / STARTING_LIVES
_COUNT_SCALE = 1.0 / CARDS
# The vector is written as float32 values into a zeroed buffer, then handed to numpy without a copy: a
# few dozen writes through a memoryview cost far less than as many numpy item or fancy-index assignments.

_STB = {field.name: field.offset for field in STOP_THE_BUS_FIELDS}
_STB_GLOBAL = _STB["final_turns"]
_STB_HAND = _STB["hand"]
_STB_DRAWN = _STB["drawn"]
_STB_TOOK = _STB["took_discard"]
_STB_TOP = _STB["discard_top"]
_STB_STOCK = _STB["stock_count"]
_STB_PILE = _STB["discard_pile"] * _FLOAT
_STB_TAKEN = _STB["taken[1]"] * _FLOAT
_STB_BYTES = STOP_THE_BUS_SIZE * _FLOAT


def encode_stop_the_bus(observation: StopTheBusObservation, memory: EncoderMemory | None = None) -> Vector:
    """Return the numeric observation of a Stop the Bus seat (:data:`STOP_THE_BUS_FIELDS`, float32 in [0, 1]).

    ``memory`` follows the hand's events from one call to the next (see
    :class:`EncoderMemory`); without one, the events are read from the start.
    """
    if memory is None:
        memory = EncoderMemory(StopTheBus.max_players)
    memory.catch_up(observation, _follow_stop_the_bus)
    buffer = bytearray(_STB_BYTES)
    out = memoryview(buffer).cast("f")
    _write_seats(observation, buffer, observation.floating)
    if observation.phase is Phase.FINAL:
        out[_STB_GLOBAL] = 1.0
    turns = observation.turns_this_hand / observation.turn_limit
    out[_STB_GLOBAL + 1] = min(1.0, turns)
    index = _INDEX
    for card in observation.hand:
        out[_STB_HAND + index[card]] = 1.0
    drawn = observation.drawn_card
    if drawn is not None:
        out[_STB_DRAWN + drawn.index] = 1.0
        if observation.took_discard:
            out[_STB_TOOK] = 1.0
    top = observation.discard_top
    if top is not None:
        out[_STB_TOP + top.index] = 1.0
    out[_STB_STOCK] = observation.stock_count * _COUNT_SCALE
    out[_STB_STOCK + 1] = observation.discard_count * _COUNT_SCALE
    buffer[_STB_PILE : _STB_PILE + _PLANE] = memory.pile_plane
    _write_taken(buffer, _STB_TAKEN, memory, observation.num_players, observation.seat)
    return np.frombuffer(buffer, _FLOAT32)


_BB = {field.name: field.offset for field in BASTARD_BRAG_FIELDS}
_BB_GLOBAL = _BB["final_turns"]
_BB_HAND = _BB["hand"]
_BB_CENTRE = _BB["centre[0]"]
_BB_TAKEN = _BB["taken[1]"] * _FLOAT
_BB_BYTES = BASTARD_BRAG_SIZE * _FLOAT


def encode_bastard_brag(observation: BastardBragObservation, memory: EncoderMemory | None = None) -> Vector:
    """Return the numeric observation of a Bastard Brag seat (:data:`BASTARD_BRAG_FIELDS`, float32 in [0, 1]).

    ``memory`` follows the hand's events from one call to the next (see
    :class:`EncoderMemory`); without one, the events are read from the start.
    """
    if memory is None:
        memory = EncoderMemory(BastardBrag.max_players)
    memory.catch_up(observation, _follow_bastard_brag)
    buffer = bytearray(_BB_BYTES)
    out = memoryview(buffer).cast("f")
    _write_seats(observation, buffer, tuple(memory.played[: observation.num_players]))
    if observation.phase is Phase.FINAL:
        out[_BB_GLOBAL] = 1.0
    turns = observation.turns_this_hand / observation.turn_limit
    out[_BB_GLOBAL + 1] = min(1.0, turns)
    index = _INDEX
    for card in observation.hand:
        out[_BB_HAND + index[card]] = 1.0
    slot0, slot1, face_up = observation.centre
    if slot0 is not None:
        out[_BB_CENTRE + slot0.index] = 1.0
    if slot1 is not None:
        out[_BB_CENTRE + CARDS + slot1.index] = 1.0
    out[_BB_CENTRE + 2 * CARDS + face_up.index] = 1.0
    _write_taken(buffer, _BB_TAKEN, memory, observation.num_players, observation.seat)
    return np.frombuffer(buffer, _FLOAT32)


# The seats' rows, in seat order, by what they show but for who is to act (a bounded cache): they change a few
# times a hand, and an observation's blocks are these rows from the observer's on, then the seat to act marked.
_SEAT_BLOCKS: dict[tuple[object, ...], bytes] = {}
_SEAT_BLOCKS_KEPT = 4096
_TO_ACT = STOP_THE_BUS_SEAT_FIELDS.index("to_act")  # its place in a seat's row, the same in both games
_ROW_FORMAT = struct.Struct(f"{SEAT_WIDTH}f")
_ROW_BYTES = _ROW_FORMAT.size
_ONE = struct.Struct("f")


def _write_seats(observation: Observation, buffer: bytearray, fifth: tuple[bool, ...]) -> None:
    """Write every seat's block, the observer's first, then each seat on its left in turn.

    The fifth flag is ``floating`` in Stop the Bus and ``played`` in Bastard Brag.
    """
    in_game, in_hand, lives, dealer, ender = (
        observation.in_game,
        observation.in_hand,
        observation.lives,
        observation.dealer,
        observation.ender,
    )
    key = (lives, fifth, in_game, in_hand, dealer, ender)
    rows = _SEAT_BLOCKS.get(key)
    if rows is None:
        rows = b"".join(  # each row's fields in *_SEAT_FIELDS order, to_act 0 here (marked below, per observation)
            _ROW_FORMAT.pack(
                1.0, in_game[s], in_hand[s], lives[s] * _LIVES_SCALE, fifth[s], s == dealer, 0.0, s == ender
            )
            for s in range(observation.num_players)
        )
        if len(_SEAT_BLOCKS) >= _SEAT_BLOCKS_KEPT:
            _SEAT_BLOCKS.clear()
        _SEAT_BLOCKS[key] = rows
    cut = observation.seat * _ROW_BYTES
    size = len(rows)
    buffer[: size - cut] = rows[cut:]
    buffer[size - cut : size] = rows[:cut]
    current = observation.current_seat
    if current is not None:
        _ONE.pack_into(
            buffer, ((current - observation.seat) % observation.num_players * SEAT_WIDTH + _TO_ACT) * _FLOAT, 1.0
        )


def _write_taken(buffer: bytearray, start: int, memory: EncoderMemory, n: int, seat: int) -> None:
    """Copy the other seats' taken cards into ``buffer`` from ``start``, the seat on the observer's left first."""
    # Relative seats 1..n-1 are absolute seats seat+1..n-1, then 0..seat-1: two runs of the memory's rows.
    after = (n - 1 - seat) * _PLANE
    taken = memory.taken_bytes
    buffer[start : start + after] = taken[(seat + 1) * _PLANE : n * _PLANE]
    buffer[start + after : start + after + seat * _PLANE] = taken[: seat * _PLANE]


# ----- one encoder per game ---------------------------------------------------------------------------------


class ObservationEncoder:
    """The numeric observation of one game, with the memory that makes each step cheap.

    Use one encoder for the observations of one game at a time (any seat's):
    ``encoder.encode(observation)``; :meth:`reset` before another game (not
    needed for correctness: a history that does not extend the one seen is
    read afresh, it only saves a check).
    """

    def __init__(self, game: str) -> None:
        if game == StopTheBus.name:
            self.fields = STOP_THE_BUS_FIELDS
            self.size = STOP_THE_BUS_SIZE
            self._observation_type: type[Observation] = StopTheBusObservation
            self._encode: Callable[[Observation, EncoderMemory], Vector] = encode_stop_the_bus  # type: ignore[assignment]
            max_players = StopTheBus.max_players
        elif game == BastardBrag.name:
            self.fields = BASTARD_BRAG_FIELDS
            self.size = BASTARD_BRAG_SIZE
            self._observation_type = BastardBragObservation
            self._encode = encode_bastard_brag  # type: ignore[assignment]
            max_players = BastardBrag.max_players
        else:
            raise EnvArgumentError(f"unknown game {game!r}; the games are: {StopTheBus.name}, {BastardBrag.name}")
        self.game = game
        self.memory = EncoderMemory(max_players)

    def encode(self, observation: Observation) -> Vector:
        """Return ``observation`` as this game's numeric observation (a new array)."""
        if observation.__class__ is not self._observation_type and not isinstance(observation, self._observation_type):
            raise EnvArgumentError(
                f"the {self.game} encoder needs a {self._observation_type.__name__}, got {type(observation).__name__}"
            )
        return self._encode(observation, self.memory)

    def reset(self) -> None:
        """Forget the events followed so far (before another game)."""
        self.memory.clear()

    def field(self, name: str) -> Field:
        """The field called ``name`` (``hand``, ``seat[0].lives``, ``taken[2]``, ...)."""
        for field in self.fields:
            if field.name == name:
                return field
        raise EnvArgumentError(f"{self.game} has no observation field {name!r}")
