"""Cards, their text forms, the deck and the seeded shuffle.

A card is written as rank then suit: ``QS``, ``TD`` (or ``10D``), ``Q♠``.
Parsing accepts any case and either suit letters (``C D H S``) or suit
symbols (``♣ ♦ ♥ ♠``). Printing gives one of two forms:

- the compact form, two characters (``TD``, ``QS``): ``str(card)`` and
  :func:`format_cards`, for the protocol, the game logs, ``--json`` output
  and actions as bots write them;
- the form for people, the ten as ``10`` and the suit as its symbol
  (``10♦``, ``Q♠``), as the replay page draws a card: :attr:`Card.pretty`
  and :func:`pretty_cards`, for everything a person reads (transcripts, the
  replay page's lines, the terminal's screens). A rank alone, as in a hand's
  name (``run Q-J-10``), is :func:`rank_text`.

Ranks are the integers 2..14 (14 is the ace); suits are 0..3 in tie-break
order, clubs < diamonds < hearts < spades, so comparing two suits with ``<``
follows the rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from referee.common.errors import CardParseError
from referee.engine.seeding import SeedStream

__all__ = [
    "ACE",
    "DECK",
    "RANK_CHARS",
    "RANK_NAMES",
    "RANK_PLURALS",
    "SUIT_CHARS",
    "SUIT_SYMBOLS",
    "Card",
    "format_cards",
    "parse_cards",
    "pretty_cards",
    "rank_text",
    "shuffle",
    "shuffled_deck",
]

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_NAMES = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
    9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king", 14: "ace",
}  # fmt: skip
RANK_PLURALS = {rank: name + ("es" if name == "six" else "s") for rank, name in RANK_NAMES.items()}

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
ACE = 14


def rank_text(rank: int) -> str:
    """A rank as people write it: ``A``, ``K``, ``Q``, ``J``, ``10``, ``9``, ..., ``2`` (14 is the ace)."""
    return "10" if rank == 10 else RANK_CHARS[rank - 2]


class Card(NamedTuple):
    """One playing card: ``rank`` 2..14 (ace high), ``suit`` 0..3 (clubs..spades)."""

    rank: int
    suit: int

    def __str__(self) -> str:
        text = _TEXT_OF.get(self)
        return repr(self) if text is None else text

    def __repr__(self) -> str:
        if self.rank.__class__ is int and self.suit.__class__ is int and self in _TEXT_OF:
            return f"Card.parse({_TEXT_OF[self]!r})"
        return f"Card(rank={self.rank!r}, suit={self.suit!r})"  # not a card of the deck, shown as it is

    # It shadows tuple.index on purpose: bots use card.index (sample_bots/python), and a card is never searched.
    @property
    def index(self) -> int:  # type: ignore[override]
        """Position 0..51 in the canonical deck order (see :data:`DECK`)."""
        return (self.rank - 2) * 4 + self.suit

    @property
    def rank_text(self) -> str:
        """The rank as people write it: ``A``, ``K``, ..., ``10``, ..., ``2``."""
        return rank_text(self.rank)

    @property
    def pretty(self) -> str:
        """The card as people read it, with a two-digit ten and a suit symbol: ``10♦`` (see the module's doc)."""
        text = _PRETTY_OF.get(self)
        return repr(self) if text is None else text

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read one card: ``QS``, ``qs``, ``TD``, ``10D``, ``Q♠``; raise :class:`CardParseError`."""
        card = _BY_TEXT.get(text.strip().upper()) if isinstance(text, str) else None
        if card is None:
            raise CardParseError(text)
        return card


#: All 52 cards in canonical order: 2♣ 2♦ 2♥ 2♠ 3♣ ... A♠ (rank-major, suits in
#: tie-break order). ``DECK[card.index] is card``.
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for rank in range(2, 15) for suit in range(4))
_TEXT = tuple(RANK_CHARS[card.rank - 2] + SUIT_CHARS[card.suit] for card in DECK)
_TEXT_OF = dict(zip(DECK, _TEXT, strict=True))
_PRETTY = tuple(rank_text(card.rank) + SUIT_SYMBOLS[card.suit] for card in DECK)
_PRETTY_OF = dict(zip(DECK, _PRETTY, strict=True))
_BY_TEXT: dict[str, Card] = {}
for _card in DECK:
    for _rank_form in {RANK_CHARS[_card.rank - 2], _card.rank_text}:
        for _suit_form in (SUIT_CHARS[_card.suit], SUIT_SYMBOLS[_card.suit]):
            _BY_TEXT[_rank_form + _suit_form] = _card
del _card, _rank_form, _suit_form


def parse_cards(text: str) -> tuple[Card, ...]:
    """Read cards separated by spaces or commas: ``"AS 2D 3C"`` or ``"A♠, 2♦, 3♣"``.

    Raises :class:`CardParseError` naming the first bad token and its position.
    """
    if not isinstance(text, str):
        raise CardParseError(text)
    tokens = text.replace(",", " ").split()
    cards = []
    for position, token in enumerate(tokens, start=1):
        card = _BY_TEXT.get(token.upper())
        if card is None:
            raise CardParseError(token, position=position, source=text)
        cards.append(card)
    return tuple(cards)


def format_cards(cards: Iterable[Card]) -> str:
    """Write cards in their compact text form, separated by spaces: ``"AS 2D TC"`` (for machines: logs, protocol)."""
    return " ".join(_TEXT[card.index] for card in cards)


def pretty_cards(cards: Iterable[Card]) -> str:
    """Write cards as people read them, separated by spaces: ``"A♠ 2♦ 10♣"`` (see the module's doc)."""
    return " ".join(_PRETTY[card.index] for card in cards)


def shuffled_deck(stream: SeedStream) -> list[Card]:
    """Return the 52 cards in a fresh random order drawn from ``stream``.

    The algorithm, so that anyone can re-derive a deal from its seed: start
    from :data:`DECK` (canonical order), then for ``i`` from 51 down to 1 swap
    position ``i`` with position ``stream.randbelow(i + 1)`` (Fisher-Yates).
    The first card dealt is position 0 of the result. ``SeedStream`` is
    documented in :mod:`referee.engine.seeding`.
    """
    return shuffle(list(DECK), stream)


def shuffle(cards: list[Card], stream: SeedStream) -> list[Card]:
    """Shuffle ``cards`` in place with Fisher-Yates driven by ``stream``; return it."""
    last = len(cards) - 1
    for i, j in zip(range(last, 0, -1), stream.randbelow_iter(range(last + 1, 1, -1)), strict=True):
        cards[i], cards[j] = cards[j], cards[i]
    return cards
