"""Stop the Bus: draw and discard, three lives plus a floating life, 2-9 players.

A turn is one or two decisions: ``draw`` or ``take`` then ``discard CARD``
(the drawn card is seen before the discard), or ``stop`` on a normal turn,
or ``pass`` on a final turn. See ``docs/rules.md`` for the rules as built.

Deck and stock order: the deck of a hand is dealt from index 0; after the
deal and the first face-up discard, the rest is the stock, drawn in deck
order. When the stock is empty at the start of a turn, the discards except
the top, oldest first, are shuffled with ``SeedStream.derive(seed, "hand",
hand_number, "recycle")`` (one stream per hand, continued across recycles)
and drawn from index 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.cards import DECK, Card, format_cards, shuffle
from referee.games.base import (
    DRAW,
    PASS,
    STOP,
    TAKE,
    Action,
    ActionKind,
    EndReason,
    Event,
    EventKind,
    Game,
    Observation,
    Phase,
    action,
)
from referee.seeding import SeedStream

_NORMAL_TURN = (DRAW, TAKE, STOP)
_FINAL_TURN = (DRAW, TAKE, PASS)
# The discard pile is empty only after a player took its last card and then
# forfeited, taking it out of play: there is nothing to take.
_NORMAL_TURN_NO_DISCARD = (DRAW, STOP)
_FINAL_TURN_NO_DISCARD = (DRAW, PASS)
_DISCARD = {card: action(ActionKind.DISCARD, card) for card in DECK}


@dataclass(frozen=True, slots=True, kw_only=True)
class StopTheBusObservation(Observation):
    """A seat's view in Stop the Bus: the common view plus the piles."""

    discard_top: Card | None  # None only mid-turn, after taking the only discard
    stock_count: int
    discard_count: int
    drawn_card: Card | None  # mid-turn: the card just drawn or taken by this seat
    took_discard: bool  # mid-turn: the drawn card came from the discard pile


class StopTheBus(Game):
    """Stop the Bus (Nic Cleveland's British version), as in RULES.md."""

    name = "stop_the_bus"
    min_players = 2
    max_players = 9
    _final_reason = EndReason.STOP

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The engine's working piles; read them with stock_top_first() and discard_pile_top_first().
        self.stock: list[Card] = []  # next card to draw is stock[-1]
        self.discard_pile: list[Card] = []  # top is discard_pile[-1]
        self.pending: tuple[Action, Card] | None = None  # (DRAW or TAKE, card) mid-turn
        self._recycle_stream: SeedStream | None = None
        super().__init__(*args, **kwargs)

    @classmethod
    def cards_needed(cls, players: int) -> int:
        return 3 * players + 1

    def cards_in_play(self) -> int:
        return sum(map(len, self.hands)) + len(self.stock) + len(self.discard_pile) + len(self.out_of_play)

    # ----- the whole table, for the referee and tools ----------------------------

    def stock_top_first(self) -> tuple[Card, ...]:
        """Return the stock as it lies now, the next card to be drawn first.

        This is the referee's and tools' view of the whole table, never a
        seat's: no player may see the stock's cards (a seat is shown only
        ``stock_count`` in its observation, and the card it draws once drawn).
        After a recycle this is the new, shuffled stock.
        """
        return tuple(reversed(self.stock))

    def discard_pile_top_first(self) -> tuple[Card, ...]:
        """Return the discard pile, its face-up top first.

        The referee's and tools' view, never a seat's: a seat is shown only
        ``discard_top`` and ``discard_count`` (each card below the top lay
        face up once, so the public record names it, but no observation lists
        the pile). Empty only when a player took the last card and then forfeited.
        """
        return tuple(reversed(self.discard_pile))

    # ----- dealing and turns ---------------------------------------------------

    def _deal(self, deck: list[Card]) -> None:
        used = self._deal_rounds(deck, None)
        self.discard_pile = [deck[used]]
        self.stock = deck[used + 1 :]
        self.stock.reverse()
        self.pending = None
        self._recycle_stream = None
        self.events.append(Event(EventKind.DEAL, self.hand_number, self.dealer, deck[used]))

    def _start_hand(self) -> None:
        super()._start_hand()
        self._before_turn()

    def _before_turn(self) -> None:
        # Ruling: the empty-stock check happens at the start of every turn.
        if self.stock:
            return
        recyclable = self.discard_pile[:-1]
        if not recyclable:
            self.events.append(Event(EventKind.STOCK_EXHAUSTED, self.hand_number))
            self._showdown(EndReason.STOCK_EXHAUSTED)
            return
        if self._recycle_stream is None:
            self._recycle_stream = SeedStream.derive(self.seed, "hand", self.hand_number, "recycle")
        shuffle(recyclable, self._recycle_stream)
        recyclable.reverse()
        self.stock = recyclable
        self.discard_pile = self.discard_pile[-1:]
        self.events.append(Event(EventKind.RECYCLE, self.hand_number, count=len(recyclable)))

    # ----- legality ------------------------------------------------------------

    def _compute_legal(self) -> tuple[Action, ...]:
        pending = self.pending
        if pending is None:
            if self.discard_pile:
                return _FINAL_TURN if self.phase is Phase.FINAL else _NORMAL_TURN
            return _FINAL_TURN_NO_DISCARD if self.phase is Phase.FINAL else _NORMAL_TURN_NO_DISCARD
        seat = self.current_seat
        assert seat is not None  # legal actions are asked only while the game is on
        hand = self.hands[seat]
        if pending[0] is TAKE:
            taken = pending[1]
            return tuple(_DISCARD[card] for card in hand if card != taken)
        return tuple(map(_DISCARD.__getitem__, hand))

    def why_illegal(self, act: Action) -> str:
        kind = act.kind
        hand = self.hands[self.current_seat] if self.current_seat is not None else []
        if kind not in (ActionKind.DRAW, ActionKind.TAKE, ActionKind.DISCARD, ActionKind.STOP, ActionKind.PASS):
            return f"{kind.value!r} is not an action of Stop the Bus; allowed: draw, take, discard CARD, stop, pass"
        if self.pending is not None:
            source, drawn = self.pending
            if kind is not ActionKind.DISCARD:
                return f"you hold four cards after {source.kind.value} {drawn}; discard one of {format_cards(hand)}"
            if act.card not in hand:
                return f"{act.card} is not in your hand ({format_cards(hand)})"
            return f"{act.card} was just taken from the discard pile; discard a different card"
        if kind is ActionKind.DISCARD:
            return "a turn starts with draw, take or stop; you hold three cards and cannot discard yet"
        if kind is ActionKind.TAKE:
            return "the discard pile is empty (its last card left play with a forfeiting player); draw instead"
        if kind is ActionKind.STOP:
            return f"the bus has already been stopped by seat {self.ender}; a final turn may draw, take or pass"
        if kind is ActionKind.PASS:
            return "there is no pass on a normal turn; pass is allowed only in a final turn after a stop"
        return "not allowed now"  # pragma: no cover - every legal kind is handled above

    def default_action(self) -> Action:
        """Draw from the stock on a normal turn, pass a final turn; after a draw, discard the drawn card (the
        hand is unchanged), after a take the lowest other card."""
        pending = self.pending
        if pending is None:
            return PASS if self.phase is Phase.FINAL else DRAW
        if pending[0] is DRAW:
            return _DISCARD[pending[1]]
        return self.legal_actions()[0]

    # ----- applying actions ------------------------------------------------------

    def _apply(self, act: Action) -> None:
        seat = self.current_seat
        assert seat is not None  # only a legal action is applied, so the game is on
        kind = act.kind
        hand = self.hands[seat]
        if kind is ActionKind.DISCARD:
            card = act.card
            assert card is not None  # a discard names its card
            hand.remove(card)
            self.discard_pile.append(card)
            self.pending = None
            self.events.append(Event(EventKind.DISCARD, self.hand_number, seat, card))
            self._end_turn(seat)
        elif kind is ActionKind.DRAW:
            card = self.stock.pop()
            hand.append(card)
            hand.sort()
            self.pending = (DRAW, card)
            self.events.append(Event(EventKind.DRAW, self.hand_number, seat))
        elif kind is ActionKind.TAKE:
            card = self.discard_pile.pop()
            hand.append(card)
            hand.sort()
            self.pending = (TAKE, card)
            self.events.append(Event(EventKind.TAKE, self.hand_number, seat, card))
        elif kind is ActionKind.STOP:
            self.events.append(Event(EventKind.STOP, self.hand_number, seat))
            self._begin_final_turns(seat)
            self._end_turn(seat)
        else:  # PASS
            self.events.append(Event(EventKind.PASS, self.hand_number, seat))
            self._end_turn(seat)

    def _release_cards(self, seat: int) -> list[Card]:
        if seat == self.current_seat:
            self.pending = None
        return list(self.hands[seat])

    # ----- lives and the deal ------------------------------------------------------

    def _lose_life(self, seat: int) -> bool:
        if self.floating[seat]:
            self.floating[seat] = False
            return True
        self.lives[seat] -= 1
        if self.lives[seat] == 0:
            self.floating[seat] = True
        return False

    def _next_dealer(self) -> int:
        """The deal moves left; if that player was just eliminated, the dealer deals again.

        Generalised so that it holds when the dealer was eliminated too: the
        next dealer is the survivor whose left-hand survivor is the player
        who would have had the first turn had the deal simply moved left.
        """
        n = self.num_players
        in_game = self.in_game
        just_out = self._eliminated_this_hand
        step = 1
        while True:
            scheduled = (self.dealer + step) % n
            if in_game[scheduled] or scheduled in just_out:
                break
            step += 1
        if in_game[scheduled]:
            return scheduled
        first = next((scheduled + k) % n for k in range(1, n + 1) if in_game[(scheduled + k) % n])
        return next((first - k) % n for k in range(1, n + 1) if in_game[(first - k) % n])

    # ----- observation -------------------------------------------------------------

    def table_view(self, seat: int) -> tuple[Card | None, int, int, Card | None, bool]:
        """What ``seat`` may see of the piles: the discard pile's top, the stock's and the pile's sizes, and the
        card just drawn or taken with whether it was taken (to the seat that drew it, mid-turn, only)."""
        pending = self.pending if seat == self.current_seat else None
        discard_pile = self.discard_pile
        return (
            discard_pile[-1] if discard_pile else None,
            len(self.stock),
            len(discard_pile),
            pending[1] if pending is not None else None,
            pending is not None and pending[0] is TAKE,
        )

    def _observe(self, seat: int, common: dict[str, Any]) -> StopTheBusObservation:
        discard_top, stock_count, discard_count, drawn_card, took_discard = self.table_view(seat)
        return StopTheBusObservation(
            **common,
            discard_top=discard_top,
            stock_count=stock_count,
            discard_count=discard_count,
            drawn_card=drawn_card,
            took_discard=took_discard,
        )
