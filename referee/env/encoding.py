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
_ROW = SEAT_WIDTH * _FLOAT  # bytes of a seat's block
_FINAL = Phase.FINAL  # read at every encoding, as a global (a member read through its enum class costs more)
_DISCARD, _TAKE, _DEAL, _RECYCLE, _FORFEIT = (
    EventKind.DISCARD,
    EventKind.TAKE,
    EventKind.DEAL,
    EventKind.RECYCLE,
    EventKind.FORFEIT,
)
_EXCHANGE, _EXCHANGE_ALL, _KNOCK = EventKind.EXCHANGE, EventKind.EXCHANGE_ALL, EventKind.KNOCK
_INDEX = {card: card.index for card in DECK}  # cheaper than Card.index, a property
_ROW_FORMAT = struct.Struct(f"{SEAT_WIDTH}f")
_TO_ACT = STOP_THE_BUS_SEAT_FIELDS.index("to_act")  # its place in a seat's block, the same in both games
_FIFTH = BASTARD_BRAG_SEAT_FIELDS.index("played")  # floating in Stop the Bus
_LIVES_SCALE = 1.0 / STARTING_LIVES


# What an observation shows of the seats: lives, in_game, in_hand, floating (None in Bastard Brag), dealer, ender.
SeatsShown = tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...], tuple[bool, ...] | None, int, int | None]


class EncoderMemory:
    """What one game's public events of the current hand show, followed event by event, and the seats' blocks.

    ``pile`` holds the cards of the discard pile (Stop the Bus), and
    ``pile_plane`` the same as a 52-wide block of float32 values; ``taken`` the
    cards each absolute seat took face up and still holds as far as the events
    show, 52 float32 values a seat; ``played[s]`` whether seat ``s`` has had a
    turn this hand (Bastard Brag); ``rows`` every seat's block of the seat
    fields (``to_act`` left 0), built again when what they show changes.
    ``taken`` and ``rows`` hold the table's seats twice over (``0 .. n-1``
    then ``0 .. n-1`` again), so that the seats from any observer's on, in
    order, are one run of bytes. Shared by every seat of one game: all of it
    is public.
    """

    def __init__(self, max_players: int) -> None:
        self.max_players = max_players
        self.num_players = max_players
        self.pile: list[int] = []  # card indices, bottom first
        self.pile_plane = bytearray(_PLANE)
        self.pile_values = memoryview(self.pile_plane).cast("f")
        self.taken = bytearray(2 * max_players * _PLANE)
        self.taken_bytes = memoryview(self.taken)
        self.taken_values = self.taken_bytes.cast("f")
        self.played: list[bool] = [False] * max_players
        self.rows = bytearray(2 * max_players * _ROW)
        self.rows_bytes = memoryview(self.rows)
        self.rows_values = self.rows_bytes.cast("f")
        self.rows_show: SeatsShown | None = None  # what the rows were built from (see build_rows)
        self._done = 0  # events taken so far
        self._first: Event | None = None
        self._last: Event | None = None

    def clear(self) -> None:
        """Forget everything: the next observation is read from its hand's first event."""
        self._done = 0
        self._first = self._last = None
        self.rows_show = None

    def catch_up(self, observation: Observation, follow: Callable[[EncoderMemory, Event], None]) -> None:
        """Take the events of ``observation``'s hand not yet taken (all of them if it is not what was seen)."""
        events = observation.hand_events
        count = len(events)
        done = self._done
        # Events are values the engine makes once, each of one hand: a history that holds the very first and
        # last events seen, at the same places, is the one seen, extended (a clone's events are its original's).
        if done and count >= done and events[done - 1] is self._last and events[0] is self._first:
            if count == done:
                return
            if count == done + 1:  # one move since: its event
                follow(self, events[done])
                self._done = count
                self._last = events[done]
                return
        else:
            self._restart(observation.num_players)
            done = 0
            if not count:
                return
            self._first = events[0]
        for event in events[done:]:
            follow(self, event)
        self._done = count
        self._last = events[-1]

    def clear_seat(self, seat: int) -> None:
        """Forget the cards ``seat`` is known to hold."""
        for row in (seat, seat + self.num_players):
            self.taken_bytes[row * _PLANE : (row + 1) * _PLANE] = _ZERO_PLANE

    def mark_played(self, seat: int) -> None:
        """Note that ``seat`` has had a turn this hand (its block's fifth field too)."""
        self.played[seat] = True
        values = self.rows_values
        values[seat * SEAT_WIDTH + _FIFTH] = values[(seat + self.num_players) * SEAT_WIDTH + _FIFTH] = 1.0

    def build_rows(self, shown: SeatsShown) -> None:
        """Build every seat's block (``to_act`` 0), in seat order, twice over, from what an observation shows of
        the seats: ``(lives, in_game, in_hand, floating, dealer, ender)``; with ``floating`` ``None``, the fifth
        field is whether the seat has played (Bastard Brag, followed in ``played``)."""
        lives, in_game, in_hand, floating, dealer, ender = shown
        fifth = self.played if floating is None else floating
        rows = b"".join(  # each row's fields in *_SEAT_FIELDS order, to_act 0 (marked per observation)
            _ROW_FORMAT.pack(
                1.0, in_game[s], in_hand[s], lives[s] * _LIVES_SCALE, fifth[s], s == dealer, 0.0, s == ender
            )
            for s in range(len(lives))
        )
        self.rows[: 2 * len(rows)] = rows * 2
        self.rows_show = shown

    def _restart(self, num_players: int) -> None:
        self._done = 0
        self.num_players = num_players
        self.pile = []
        self.pile_plane[:] = _ZERO_PLANE
        self.taken_bytes[:] = bytes(len(self.taken))
        self.played = [False] * self.max_players
        self.rows_show = None


_ZERO_PLANE = bytes(_PLANE)


def _follow_stop_the_bus(memory: EncoderMemory, event: Event) -> None:
    kind, _, seat, card, _, _, _ = event
    if card is None:
        if kind is _RECYCLE:
            pile = memory.pile
            for index in pile[:-1]:
                memory.pile_values[index] = 0.0
            memory.pile = pile[-1:]
        elif kind is _FORFEIT and seat is not None:
            memory.clear_seat(seat)
        return
    index = _INDEX[card]
    if kind is _DISCARD and seat is not None:
        taken = memory.taken_values
        taken[seat * CARDS + index] = taken[(seat + memory.num_players) * CARDS + index] = 0.0
        memory.pile.append(index)
        memory.pile_values[index] = 1.0
    elif kind is _TAKE and seat is not None:
        if memory.pile:
            memory.pile_values[memory.pile.pop()] = 0.0
        taken = memory.taken_values
        taken[seat * CARDS + index] = taken[(seat + memory.num_players) * CARDS + index] = 1.0
    elif kind is _DEAL:
        memory.pile = [index]
        memory.pile_values[index] = 1.0


def _follow_bastard_brag(memory: EncoderMemory, event: Event) -> None:
    kind, _, seat, card, took, slot, _ = event
    if seat is None:
        return
    if kind is _EXCHANGE:
        if not memory.played[seat]:
            memory.mark_played(seat)
        if slot == FACE_UP_SLOT and card is not None and took is not None:
            taken, other = memory.taken_values, seat + memory.num_players
            given, took_index = _INDEX[card], _INDEX[took]
            taken[seat * CARDS + given] = taken[other * CARDS + given] = 0.0
            taken[seat * CARDS + took_index] = taken[other * CARDS + took_index] = 1.0
    elif kind is _EXCHANGE_ALL:
        if not memory.played[seat]:
            memory.mark_played(seat)
        memory.clear_seat(seat)  # the whole hand went to the centre
        if took is not None:
            taken, took_index = memory.taken_values, _INDEX[took]
            taken[seat * CARDS + took_index] = taken[(seat + memory.num_players) * CARDS + took_index] = 1.0
    elif kind is _KNOCK:
        if not memory.played[seat]:
            memory.mark_played(seat)
    elif kind is _FORFEIT:
        memory.clear_seat(seat)


# ----- the encodings ----------------------------------------------------------------------------------------

# The vector is written as float32 values into a copy of a zeroed buffer, then handed to numpy without a copy:
# the seats' blocks and the taken cards as runs of the memory's bytes (one slice each, whatever the table), the
# rest a value at a time through a memoryview, far cheaper than numpy's item or fancy-index assignment.
_FLOAT32 = np.dtype(np.float32)
_COUNT_SCALE = 1.0 / CARDS

_STB = {field.name: field.offset for field in STOP_THE_BUS_FIELDS}
_STB_GLOBAL = _STB["final_turns"]
_STB_HAND = _STB["hand"]
_STB_DRAWN = _STB["drawn"]
_STB_TOOK = _STB["took_discard"]
_STB_TOP = _STB["discard_top"]
_STB_STOCK = _STB["stock_count"]
_STB_PILE = _STB["discard_pile"] * _FLOAT
_STB_TAKEN = _STB["taken[1]"] * _FLOAT
_STB_ZEROS = bytearray(STOP_THE_BUS_SIZE * _FLOAT)  # copied, never written


def encode_stop_the_bus(observation: StopTheBusObservation, memory: EncoderMemory | None = None) -> Vector:
    """Return the numeric observation of a Stop the Bus seat (:data:`STOP_THE_BUS_FIELDS`, float32 in [0, 1]).

    ``memory`` follows the hand's events from one call to the next (see
    :class:`EncoderMemory`); without one, the events are read from the start.
    """
    if memory is None:
        memory = EncoderMemory(StopTheBus.max_players)
    memory.catch_up(observation, _follow_stop_the_bus)
    # The seats' blocks are built again only when what they show changes (a few times a hand): the tuples
    # compare as values, at once when they are the very ones the blocks were built from.
    shown = (
        observation.lives,
        observation.in_game,
        observation.in_hand,
        observation.floating,
        observation.dealer,
        observation.ender,
    )
    if shown != memory.rows_show:
        memory.build_rows(shown)
    seat, current, n = observation.seat, observation.current_seat, observation.num_players
    buffer = _STB_ZEROS.copy()
    buffer[: n * _ROW] = memory.rows_bytes[seat * _ROW : (seat + n) * _ROW]  # seat[r], r < n
    buffer[_STB_PILE : _STB_PILE + _PLANE] = memory.pile_plane  # discard_pile
    buffer[_STB_TAKEN : _STB_TAKEN + (n - 1) * _PLANE] = memory.taken_bytes[(seat + 1) * _PLANE : (seat + n) * _PLANE]
    out = memoryview(buffer).cast("f")
    if current is not None:
        out[(current - seat) % n * SEAT_WIDTH + _TO_ACT] = 1.0
    if observation.phase is _FINAL:
        out[_STB_GLOBAL] = 1.0
    out[_STB_GLOBAL + 1] = min(1.0, observation.turns_this_hand / observation.turn_limit)
    index = _INDEX
    for card in observation.hand:
        out[_STB_HAND + index[card]] = 1.0
    drawn = observation.drawn_card
    if drawn is not None:
        out[_STB_DRAWN + index[drawn]] = 1.0
        if observation.took_discard:
            out[_STB_TOOK] = 1.0
    top = observation.discard_top
    if top is not None:
        out[_STB_TOP + index[top]] = 1.0
    out[_STB_STOCK] = observation.stock_count * _COUNT_SCALE
    out[_STB_STOCK + 1] = observation.discard_count * _COUNT_SCALE
    return np.frombuffer(buffer, _FLOAT32)


_BB = {field.name: field.offset for field in BASTARD_BRAG_FIELDS}
_BB_GLOBAL = _BB["final_turns"]
_BB_HAND = _BB["hand"]
_BB_CENTRE = _BB["centre[0]"]
_BB_FACE_UP = _BB["centre[2]"]
_BB_TAKEN = _BB["taken[1]"] * _FLOAT
_BB_ZEROS = bytearray(BASTARD_BRAG_SIZE * _FLOAT)  # copied, never written


def encode_bastard_brag(observation: BastardBragObservation, memory: EncoderMemory | None = None) -> Vector:
    """Return the numeric observation of a Bastard Brag seat (:data:`BASTARD_BRAG_FIELDS`, float32 in [0, 1]).

    ``memory`` follows the hand's events from one call to the next (see
    :class:`EncoderMemory`); without one, the events are read from the start.
    """
    if memory is None:
        memory = EncoderMemory(BastardBrag.max_players)
    memory.catch_up(observation, _follow_bastard_brag)
    shown = (observation.lives, observation.in_game, observation.in_hand, None, observation.dealer, observation.ender)
    if shown != memory.rows_show:  # as in Stop the Bus; whether a seat has played is followed in the memory
        memory.build_rows(shown)
    seat, current, n = observation.seat, observation.current_seat, observation.num_players
    buffer = _BB_ZEROS.copy()
    buffer[: n * _ROW] = memory.rows_bytes[seat * _ROW : (seat + n) * _ROW]  # seat[r], r < n
    buffer[_BB_TAKEN : _BB_TAKEN + (n - 1) * _PLANE] = memory.taken_bytes[(seat + 1) * _PLANE : (seat + n) * _PLANE]
    out = memoryview(buffer).cast("f")
    if current is not None:
        out[(current - seat) % n * SEAT_WIDTH + _TO_ACT] = 1.0
    if observation.phase is _FINAL:
        out[_BB_GLOBAL] = 1.0
    out[_BB_GLOBAL + 1] = min(1.0, observation.turns_this_hand / observation.turn_limit)
    index = _INDEX
    for card in observation.hand:
        out[_BB_HAND + index[card]] = 1.0
    slot0, slot1, face_up = observation.centre
    if slot0 is not None:
        out[_BB_CENTRE + index[slot0]] = 1.0
    if slot1 is not None:
        out[_BB_CENTRE + CARDS + index[slot1]] = 1.0
    out[_BB_FACE_UP + index[face_up]] = 1.0
    return np.frombuffer(buffer, _FLOAT32)


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
        # The game's encoding, (observation, memory) -> vector, for callers that hand it only this game's
        # observations (the environments): encode() checks the observation's type first.
        self.function = self._encode

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
