"""Tests of cards: text form, parsing errors, the canonical deck and the documented seeded shuffle."""

from __future__ import annotations

import hashlib
import random
import re

import pytest

from referee.common.errors import CardParseError
from referee.engine.cards import DECK, Card, format_cards, parse_cards, pretty_cards, rank_text, shuffled_deck
from referee.engine.seeding import SeedStream

# Independent spellings of the ranks and suits, low to high, as the rules list them.
RANK_LETTERS = "23456789TJQKA"
SUIT_LETTERS = "CDHS"  # clubs < diamonds < hearts < spades (tie-break order)
SUIT_SYMBOLS = "♣♦♥♠"


# --- parsing and printing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, rank, suit_letter",
    [
        ("QS", 12, "S"),
        ("qs", 12, "S"),
        ("Qs", 12, "S"),
        ("TD", 10, "D"),
        ("td", 10, "D"),
        ("10D", 10, "D"),
        ("10d", 10, "D"),
        ("10♦", 10, "D"),
        ("T♦", 10, "D"),
        ("Q♠", 12, "S"),
        ("a♠", 14, "S"),
        ("AH", 14, "H"),
        ("2c", 2, "C"),
        ("2♣", 2, "C"),
        ("J♥", 11, "H"),
        ("kd", 13, "D"),
    ],
)
def test_card_parse_accepts_every_documented_form(text, rank, suit_letter):
    card = Card.parse(text)
    assert card.rank == rank
    assert card.suit == SUIT_LETTERS.index(suit_letter)
    assert parse_cards(text) == (card,)


def test_every_card_round_trips_through_text_and_pretty_form():
    for card in DECK:
        assert Card.parse(str(card)) == card
        assert Card.parse(card.pretty) == card
        assert Card.parse(str(card).lower()) == card


def test_text_forms_are_rank_then_suit():
    ten_of_diamonds = Card.parse("10D")
    assert str(ten_of_diamonds) == "TD"
    assert ten_of_diamonds.pretty == "10♦"
    assert str(Card.parse("a♠")) == "AS"
    assert Card.parse("AS").pretty == "A♠"
    assert Card.parse("2c").pretty == "2♣"
    # Every printed card is exactly two characters, so logs line up.
    assert {len(str(card)) for card in DECK} == {2}


def test_people_read_a_ten_as_10_and_a_suit_as_its_symbol_machines_read_the_compact_form():
    cards = parse_cards("TD AS 2C JH")
    assert pretty_cards(cards) == "10♦ A♠ 2♣ J♥"
    assert format_cards(cards) == "TD AS 2C JH"  # the logs' and the protocol's form is unchanged
    assert [rank_text(rank) for rank in range(2, 15)] == [*"23456789", "10", *"JQKA"]
    for card in DECK:
        assert card.pretty == pretty_cards([card]) == card.rank_text + SUIT_SYMBOLS[SUIT_LETTERS.index(str(card)[1])]
        assert "T" not in card.pretty


def test_suits_compare_in_tie_break_order():
    # Spades > hearts > diamonds > clubs, so plain < on suits follows the rules.
    clubs, diamonds, hearts, spades = (Card.parse("7" + letter).suit for letter in "CDHS")
    assert clubs < diamonds < hearts < spades


@pytest.mark.parametrize("bad", ["1X", "", "QQ", "11S", "1S", "ZS", "Q", "S", "QSX", "10", "0D", "Q♤"])
def test_card_parse_rejects_bad_input_with_helpful_message(bad):
    with pytest.raises(CardParseError) as caught:
        Card.parse(bad)
    message = str(caught.value)
    # The token is quoted, so even one that looks like part of the help text is named.
    assert repr(bad) in message or f'"{bad}"' in message
    assert_message_says_what_is_allowed(message)


def assert_message_says_what_is_allowed(message: str) -> None:
    """Check the error explains how a card is written: a rank then a suit, with an example."""
    lowered = message.lower()
    assert "rank" in lowered
    assert "suit" in lowered
    assert "QS" in message or "Q♠" in message or "10D" in message


def test_card_parse_error_is_a_value_error():
    # Callers that only know the standard library can still catch it.
    with pytest.raises(ValueError, match="'1X' is not a card"):
        Card.parse("1X")


@pytest.mark.parametrize("bad", ["1X", "QQ", "11S"])
def test_parse_cards_names_bad_token_and_its_position(bad):
    text = f"AS, 2D 3C {bad} 4H"  # the bad token is the fourth
    with pytest.raises(CardParseError) as caught:
        parse_cards(text)
    error = caught.value
    message = str(error)
    assert error.token == bad
    assert error.position == 4
    assert repr(bad) in message or f'"{bad}"' in message
    assert re.search(r"\b(token|position|card|#)\s*4\b", message), message
    assert_message_says_what_is_allowed(message)


def test_parse_cards_reports_the_first_bad_token():
    with pytest.raises(CardParseError) as caught:
        parse_cards("QQ AS 1X")
    assert caught.value.token == "QQ"
    assert caught.value.position == 1


def test_parse_cards_separates_on_commas_and_spaces():
    expected = (Card(14, 3), Card(2, 1), Card(3, 0), Card(10, 2))
    assert parse_cards("AS 2D 3C TH") == expected
    assert parse_cards("AS,2D,3C,TH") == expected
    assert parse_cards("A♠, 2♦, 3♣, 10♥") == expected
    assert parse_cards("  as ,2d   3c,, th ") == expected


def test_format_cards_writes_two_character_forms_separated_by_spaces():
    assert format_cards(parse_cards("A♠ 10♦ 2c")) == "AS TD 2C"
    assert format_cards([]) == ""
    assert parse_cards(format_cards(DECK)) == DECK


# --- the deck -------------------------------------------------------------------------------------


def test_deck_holds_52_distinct_cards():
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert {str(card) for card in DECK} == {rank + suit for rank in RANK_LETTERS for suit in SUIT_LETTERS}


def test_deck_is_in_canonical_order():
    # Canonical order: rank-major from the twos up, suits clubs..spades within a rank.
    expected = [Card.parse(rank + suit) for rank in RANK_LETTERS for suit in SUIT_LETTERS]
    assert list(DECK) == expected
    assert str(DECK[0]) == "2C"
    assert str(DECK[1]) == "2D"
    assert str(DECK[-1]) == "AS"


def test_deck_position_is_card_index():
    for position, card in enumerate(DECK):
        assert card.index == position
        assert DECK[card.index] == card


# --- the seeded shuffle ---------------------------------------------------------------------------


def reference_shuffle(seed: int | str, *labels: int | str) -> list[Card]:
    """Re-derive a shuffled deck from the algorithm in the docstrings, using only hashlib."""
    name = ":".join(str(part) for part in (seed, *labels))
    key = hashlib.sha256(("brag-referee:" + name).encode("utf-8")).digest()
    pending: list[int] = []
    block_number = 0

    def next_number() -> int:
        nonlocal block_number
        if not pending:
            block = hashlib.sha256(key + block_number.to_bytes(8, "big")).digest()
            block_number += 1
            pending.extend(int.from_bytes(block[offset : offset + 8], "big") for offset in (0, 8, 16, 24))
        return pending.pop(0)

    def below(bound: int) -> int:
        limit = 2**64 - (2**64 % bound)
        while True:
            number = next_number()
            if number < limit:
                return number % bound

    cards = [Card.parse(rank + suit) for rank in RANK_LETTERS for suit in SUIT_LETTERS]
    for i in range(51, 0, -1):
        j = below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


@pytest.mark.parametrize(
    "name",
    [
        (7, "hand", 3, "deck"),
        (0, "hand", 1, "deck"),
        (2**62 + 12345, "hand", 17, "deck"),
        ("league-2024", "game", 5),
    ],
)
def test_shuffled_deck_follows_documented_algorithm(name):
    assert shuffled_deck(SeedStream.derive(*name)) == reference_shuffle(*name)


def test_shuffled_deck_is_a_permutation_of_the_deck():
    for hand_number in range(1, 21):
        deck = shuffled_deck(SeedStream.derive(11, "hand", hand_number, "deck"))
        assert len(deck) == 52
        assert sorted(deck) == sorted(DECK)


def test_shuffled_deck_is_the_same_for_the_same_seed():
    first = shuffled_deck(SeedStream.derive(42, "hand", 1, "deck"))
    second = shuffled_deck(SeedStream.derive(42, "hand", 1, "deck"))
    assert first == second


def test_shuffled_deck_differs_for_different_seeds():
    decks = {tuple(shuffled_deck(SeedStream.derive(seed, "hand", 1, "deck"))) for seed in range(20)}
    decks |= {tuple(shuffled_deck(SeedStream.derive(42, "hand", hand, "deck"))) for hand in range(2, 20)}
    assert len(decks) == 38
    assert tuple(DECK) not in decks


def test_shuffle_uses_no_global_random_state():
    name = (5, "hand", 2, "deck")
    random.seed(1)
    state_before = random.getstate()
    first = shuffled_deck(SeedStream.derive(*name))
    # The shuffle neither reads nor advances the global generator.
    assert random.getstate() == state_before
    random.seed(987654321)
    random.random()
    assert shuffled_deck(SeedStream.derive(*name)) == first
