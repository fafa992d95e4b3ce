"""A naive reference engine of both games, written plainly from the rules (docs/rules.md).

It is what a competent author would write at a first go, and the yardstick
of ``bench/engine.py``: hands, stock, discard pile and centre are lists of
cards; whatever a decision needs is worked out afresh when it is asked (the
legal actions, the knock rule, the next seat); an observation is a plain
dict built at each call; hands are ranked at the showdown by a function of
its own. There is no caching and no deliberate slowness.

``tests/test_naive_reference.py`` plays it move for move beside the engine,
as an independent oracle: it deals from the same decks (the seeded shuffle
that :func:`referee.engine.cards.shuffled_deck` documents, written here as plainly:
one :meth:`SeedStream.randbelow` a swap; or the decks given), it
offers the same legal actions in the same order (:class:`Action` values
equal to the engine's shared ones), and it records the same public events,
as dicts holding the fields an event uses. Turn limit and forfeits are the
engine's rulings. It refuses an illegal action with a ``ValueError`` and
checks nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.engine.cards import DECK, Card
from referee.engine.games.actions import Action, ActionKind
from referee.engine.seeding import SeedStream

Decks = Sequence[Sequence[Card]] | Callable[[int], Sequence[Card] | None]

HIGH_CARD, PAIR, FLUSH, RUN, RUNNING_FLUSH, PRIAL = range(6)
ACE, A23 = 14, 15  # the run A-2-3 and the prial 3-3-3 are worth more than any ordinary rank


def rank_hand(cards: Sequence[Card]) -> tuple[int, tuple[int, ...], int]:
    """The strength of a three-card hand as ``(category, values, tie-break suit)``: greater is better."""
    high, middle, low = sorted(cards, reverse=True)  # by rank, then suit: the top rank's best suit first
    ranks = (high.rank, middle.rank, low.rank)
    flush = high.suit == middle.suit == low.suit
    if high.rank == middle.rank == low.rank:
        return PRIAL, (A23 if high.rank == 3 else high.rank,), high.suit
    if ranks == (ACE, 3, 2):
        run = A23
    elif high.rank == middle.rank + 1 == low.rank + 2:
        run = high.rank
    else:
        run = 0
    if run:
        return (RUNNING_FLUSH if flush else RUN), (run,), high.suit
    if flush:
        return FLUSH, ranks, high.suit
    if high.rank == middle.rank:
        return PAIR, (high.rank, low.rank), high.suit
    if middle.rank == low.rank:
        return PAIR, (middle.rank, high.rank), high.suit
    return HIGH_CARD, ranks, high.suit


def shuffle(cards: list[Card], stream: SeedStream) -> list[Card]:
    """Fisher-Yates as :func:`referee.engine.cards.shuffled_deck` documents it: for ``i`` from the last position down
    to 1, swap position ``i`` with position ``stream.randbelow(i + 1)``. Shuffles ``cards`` in place; returns it."""
    for i in range(len(cards) - 1, 0, -1):
        j = stream.randbelow(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


class NaiveGame:
    """What both games share: seats, lives, the deal's order, turns, the showdown, forfeits."""

    name = ""
    min_players = 0
    max_players = 0
    final_reason = ""  # what ends a hand after the final turns: "stop" or "knock"

    def __init__(
        self,
        num_players: int,
        seed: int,
        first_dealer: int | None = None,
        decks: Decks | None = None,
        turn_limit: int = 200,
    ) -> None:
        if not self.min_players <= num_players <= self.max_players:
            raise ValueError(f"{self.name} is played by {self.min_players} to {self.max_players} players")
        self.num_players = num_players
        self.seed = seed
        self.decks = decks
        self.turn_limit = turn_limit
        if first_dealer is None:
            first_dealer = SeedStream.derive(seed, "first-dealer").randbelow(num_players)
        self.dealer = first_dealer
        self.lives = [3] * num_players
        self.floating = [False] * num_players
        self.in_game = [True] * num_players
        self.in_hand = [False] * num_players
        self.hands: list[list[Card]] = [[] for _ in range(num_players)]
        self.events: list[dict[str, Any]] = []
        self.hand_results: list[dict[str, Any]] = []
        self.eliminations: list[int] = []
        self.forfeited: list[int] = []
        self.eliminated_this_hand: list[int] = []
        self.out_of_play: list[Card] = []
        self.hand_number = 0
        self.hand_start = 0  # where the current hand's events begin
        self.phase = "normal"
        self.current_seat: int | None = None
        self.ender: int | None = None
        self.final_turns_left: list[int] = []
        self.turns_this_hand = 0
        self.start_hand()

    @property
    def is_over(self) -> bool:
        return self.phase == "over"

    def record(self, kind: str, **fields: Any) -> None:
        self.events.append({"kind": kind, "hand_number": self.hand_number, **fields})

    def seats_after(self, seat: int) -> list[int]:
        """The seats in the hand in turn order from ``seat``'s left, ``seat`` left out."""
        n = self.num_players
        return [(seat + step) % n for step in range(1, n) if self.in_hand[(seat + step) % n]]

    # ----- a hand ------------------------------------------------------------------

    def deck_for(self, hand_number: int) -> list[Card]:
        seeded = shuffle(list(DECK), SeedStream.derive(self.seed, "hand", hand_number, "deck"))
        if self.decks is None:
            return seeded
        if callable(self.decks):
            given = self.decks(hand_number)
            return seeded if given is None else list(given)
        return list(self.decks[hand_number - 1])

    def start_hand(self) -> None:
        deck = self.deck_for(self.hand_number + 1)
        self.hand_number += 1
        self.hand_start = len(self.events)
        self.eliminated_this_hand = []
        self.out_of_play = []
        self.in_hand = list(self.in_game)
        self.phase = "normal"
        self.ender = None
        self.final_turns_left = []
        self.turns_this_hand = 0
        order = self.seats_after(self.dealer)
        if self.in_hand[self.dealer]:
            order.append(self.dealer)
        self.deal(deck, order)
        self.current_seat = order[0]
        self.start_turn()

    def deal(self, deck: list[Card], order: list[int]) -> None:
        """Deal ``deck`` to the seats in ``order`` (the dealer's left first) and lay out the table."""
        raise NotImplementedError

    def start_turn(self) -> None:
        """What happens before the current seat acts (Stop the Bus: an empty stock is recycled)."""

    def end_turn(self, seat: int) -> None:
        self.turns_this_hand += 1
        if self.phase == "normal" and self.turns_this_hand >= self.turn_limit:
            self.record("turn-limit", count=self.turns_this_hand)
            self.showdown("turn-limit")
        else:
            self.next_turn(seat)

    def next_turn(self, seat: int) -> None:
        if self.phase == "final":
            if not self.final_turns_left:
                self.showdown(self.final_reason)
                return
            self.current_seat = self.final_turns_left.pop(0)
        else:
            self.current_seat = self.seats_after(seat)[0]
        self.start_turn()

    def begin_final_turns(self, seat: int) -> None:
        self.ender = seat
        self.phase = "final"
        self.final_turns_left = self.seats_after(seat)

    def showdown(self, reason: str) -> None:
        ranks = {seat: rank_hand(self.hands[seat]) for seat in range(self.num_players) if self.in_hand[seat]}
        loser = min(ranks, key=lambda seat: ranks[seat])
        self.record("showdown", seat=loser)
        if self.lose_life(loser):
            self.in_game[loser] = False
            self.eliminations.append(loser)
            self.eliminated_this_hand.append(loser)
            self.record("eliminated", seat=loser)
        self.finish_hand(reason, loser, ranks)

    def finish_hand(self, reason: str, loser: int | None, ranks: dict[int, tuple[int, tuple[int, ...], int]]) -> None:
        self.hand_results.append(
            {
                "hand_number": self.hand_number,
                "dealer": self.dealer,
                "ended_by": reason,
                "ender": self.ender,
                "turns": self.turns_this_hand,
                "hands": {seat: tuple(self.hands[seat]) for seat in ranks},
                "ranks": ranks,
                "loser": loser,
                "lives_after": tuple(self.lives),
                "floating_after": tuple(self.floating),
                "eliminated": tuple(self.eliminated_this_hand),
            }
        )
        if self.in_game.count(True) == 1:
            self.phase = "over"
            self.current_seat = None
            self.record("game-over", seat=self.in_game.index(True))
        else:
            self.dealer = self.next_dealer()
            self.start_hand()

    def lose_life(self, seat: int) -> bool:
        """Take a life from the showdown's loser; return whether it is out of the game."""
        raise NotImplementedError

    def next_dealer(self) -> int:
        raise NotImplementedError

    # ----- decisions ---------------------------------------------------------------

    def legal_actions(self) -> list[Action]:
        raise NotImplementedError

    def apply(self, action: Action) -> None:
        if action not in self.legal_actions():
            raise ValueError(f"{action} is not legal for seat {self.current_seat} now")
        self.play(action)

    def play(self, action: Action) -> None:
        """Play a legal action for the current seat."""
        raise NotImplementedError

    def forfeit(self, seat: int) -> None:
        """Remove ``seat`` from the game at once: its cards leave play and it ranks below everyone still in."""
        if self.phase == "over" or not self.in_game[seat]:
            raise ValueError(f"seat {seat} cannot forfeit now")
        self.in_game[seat] = False
        self.in_hand[seat] = False
        self.forfeited.append(seat)
        self.eliminations.append(seat)
        self.eliminated_this_hand.append(seat)
        self.out_of_play.extend(self.hands[seat])
        self.hands[seat] = []
        self.leave_turn(seat)
        self.record("forfeit", seat=seat)
        if self.in_game.count(True) == 1:
            self.finish_hand("forfeit", None, {})
            return
        if seat in self.final_turns_left:
            self.final_turns_left.remove(seat)
        if seat == self.current_seat:
            self.next_turn(seat)  # a forfeit is not a turn: nothing is counted

    def leave_turn(self, seat: int) -> None:
        """Forget what ``seat`` was doing mid-turn, as it leaves."""

    def result(self) -> dict[str, Any]:
        survivors = [seat for seat in range(self.num_players) if self.in_game[seat]]
        return {
            "placements": tuple(survivors + self.eliminations[::-1]),
            "hands_played": len(self.hand_results),
            "forfeited": tuple(self.forfeited),
        }

    # ----- what a seat sees ----------------------------------------------------------

    def observation(self, seat: int) -> dict[str, Any]:
        view = {
            "game": self.name,
            "seat": seat,
            "num_players": self.num_players,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "phase": self.phase,
            "current_seat": self.current_seat,
            "hand": list(self.hands[seat]),
            "lives": list(self.lives),
            "floating": list(self.floating),
            "in_game": list(self.in_game),
            "in_hand": list(self.in_hand),
            "ender": self.ender,
            "turns_this_hand": self.turns_this_hand,
            "turn_limit": self.turn_limit,
            "hand_events": self.events[self.hand_start :],
            "legal_actions": self.legal_actions() if seat == self.current_seat else [],
        }
        view.update(self.table_view(seat))
        return view

    def table_view(self, seat: int) -> dict[str, Any]:
        raise NotImplementedError


class NaiveStopTheBus(NaiveGame):
    """Stop the Bus: draw or take, then discard; stop; a floating life."""

    name = "stop_the_bus"
    min_players = 2
    max_players = 9
    final_reason = "stop"

    def deal(self, deck: list[Card], order: list[int]) -> None:
        self.hands = [[] for _ in range(self.num_players)]
        position = 0
        for _ in range(3):
            for seat in order:
                self.hands[seat].append(deck[position])
                position += 1
        for seat in order:
            self.hands[seat].sort()
        self.discard_pile = [deck[position]]  # the top is the last card
        self.stock = deck[position + 1 :]  # the next card drawn is the first
        self.recycle_stream: SeedStream | None = None
        self.drawn: Card | None = None  # mid-turn: the card just drawn or taken
        self.took_discard = False
        self.record("deal", seat=self.dealer, card=deck[position])

    def start_turn(self) -> None:
        if self.stock:
            return
        recyclable = self.discard_pile[:-1]
        if not recyclable:
            self.record("stock-exhausted")
            self.showdown("stock-exhausted")
            return
        if self.recycle_stream is None:
            self.recycle_stream = SeedStream.derive(self.seed, "hand", self.hand_number, "recycle")
        self.stock = shuffle(recyclable, self.recycle_stream)
        self.discard_pile = self.discard_pile[-1:]
        self.record("recycle", count=len(self.stock))

    def legal_actions(self) -> list[Action]:
        if self.phase == "over":
            return []
        if self.drawn is None:
            actions = [Action(ActionKind.DRAW)]
            if self.discard_pile:
                actions.append(Action(ActionKind.TAKE))
            actions.append(Action(ActionKind.PASS) if self.phase == "final" else Action(ActionKind.STOP))
            return actions
        assert self.current_seat is not None
        return [
            Action(ActionKind.DISCARD, card)
            for card in self.hands[self.current_seat]
            if not (self.took_discard and card == self.drawn)
        ]

    def play(self, action: Action) -> None:
        seat = self.current_seat
        assert seat is not None
        hand = self.hands[seat]
        if action.kind is ActionKind.DRAW:
            self.drawn = self.stock.pop(0)
            hand.append(self.drawn)
            hand.sort()
            self.record("draw", seat=seat)
        elif action.kind is ActionKind.TAKE:
            self.drawn = self.discard_pile.pop()
            self.took_discard = True
            hand.append(self.drawn)
            hand.sort()
            self.record("take", seat=seat, card=self.drawn)
        elif action.kind is ActionKind.DISCARD:
            assert action.card is not None
            hand.remove(action.card)
            self.discard_pile.append(action.card)
            self.drawn = None
            self.took_discard = False
            self.record("discard", seat=seat, card=action.card)
            self.end_turn(seat)
        elif action.kind is ActionKind.STOP:
            self.record("stop", seat=seat)
            self.begin_final_turns(seat)
            self.end_turn(seat)
        else:
            self.record("pass", seat=seat)
            self.end_turn(seat)

    def leave_turn(self, seat: int) -> None:
        if seat == self.current_seat:
            self.drawn = None
            self.took_discard = False

    def lose_life(self, seat: int) -> bool:
        if self.floating[seat]:
            self.floating[seat] = False
            return True
        self.lives[seat] -= 1
        if self.lives[seat] == 0:
            self.floating[seat] = True
        return False

    def next_dealer(self) -> int:
        """The deal moves left; if the player who would deal was just eliminated, the dealer deals again.

        So that the player who would have had the first turn keeps it: the dealer is the survivor on whose
        left that player sits (the same principle when the dealer was eliminated too).
        """
        n = self.num_players
        survivors = [seat for seat in range(n) if self.in_game[seat]]
        scheduled = next(
            (self.dealer + step) % n
            for step in range(1, n + 1)
            if self.in_game[(self.dealer + step) % n] or (self.dealer + step) % n in self.eliminated_this_hand
        )
        if scheduled in survivors:
            return scheduled
        first_turn = next((scheduled + step) % n for step in range(1, n + 1) if (scheduled + step) % n in survivors)
        return next((first_turn - step) % n for step in range(1, n + 1) if (first_turn - step) % n in survivors)

    def table_view(self, seat: int) -> dict[str, Any]:
        mine = seat == self.current_seat
        return {
            "discard_top": self.discard_pile[-1] if self.discard_pile else None,
            "stock_count": len(self.stock),
            "discard_count": len(self.discard_pile),
            "drawn_card": self.drawn if mine else None,
            "took_discard": mine and self.took_discard,
        }


class NaiveBastardBrag(NaiveGame):
    """Bastard Brag: exchange one card or all three with the centre; knock after round one."""

    name = "bastard_brag"
    min_players = 3
    max_players = 10
    final_reason = "knock"

    def deal(self, deck: list[Card], order: list[int]) -> None:
        self.hands = [[] for _ in range(self.num_players)]
        self.centre: list[Card] = []  # slots 0 and 1 face down, slot 2 face up
        position = 0
        for _ in range(3):
            for seat in order:
                self.hands[seat].append(deck[position])
                position += 1
            self.centre.append(deck[position])
            position += 1
        for seat in order:
            self.hands[seat].sort()
        self.set_aside = deck[position:]
        self.placed_by: list[int | None] = [None, None]  # who put each face-down card there
        self.has_played = [False] * self.num_players
        self.record("deal", seat=self.dealer, card=self.centre[2])

    def legal_actions(self) -> list[Action]:
        if self.phase == "over":
            return []
        assert self.current_seat is not None
        hand = self.hands[self.current_seat]
        actions = [Action(ActionKind.EXCHANGE, card, slot) for card in hand for slot in (0, 1, 2)]
        actions += [Action(ActionKind.EXCHANGE_ALL, card) for card in hand]
        round_one_over = all(self.has_played[seat] for seat in range(self.num_players) if self.in_hand[seat])
        if self.phase == "normal" and round_one_over:
            actions.append(Action(ActionKind.KNOCK))
        return actions

    def play(self, action: Action) -> None:
        seat = self.current_seat
        assert seat is not None
        if action.kind is ActionKind.EXCHANGE:
            given, slot = action.card, action.slot
            assert given is not None and slot is not None
            taken = self.centre[slot]
            self.centre[slot] = given
            self.hands[seat].remove(given)
            self.hands[seat].append(taken)
            self.hands[seat].sort()
            if slot == 2:
                self.record("exchange", seat=seat, card=given, taken=taken, slot=slot)
            else:
                self.placed_by[slot] = seat
                self.record("exchange", seat=seat, slot=slot)
        elif action.kind is ActionKind.EXCHANGE_ALL:
            face_up = action.card
            assert face_up is not None
            given_hand = self.hands[seat]
            taken_face_up = self.centre[2]
            self.hands[seat] = sorted(self.centre)
            face_down = [card for card in given_hand if card != face_up]
            self.centre = [face_down[0], face_down[1], face_up]
            self.placed_by = [seat, seat]
            self.record("exchange-all", seat=seat, card=face_up, taken=taken_face_up)
        else:
            self.record("knock", seat=seat)
            self.begin_final_turns(seat)
        self.has_played[seat] = True
        self.end_turn(seat)

    def lose_life(self, seat: int) -> bool:
        self.lives[seat] -= 1
        return self.lives[seat] == 0

    def next_dealer(self) -> int:
        n = self.num_players
        return next((self.dealer + step) % n for step in range(1, n + 1) if self.in_game[(self.dealer + step) % n])

    def table_view(self, seat: int) -> dict[str, Any]:
        return {
            "centre": [
                self.centre[0] if self.placed_by[0] == seat else None,
                self.centre[1] if self.placed_by[1] == seat else None,
                self.centre[2],
            ]
        }


NAIVE_GAMES: dict[str, type[NaiveGame]] = {
    NaiveStopTheBus.name: NaiveStopTheBus,
    NaiveBastardBrag.name: NaiveBastardBrag,
}
