"""The deck of each hand: shuffled from the game's seed, or given (for tests and tools) and checked.

Without ``decks`` a game deals hand ``n`` from :func:`seeded_deck`, a pure function of its seed and ``n``
(docs/rules.md states the shuffle), so a game replays from its seed alone. Decks given instead are checked
here, each once: distinct cards of :data:`referee.engine.cards.DECK`, index 0 the first card dealt.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from referee.common.errors import GameArgumentError
from referee.engine.cards import Card, shuffled_deck
from referee.engine.games.actions import DECK_CARDS
from referee.engine.seeding import SeedStream


def seeded_deck(seed: int, hand_number: int) -> list[Card]:
    """Return the deck of hand ``hand_number`` of a game with ``seed``, as a game deals it without ``decks``."""
    return shuffled_deck(SeedStream.derive(seed, "hand", hand_number, "deck"))


def checked_decks(decks: object) -> list[tuple[Card, ...]]:
    """Return a game's ``decks`` given as a list (one deck per hand, hand 1 first), each checked; else raise."""
    if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence):
        raise GameArgumentError(
            f"decks must be a list of decks (one per hand) or a callable hand_number -> deck, "
            f"got {type(decks).__name__}"
        )
    return [checked_deck(deck, f"decks[{number - 1}] (hand {number})") for number, deck in enumerate(decks, 1)]


def checked_deck(deck: object, source: str) -> tuple[Card, ...]:
    """Return ``deck`` as a tuple after checking it holds distinct cards of the deck; else raise."""
    if isinstance(deck, (str, bytes)) or not isinstance(deck, Iterable):
        raise GameArgumentError(
            f"{source}: a deck is a sequence of Card (for example parse_cards('AS KD 2C ...')), "
            f"got {type(deck).__name__}"
        )
    cards = tuple(deck)
    seen: set[Card] = set()
    for position, card in enumerate(cards):
        if not (
            isinstance(card, Card) and card in DECK_CARDS and card.rank.__class__ is int and card.suit.__class__ is int
        ):
            raise GameArgumentError(
                f"{source}: position {position} holds {card!r} ({type(card).__name__}), not a Card of the deck"
            )
        if card in seen:
            raise GameArgumentError(f"{source}: card {card} appears more than once (again at position {position})")
        seen.add(card)
    return cards
