"""What a game records and shows: the phase, public events, hand and game results, a seat's observation."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from referee.common.errors import GameArgumentError
from referee.engine.cards import Card, pretty_cards
from referee.engine.games.actions import Action, require_int
from referee.engine.hands import HandRank


class Phase(enum.Enum):
    """Where a hand stands: normal turns, final turns after a stop or knock, or game over."""

    NORMAL = "normal"
    FINAL = "final"
    OVER = "over"


class EventKind(enum.Enum):
    """Kinds of public event. The value is the name used in logs and the protocol."""

    DEAL = "deal"  # a hand was dealt: seat = dealer, card = the first face-up card
    DRAW = "draw"  # seat drew the top of the stock (the card stays hidden)
    TAKE = "take"  # seat took the top of the discard pile: card
    DISCARD = "discard"  # seat discarded card
    STOP = "stop"  # seat stopped the bus
    PASS = "pass"  # seat passed its final turn
    RECYCLE = "recycle"  # the stock was empty: count discards were shuffled into a new stock
    EXCHANGE = "exchange"  # seat swapped a card for centre slot; face-up slot: card given, taken
    EXCHANGE_ALL = "exchange-all"  # seat swapped its hand for the centre; card = new face-up card
    KNOCK = "knock"  # seat knocked
    STOCK_EXHAUSTED = "stock-exhausted"  # nothing left to recycle: the showdown comes at once
    TURN_LIMIT = "turn-limit"  # the hand reached the turn limit: the showdown comes at once
    SHOWDOWN = "showdown"  # hands revealed (see HandResult); seat = the loser
    ELIMINATED = "eliminated"  # seat is out of the game
    FORFEIT = "forfeit"  # seat was removed from the game by the referee
    GAME_OVER = "game-over"  # seat won the game


class Event(NamedTuple):
    """One public event. Fields a kind does not use are ``None``."""

    kind: EventKind
    hand_number: int
    seat: int | None = None
    card: Card | None = None
    taken: Card | None = None
    slot: int | None = None
    count: int | None = None  # type: ignore[assignment]  # the protocol's Event.count; it hides tuple.count

    def __str__(self) -> str:
        parts = [f"hand {self.hand_number}: {self.kind.value}"]
        if self.seat is not None:
            parts.append(f"seat={self.seat}")
        if self.card is not None:
            parts.append(f"card={self.card}")
        if self.taken is not None:
            parts.append(f"taken={self.taken}")
        if self.slot is not None:
            parts.append(f"slot={self.slot}")
        if self.count is not None:
            parts.append(f"count={self.count}")
        return " ".join(parts)


class EndReason(enum.Enum):
    """Why a hand ended."""

    STOP = "stop"  # Stop the Bus: final turns after a stop are done
    KNOCK = "knock"  # Bastard Brag: final turns after a knock are done
    STOCK_EXHAUSTED = "stock-exhausted"  # Stop the Bus: empty stock, nothing to recycle
    TURN_LIMIT = "turn-limit"  # the hand reached the turn limit
    FORFEIT = "forfeit"  # forfeits left a single player: no showdown


@dataclass(frozen=True)  # no __slots__, so that the engine can make one fast (see made)
class HandResult:
    """The outcome of one hand: every hand revealed, the loser and the lives after."""

    hand_number: int
    dealer: int
    ended_by: EndReason
    ender: int | None  # the stopper or knocker, if any
    turns: int
    hands: dict[int, tuple[Card, ...]]  # seat -> final hand, for every seat at the showdown
    ranks: dict[int, HandRank]
    loser: int | None  # None only when forfeits ended the hand
    lives_after: tuple[int, ...]
    floating_after: tuple[bool, ...]
    eliminated: tuple[int, ...]  # seats out of the game during this hand, in order

    def describe(self) -> str:
        """Several lines for people: each hand with its rank, then the loser."""
        lines = [f"hand {self.hand_number} (dealer seat {self.dealer}) ended by {self.ended_by.value}"]
        for seat in sorted(self.hands):
            mark = "  <- loses a life" if seat == self.loser else ""
            lines.append(f"  seat {seat}: {pretty_cards(self.hands[seat])}  {self.ranks[seat]}{mark}")
        lines.extend(f"  seat {seat} is out of the game" for seat in self.eliminated)
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome of a game: seats from first place to last."""

    placements: tuple[int, ...]
    hands_played: int
    forfeited: tuple[int, ...]

    @property
    def winner(self) -> int:
        return self.placements[0]

    def place_of(self, seat: int) -> int:
        """Return the 1-based place of ``seat``; raise :class:`GameArgumentError` for anything but a seat."""
        require_int("place_of(seat)", seat, f"a seat 0..{len(self.placements) - 1}")
        if not 0 <= seat < len(self.placements):
            raise GameArgumentError(f"place_of(seat): seat must be 0..{len(self.placements) - 1}, got {seat}")
        return self.placements.index(seat) + 1


@dataclass(frozen=True, kw_only=True)  # no __slots__, so that the engine can make one fast (see made)
class Observation:
    """What one seat may know, common to both games. Built only by :meth:`Game.observation`."""

    game: str
    seat: int
    num_players: int
    hand_number: int
    dealer: int
    phase: Phase
    current_seat: int | None
    hand: tuple[Card, ...]  # this seat's own cards (four mid-turn in Stop the Bus)
    lives: tuple[int, ...]  # every seat's lives (tokens)
    floating: tuple[bool, ...]  # every seat's floating state (always False in Bastard Brag)
    in_game: tuple[bool, ...]  # every seat: still in the game
    in_hand: tuple[bool, ...]  # every seat: taking part in the current hand
    ender: int | None  # the stopper or knocker, once there is one
    turns_this_hand: int  # turns finished this hand, final turns included (so may pass turn_limit then)
    turn_limit: int  # normal turns a hand may have; final turns after a stop or knock are not limited
    hand_events: tuple[Event, ...]  # the public history of the current hand
    legal_actions: tuple[Action, ...]  # non-empty only when it is this seat's decision


RecordT = TypeVar("RecordT", bound=Observation | HandResult)


def made(record_class: type[RecordT], fields: dict[str, Any]) -> RecordT:
    """Return ``record_class(**fields)`` for a record the engine makes often (an observation at every decision,
    a hand's result), made faster: ``fields`` (a new dict naming every field, kept as it is) becomes the new
    record's ``__dict__`` at once, where a frozen dataclass's __init__ would set each field through
    ``object.__setattr__`` (half of a decision's cost, before).
    """
    record = _new_object(record_class)
    _set_attribute(record, "__dict__", fields)
    return record


_new_object = object.__new__
_set_attribute = object.__setattr__
