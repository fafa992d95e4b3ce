"""Tests of three-card Brag hand ranking against RULES.md: every hand, every boundary, worked examples."""

from __future__ import annotations

import functools
import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.cards import DECK, Card, parse_cards
from referee.engine.hands import Category, hand_rank, worst_hand

ALL_HANDS = list(itertools.combinations(DECK, 3))


def rank_of(text: str):
    return hand_rank(parse_cards(text))


def suited(ranks: str, suits: str) -> tuple[Card, ...]:
    """Build a hand from rank texts and one suit letter per card: suited("A K Q", "SHS")."""
    return parse_cards(" ".join(rank + suit for rank, suit in zip(ranks.split(), suits, strict=True)))


# --- a reference ranking written from the text of RULES.md ------------------------------------------
#
# Written from the rules alone, with the rules' own lists, so that it shares nothing with the
# engine but the card's text form. Each list runs high to low; a value's strength is its
# distance from the bottom of its list, so larger is better.

ORDINARY_HIGH_TO_LOW = "A K Q J 10 9 8 7 6 5 4 3 2".split()
PRIALS_HIGH_TO_LOW = "3 A K Q J 10 9 8 7 6 5 4 2".split()  # 3-3-3 highest, then A-A-A ... 2-2-2
RUNS_HIGH_TO_LOW = [
    "A-2-3",
    "A-K-Q",
    "K-Q-J",
    "Q-J-10",
    "J-10-9",
    "10-9-8",
    "9-8-7",
    "8-7-6",
    "7-6-5",
    "6-5-4",
    "5-4-3",
    "4-3-2",
]
SUITS_HIGH_TO_LOW = "♠♥♦♣"
CATEGORIES_LOW_TO_HIGH = ["HIGH_CARD", "PAIR", "FLUSH", "RUN", "RUNNING_FLUSH", "PRIAL"]


def strength(high_to_low: list[str] | str, item: str) -> int:
    return len(high_to_low) - list(high_to_low).index(item)


def reference_key(cards) -> tuple[int, tuple[int, ...], int]:
    """Return (category, deciding values, tie-break suit) from the rules text; larger is better."""
    rank_texts = [card.pretty[:-1] for card in cards]
    suit_symbols = [card.pretty[-1] for card in cards]
    ordinary = sorted((strength(ORDINARY_HIGH_TO_LOW, text) for text in rank_texts), reverse=True)
    # Exact ties: the suit of the highest-ranked card in ordinary order, its best suit if repeated.
    top_suit = max(
        strength(SUITS_HIGH_TO_LOW, suit)
        for text, suit in zip(rank_texts, suit_symbols, strict=True)
        if strength(ORDINARY_HIGH_TO_LOW, text) == ordinary[0]
    )
    is_flush = len(set(suit_symbols)) == 1
    if len(set(rank_texts)) == 1:
        return CATEGORIES_LOW_TO_HIGH.index("PRIAL"), (strength(PRIALS_HIGH_TO_LOW, rank_texts[0]),), top_suit
    for run in RUNS_HIGH_TO_LOW:
        if sorted(run.split("-")) == sorted(rank_texts):
            category = "RUNNING_FLUSH" if is_flush else "RUN"
            return CATEGORIES_LOW_TO_HIGH.index(category), (strength(RUNS_HIGH_TO_LOW, run),), top_suit
    if is_flush:
        return CATEGORIES_LOW_TO_HIGH.index("FLUSH"), tuple(ordinary), top_suit
    if len(set(ordinary)) == 2:
        pair = ordinary[1]  # the middle of three sorted values is always one of the pair
        kicker = next(value for value in ordinary if value != pair)
        return CATEGORIES_LOW_TO_HIGH.index("PAIR"), (pair, kicker), top_suit
    return CATEGORIES_LOW_TO_HIGH.index("HIGH_CARD"), tuple(ordinary), top_suit


# --- every hand -----------------------------------------------------------------------------------


def test_category_counts_over_all_22100_hands():
    assert len(ALL_HANDS) == 22_100
    counts = Counter(hand_rank(cards).category for cards in ALL_HANDS)
    assert counts == {
        Category.PRIAL: 52,
        Category.RUNNING_FLUSH: 48,
        Category.RUN: 720,
        Category.FLUSH: 1_096,
        Category.PAIR: 3_744,
        Category.HIGH_CARD: 16_440,
    }


def test_engine_category_matches_reference_for_every_hand():
    for cards in ALL_HANDS:
        expected = CATEGORIES_LOW_TO_HIGH[reference_key(cards)[0]]
        assert hand_rank(cards).category.name == expected, cards


def test_engine_order_matches_reference_order_over_all_hands():
    # Sorting by the reference key and walking the list compares every pair of hands at once:
    # the engine must rise exactly where the reference rises and tie exactly where it ties.
    by_reference = sorted(ALL_HANDS, key=reference_key)
    keys = [reference_key(cards) for cards in by_reference]
    ranks = [hand_rank(cards) for cards in by_reference]
    for lower in range(len(by_reference) - 1):
        higher = lower + 1
        pair = (by_reference[lower], by_reference[higher])
        if keys[lower] == keys[higher]:
            assert ranks[lower] == ranks[higher], pair
            # A reference tie means the same top card, so only overlapping hands can tie.
            assert max(by_reference[lower]) == max(by_reference[higher])
        else:
            assert ranks[lower] < ranks[higher], pair


def test_hand_order_does_not_depend_on_card_order():
    for text in ["3S AH 2D", "QS 7D QC", "KH 7H JH", "TC 9C 8C", "5D 5S KH"]:
        cards = parse_cards(text)
        assert len({hand_rank(list(order)) for order in itertools.permutations(cards)}) == 1


# --- boundaries named in RULES.md -----------------------------------------------------------------


def assert_strictly_descending(hands: list[tuple[Card, ...]]) -> None:
    for better, worse in itertools.pairwise(hands):
        assert hand_rank(better) > hand_rank(worse), (better, worse)


def test_prials_from_threes_over_aces_down_to_twos():
    # The lower prial of each pair holds the spade, so only the prial's rank can decide.
    prials = [
        suited(f"{rank} {rank} {rank}", "CDH" if position % 2 == 0 else "DHS")
        for position, rank in enumerate(PRIALS_HIGH_TO_LOW)
    ]
    assert_strictly_descending(prials)


@pytest.mark.parametrize("suits_for_higher, suits_for_lower", [("CCC", "SSS"), ("CDC", "SHS")])
def test_runs_from_a23_over_akq_down_to_432(suits_for_higher, suits_for_lower):
    # Runs alternate suit patterns so the worse run often has the better top suit;
    # "CCC"/"SSS" checks running flushes, "CDC"/"SHS" mixed runs.
    runs = [
        suited(run.replace("-", " "), suits_for_higher if position % 2 == 0 else suits_for_lower)
        for position, run in enumerate(RUNS_HIGH_TO_LOW)
    ]
    expected_category = Category.RUNNING_FLUSH if suits_for_higher == "CCC" else Category.RUN
    assert {hand_rank(run).category for run in runs} == {expected_category}
    assert_strictly_descending(runs)


def test_king_ace_two_is_not_a_run():
    assert rank_of("KS AH 2D").category is Category.HIGH_CARD
    assert rank_of("KS AS 2S").category is Category.FLUSH
    assert rank_of("4C 3D 2C") > rank_of("KS AH 2D")  # lowest run beats it
    assert rank_of("AD KC 3C") > rank_of("AS KS 2H")  # it is just ace-king high with a two


def test_queen_king_ace_and_three_ace_two_are_runs():
    assert rank_of("QC KD AH").category is Category.RUN
    assert rank_of("3S AS 2S").category is Category.RUNNING_FLUSH


@pytest.mark.parametrize(
    "weakest_higher, strongest_lower, reason",
    [
        ("2C 2D 2H", "AS 2S 3S", "any prial beats any running flush"),
        ("4C 3C 2C", "AS 2H 3S", "any running flush beats any run"),
        ("4C 3D 2C", "AS KS JS", "a run beats a flush"),
        ("5C 3C 2C", "AS AH KS", "a flush beats a pair"),
        ("2C 2D 3C", "AS KH JS", "a pair beats a high card"),
    ],
)
def test_category_boundaries(weakest_higher, strongest_lower, reason):
    # The lower hand is the best of its category with the better top suit.
    assert rank_of(weakest_higher) > rank_of(strongest_lower), reason


@pytest.mark.parametrize(
    "higher_category, lower_category",
    list(itertools.pairwise(reversed(CATEGORIES_LOW_TO_HIGH))),
)
def test_every_hand_of_a_category_beats_every_hand_below(higher_category, lower_category):
    ranks = engine_ranks_by_reference_category()
    assert min(ranks[higher_category]) > max(ranks[lower_category])


@functools.cache
def engine_ranks_by_reference_category() -> dict[str, list]:
    """Group the engine's rank of every hand under the category the rules give that hand."""
    ranks: dict[str, list] = {name: [] for name in CATEGORIES_LOW_TO_HIGH}
    for cards in ALL_HANDS:
        ranks[CATEGORIES_LOW_TO_HIGH[reference_key(cards)[0]]].append(hand_rank(cards))
    return ranks


def test_pair_compares_pair_rank_then_kicker():
    # Lower hands hold the spade of the deciding rank, so suits cannot decide.
    assert rank_of("QH QD 2C") > rank_of("JS JD AS")  # pair rank beats any kicker
    assert rank_of("QH QD 7C") > rank_of("QS QC 6D")  # same pair: kicker decides
    assert rank_of("3H 3D 2C") > rank_of("2S 2H AS")  # outside prials and runs, 3 is just above 2
    assert rank_of("4C 4D 2C") > rank_of("3S 3H AS")


@pytest.mark.parametrize("kind_suits", ["HHH", "HDC"])
def test_flush_and_high_card_compare_top_then_middle_then_low(kind_suits):
    lower_suits = "SSS" if kind_suits == "HHH" else "SCD"
    higher = suited("K J 7", kind_suits)
    assert hand_rank(higher) > hand_rank(suited("Q J 9", lower_suits))  # top card decides
    assert hand_rank(higher) > hand_rank(suited("K 10 9", lower_suits))  # then the middle
    assert hand_rank(higher) > hand_rank(suited("K J 6", lower_suits))  # then the lowest
    assert hand_rank(suited("K J 4", kind_suits)) > hand_rank(suited("K J 3", lower_suits))  # 3 is low


def test_stop_the_bus_worked_example():
    # Seed section 05: A stopped with 8♣-9♣-10♣, B ends with A♦-A♥-6♠, C keeps K♠-J♠-7♠.
    stopper, pair_of_aces, flush = parse_cards("8♣ 9♣ 10♣"), parse_cards("A♦ A♥ 6♠"), parse_cards("K♠ J♠ 7♠")
    assert hand_rank(stopper) > hand_rank(flush) > hand_rank(pair_of_aces)
    assert hand_rank(stopper).category is Category.RUNNING_FLUSH
    assert hand_rank(flush).category is Category.FLUSH
    assert hand_rank(pair_of_aces).category is Category.PAIR
    assert worst_hand({0: stopper, 1: pair_of_aces, 2: flush}) == 1


def test_bastard_brag_worked_example():
    # Seed section 07: A holds Q♠ 7♦ and takes Q♣: a pair of queens with a seven.
    queens = parse_cards("Q♠ 7♦ Q♣")
    assert str(hand_rank(queens)) == "pair of queens, 7 kicker"
    assert hand_rank(queens) > rank_of("J♥ J♦ A♥")  # beats a pair of jacks even with an ace
    flushes_without_these_cards = [
        cards
        for cards in ALL_HANDS
        if reference_key(cards)[0] == CATEGORIES_LOW_TO_HIGH.index("FLUSH") and not set(cards) & set(queens)
    ]
    assert flushes_without_these_cards
    assert all(hand_rank(cards) > hand_rank(queens) for cards in flushes_without_these_cards)


# --- exact ties -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "winner, loser, why",
    [
        ("KS JD 7D", "KH JS 7S", "the highest card's suit decides, not the other cards'"),
        ("KS JS 7S", "KH JH 7H", "flush: spades over hearts"),
        ("AH 2D 3C", "AD 2C 3S", "in A-2-3 the ace is the highest card in ordinary order"),
        ("AS 2S 3S", "AH 2H 3H", "running flush A-2-3: spades over hearts"),
        ("QS JC 10C", "QH JS 10S", "run: the queen's suit decides"),
        ("Q♠ Q♦ 7♣", "Q♥ Q♣ 7♦", "repeated top rank: its highest suit, the spade queen"),
        ("Q♠ Q♣ 7♦", "Q♥ Q♦ 7♣", "repeated top rank: highest suit, not lowest (♣ would lose to ♦)"),
        ("7♠ 7♣ 2♦", "7♥ 7♦ 2♣", "the same for a pair without a higher kicker"),
        ("K♠ 5♥ 5♦", "K♥ 5♠ 5♣", "the king is the highest card, not the pair"),
        ("7D 4C 2C", "7C 4S 2S", "diamonds over clubs"),
        ("9H 8C 2C", "9D 8S 2S", "hearts over diamonds"),
    ],
)
def test_identical_ranks_are_split_by_suit_of_highest_card(winner, loser, why):
    assert reference_key(parse_cards(winner))[:2] == reference_key(parse_cards(loser))[:2]
    assert rank_of(winner) > rank_of(loser), why
    assert worst_hand([parse_cards(winner), parse_cards(loser)]) == 1


# --- worst_hand -----------------------------------------------------------------------------------


def test_worst_hand_on_a_list_returns_the_index():
    hands = [parse_cards("AS AH AD"), parse_cards("2C 7D 9H"), parse_cards("KS QS JS")]
    assert worst_hand(hands) == 1


def test_worst_hand_on_a_dict_returns_the_seat():
    hands = {4: parse_cards("2C 7D 9H"), 0: parse_cards("AS AH AD"), 7: parse_cards("2D 7H 9S")}
    assert worst_hand(hands) == 4  # same ranks as seat 7; 9♥ is below 9♠


def test_worst_hand_of_one_hand_is_that_hand():
    assert worst_hand({3: parse_cards("AS KH 2D")}) == 3


@pytest.mark.parametrize("empty", [[], {}])
def test_worst_hand_rejects_no_hands(empty):
    with pytest.raises(ValueError, match="needs at least one hand"):
        worst_hand(empty)


@pytest.mark.parametrize(
    "hands",
    [
        [parse_cards("KS 5H 5D"), parse_cards("KS 5S 5C"), parse_cards("AS AH AD")],  # share K♠
        {1: parse_cards("QS JD 3C"), 2: parse_cards("QS JD 3C")},  # the very same cards
    ],
)
def test_worst_hand_rejects_a_tie_for_worst_between_overlapping_hands(hands):
    with pytest.raises(ValueError, match="tie for worst"):
        worst_hand(hands)


@settings(max_examples=300, deadline=None)
@given(deck=st.permutations(DECK), hand_count=st.integers(min_value=1, max_value=17), data=st.data())
def test_disjoint_hands_always_have_exactly_one_worst(deck, hand_count, data):
    hands = [tuple(deck[3 * i : 3 * i + 3]) for i in range(hand_count)]
    seats = data.draw(st.permutations(range(100, 100 + hand_count)))
    by_seat = dict(zip(seats, hands, strict=True))
    expected_index = min(range(hand_count), key=lambda i: reference_key(hands[i]))
    assert worst_hand(hands) == expected_index
    assert worst_hand(by_seat) == seats[expected_index]
    worst_rank = hand_rank(hands[expected_index])
    assert all(hand_rank(cards) > worst_rank for i, cards in enumerate(hands) if i != expected_index)


# --- names and bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, name",
    [
        ("A♠ 2♠ 3♠", "running flush A-2-3"),
        ("3♠ A♦ 2♠", "run A-2-3"),
        ("Q♠ 7♦ Q♣", "pair of queens, 7 kicker"),
        ("6C 2D 6H", "pair of sixes, 2 kicker"),
        ("3C 3D 3H", "prial of threes"),
        ("AC AD AH", "prial of aces"),
        ("10C QS JD", "run Q-J-10"),
        ("KH 7H JH", "flush K-J-7"),
        ("7C K♠ J♦", "high card K-J-7"),
        # A ten reads 10 wherever a rank is shown, as on the replay page's cards; a pair is named in words.
        ("QH TD QC", "pair of queens, 10 kicker"),
        ("TH TC 4D", "pair of tens, 4 kicker"),
        ("TS 4S AS", "flush A-10-4"),
        ("TC 3D KS", "high card K-10-3"),
    ],
)
def test_hands_have_human_names(text, name):
    assert str(rank_of(text)) == name


@pytest.mark.parametrize("text", ["", "AS", "AS 2D", "AS 2D 3C 4H", "AS KS QS JS TS"])
def test_hand_rank_rejects_wrong_number_of_cards(text):
    with pytest.raises(ValueError, match="a Brag hand has 3 cards"):
        rank_of(text)


@pytest.mark.parametrize("text", ["AS AS 3C", "AS 3C AS", "3C AS AS", "7D 7D 7D"])
def test_hand_rank_rejects_duplicate_cards(text):
    with pytest.raises(ValueError, match="the same card twice"):
        rank_of(text)
