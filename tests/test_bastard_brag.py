"""Bastard Brag against RULES.md: every rule and ruling, each on a fixed deck."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest

from referee.common.errors import GameOverError, IllegalActionError
from referee.engine.cards import DECK, Card, parse_cards, shuffled_deck
from referee.engine.games.bastard_brag import BastardBrag
from referee.engine.games.game import KNOCK, PASS, Action, ActionKind, EndReason, Event, EventKind, Phase, action
from referee.engine.hands import Category, hand_rank
from referee.engine.seeding import SeedStream

# ----- decks and play helpers ------------------------------------------------------

# High pairs and the worst possible hand (5-3-2 unsuited): with turn_limit=1 the first
# mover's one exchange (its lowest card for face-down slot 0, which holds 7♣)
# keeps every pair a pair and leaves the worst hand a bare high card, so the
# deck alone decides who loses.
PAIR_HANDS = ("AS AH KC", "KS KH QC", "QS QH JC", "JS JH TC")
WORST_HAND = "2C 3D 5H"
LOW_CENTRE = "7C 8D 9H"


def cards(text: str) -> set[Card]:
    """Return the cards of ``text`` as a set, for order-free comparison."""
    return set(parse_cards(text))


def deck_from(text: str) -> list[Card]:
    """Return the cards of ``text`` in order, then every other card in canonical order."""
    head = list(parse_cards(text))
    return head + [card for card in DECK if card not in head]


def dealt_deck(num_players: int, dealer: int, hands: dict[int, str], centre: str) -> list[Card]:
    """Lay out a deck so the deal RULES.md describes gives each seat its hand and the centre ``centre``.

    Each round goes to the seats from the dealer's left round to the dealer,
    then to the centre; ``centre`` lists slots 0, 1 (face down) and 2 (face up).
    """
    order = sorted(hands, key=lambda seat: (seat - dealer - 1) % num_players)
    hand_cards = {seat: parse_cards(text) for seat, text in hands.items()}
    centre_cards = parse_cards(centre)
    head = []
    for round_index in range(3):
        head.extend(hand_cards[seat][round_index] for seat in order)
        head.append(centre_cards[round_index])
    return deck_from(" ".join(map(str, head)))


def then_seeded(decks: list[list[Card]]) -> Callable[[int], list[Card] | None]:
    """Deal ``decks`` to hands 1, 2, ... and the seeded deck to every later hand (the game goes on after them)."""
    return lambda hand_number: decks[hand_number - 1] if hand_number <= len(decks) else None


def losing_deck(num_players: int, dealer: int, loser: int, seats: tuple[int, ...]) -> list[Card]:
    """Deal WORST_HAND to ``loser`` and a high pair to every other seat of ``seats``."""
    pairs = iter(PAIR_HANDS)
    hands = {seat: WORST_HAND if seat == loser else next(pairs) for seat in seats}
    return dealt_deck(num_players, dealer, hands, LOW_CENTRE)


def play(game: BastardBrag, *texts: str) -> None:
    """Apply each action, written in its text form, for whoever is to play."""
    for text in texts:
        game.apply(Action.parse(text))


def play_one_exchange(game: BastardBrag) -> None:
    """Exchange the current seat's lowest card for face-down slot 0 (see PAIR_HANDS)."""
    hand = game.observation(game.current_seat).hand
    game.apply(action(ActionKind.EXCHANGE, min(hand), 0))


def play_low_card_for_face_up(game: BastardBrag) -> None:
    """Exchange the current seat's lowest card for the face-up card: a plain legal turn."""
    hand = game.observation(game.current_seat).hand
    game.apply(action(ActionKind.EXCHANGE, min(hand), 2))


def centre_seen_by(game: BastardBrag, seat: int) -> tuple[Card | None, Card | None, Card]:
    """Return the centre as ``seat`` knows it: unknown face-down cards are None."""
    return game.observation(seat).centre


def all_held_cards(game: BastardBrag) -> list[Card]:
    """Every card in a hand or in the centre (the cards in play this hand)."""
    return [card for hand in game.hands for card in hand] + list(game.centre)


def scripted_knock_hand() -> BastardBrag:
    """Play one 3-player hand (dealer seat 2) where seat 0 knocks and seat 1 ends with the worst hand."""
    deck = dealt_deck(3, 2, {0: "AS AH KC", 1: "2C 4D 6H", 2: "QS QH JC"}, LOW_CENTRE)
    game = BastardBrag(3, seed=1, first_dealer=2, decks=then_seeded([deck]))
    play(
        game,
        "exchange KC 2",  # seat 0: A A 9, centre 7C 8D KC
        "exchange 2C 2",  # seat 1: K 6 4, centre 7C 8D 2C
        "exchange JC 0",  # seat 2: Q Q 7, centre JC 8D 2C
        "knock",  # seat 0 keeps A A 9
        "exchange 4D 1",  # seat 1 (final): K 8 6, centre JC 4D 2C
        "exchange 7C 2",  # seat 2 (final): Q Q 2, centre JC 4D 7C
    )
    return game


def play_game_of_losses(first_dealer: int, plan: list[tuple[int, int, tuple[int, ...]]]) -> BastardBrag:
    """Play a 3-player game one exchange per hand; ``plan`` gives each hand's (dealer, loser, seats)."""
    decks = [losing_deck(3, dealer, loser, seats) for dealer, loser, seats in plan]
    game = BastardBrag(3, seed=1, first_dealer=first_dealer, decks=then_seeded(decks), turn_limit=1)
    for _ in plan:
        play_one_exchange(game)
    return game


# Seat 0 loses hands 1-3 and seat 1 hands 4-6, first dealer seat 0. The deal
# moves left each hand; seat 0 is eliminated while seat 2 deals, so hand 4
# goes to seat 1 (seat 0 skipped), and hand 6 again skips seat 0.
ELIMINATION_PLAN = [
    (0, 0, (0, 1, 2)),
    (1, 0, (0, 1, 2)),
    (2, 0, (0, 1, 2)),
    (1, 1, (1, 2)),
    (2, 1, (1, 2)),
    (1, 1, (1, 2)),
]


# ----- players and the deal ----------------------------------------------------------


@pytest.mark.parametrize("num_players", [3, 10])
def test_three_to_ten_players_may_play(num_players):
    """3 and 10 players are the limits RULES.md allows."""
    game = BastardBrag(num_players, seed=1, decks=[list(DECK)])
    assert all(len(game.observation(seat).hand) == 3 for seat in range(num_players))
    assert len(game.centre) == 3


@pytest.mark.parametrize("num_players", [2, 11])
def test_fewer_than_three_or_more_than_ten_players_are_refused(num_players):
    """Outside 3-10 players there is no game."""
    with pytest.raises(ValueError):
        BastardBrag(num_players, seed=1)


@pytest.mark.parametrize(("num_players", "dealer"), [(3, 0), (4, 1), (5, 4), (10, 6)])
def test_deal_goes_round_from_dealers_left_to_dealer_then_centre(num_players, dealer):
    """Each round: one card per seat from the dealer's left to the dealer, then the centre."""
    # Canonical order, so deck position k holds DECK[k] and positions are easy to follow.
    game = BastardBrag(num_players, seed=1, first_dealer=dealer, decks=[list(DECK)])
    stride = num_players + 1  # cards per round: every seat plus the centre
    for seat in range(num_players):
        place_in_round = (seat - dealer - 1) % num_players  # 0 for the dealer's left, n-1 for the dealer
        expected = {DECK[round_index * stride + place_in_round] for round_index in range(3)}
        assert set(game.observation(seat).hand) == expected
    centre = [DECK[round_index * stride + num_players] for round_index in range(3)]
    assert game.centre == centre
    for seat in range(num_players):
        # Slots 0 and 1 face down (unknown to all), slot 2 face up.
        assert centre_seen_by(game, seat) == (None, None, centre[2])
    assert game.events[0] == Event(EventKind.DEAL, 1, dealer, centre[2])


def test_face_down_centre_cards_are_the_first_two_centre_cards_dealt():
    """Taking slots 0 and 1 yields the centre's first- and second-round cards."""
    # 3 players, dealer 2: the centre gets deck positions 3, 7 and 11.
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    first_hand = game.observation(0).hand
    play(game, f"exchange {first_hand[0]} 0")
    assert DECK[3] in game.observation(0).hand
    second_hand = game.observation(1).hand
    play(game, f"exchange {second_hand[0]} 1")
    assert DECK[7] in game.observation(1).hand


def test_undealt_rest_is_set_aside_and_never_drawn():
    """The cards after the deal never reach a hand or the centre."""
    game = BastardBrag(3, seed=1, first_dealer=0, decks=[list(DECK)])
    dealt = set(DECK[:12])  # 3 players x 3 cards + 3 centre cards
    assert set(game.set_aside) == set(DECK[12:])
    chooser = random.Random(11)
    for _ in range(60):
        exchanges = [act for act in game.legal_actions() if act is not KNOCK]
        game.apply(chooser.choice(exchanges))
        assert set(all_held_cards(game)) == dealt
        assert set(game.set_aside) == set(DECK[12:])
        assert game.cards_in_play() == 52
    assert game.hand_number == 1


def test_a_deck_of_exactly_the_cards_needed_can_be_dealt():
    """Nothing is drawn after the deal, so 3n+3 cards are enough."""
    deck = list(DECK[:12])
    game = BastardBrag(3, seed=1, first_dealer=0, decks=[deck])
    assert game.set_aside == []
    for _ in range(10):
        play_low_card_for_face_up(game)
    assert set(all_held_cards(game)) == set(deck)


@pytest.mark.parametrize("num_players", [3, 5, 10])
def test_first_turn_is_the_dealers_left(num_players):
    """The player on the dealer's left plays first, whoever deals."""
    for dealer in range(num_players):
        game = BastardBrag(num_players, seed=1, first_dealer=dealer, decks=[list(DECK)])
        first = (dealer + 1) % num_players
        assert game.current_seat == first
        assert game.observation(first).current_seat == first
        assert game.observation(first).legal_actions == game.legal_actions()
        assert all(game.observation(seat).legal_actions == () for seat in range(num_players) if seat != first)


def test_first_dealer_comes_from_the_seed_when_not_given():
    """Without first_dealer, the seed's "first-dealer" stream picks the first dealer."""
    dealers = set()
    for seed in range(20):
        game = BastardBrag(5, seed=seed)
        expected = SeedStream.derive(seed, "first-dealer").randbelow(5)
        assert game.dealer == expected
        assert game.events[0].seat == expected
        assert game.current_seat == (expected + 1) % 5
        assert BastardBrag(5, seed=seed).dealer == expected  # same seed, same dealer
        dealers.add(expected)
    assert len(dealers) > 1  # a random choice, not a fixed seat


def test_given_first_dealer_overrides_the_seed():
    """An explicit first_dealer is used as given."""
    for dealer in range(4):
        assert BastardBrag(4, seed=3, first_dealer=dealer).dealer == dealer


def test_seeded_deck_is_the_documented_shuffle_of_the_hand():
    """Without a fixed deck, hand 1 is dealt from the seed's "hand 1 deck" shuffle."""
    seeded = BastardBrag(4, seed=42, first_dealer=0)
    fixed = BastardBrag(4, seed=0, first_dealer=0, decks=[shuffled_deck(SeedStream.derive(42, "hand", 1, "deck"))])
    assert seeded.hands == fixed.hands
    assert seeded.centre == fixed.centre


# ----- worked example (Bastard Brag seed, section 07) ----------------------------------


def worked_example_game(turn_limit: int = 200) -> BastardBrag:
    """A (seat 0, first to play) holds Q♠ 7♦ 4♣ and the face-up centre card is Q♣."""
    # B holds a pair of jacks with an ace kicker, C the lowest flush (5-3-2),
    # the two hands the seed compares A's pair of queens with.
    deck = dealt_deck(3, 2, {0: "Q♠ 7♦ 4♣", 1: "J♥ J♦ A♠", 2: "5♥ 3♥ 2♥"}, "9♣ 8♦ Q♣")
    return BastardBrag(3, seed=1, first_dealer=2, decks=then_seeded([deck]), turn_limit=turn_limit)


def test_worked_example_exchange_leaves_four_of_clubs_face_up():
    """A exchanges 4♣ for Q♣: 4♣ lies face up, A holds Q♠ Q♣ 7♦, no card is shared."""
    game = worked_example_game()
    assert game.current_seat == 0
    play(game, "exchange 4♣ 2")
    assert set(game.observation(0).hand) == cards("Q♠ Q♣ 7♦")
    rank = hand_rank(game.observation(0).hand)
    assert rank.category is Category.PAIR and rank.values == (12, 7)  # pair of queens, seven kicker
    assert game.events[-1] == Event(EventKind.EXCHANGE, 1, 0, Card.parse("4♣"), Card.parse("Q♣"), 2)
    for seat in range(3):
        # 4♣ is face up for everyone; nobody has looked at the two face-down cards.
        assert centre_seen_by(game, seat) == (None, None, Card.parse("4♣"))
    # No shared cards: Q♣ belongs to A alone, and every card is in exactly one place.
    holders = [seat for seat in range(3) if Card.parse("Q♣") in game.observation(seat).hand]
    assert holders == [0]
    assert Card.parse("Q♣") not in game.centre
    assert len(all_held_cards(game)) == len(set(all_held_cards(game))) == 12


def is_run(ranks: tuple[int, ...]) -> bool:
    """Say whether three ranks form a run: consecutive, or A-2-3 (K-A-2 is not a run)."""
    low, middle, high = sorted(ranks)
    return (middle == low + 1 and high == middle + 1) or (low, middle, high) == (2, 3, 14)


def test_worked_example_pair_of_queens_beats_jacks_with_ace_and_loses_to_any_flush():
    """Q-Q-7 beats every pair of jacks (ace kicker included) and loses to every flush."""
    queens_hand = parse_cards("Q♠ Q♣ 7♦")
    queens = hand_rank(queens_hand)
    others = [card for card in DECK if card not in queens_hand]
    jacks = [card for card in others if card.rank == 11]
    pairs_of_jacks = [
        (*pair, kicker) for pair in itertools.combinations(jacks, 2) for kicker in others if kicker.rank != 11
    ]
    assert any(kicker.rank == 14 for *_, kicker in pairs_of_jacks)
    assert all(queens > hand_rank(hand) for hand in pairs_of_jacks)
    # Every flush the other cards allow: three of one suit that are not a run.
    flushes = [
        hand
        for hand in itertools.combinations(others, 3)
        if len({card.suit for card in hand}) == 1 and not is_run(tuple(card.rank for card in hand))
    ]
    assert parse_cards("5H 3H 2H") in [tuple(sorted(hand, reverse=True)) for hand in flushes]  # the lowest flush
    assert all(queens < hand_rank(hand) for hand in flushes)


def test_worked_example_showdown_ranks_queens_between_jacks_and_flush():
    """At the showdown the pair of jacks with an ace is worst and the 5-3-2 flush beats the queens."""
    # turn_limit=1: the showdown comes right after A's exchange, with the hands the seed names.
    game = worked_example_game(turn_limit=1)
    play(game, "exchange 4♣ 2")
    result = game.hand_results[0]
    assert set(result.hands[0]) == cards("Q♠ Q♣ 7♦")
    assert result.ranks[0] > result.ranks[1]
    assert result.ranks[2] > result.ranks[0]
    assert result.loser == 1
    assert result.lives_after == (3, 2, 3)


# ----- exchange one ------------------------------------------------------------------


def exchange_game() -> BastardBrag:
    """Seat 0 (first to play) holds K♠ 9♦ 4♣; the centre is 6♥ 8♣ face down, J♦ face up."""
    deck = dealt_deck(3, 2, {0: "KS 9D 4C", 1: "AS AH AD", 2: "2S 2H 2D"}, "6H 8C JD")
    return BastardBrag(3, seed=1, first_dealer=2, decks=[deck])


def test_taking_the_face_up_card_leaves_the_given_card_face_up():
    """exchange CARD 2: the given card lies face up for all and the event shows both cards."""
    game = exchange_game()
    play(game, "exchange 4C 2")
    assert set(game.observation(0).hand) == cards("KS 9D JD")
    for seat in range(3):
        assert centre_seen_by(game, seat)[2] == Card.parse("4C")
    assert game.centre[:2] == list(parse_cards("6H 8C"))  # face-down slots untouched
    assert game.events[-1] == Event(EventKind.EXCHANGE, 1, 0, Card.parse("4C"), Card.parse("JD"), 2)


@pytest.mark.parametrize(("slot", "taken"), [(0, "6H"), (1, "8C")])
def test_taking_a_face_down_card_leaves_the_given_card_face_down(slot, taken):
    """exchange CARD 0|1: the given card lies face down in that slot and the event shows no card."""
    game = exchange_game()
    play(game, f"exchange 4C {slot}")
    assert set(game.observation(0).hand) == cards(f"KS 9D {taken}")
    assert game.centre[slot] == Card.parse("4C")
    for seat in range(3):
        assert centre_seen_by(game, seat)[2] == Card.parse("JD")  # face-up card unchanged
        seen = centre_seen_by(game, seat)[slot]
        assert seen == (Card.parse("4C") if seat == 0 else None)
    assert game.events[-1] == Event(EventKind.EXCHANGE, 1, 0, None, None, slot)


def test_exchanging_a_card_not_in_hand_is_illegal():
    """Only a card of the player's own hand can be given."""
    game = exchange_game()
    with pytest.raises(IllegalActionError, match="AS"):
        play(game, "exchange AS 2")
    assert not game.is_legal(Action.parse("exchange AS 2"))
    assert game.turns_this_hand == 0 and game.current_seat == 0


# ----- exchange all --------------------------------------------------------------------


@pytest.mark.parametrize("face_up", ["KS", "9D", "4C"])
def test_exchange_all_swaps_hands_and_lays_the_chosen_card_face_up(face_up):
    """exchange-all CARD: the hand becomes the centre; CARD lies face up, the other two face down."""
    game = exchange_game()
    play(game, f"exchange-all {face_up}")
    assert set(game.observation(0).hand) == cards("6H 8C JD")
    face_down = cards("KS 9D 4C") - cards(face_up)
    assert game.centre[2] == Card.parse(face_up)
    assert set(game.centre[:2]) == face_down
    for seat in range(3):
        assert centre_seen_by(game, seat)[2] == Card.parse(face_up)
    event = game.events[-1]
    assert (event.kind, event.seat, event.card) == (EventKind.EXCHANGE_ALL, 0, Card.parse(face_up))
    # The event is public: it must not name either card that went face down.
    assert not face_down & {event.card, event.taken}


# ----- turns, knocking, final turns ------------------------------------------------------


def test_passing_is_never_allowed():
    """No pass on a normal turn, after round one, or on a final turn."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    for _ in range(5):  # round one, then two turns where knocking is allowed
        assert PASS not in game.legal_actions()
        with pytest.raises(IllegalActionError, match="pass"):
            game.apply(PASS)
        play_low_card_for_face_up(game)
    play(game, "knock")
    assert game.phase is Phase.FINAL
    assert PASS not in game.legal_actions()
    with pytest.raises(IllegalActionError):
        game.apply(PASS)


def test_no_knock_in_round_one_then_knock_allowed_on_every_later_turn():
    """Round one is the first circuit from the dealer's left; a knock is legal on any turn after it."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=[list(DECK)])
    for seat in (0, 1, 2, 3):  # round one
        assert game.current_seat == seat
        assert KNOCK not in game.legal_actions()
        assert not game.is_legal(KNOCK)
        with pytest.raises(IllegalActionError, match="round one"):
            game.apply(KNOCK)
        play_low_card_for_face_up(game)
    for seat in (0, 1, 2, 3, 0, 1):  # every later turn, each seat in turn
        assert game.current_seat == seat
        assert KNOCK in game.legal_actions()
        play_low_card_for_face_up(game)


def test_knock_by_the_first_player_right_after_round_one():
    """The dealer's left may knock on its second turn, the first after round one."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    for _ in range(3):
        play_low_card_for_face_up(game)
    assert game.current_seat == 0
    play(game, "knock")
    assert game.phase is Phase.FINAL and game.ender == 0
    assert game.events[-1] == Event(EventKind.KNOCK, 1, 0)


def test_knocker_keeps_hand_and_others_get_one_final_turn_from_knockers_left():
    """After seat 1 knocks: seats 2, 3, 0 each exchange once (no knock, no pass), then the showdown."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=then_seeded([list(DECK)]))
    for _ in range(5):  # round one (seats 0-3), then seat 0 again
        play_low_card_for_face_up(game)
    assert game.current_seat == 1
    knocker_hand = game.observation(1).hand
    centre_before = list(game.centre)
    play(game, "knock")
    assert game.observation(1).hand == knocker_hand  # a knock exchanges nothing
    assert game.centre == centre_before
    final_seats = []
    for final_turn in range(3):
        assert game.phase is Phase.FINAL and game.ender == 1
        final_seats.append(game.current_seat)
        assert KNOCK not in game.legal_actions()
        with pytest.raises(IllegalActionError):
            game.apply(KNOCK)
        hand = game.observation(game.current_seat).hand
        if final_turn == 1:  # an exchange of all three is as good as one
            game.apply(action(ActionKind.EXCHANGE_ALL, hand[0]))
        else:
            game.apply(action(ActionKind.EXCHANGE, hand[0], 0))
    assert final_seats == [2, 3, 0]
    result = game.hand_results[0]
    assert result.ended_by is EndReason.KNOCK and result.ender == 1
    assert result.hands[1] == knocker_hand
    assert result.turns == 9  # 5 exchanges, the knock, 3 final turns
    assert game.hand_number == 2 and game.phase is Phase.NORMAL


def test_final_turns_wrap_round_the_table_and_the_knocker_can_lose():
    """Seat 1 of 3 knocks with the worst hand: seats 2 then 0 play, and seat 1 loses a life."""
    deck = dealt_deck(3, 2, {0: "AS AH KC", 1: "2C 4D 6H", 2: "QS QH JC"}, LOW_CENTRE)
    game = BastardBrag(3, seed=1, first_dealer=2, decks=then_seeded([deck]))
    play(
        game,
        "exchange KC 2",  # seat 0: A A 9
        "exchange 2C 2",  # seat 1: K 6 4
        "exchange JC 0",  # seat 2: Q Q 7
        "exchange 9H 1",  # seat 0: A A 8
        "knock",  # seat 1 keeps K 6 4, the worst hand
    )
    assert game.current_seat == 2
    play(game, "exchange 7C 2")  # seat 2: Q Q 2
    assert game.current_seat == 0
    play(game, "exchange 8D 2")  # seat 0: A A 7
    result = game.hand_results[0]
    assert result.ender == 1 and result.loser == 1
    assert set(result.hands[1]) == cards("4D 6H KC")
    assert result.lives_after == (3, 2, 3)


@pytest.mark.parametrize("phase_turns", [0, 4])
def test_legal_actions_are_exchanges_by_card_and_slot_then_exchange_all_then_knock(phase_turns):
    """Order: exchange (card, slot 0..2) per hand card, exchange-all per card, knock when allowed."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    for _ in range(phase_turns):
        play_low_card_for_face_up(game)
    hand = game.observation(game.current_seat).hand
    expected = [action(ActionKind.EXCHANGE, card, slot) for card in hand for slot in (0, 1, 2)]
    expected += [action(ActionKind.EXCHANGE_ALL, card) for card in hand]
    if phase_turns >= 3:  # round one is over
        expected.append(KNOCK)
    assert list(game.legal_actions()) == expected
    assert game.observation(game.current_seat).legal_actions == game.legal_actions()


def test_legal_actions_on_a_final_turn_have_no_knock():
    """A final turn offers the same exchanges, in the same order, and nothing else."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    for _ in range(3):
        play_low_card_for_face_up(game)
    play(game, "knock")
    hand = game.observation(game.current_seat).hand
    expected = [action(ActionKind.EXCHANGE, card, slot) for card in hand for slot in (0, 1, 2)]
    expected += [action(ActionKind.EXCHANGE_ALL, card) for card in hand]
    assert list(game.legal_actions()) == expected


# ----- showdown, lives, elimination, placements --------------------------------------------


def test_showdown_only_the_worst_hand_loses_one_life():
    """A A 9, K 8 6 and Q Q 2 are compared; only K 8 6 (seat 1) loses, and one life only."""
    game = scripted_knock_hand()
    result = game.hand_results[0]
    assert {seat: set(hand) for seat, hand in result.hands.items()} == {
        0: cards("AS AH 9H"),
        1: cards("6H 8D KC"),
        2: cards("QS QH 2C"),
    }
    assert result.loser == 1
    assert result.lives_after == (3, 2, 3)
    assert game.lives == [3, 2, 3]
    assert [event.kind for event in game.events].count(EventKind.SHOWDOWN) == 1
    assert not any(event.kind is EventKind.ELIMINATED for event in game.events)


def test_hand_result_records_the_whole_hand():
    """HandResult holds the dealer, end, knocker, turns, hands, ranks, loser and lives."""
    result = scripted_knock_hand().hand_results[0]
    assert result.hand_number == 1
    assert result.dealer == 2
    assert result.ended_by is EndReason.KNOCK
    assert result.ender == 0
    assert result.turns == 6  # 3 exchanges, the knock, 2 final turns
    assert result.ranks == {seat: hand_rank(hand) for seat, hand in result.hands.items()}
    assert result.floating_after == (False, False, False)
    assert result.eliminated == ()


def test_events_of_a_hand_in_order():
    """Deal, each exchange (face-up ones with both cards), the knock, the showdown, the next deal."""
    game = scripted_knock_hand()
    c = Card.parse
    assert game.events[:8] == [
        Event(EventKind.DEAL, 1, 2, c("9H")),
        Event(EventKind.EXCHANGE, 1, 0, c("KC"), c("9H"), 2),
        Event(EventKind.EXCHANGE, 1, 1, c("2C"), c("KC"), 2),
        Event(EventKind.EXCHANGE, 1, 2, slot=0),
        Event(EventKind.KNOCK, 1, 0),
        Event(EventKind.EXCHANGE, 1, 1, slot=1),
        Event(EventKind.EXCHANGE, 1, 2, c("7C"), c("2C"), 2),
        Event(EventKind.SHOWDOWN, 1, 1),
    ]
    # The deal passes left: seat 0 deals hand 2.
    assert game.events[8].kind is EventKind.DEAL
    assert (game.events[8].hand_number, game.events[8].seat) == (2, 0)
    assert game.events[8].card == game.centre[2]
    assert game.hand_events == (game.events[8],)


def test_elimination_at_zero_lives_at_once_with_no_floating_life():
    """Three losses eliminate a player in that hand; floating stays False; survivors play on."""
    game = play_game_of_losses(0, ELIMINATION_PLAN[:3])
    assert game.lives == [0, 3, 3]
    assert game.floating == [False, False, False]
    assert game.in_game == [False, True, True]
    result = game.hand_results[2]
    assert result.eliminated == (0,)
    assert result.floating_after == (False, False, False)
    hand_3 = [event for event in game.events if event.hand_number == 3]
    assert hand_3[-2:] == [Event(EventKind.SHOWDOWN, 3, 0), Event(EventKind.ELIMINATED, 3, 0)]
    # Hand 4 is dealt to the survivors only, and seat 0 never plays again.
    assert game.hand_number == 4
    assert game.in_hand == [False, True, True]
    assert game.observation(0).hand == ()
    assert all(len(game.observation(seat).hand) == 3 for seat in (1, 2))


def test_game_deals_again_until_one_winner_with_placements_in_reverse_elimination_order():
    """Seats 0 then 1 are eliminated: seat 2 wins, seat 1 is second, seat 0 third."""
    decks = [losing_deck(3, dealer, loser, seats) for dealer, loser, seats in ELIMINATION_PLAN]
    game = BastardBrag(3, seed=1, first_dealer=0, decks=decks, turn_limit=1)
    lives = [3, 3, 3]
    for number, (dealer, loser, seats) in enumerate(ELIMINATION_PLAN, start=1):
        assert game.hand_number == number
        assert game.dealer == dealer
        assert [seat for seat in range(3) if game.in_hand[seat]] == list(seats)
        # The first turn is the next seat in the hand on the dealer's left.
        assert game.current_seat == next(seat % 3 for seat in range(dealer + 1, dealer + 4) if seat % 3 in seats)
        play_one_exchange(game)
        lives[loser] -= 1
        result = game.hand_results[-1]
        assert result.loser == loser
        assert result.lives_after == tuple(lives)
        assert set(result.hands) == set(seats)
    assert game.is_over and game.phase is Phase.OVER
    assert game.current_seat is None
    assert game.events[-1] == Event(EventKind.GAME_OVER, 6, 2)
    outcome = game.result()
    assert outcome.placements == (2, 1, 0)
    assert outcome.winner == 2
    assert outcome.hands_played == 6
    assert outcome.forfeited == ()


def test_deal_passes_to_the_left_each_hand():
    """With nobody eliminated, the deal moves one seat left every hand."""
    decks = [list(DECK)] * 5
    game = BastardBrag(4, seed=1, first_dealer=2, decks=then_seeded(decks), turn_limit=1)
    dealers = []
    for _ in range(5):
        dealers.append(game.dealer)
        play_low_card_for_face_up(game)
    assert dealers == [2, 3, 0, 1, 2]


def test_deal_skips_a_seat_on_dealers_left_eliminated_in_the_hand():
    """Dealer 2, seat 0 eliminated: seat 1 deals next (not dealer 2 again, as in Stop the Bus)."""
    game = play_game_of_losses(0, ELIMINATION_PLAN[:3])
    assert game.hand_results[2].dealer == 2
    assert game.dealer == 1
    assert game.current_seat == 2


def test_deal_passes_left_when_the_dealer_is_eliminated():
    """Dealer seat 0 eliminated in its own deal: seat 1, on its left, deals next."""
    # First dealer seat 1: dealers 1, 2, 0, so seat 0's third loss comes while it deals.
    plan = [(1, 0, (0, 1, 2)), (2, 0, (0, 1, 2)), (0, 0, (0, 1, 2))]
    game = play_game_of_losses(1, plan)
    assert game.hand_results[2].dealer == 0
    assert game.hand_results[2].eliminated == (0,)
    assert game.dealer == 1
    assert game.current_seat == 2


# ----- what each seat knows --------------------------------------------------------------


def test_what_each_seat_knows_about_the_face_down_centre_cards():
    """Face-down cards are known only to the seat that put them there, while they stay there."""
    deck = dealt_deck(4, 3, {0: "AS KD 4C", 1: "AH QD 5C", 2: "AD JD 6C", 3: "AC TD 7C"}, "2S 3S 9H")
    game = BastardBrag(4, seed=1, first_dealer=3, decks=[deck])
    c = Card.parse

    def views() -> list[tuple]:
        return [centre_seen_by(game, seat) for seat in range(4)]

    # Nobody has looked at the two face-down cards dealt at the start.
    assert views() == [(None, None, c("9H"))] * 4

    play(game, "exchange 4C 0")  # seat 0 takes 2S face down, puts 4C there
    assert c("2S") in game.observation(0).hand  # taking a face-down card shows it to the taker
    assert views() == [(c("4C"), None, c("9H"))] + [(None, None, c("9H"))] * 3

    play(game, "exchange 5C 1")  # seat 1 takes 3S, puts 5C face down
    assert c("3S") in game.observation(1).hand
    assert views() == [
        (c("4C"), None, c("9H")),
        (None, c("5C"), c("9H")),
        (None, None, c("9H")),
        (None, None, c("9H")),
    ]

    play(game, "exchange 6C 2")  # seat 2 takes the face-up 9H: face-down knowledge is unchanged
    assert views() == [
        (c("4C"), None, c("6C")),
        (None, c("5C"), c("6C")),
        (None, None, c("6C")),
        (None, None, c("6C")),
    ]

    play(game, "exchange 7C 0")  # seat 3 takes seat 0's 4C: seat 0 no longer knows slot 0
    assert c("4C") in game.observation(3).hand
    assert views() == [
        (None, None, c("6C")),
        (None, c("5C"), c("6C")),
        (None, None, c("6C")),
        (c("7C"), None, c("6C")),
    ]

    play(game, "exchange-all KD")  # seat 0 gives AS 2S face down and KD face up
    assert set(game.observation(0).hand) == cards("7C 5C 6C")
    seen_by_exchanger = views()[0]
    assert set(seen_by_exchanger[:2]) == cards("AS 2S")  # the exchanger knows both face-down cards
    assert views()[1:] == [(None, None, c("KD"))] * 3  # seats 1 and 3 lost what they knew

    in_slot_1 = game.centre[1]
    play(game, "exchange QD 1")  # seat 1 takes slot 1, which seat 0 stops knowing
    assert in_slot_1 in game.observation(1).hand
    assert views() == [
        (game.centre[0], None, c("KD")),
        (None, c("QD"), c("KD")),
        (None, None, c("KD")),
        (None, None, c("KD")),
    ]


def test_nobody_knows_the_face_down_cards_of_a_new_hand():
    """Knowledge of the centre does not carry over into the next deal."""
    game = scripted_knock_hand()  # seats 2 and 1 put cards face down in hand 1
    assert game.hand_number == 2
    for seat in range(3):
        assert centre_seen_by(game, seat)[:2] == (None, None)


def visible_cards(observation) -> set[Card]:
    """Every card an observation names anywhere: hand, centre, events, legal actions."""
    seen = set(observation.hand) | {card for card in observation.centre if card is not None}
    for event in observation.hand_events:
        seen |= {card for card in (event.card, event.taken) if card is not None}
    seen |= {act.card for act in observation.legal_actions if act.card is not None}
    return seen


def test_no_observation_shows_another_seats_cards_unless_they_were_face_up():
    """Over many seeded hands, a seat sees others' cards only if they once lay face up."""
    game = BastardBrag(4, seed=3, first_dealer=0, decks=then_seeded([list(DECK)]))
    chooser = random.Random(7)
    hand_number = 0
    ever_face_up: set[Card] = set()
    for _ in range(600):
        if game.is_over:
            break
        if game.hand_number != hand_number:
            hand_number, ever_face_up = game.hand_number, set()
        ever_face_up.add(game.centre[2])
        for seat in range(4):
            observation = game.observation(seat)
            assert sorted(observation.hand) == sorted(game.hands[seat])
            for slot in (0, 1):
                assert observation.centre[slot] in (None, game.centre[slot])
            seen = visible_cards(observation)
            for other in range(4):
                if other != seat:
                    assert seen & set(game.hands[other]) <= ever_face_up
        for seat in range(4):
            assert len(game.hands[seat]) == (3 if game.in_hand[seat] else 0)
        assert game.cards_in_play() == 52
        game.apply(chooser.choice(game.legal_actions()))
    assert game.is_over  # the walk covered whole games, eliminations included


# ----- turn limit ------------------------------------------------------------------------


def test_turn_limit_ends_the_hand_with_an_immediate_showdown():
    """With turn_limit=4, the fourth turn ends the hand; the worst hand loses."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=then_seeded([list(DECK)]), turn_limit=4)
    for _ in range(4):
        play_low_card_for_face_up(game)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.TURN_LIMIT
    assert result.turns == 4 and result.ender is None
    assert result.loser == min(result.ranks, key=result.ranks.__getitem__)
    assert set(result.hands) == {0, 1, 2}
    hand_1 = [event for event in game.events if event.hand_number == 1]
    assert [event.kind for event in hand_1[-2:]] == [EventKind.TURN_LIMIT, EventKind.SHOWDOWN]
    assert hand_1[-2].count == 4
    assert game.hand_number == 2


def test_a_knock_past_round_one_gets_every_final_turn_even_past_the_limit():
    """RULES.md's example: 4 players, dealer 3, turn_limit=6; four round-one exchanges, seat 0 knocks on turn 5.

    Seats 1, 2 and 3 each get their final turn (turns 6, 7 and 8): the limit
    counts normal turns only, and the hand ends by the knock.
    """
    game = BastardBrag(4, seed=1, first_dealer=3, decks=then_seeded([list(DECK)]), turn_limit=6)
    for _ in range(4):
        play_low_card_for_face_up(game)
    assert game.current_seat == 0 and KNOCK in game.legal_actions()
    play(game, "knock")  # turn 5
    for seat, turns_before in ((1, 5), (2, 6), (3, 7)):
        view = game.observation(seat)
        assert (view.current_seat, view.phase, view.ender) == (seat, Phase.FINAL, 0)
        assert (view.turns_this_hand, view.turn_limit) == (turns_before, 6)
        assert KNOCK not in view.legal_actions
        play_low_card_for_face_up(game)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.KNOCK and result.ender == 0 and result.turns == 8
    hand_1 = [event for event in game.events if event.hand_number == 1]
    assert [(event.kind, event.seat) for event in hand_1[6:]] == [
        (EventKind.EXCHANGE, 1),
        (EventKind.EXCHANGE, 2),
        (EventKind.EXCHANGE, 3),
        (EventKind.SHOWDOWN, result.loser),
    ]


def test_a_knock_on_the_limit_th_turn_still_gives_the_final_turns():
    """turn_limit=4, 3 players: round one, then seat 0 knocks on turn 4 (the limit-th); seats 1 and 2 play again."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=then_seeded([list(DECK)]), turn_limit=4)
    for _ in range(3):
        play_low_card_for_face_up(game)
    assert game.turns_this_hand == 3 and KNOCK in game.legal_actions()  # the limit-th turn is a normal turn
    play(game, "knock")
    assert (game.phase, game.current_seat, game.turns_this_hand) == (Phase.FINAL, 1, 4)
    play_low_card_for_face_up(game)
    assert (game.phase, game.current_seat, game.turns_this_hand) == (Phase.FINAL, 2, 5)
    play_low_card_for_face_up(game)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.KNOCK and result.turns == 6
    assert EventKind.TURN_LIMIT not in [event.kind for event in game.events if event.hand_number == 1]


def test_default_turn_limit_is_two_hundred_turns():
    """With no knock, a hand ends by the limit after exactly 200 turns."""
    game = BastardBrag(3, seed=1, first_dealer=0, decks=then_seeded([list(DECK)]))
    assert game.turn_limit == 200
    for _ in range(199):
        play_low_card_for_face_up(game)
    assert game.hand_results == []
    play_low_card_for_face_up(game)
    assert game.hand_results[0].ended_by is EndReason.TURN_LIMIT
    assert game.hand_results[0].turns == 200


# ----- players leaving (forfeit) ------------------------------------------------------------


def test_forfeit_removes_cards_and_turns_and_the_seat_is_not_compared():
    """Seat 2 forfeits before its first turn: it is skipped, round one ends without it, no showdown place."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=then_seeded([list(DECK)]))
    play_low_card_for_face_up(game)  # seat 0
    forfeited_cards = set(game.observation(2).hand)
    game.forfeit(2, "crashed")
    assert game.events[-1] == Event(EventKind.FORFEIT, 1, 2)
    assert not forfeited_cards & set(all_held_cards(game))  # its cards left play
    assert game.observation(2).hand == ()
    assert game.cards_in_play() == 52  # out of play, still accounted for
    assert game.current_seat == 1
    play_low_card_for_face_up(game)  # seat 1
    assert game.current_seat == 3  # seat 2 is skipped
    play_low_card_for_face_up(game)  # seat 3 ends round one: everyone left has played
    assert game.current_seat == 0
    play(game, "knock")
    final_seats = []
    while game.hand_number == 1:
        final_seats.append(game.current_seat)
        play_low_card_for_face_up(game)
    assert final_seats == [1, 3]
    result = game.hand_results[0]
    assert set(result.hands) == {0, 1, 3}
    assert not forfeited_cards & {card for hand in result.hands.values() for card in hand}
    assert game.in_hand == [True, True, False, True]


def test_forfeit_of_the_current_seat_passes_the_turn_left():
    """The seat to play forfeits: the next seat in the hand plays."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=[list(DECK)])
    game.forfeit(0)
    assert game.current_seat == 1
    assert game.turns_this_hand == 0


def test_knocker_forfeits_and_the_final_turns_still_run():
    """Seat 1 knocks then forfeits: seats 2, 3 and 0 still play their final turns."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=then_seeded([list(DECK)]))
    for _ in range(5):
        play_low_card_for_face_up(game)
    play(game, "knock")  # seat 1
    play_low_card_for_face_up(game)  # seat 2
    game.forfeit(1)
    final_seats = []
    while game.hand_number == 1:
        final_seats.append(game.current_seat)
        play_low_card_for_face_up(game)
    assert final_seats == [3, 0]
    result = game.hand_results[0]
    assert result.ended_by is EndReason.KNOCK and result.ender == 1
    assert set(result.hands) == {0, 2, 3}
    assert result.turns == 9  # 5 exchanges, the knock, 3 final turns


def test_forfeit_of_a_seat_waiting_for_its_final_turn_drops_that_turn():
    """A seat that leaves before its final turn gets none."""
    game = BastardBrag(4, seed=1, first_dealer=3, decks=then_seeded([list(DECK)]))
    for _ in range(5):
        play_low_card_for_face_up(game)
    play(game, "knock")  # seat 1; final turns due: 2, 3, 0
    game.forfeit(3)
    final_seats = []
    while game.hand_number == 1:
        final_seats.append(game.current_seat)
        play_low_card_for_face_up(game)
    assert final_seats == [2, 0]


def test_one_player_left_after_forfeits_wins_at_once():
    """Two of three seats forfeit: the last one wins with no showdown; forfeits rank last."""
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])
    play_low_card_for_face_up(game)
    game.forfeit(0)
    game.forfeit(1)
    assert game.is_over and game.current_seat is None
    assert game.events[-1] == Event(EventKind.GAME_OVER, 1, 2)
    assert not any(event.kind is EventKind.SHOWDOWN for event in game.events)
    result = game.hand_results[-1]
    assert result.ended_by is EndReason.FORFEIT and result.loser is None
    assert result.lives_after == (3, 3, 3)
    outcome = game.result()
    assert outcome.placements == (2, 1, 0)
    assert outcome.forfeited == (0, 1)


def test_forfeit_ranks_below_everyone_still_in_the_game():
    """Seat 1 forfeits in hand 1, seat 0 is eliminated later: seat 1 is last, seat 0 second."""
    # First dealer 2. Hand 1 is dealt to all three; seat 1 leaves before anyone plays.
    # Then seat 0 loses every hand: dealers 2, 0, 2 (seat 1 skipped).
    decks = [
        losing_deck(3, 2, 0, (0, 1, 2)),
        losing_deck(3, 0, 0, (0, 2)),
        losing_deck(3, 2, 0, (0, 2)),
    ]
    game = BastardBrag(3, seed=1, first_dealer=2, decks=decks, turn_limit=1)
    game.forfeit(1)
    for _ in range(3):
        play_one_exchange(game)
    assert [result.dealer for result in game.hand_results] == [2, 0, 2]
    assert [result.loser for result in game.hand_results] == [0, 0, 0]
    assert game.result().placements == (2, 0, 1)


def test_forfeit_after_an_elimination_ranks_above_the_eliminated_seat():
    """Seat 0 eliminated first, then seat 1 forfeits: placements 2, 1, 0."""
    game = play_game_of_losses(0, ELIMINATION_PLAN[:3])
    game.forfeit(1)
    assert game.result().placements == (2, 1, 0)


# ----- determinism and the end of the game --------------------------------------------------


def play_seeded_game(seed: int) -> BastardBrag:
    """Play a whole 4-player game with a seeded random choice among the legal actions."""
    game = BastardBrag(4, seed=seed)
    chooser = random.Random(5)
    while not game.is_over:
        game.apply(chooser.choice(game.legal_actions()))
    return game


def test_same_seed_gives_the_same_game():
    """The same seed and the same choices replay identically."""
    first, second = play_seeded_game(99), play_seeded_game(99)
    assert first.events == second.events
    assert first.hand_results == second.hand_results
    assert first.result() == second.result()


def test_different_seeds_give_different_deals():
    """The seed names the decks: another seed deals other cards."""
    assert BastardBrag(4, seed=1, first_dealer=0).hands != BastardBrag(4, seed=2, first_dealer=0).hands


def test_result_before_the_end_is_an_error():
    """There are no placements while the game is in progress."""
    with pytest.raises(GameOverError):
        BastardBrag(3, seed=1).result()


def test_game_over_refuses_actions_and_forfeits():
    """After the last showdown, every action and forfeit raises GameOverError."""
    game = play_game_of_losses(0, ELIMINATION_PLAN)
    assert game.is_over
    assert game.legal_actions() == ()
    assert not game.is_legal(KNOCK)
    with pytest.raises(GameOverError):
        game.apply(Action.parse("exchange AS 2"))
    with pytest.raises(GameOverError):
        game.check_action(KNOCK)
    with pytest.raises(GameOverError):
        game.forfeit(2)
    assert game.result().winner == 2
