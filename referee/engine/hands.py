"""Three-card Brag hand ranking, shared by both games.

High to low: prial (three of a kind; 3-3-3 highest, then A-A-A down to
2-2-2), running flush, run (A-2-3 highest, then A-K-Q, K-Q-J ... 4-3-2;
K-A-2 is not a run), flush, pair (pair rank, then kicker), high card. Flushes
and high cards compare top, middle, then low card. Hands with identical
ranks are split by the suit of the highest-ranked card in ordinary order
(the ace of A-2-3), taking that rank's highest suit where it appears more
than once; spades > hearts > diamonds > clubs.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from functools import cache
from typing import NamedTuple

from referee.common.errors import InvalidHandError
from referee.engine.cards import ACE, DECK, RANK_PLURALS, Card, rank_text

__all__ = [
    "Category",
    "HandRank",
    "hand_rank",
    "rank_held",
    "worst_hand",
]

_DECK_CARDS = frozenset(DECK)


class Category(enum.IntEnum):
    """Hand categories, low to high, so that comparing categories follows the rules."""

    HIGH_CARD = 0
    PAIR = 1
    FLUSH = 2
    RUN = 3
    RUNNING_FLUSH = 4
    PRIAL = 5

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


_A23 = 15  # value of the run A-2-3 (and the prial 3-3-3): above every ordinary rank


class HandRank(NamedTuple):
    """The strength of a three-card hand: greater is better, ties only for identical hands.

    Compare with ``<``, ``==`` and friends. ``values`` holds the ranks that
    decide within the category, most significant first; ``suit`` breaks exact
    ties. ``str()`` gives a human name such as ``running flush A-2-3``.
    """

    category: Category
    values: tuple[int, ...]
    suit: int
    ranks_shown: tuple[int, ...]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """A human name: ``prial of threes``, ``run Q-J-10``, ``pair of queens, 10 kicker``.

        Its ranks read as on the cards people see (:func:`referee.engine.cards.rank_text`: ``10``, never ``T``); a pair
        or a prial is named in words, as players say it. Bots are sent this name (``rank_name``) and game logs
        keep it (``ranks``).
        """
        category = self.category
        if category is Category.PRIAL:
            return f"prial of {RANK_PLURALS[self.ranks_shown[0]]}"
        if category is Category.PAIR:
            return f"pair of {RANK_PLURALS[self.values[0]]}, {rank_text(self.values[1])} kicker"
        shown = "-".join(rank_text(rank) for rank in self.ranks_shown)
        return f"{category.label} {shown}"


def hand_rank(cards: Sequence[Card]) -> HandRank:
    """Rank a hand of exactly three distinct cards; raise :class:`InvalidHandError` for anything else."""
    if len(cards) != 3:
        raise InvalidHandError(f"a Brag hand has 3 cards, got {len(cards)}: {' '.join(map(repr, cards))}")
    for card in cards:
        if not isinstance(card, Card) or card not in _DECK_CARDS:
            raise InvalidHandError(
                f"a Brag hand holds Cards (Card.parse('QS') or parse_cards('QS 10D 2C')), "
                f"got {card!r} ({type(card).__name__})"
            )
    a, b, c = sorted(cards, reverse=True)
    if a == b or b == c:
        raise InvalidHandError(f"a hand cannot hold the same card twice: {a} {b} {c}")
    return _rank_sorted(a, b, c)


def rank_held(cards: Sequence[Card]) -> HandRank:
    """Rank a hand the engine holds (three distinct cards of the deck), as :func:`hand_rank` does, unchecked."""
    low, middle, high = cards
    if not low < middle < high:  # the engine keeps its hands in card order: sorted already, nearly always
        high, middle, low = sorted(cards, reverse=True)
    return _rank_sorted(high, middle, low)


@cache
def _rank_sorted(a: Card, b: Card, c: Card) -> HandRank:
    """Rank three distinct cards given in descending order (rank, then suit)."""
    r1, r2, r3 = a.rank, b.rank, c.rank
    top_suit = a.suit  # highest card in ordinary order; sorting puts its best suit first
    flush = a.suit == b.suit == c.suit
    if r1 == r2 == r3:
        value = _A23 if r1 == 3 else r1
        return HandRank(Category.PRIAL, (value,), top_suit, (r1, r2, r3))
    run_value = 0
    if r1 == ACE and r2 == 3 and r3 == 2:
        run_value, shown = _A23, (ACE, 2, 3)
    elif r1 == r2 + 1 == r3 + 2:
        run_value, shown = r1, (r1, r2, r3)
    if run_value:
        category = Category.RUNNING_FLUSH if flush else Category.RUN
        return HandRank(category, (run_value,), top_suit, shown)
    if flush:
        return HandRank(Category.FLUSH, (r1, r2, r3), top_suit, (r1, r2, r3))
    if r1 == r2 or r2 == r3:
        pair, kicker = (r1, r3) if r1 == r2 else (r2, r1)
        return HandRank(Category.PAIR, (pair, kicker), top_suit, (r1, r2, r3))
    return HandRank(Category.HIGH_CARD, (r1, r2, r3), top_suit, (r1, r2, r3))


def worst_hand(hands: Mapping[int, Sequence[Card]] | Sequence[Sequence[Card]]) -> int:
    """Return the key (seat) or index of the single worst hand.

    Raises :class:`InvalidHandError` if no hand is given or if two hands tie for worst,
    which can only happen when the hands share cards.
    """
    items = hands.items() if isinstance(hands, Mapping) else enumerate(hands)
    ranked = sorted((hand_rank(cards), key) for key, cards in items)
    if not ranked:
        raise InvalidHandError("worst_hand needs at least one hand")
    if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        raise InvalidHandError(
            f"hands {ranked[0][1]} and {ranked[1][1]} tie for worst ({ranked[0][0]}); "
            "hands that share no card never tie"
        )
    return ranked[0][1]
