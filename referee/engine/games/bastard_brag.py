"""Bastard Brag: exchange with a centre hand, knocking, three lives, 3-10 players.

The centre has three slots. Slots 0 and 1 are face down and slot 2 is face
up, always: an exchange gives the card the place and the face of the card
taken, so the face-up card is always in slot 2. ``exchange CARD SLOT`` gives
``CARD`` and takes the card in ``SLOT``; ``exchange-all CARD`` swaps the whole
hand for the centre and lays ``CARD`` face up in slot 2, the other two given
cards going to slots 0 and 1 in card order. See ``docs/rules.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import gt
from typing import Any

from referee.common.errors import GameArgumentError
from referee.engine.cards import DECK, Card, format_cards
from referee.engine.games.brag_sampling import CardInference, NoConfiguration
from referee.engine.games.events import made
from referee.engine.games.game import (
    CENTRE_SLOTS,
    KNOCK,
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

FACE_UP_SLOT = 2
# from_observation's passes over the hand: another is made only where resampling dropped every agreeing configuration.
_PASSES = 20
# Each card's legal exchanges, in the legal order: one per slot, then all three with this card face up.
_EXCHANGES = {
    card: (*(action(ActionKind.EXCHANGE, card, slot) for slot in CENTRE_SLOTS), action(ActionKind.EXCHANGE_ALL, card))
    for card in DECK
}
# Read on every decision, as globals (a member read through its enum class costs about 0.1 us).
_NORMAL, _EXCHANGE, _EXCHANGE_ALL = Phase.NORMAL, ActionKind.EXCHANGE, ActionKind.EXCHANGE_ALL
_EXCHANGE_EVENT, _EXCHANGE_ALL_EVENT = EventKind.EXCHANGE, EventKind.EXCHANGE_ALL
_new_tuple = tuple.__new__  # _new_tuple(Event, all seven fields) is Event(...) without its keyword defaults' cost


@dataclass(frozen=True, kw_only=True)  # no __slots__, as Observation (see records.made)
class BastardBragObservation(Observation):
    """A seat's view in Bastard Brag: the common view plus the centre as this seat knows it.

    ``centre[2]`` is the face-up card; ``centre[0]`` and ``centre[1]`` are
    face down, shown only while this seat knows them (it put them there).
    """

    centre: tuple[Card | None, Card | None, Card]


class BastardBrag(Game):
    """Bastard Brag with lives and knocking, as in RULES.md."""

    name = "bastard_brag"
    min_players = 3
    max_players = 10
    _final_reason = EndReason.KNOCK

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The engine's working centre, by slot; read it with centre_by_slot().
        self.centre: list[Card] = []
        self.set_aside: list[Card] = []
        # Who knows each face-down slot's card (the seat that put it there), or None.
        self.centre_known_to: list[int | None] = [None, None]
        self.has_had_turn: list[bool] = []
        super().__init__(*args, **kwargs)

    _LIST_ATTRIBUTES = (*Game._LIST_ATTRIBUTES, "centre", "set_aside", "centre_known_to", "has_had_turn")

    @classmethod
    def cards_needed(cls, players: int) -> int:
        return 3 * players + 3

    @classmethod
    def from_observation(cls, observation: Observation, rng: RandomSource) -> BastardBrag:
        """Return a whole game state that ``observation``'s seat cannot tell from the real one, drawn with ``rng``.

        For search (determinized Monte Carlo, ISMCTS). The state gives back
        ``observation`` exactly (``observation(seat) == observation``) and plays
        on by the rules. The seat's hand, the face-up card and the face-down
        cards the seat put in the centre (while they are there) are where it
        sees them. Every card seen this hand (the deal's face-up card, each
        card given or taken face up, the card an exchange-all laid face up) is
        placed where it may be now: in the hand that took it, or, after that
        hand exchanged with a face-down slot, perhaps given there, and so on.
        Every card never seen is dealt uniformly at random among the places
        left: the other seats' hands, the face-down slots, the cards of seats
        that forfeited, the set-aside rest. The chances are exact for the
        model determinized search assumes: a uniformly shuffled deck, and
        choices that tell nothing of the cards (so a card given face down is
        any of the giver's three with equal chance); the order of the two
        face-down cards an exchange-all lays down (lower in slot 0) is kept.
        The state is drawn from the observation alone: a bot that remembers
        more (the card it put face down that another seat has since taken)
        knows more than this. What the seat cannot know is drawn too: the
        seed of later hands' decks and the order in which seats left the game
        in earlier hands. Raises :class:`GameArgumentError` for an
        observation of another game, of a game that is over, or that no game
        could show (see ``referee.engine.games.brag_sampling``).
        """
        return next(cls.states_from_observation(observation, rng))

    @classmethod
    def states_from_observation(cls, observation: Observation, rng: RandomSource) -> Iterator[BastardBrag]:
        """Endless states drawn as :meth:`from_observation` draws one: the hand's record is followed once, up
        front (so a bad observation raises here), and each state after costs only its draw."""
        starting = seats_dealt_in(observation, BastardBragObservation)
        assert isinstance(observation, BastardBragObservation)  # checked just above
        seat, players = observation.seat, observation.num_players
        for attempt in range(1, _PASSES + 1):
            inference = CardInference(players, starting, rng)
            try:
                inference.play(observation.hand_events, seat, observation.hand, observation.centre)
                inference.agree_with(observation.centre)
                break
            except NoConfiguration:
                if not inference.resampled or attempt == _PASSES:
                    raise
        if [slot for slot in range(2) if inference.centre_known_to[slot] == seat] != [
            slot for slot in range(2) if observation.centre[slot] is not None
        ]:
            raise GameArgumentError(
                "from_observation: no game of Bastard Brag shows this observation: the face-down cards it shows "
                "are not those the seat put there"
            )
        set_aside = len(DECK) - cls.cards_needed(sum(starting))
        return cls._draws(observation, inference, set_aside, rng)

    @classmethod
    def _draws(
        cls, observation: BastardBragObservation, inference: CardInference, set_aside: int, rng: RandomSource
    ) -> Iterator[BastardBrag]:
        while True:
            places = inference.draw(observation.seat, observation.hand, observation.centre, rng)
            if len(places.set_aside) != set_aside:
                raise GameArgumentError(
                    f"from_observation: no game of Bastard Brag shows this observation: {len(places.set_aside)} "
                    f"cards would be set aside, not {set_aside}"
                )
            game = public_state(cls, observation, rng, inference.forfeits)
            game.hands = places.hands
            game.centre = places.centre
            game.set_aside = places.set_aside
            game.out_of_play = places.out_of_play
            game.centre_known_to = list(inference.centre_known_to)
            game.has_had_turn = list(inference.has_had_turn)
            yield game

    def cards_in_play(self) -> int:
        return sum(map(len, self.hands)) + len(self.centre) + len(self.set_aside) + len(self.out_of_play)

    def centre_by_slot(self) -> tuple[Card, Card, Card]:
        """Return the centre's three cards by slot: slots 0 and 1 face down, slot 2 face up.

        This is the referee's and tools' view of the whole table, never a
        seat's: every seat sees slot 2, and a face-down slot only while it
        is the seat that put the card there (``centre`` in its observation);
        nobody sees the face-down cards of the deal. The set-aside rest of
        the deck is never seen by anyone.
        """
        centre = self.centre
        return (centre[0], centre[1], centre[FACE_UP_SLOT])

    def _deal(self, deck: list[Card]) -> None:
        centre: list[Card] = []
        used = self._deal_rounds(deck, centre)
        self.centre = centre
        self.set_aside = deck[used:]
        self.centre_known_to = [None, None]
        self.has_had_turn = [False] * self.num_players
        self.events.append(Event(EventKind.DEAL, self.hand_number, self.dealer, centre[FACE_UP_SLOT]))

    def knock_allowed(self) -> bool:
        """Ruling: a knock is allowed once round one (everyone's first turn) is over."""
        if self.phase is not _NORMAL:
            return False
        return True not in map(gt, self.in_hand, self.has_had_turn)  # no seat in the hand that has not played

    # ----- legality ------------------------------------------------------------

    def _compute_legal(self) -> tuple[Action, ...]:
        seat = self.current_seat
        assert seat is not None  # legal actions are asked only while the game is on
        low, middle, high = self.hands[seat]
        a, b, c = _EXCHANGES[low], _EXCHANGES[middle], _EXCHANGES[high]
        if self.knock_allowed():
            return (a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2], a[3], b[3], c[3], KNOCK)
        return (a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2], a[3], b[3], c[3])

    def why_illegal(self, act: Action) -> str:
        kind = act.kind
        seat = self.current_seat
        hand = self.hands[seat] if seat is not None else []
        if kind is ActionKind.KNOCK:
            if self.phase is Phase.FINAL:
                return f"seat {self.ender} has already knocked; a final turn must exchange one card or all three"
            waiting = [seat for seat in range(self.num_players) if self.in_hand[seat] and not self.has_had_turn[seat]]
            return (
                "no knock in round one: every player must exchange once first "
                f"(still to play: seat{'s' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))})"
            )
        if kind is ActionKind.PASS:
            return "passing is not allowed in Bastard Brag; exchange one card or all three" + (
                ", or knock" if self.knock_allowed() else ""
            )
        if kind not in (ActionKind.EXCHANGE, ActionKind.EXCHANGE_ALL):
            return (
                f"{kind.value!r} is not an action of Bastard Brag; allowed: exchange CARD SLOT, "
                "exchange-all CARD, knock"
            )
        if act.card not in hand:
            return f"{act.card} is not in your hand ({format_cards(hand)})"
        return "not allowed now"  # pragma: no cover - a well-formed exchange of a card held is legal

    def default_action(self) -> Action:
        """Exchange the lowest card for the face-up centre card."""
        seat = self.current_seat
        assert seat is not None  # asked only while the game is on
        return action(ActionKind.EXCHANGE, min(self.hands[seat]), FACE_UP_SLOT)

    # ----- applying actions ------------------------------------------------------

    def _apply(self, act: Action) -> None:
        seat = self.current_seat
        assert seat is not None  # only a legal action is applied, so the game is on
        kind = act.kind
        if kind is _EXCHANGE:
            given, slot = act.card, act.slot
            assert given is not None and slot is not None  # an exchange names its card and slot
            hand = self.hands[seat]
            taken = self.centre[slot]
            self.centre[slot] = given
            hand.remove(given)
            hand.append(taken)
            hand.sort()
            if slot == FACE_UP_SLOT:
                self.events.append(
                    _new_tuple(Event, (_EXCHANGE_EVENT, self.hand_number, seat, given, taken, slot, None))
                )
            else:
                self.centre_known_to[slot] = seat
                self.events.append(_new_tuple(Event, (_EXCHANGE_EVENT, self.hand_number, seat, None, None, slot, None)))
        elif kind is _EXCHANGE_ALL:
            face_up = act.card
            assert face_up is not None  # an exchange-all names the card to lie face up
            given_hand = self.hands[seat]
            taken_face_up = self.centre[FACE_UP_SLOT]
            self.hands[seat] = sorted(self.centre)
            face_down = [card for card in given_hand if card != face_up]
            self.centre = [face_down[0], face_down[1], face_up]
            self.centre_known_to = [seat, seat]
            self.events.append(
                _new_tuple(Event, (_EXCHANGE_ALL_EVENT, self.hand_number, seat, face_up, taken_face_up, None, None))
            )
        else:  # KNOCK
            self.events.append(Event(EventKind.KNOCK, self.hand_number, seat))
            self._begin_final_turns(seat)
        self.has_had_turn[seat] = True
        self._end_turn(seat)

    # ----- lives and the deal ------------------------------------------------------

    def _lose_life(self, seat: int) -> bool:
        self.lives[seat] -= 1  # no floating life in this game
        return self.lives[seat] == 0

    def _next_dealer(self) -> int:
        """Ruling: the deal passes to the next surviving player on the dealer's left."""
        n = self.num_players
        return next((self.dealer + k) % n for k in range(1, n + 1) if self.in_game[(self.dealer + k) % n])

    # ----- observation -------------------------------------------------------------

    def table_view(self, seat: int) -> tuple[Card | None, Card | None, Card]:
        """What ``seat`` may see of the centre, by slot: a face-down card only while it is the seat that put it
        there, the face-up card always."""
        centre = self.centre
        known = self.centre_known_to
        return (
            centre[0] if known[0] == seat else None,
            centre[1] if known[1] == seat else None,
            centre[FACE_UP_SLOT],
        )

    def _observe(self, seat: int, common: dict[str, Any]) -> BastardBragObservation:
        common["centre"] = self.table_view(seat)
        return made(BastardBragObservation, common)
