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

from bisect import insort
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self

from referee.common.errors import GameArgumentError
from referee.engine.cards import DECK, Card, format_cards, shuffle
from referee.engine.games.events import made
from referee.engine.games.game import (
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
    RandomSource,
    action,
)
from referee.engine.games.sampling import public_state, seats_dealt_in
from referee.engine.seeding import SeedStream

_NORMAL_TURN = (DRAW, TAKE, STOP)
_FINAL_TURN = (DRAW, TAKE, PASS)
# The discard pile is empty only after a player took its last card and then
# forfeited, taking it out of play: there is nothing to take.
_NORMAL_TURN_NO_DISCARD = (DRAW, STOP)
_FINAL_TURN_NO_DISCARD = (DRAW, PASS)
_DISCARD = {card: action(ActionKind.DISCARD, card) for card in DECK}
_discard_of = _DISCARD.__getitem__
# Enum members read on every decision, as globals (a member read through its class costs about 0.1 us).
_FINAL = Phase.FINAL
_DISCARD_KIND, _DRAW_KIND, _TAKE_KIND, _STOP_KIND = (
    ActionKind.DISCARD,
    ActionKind.DRAW,
    ActionKind.TAKE,
    ActionKind.STOP,
)
_DISCARD_EVENT, _DRAW_EVENT, _TAKE_EVENT = EventKind.DISCARD, EventKind.DRAW, EventKind.TAKE
_STOP_EVENT, _PASS_EVENT, _DEAL_EVENT = EventKind.STOP, EventKind.PASS, EventKind.DEAL
_new_tuple = tuple.__new__  # _new_tuple(Event, all seven fields) is Event(...) without its keyword defaults' cost


@dataclass(frozen=True, kw_only=True)  # no __slots__, as Observation (see records.made)
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
    _table_fields = ("discard_top", "stock_count", "discard_count", "drawn_card", "took_discard")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The engine's working piles; read them with stock_top_first() and discard_pile_top_first().
        self.stock: list[Card] = []  # next card to draw is stock[-1]
        self.discard_pile: list[Card] = []  # top is discard_pile[-1]
        self.pending: tuple[Action, Card] | None = None  # (DRAW or TAKE, card) mid-turn
        self._recycle_stream: SeedStream | None = None
        super().__init__(*args, **kwargs)

    _LIST_ATTRIBUTES = (*Game._LIST_ATTRIBUTES, "stock", "discard_pile")

    def clone(self) -> Self:
        twin = super().clone()
        if self._recycle_stream is not None:  # the stream a hand's recycles continue: each copy its own
            twin._recycle_stream = self._recycle_stream.copy()
        return twin

    @classmethod
    def from_observation(cls, observation: Observation, rng: RandomSource) -> StopTheBus:
        """Return a whole game state that ``observation``'s seat cannot tell from the real one, drawn with ``rng``.

        For search (determinized Monte Carlo, ISMCTS). The state gives back
        ``observation`` exactly (``observation(seat) == observation``) and plays
        on by the rules. What the seat saw is kept where it saw it: its hand,
        the discard pile (rebuilt from the hand's events), each card another
        seat took from the pile and has not discarded since. Every other card
        is dealt uniformly at random among the places it could be, each
        place's size known from the events: the unseen cards among the other
        seats' hands, the stock and the cards a forfeiting seat took out of
        play; after a recycle, the recycled cards (seen once, in the pile)
        among the new stock and the hands that drew from it. This is the
        distribution of the hidden cards given the public record, if the
        players' choices told nothing of their cards (the usual assumption of
        determinized search). What the seat cannot know is drawn too: the
        seed of later hands' decks and recycles, and the order in which
        seats left the game in earlier hands. Raises
        :class:`GameArgumentError` for an observation of another game, of a
        game that is over, or that no game could show.
        """
        return next(cls.states_from_observation(observation, rng))

    @classmethod
    def states_from_observation(cls, observation: Observation, rng: RandomSource) -> Iterator[StopTheBus]:
        """Endless states drawn as :meth:`from_observation` draws one: the hand's record is read once, up front
        (so a bad observation raises here), and each state after costs only its shuffles."""
        return _sampled_states(cls, observation, rng)

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
        self.stock = deck[:used:-1]  # the rest of the deck, reversed: the next card is drawn from the end
        self.pending = None
        self._recycle_stream = None
        self.events.append(
            _new_tuple(Event, (_DEAL_EVENT, self.hand_number, self.dealer, deck[used], None, None, None))
        )

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
                return _FINAL_TURN if self.phase is _FINAL else _NORMAL_TURN
            return _FINAL_TURN_NO_DISCARD if self.phase is _FINAL else _NORMAL_TURN_NO_DISCARD
        seat = self.current_seat
        assert seat is not None  # legal actions are asked only while the game is on
        hand = self.hands[seat]
        if pending[0] is TAKE:
            taken = pending[1]
            return tuple([_DISCARD[card] for card in hand if card != taken])
        return tuple(map(_discard_of, hand))

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
        if kind is _DISCARD_KIND:
            card = act.card
            assert card is not None  # a discard names its card
            self.hands[seat].remove(card)
            self.discard_pile.append(card)
            self.pending = None
            self.events.append(_new_tuple(Event, (_DISCARD_EVENT, self.hand_number, seat, card, None, None, None)))
            self._end_turn(seat)
        elif kind is _DRAW_KIND:
            card = self.stock.pop()
            insort(self.hands[seat], card)  # a hand is kept in card order
            self.pending = (DRAW, card)
            self.events.append(_new_tuple(Event, (_DRAW_EVENT, self.hand_number, seat, None, None, None, None)))
        elif kind is _TAKE_KIND:
            card = self.discard_pile.pop()
            insort(self.hands[seat], card)
            self.pending = (TAKE, card)
            self.events.append(_new_tuple(Event, (_TAKE_EVENT, self.hand_number, seat, card, None, None, None)))
        elif kind is _STOP_KIND:
            self.events.append(_new_tuple(Event, (_STOP_EVENT, self.hand_number, seat, None, None, None, None)))
            self._begin_final_turns(seat)
            self._end_turn(seat)
        else:  # PASS
            self.events.append(_new_tuple(Event, (_PASS_EVENT, self.hand_number, seat, None, None, None, None)))
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
        (
            common["discard_top"],
            common["stock_count"],
            common["discard_count"],
            common["drawn_card"],
            common["took_discard"],
        ) = self.table_view(seat)
        return made(StopTheBusObservation, common)


# ----- a state sampled from an observation (StopTheBus.from_observation) -------------------------------------

_UNSEEN = 0  # the class of the cards never seen in this hand; recycle k's cards are class k


class _Walk:
    """What one seat can tell of where the cards are, from its hand's public events.

    Each hidden card belongs to a class: never seen (``_UNSEEN``), or put
    into the stock by recycle k (class k). Within a class the cards are
    interchangeable as far as the seat knows; how many of each class every
    other seat holds hidden follows from the events (a draw adds one of the
    stock's class, a discard of a card takes one from the class it was in).
    """

    def __init__(self, num_players: int) -> None:
        self.pile: list[Card] = []
        self.seen: set[Card] = set()
        self.recycled: dict[Card, int] = {}  # a recycled card not seen since -> its recycle's class
        self.known: list[list[Card]] = [[] for _ in range(num_players)]  # taken from the pile, still held
        self.hidden: list[list[int]] = [[0] for _ in range(num_players)]  # seat -> count by class
        self.out_known: list[Card] = []
        self.out_hidden: list[int] = [0]
        self.stock_class = _UNSEEN
        self.drawn_class: list[int] = [_UNSEEN] * num_players  # each seat's last draw's class

    def play(self, events: tuple[Event, ...], starting: list[bool]) -> list[int]:
        """Follow ``events``; return the seats that forfeited, in order."""
        forfeits: list[int] = []
        for event in events:
            kind, seat, card = event.kind, event.seat, event.card
            if kind is EventKind.DEAL:
                if card is None or self.pile:
                    raise _inconsistent(f"a hand's events start with its deal, not {event}")
                self.pile = [card]
                self.seen.add(card)
                for holder in range(len(starting)):
                    if starting[holder]:
                        self.hidden[holder][_UNSEEN] += 3
            elif kind is EventKind.DRAW and seat is not None:
                self.hidden[seat][self.stock_class] += 1
                self.drawn_class[seat] = self.stock_class
            elif kind is EventKind.TAKE and seat is not None and card is not None:
                if not self.pile or self.pile[-1] != card:
                    raise _inconsistent(f"{event}: {card} is not on top of the discard pile")
                self.pile.pop()
                self.known[seat].append(card)
            elif kind is EventKind.DISCARD and seat is not None and card is not None:
                self._leaves_hand(seat, card, event)
                self.pile.append(card)
            elif kind is EventKind.RECYCLE:
                self.stock_class = len(self.out_hidden)
                for counts in self.hidden:
                    counts.append(0)
                self.out_hidden.append(0)
                for recycled in self.pile[:-1]:
                    self.recycled[recycled] = self.stock_class
                self.pile = self.pile[-1:]
            elif kind is EventKind.FORFEIT and seat is not None:
                forfeits.append(seat)
                self.out_known += self.known[seat]
                self.known[seat] = []
                for kind_of_card, count in enumerate(self.hidden[seat]):
                    self.out_hidden[kind_of_card] += count
                    self.hidden[seat][kind_of_card] = 0
            elif kind not in (EventKind.STOP, EventKind.PASS):
                raise _inconsistent(f"{event} is no event of a hand in play")
        return forfeits

    def _leaves_hand(self, seat: int, card: Card, event: Event) -> None:
        if card in self.known[seat]:
            self.known[seat].remove(card)
            return
        if card in self.recycled:
            kind_of_card = self.recycled.pop(card)
        elif card in self.seen:
            raise _inconsistent(f"{event}: {card} was seen elsewhere and never reached seat {seat}")
        else:
            kind_of_card = _UNSEEN
            self.seen.add(card)
        if self.hidden[seat][kind_of_card] == 0:
            raise _inconsistent(f"{event}: seat {seat} holds no hidden card that could be {card}")
        self.hidden[seat][kind_of_card] -= 1


def _inconsistent(problem: str) -> GameArgumentError:
    return GameArgumentError(f"from_observation: no game of Stop the Bus shows this observation: {problem}")


def _sampled_states(cls: type[StopTheBus], observation: Observation, rng: RandomSource) -> Iterator[StopTheBus]:
    starting = seats_dealt_in(observation, StopTheBusObservation)
    assert isinstance(observation, StopTheBusObservation)  # checked just above
    seat, players = observation.seat, observation.num_players
    walk = _Walk(players)
    forfeits = walk.play(observation.hand_events, starting)

    # The pools of hidden cards by class, and the places each class fills.
    own = set(observation.hand)
    pools: list[list[Card]] = [[] for _ in walk.out_hidden]
    for card in DECK:
        if card not in own and card not in walk.seen:
            pools[_UNSEEN].append(card)
    for card, kind_of_card in walk.recycled.items():
        if card not in own:
            pools[kind_of_card].append(card)
    holders = [holder for holder in range(players) if holder != seat and observation.in_hand[holder]]
    for kind_of_card, pool in enumerate(pools):
        in_stock = observation.stock_count if kind_of_card == walk.stock_class else 0
        needed = sum(walk.hidden[holder][kind_of_card] for holder in holders) + walk.out_hidden[kind_of_card] + in_stock
        if needed != len(pool):
            raise _inconsistent(f"{len(pool)} hidden cards of one kind for {needed} places")
    return _draws(cls, observation, rng, walk, pools, holders, forfeits)


def _draws(
    cls: type[StopTheBus],
    observation: Observation,
    rng: RandomSource,
    walk: _Walk,
    pools: list[list[Card]],
    holders: list[int],
    forfeits: list[int],
) -> Iterator[StopTheBus]:
    assert isinstance(observation, StopTheBusObservation)  # checked by _sampled_states
    seat, players = observation.seat, observation.num_players
    while True:
        hands: list[list[Card]] = [[] for _ in range(players)]
        out_of_play = list(walk.out_known)
        stock: list[Card] = []
        first_of: dict[tuple[int, int], Card] = {}  # (seat, class) -> the first card dealt to that place
        for kind_of_card, pool in enumerate(pools):
            places = [walk.hidden[holder][kind_of_card] for holder in holders]
            rng.shuffle(pool)
            start = 0
            for holder, count in zip(holders, places, strict=True):
                if count:
                    first_of[holder, kind_of_card] = pool[start]
                hands[holder] += pool[start : start + count]
                start += count
            out_of_play += pool[start : start + walk.out_hidden[kind_of_card]]
            start += walk.out_hidden[kind_of_card]
            stock += pool[start:]
        for holder in holders:
            hands[holder] += walk.known[holder]
            hands[holder].sort()
        hands[seat] = list(observation.hand)

        game = public_state(cls, observation, rng, forfeits)
        game.hands = hands
        game.out_of_play = out_of_play
        game.discard_pile = list(walk.pile)  # each state its own
        game.stock = stock
        game.pending = None
        current = observation.current_seat
        last = observation.hand_events[-1] if observation.hand_events else None
        if current == seat and observation.drawn_card is not None:
            game.pending = (TAKE if observation.took_discard else DRAW, observation.drawn_card)
        elif current is not None and last is not None and last.seat == current:
            if last.kind is EventKind.TAKE and last.card is not None:
                game.pending = (TAKE, last.card)
            elif last.kind is EventKind.DRAW:
                game.pending = (DRAW, first_of[current, walk.drawn_class[current]])
        game._recycle_stream = None
        yield game
