"""A game's state drawn from what one seat can see: what both games' ``from_observation`` share.

Each game reads a hand's record its own way and places the hidden cards (Stop the Bus in
:mod:`referee.engine.games.stop_the_bus`, Bastard Brag with :mod:`referee.engine.games.brag_sampling`). Both
start here: the seats the observation's hand was dealt to, and a game in the public state it shows, its hands
left empty for the game to fill and what no seat can know drawn.
"""

from __future__ import annotations

from typing import TypeVar

from referee.common.errors import GameArgumentError
from referee.engine.cards import DECK, Card
from referee.engine.games.events import EventKind, Observation, Phase
from referee.engine.games.game import Game, RandomSource

AnyGame = TypeVar("AnyGame", bound=Game)


def seats_dealt_in(observation: Observation, kind: type[Observation]) -> list[bool]:
    """Check that ``observation`` is a ``kind`` of a game still on; return the seats dealt into its hand
    (those in it, and those that forfeited since)."""
    if not isinstance(observation, kind):
        raise GameArgumentError(f"from_observation: a {kind.__name__} is needed, got {type(observation).__name__}")
    if observation.phase is Phase.OVER:
        raise GameArgumentError("from_observation: the game is over; there is no state to play on from")
    forfeited_now = {event.seat for event in observation.hand_events if event.kind is EventKind.FORFEIT}
    return [observation.in_hand[seat] or seat in forfeited_now for seat in range(observation.num_players)]


def public_state(cls: type[AnyGame], observation: Observation, rng: RandomSource, forfeits: list[int]) -> AnyGame:
    """A game of ``cls`` in the public state ``observation`` shows, for ``from_observation``: each game then places
    the cards.

    ``forfeits`` are the seats that forfeited in this hand, in order.
    The hands are left empty. What no seat can know is drawn with
    ``rng``: the seed of later hands' decks, and the order in which seats
    left the game in earlier hands (this hand's forfeits last).
    """
    players = observation.num_players
    # Built on the deck in order (no shuffle to pay for: the caller places every card), then given the state.
    game = cls(
        players,
        seed=rng.getrandbits(64),
        first_dealer=observation.dealer,
        decks=_deck_in_order,
        turn_limit=observation.turn_limit,
    )
    game._deck_source = None  # later hands are dealt from the drawn seed
    game.lives = list(observation.lives)
    game.floating = list(observation.floating)
    game.in_game = list(observation.in_game)
    game.in_hand = list(observation.in_hand)
    game.hands = [[] for _ in range(players)]
    game.out_of_play = []
    earlier = [seat for seat in range(players) if not observation.in_game[seat] and seat not in forfeits]
    rng.shuffle(earlier)
    game.eliminations = earlier + forfeits
    game.forfeited = list(forfeits)
    game._eliminated_this_hand = list(forfeits)
    game.events = list(observation.hand_events)
    game.hand_results = []
    game._hand_event_start = 0
    game.hand_number = observation.hand_number
    game.dealer = observation.dealer
    game.phase = observation.phase
    game.current_seat = observation.current_seat
    game.ender = observation.ender
    game.turns_this_hand = observation.turns_this_hand
    game.final_queue = []
    if observation.phase is Phase.FINAL and observation.ender is not None and observation.current_seat is not None:
        order = game._seats_from_left_of(observation.ender)
        game.final_queue = order[order.index(observation.current_seat) + 1 :]
    game._next_deck = None
    game._legal = game._view = None  # nothing of the deal it was built with is kept
    return game


def _deck_in_order(hand_number: int) -> tuple[Card, ...]:
    return DECK
