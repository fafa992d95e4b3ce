"""Stop the Bus: every rule and ruling of RULES.md, each played out on a fixed deck."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from referee.common.errors import GameOverError, IllegalActionError
from referee.engine.cards import DECK, Card, format_cards, parse_cards, shuffle
from referee.engine.games.game import (
    DRAW,
    KNOCK,
    PASS,
    STOP,
    TAKE,
    Action,
    ActionKind,
    EndReason,
    Event,
    EventKind,
    Phase,
    action,
)
from referee.engine.games.stop_the_bus import StopTheBus
from referee.engine.hands import Category, hand_rank
from referee.engine.seeding import SeedStream

# High card 5-3-2 is the lowest hand there is (4-3-2 would be a run), so the
# seat dealt it loses any showdown against the prials below.
WORST = "2C 3D 5H"
PRIALS = ("AC AD AH", "KC KD KH", "QC QD QH", "JC JD JH", "TC TD TH", "9C 9D 9H", "8C 8D 8H", "7C 7D 7H")


# ----- helpers ------------------------------------------------------------------


def card(text: str) -> Card:
    return Card.parse(text)


def discard(text: str) -> Action:
    return action(ActionKind.DISCARD, card(text))


def deck_of(text: str, fill: bool = True) -> list[Card]:
    """Return the cards of ``text`` in order, then (if ``fill``) every other card in canonical order."""
    head = list(parse_cards(text))
    if not fill:
        return head
    used = set(head)
    return head + [c for c in DECK if c not in used]


def arranged_deck(
    num_players: int, dealer: int, hands: dict[int, str], discard: str, stock: str = "", fill: bool = True
) -> list[Card]:
    """Lay out a deck that deals ``hands[seat]`` to each seat, then the face-up discard, then the stock.

    The deal is three rounds of one card to each seat from the dealer's left,
    the dealer last; ``stock`` is written in drawing order.
    """
    seats = sorted(hands, key=lambda seat: (seat - dealer - 1) % num_players)
    per_seat = {seat: parse_cards(text) for seat, text in hands.items()}
    dealt = [per_seat[seat][round_] for round_ in range(3) for seat in seats]
    return deck_of(f"{format_cards(dealt)} {discard} {stock}", fill)


def then_seeded(decks: list[list[Card]]) -> Callable[[int], list[Card] | None]:
    """Deal ``decks`` to hands 1, 2, ... and the seeded deck to every later hand (the game goes on after them)."""
    return lambda hand_number: decks[hand_number - 1] if hand_number <= len(decks) else None


def losing_deck(num_players: int, dealer: int, loser: int, seats: list[int] | None = None) -> list[Card]:
    """A deck in which ``loser`` is dealt 5-3-2 and every other seat in ``seats`` a prial."""
    seats = list(range(num_players)) if seats is None else seats
    prials = iter(PRIALS)
    hands = {seat: WORST if seat == loser else next(prials) for seat in seats}
    return arranged_deck(num_players, dealer, hands, discard="4S")


def stop_then_pass(game: StopTheBus, dealer: int | None = None) -> None:
    """Play a hand in which the first player stops and every final turn passes."""
    if dealer is not None:
        assert game.dealer == dealer, f"hand {game.hand_number}: expected dealer {dealer}, got {game.dealer}"
    hand_number = game.hand_number
    game.apply(STOP)
    while not game.is_over and game.hand_number == hand_number:
        game.apply(PASS)


def cards_set(text: str) -> set[Card]:
    return set(parse_cards(text))


def events_of_hand(game: StopTheBus, hand_number: int) -> list[Event]:
    return [event for event in game.events if event.hand_number == hand_number]


def kinds(events: list[Event] | tuple[Event, ...]) -> list[EventKind]:
    return [event.kind for event in events]


# ----- the deal -------------------------------------------------------------------

# A fixed deck with ranks and suits mixed (7 is coprime with 52), so that no
# seat's cards come out already in order by accident.
STRIDED_DECK = [DECK[(i * 7) % 52] for i in range(52)]


def test_deal_gives_three_cards_one_at_a_time_from_the_dealers_left() -> None:
    """Four players, dealer 1: rounds go 2, 3, 0, 1, so seat 2 gets deck positions 0, 4 and 8."""
    game = StopTheBus(4, seed=1, first_dealer=1, decks=[STRIDED_DECK])
    expected_positions = {2: (0, 4, 8), 3: (1, 5, 9), 0: (2, 6, 10), 1: (3, 7, 11)}
    for seat, positions in expected_positions.items():
        assert set(game.observation(seat).hand) == {STRIDED_DECK[p] for p in positions}
        assert len(game.observation(seat).hand) == 3


def test_face_up_discard_is_the_card_after_the_deal_and_the_rest_is_the_stock() -> None:
    """After 4 x 3 cards, position 12 is turned face up and the other 39 form the stock."""
    game = StopTheBus(4, seed=1, first_dealer=1, decks=[STRIDED_DECK])
    view = game.observation(0)
    assert view.discard_top == STRIDED_DECK[12]
    assert view.discard_count == 1
    assert view.stock_count == 52 - 13
    assert game.events == [Event(EventKind.DEAL, 1, seat=1, card=STRIDED_DECK[12])]
    assert game.cards_in_play() == 52


def test_stock_is_drawn_in_deck_order() -> None:
    """Three draws in a row take deck positions 13, 14 and 15."""
    game = StopTheBus(4, seed=1, first_dealer=1, decks=[STRIDED_DECK])
    for position in (13, 14, 15):
        seat = game.current_seat
        game.apply(DRAW)
        drawn = game.observation(seat).drawn_card
        assert drawn == STRIDED_DECK[position]
        game.apply(action(ActionKind.DISCARD, drawn))


@pytest.mark.parametrize(("dealer", "first_seat"), [(0, 1), (1, 2), (2, 3), (3, 0)])
def test_first_turn_is_the_dealers_left(dealer: int, first_seat: int) -> None:
    """The player on the dealer's left starts, wrapping round from the last seat to seat 0."""
    game = StopTheBus(4, seed=1, first_dealer=dealer, decks=[STRIDED_DECK])
    assert game.dealer == dealer
    assert game.current_seat == first_seat
    assert game.observation(first_seat).legal_actions == (DRAW, TAKE, STOP)


@pytest.mark.parametrize("num_players", [2, 5, 9])
def test_first_dealer_comes_from_the_seed(num_players: int) -> None:
    """Without first_dealer, the dealer is drawn from the seed: in range, repeatable and seed-dependent."""
    dealers = []
    for seed in range(40):
        game = StopTheBus(num_players, seed=seed)
        assert 0 <= game.dealer < num_players
        assert StopTheBus(num_players, seed=seed).dealer == game.dealer
        # The stream documented in Game's docstring, so that anyone can re-derive it.
        assert game.dealer == SeedStream.derive(seed, "first-dealer").randbelow(num_players)
        assert game.current_seat == (game.dealer + 1) % num_players
        dealers.append(game.dealer)
    assert len(set(dealers)) > 1


# ----- the worked example (Stop the Bus seed, section 05) ----------------------------

# Seats: A = 0, B = 1, C = 2. Dealer C, so A has the first turn. The stock's
# first card is the ace of hearts B draws in the final turn.
WORKED_HANDS = {0: "8C 9C TC", 1: "AD 6S KH", 2: "KS JS 7S"}


@pytest.mark.parametrize(
    ("earlier_losses", "lives_after", "floating_after", "eliminated"),
    [
        (0, 2, False, ()),  # B loses one token of three
        (2, 0, True, ()),  # B had one token: now floats at zero, still in the game
        (3, 0, False, (1,)),  # B was floating: eliminated
    ],
)
def test_worked_final_turn(earlier_losses: int, lives_after: int, floating_after: bool, eliminated: tuple) -> None:
    """A stops on 8-9-10 of clubs, B draws A♥ and discards K♥, C keeps K-J-7 of spades; B loses."""
    # The deal moves left each hand, so starting that many seats earlier makes C deal the worked hand.
    first_dealer = (2 - earlier_losses) % 3
    decks = [losing_deck(3, (first_dealer + i) % 3, loser=1) for i in range(earlier_losses)]
    decks.append(arranged_deck(3, 2, WORKED_HANDS, discard="2D", stock="AH"))
    game = StopTheBus(3, seed=5, first_dealer=first_dealer, decks=then_seeded(decks))
    for i in range(earlier_losses):
        stop_then_pass(game, dealer=(first_dealer + i) % 3)
    assert game.dealer == 2 and game.current_seat == 0
    assert game.lives[1] == 3 - earlier_losses

    game.apply(STOP)
    assert game.current_seat == 1 and game.phase is Phase.FINAL
    game.apply(DRAW)
    assert game.observation(1).drawn_card == card("AH")
    assert set(game.observation(1).hand) == cards_set("AD 6S KH AH")
    game.apply(discard("KH"))
    assert game.current_seat == 2
    game.apply(PASS)

    result = game.hand_results[-1]
    assert result.hand_number == earlier_losses + 1
    assert result.ended_by is EndReason.STOP and result.ender == 0
    assert {seat: set(cards) for seat, cards in result.hands.items()} == {
        0: cards_set("8C 9C TC"),
        1: cards_set("AD AH 6S"),
        2: cards_set("KS JS 7S"),
    }
    assert result.ranks[0].category is Category.RUNNING_FLUSH
    assert result.ranks[2].category is Category.FLUSH
    assert result.ranks[1].category is Category.PAIR
    assert result.ranks[0] > result.ranks[2] > result.ranks[1]
    assert result.loser == 1
    assert result.lives_after == (3, lives_after, 3)
    assert result.floating_after[1] is floating_after
    assert result.eliminated == eliminated
    assert game.in_game[1] is (not eliminated)
    hand_kinds = kinds(events_of_hand(game, result.hand_number))
    assert (EventKind.ELIMINATED in hand_kinds) is bool(eliminated)


# ----- legal actions -------------------------------------------------------------------

# Two players, dealer 1, so seat 0 starts. The stock opens with 4D then 8S.
TWO_SEAT_DECK = arranged_deck(2, 1, {0: "QS 9H 3C", 1: "KD 7C 2H"}, discard="JC", stock="4D 8S")


def test_normal_turn_offers_draw_take_stop_in_that_order_every_turn() -> None:
    """Each normal turn starts with exactly (draw, take, stop)."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    assert game.legal_actions() == (DRAW, TAKE, STOP)
    game.apply(DRAW)
    game.apply(discard("3C"))
    assert game.current_seat == 1
    assert game.legal_actions() == (DRAW, TAKE, STOP)
    assert game.observation(1).legal_actions == (DRAW, TAKE, STOP)
    assert game.observation(0).legal_actions == ()


def test_final_turn_offers_draw_take_pass_in_that_order() -> None:
    """After a stop, a final turn offers exactly (draw, take, pass)."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.apply(STOP)
    assert game.phase is Phase.FINAL
    assert game.legal_actions() == (DRAW, TAKE, PASS)


def test_mid_turn_offers_one_discard_per_card_held_in_the_hands_order() -> None:
    """After a draw the only legal actions are discards of the four cards, listed as the hand shows them."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.apply(DRAW)
    legal = game.legal_actions()
    hand = game.observation(0).hand
    assert set(hand) == cards_set("QS 9H 3C 4D")
    assert legal == tuple(action(ActionKind.DISCARD, held) for held in hand)
    # The same state in a second game gives the very same list.
    twin = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    twin.apply(DRAW)
    assert twin.legal_actions() == legal


# ----- drawing, taking, discarding ---------------------------------------------------------


def test_draw_then_discard_is_two_decisions_and_the_drawn_card_is_private() -> None:
    """The drawer sees the drawn card before discarding; no other seat sees it anywhere."""
    hands = {0: "QS 9H 3C", 1: "KD 7C 2H", 2: "AS 6D 5C"}
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[arranged_deck(3, 2, hands, discard="JC", stock="4D")])
    game.apply(DRAW)
    # Still seat 0's turn, now holding four cards; the turn is not over yet.
    assert game.current_seat == 0 and game.turns_this_hand == 0
    own = game.observation(0)
    assert own.drawn_card == card("4D") and own.took_discard is False
    assert len(own.hand) == 4 and card("4D") in own.hand
    for other in (1, 2):
        view = game.observation(other)
        assert view.drawn_card is None
        assert repr(card("4D")) not in repr(view)
    assert game.events[-1] == Event(EventKind.DRAW, 1, seat=0)
    game.apply(discard("3C"))
    assert game.current_seat == 1 and game.turns_this_hand == 1
    assert set(game.observation(0).hand) == cards_set("QS 9H 4D")


def test_taken_card_is_shown_as_taken_to_the_taker() -> None:
    """A take shows the card as drawn_card with took_discard set, and the TAKE event names it."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.apply(TAKE)
    own = game.observation(0)
    assert own.drawn_card == card("JC") and own.took_discard is True
    assert game.observation(1).drawn_card is None
    assert game.events[-1] == Event(EventKind.TAKE, 1, seat=0, card=card("JC"))


def test_taken_discard_cannot_be_discarded_in_the_same_turn() -> None:
    """After taking J♣, discarding J♣ is illegal and the error says a different card must go."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.apply(TAKE)
    assert discard("JC") not in game.legal_actions()
    assert set(game.legal_actions()) == {discard("QS"), discard("9H"), discard("3C")}
    assert not game.is_legal(discard("JC"))
    with pytest.raises(IllegalActionError) as caught:
        game.apply(discard("JC"))
    message = str(caught.value)
    assert "JC" in message and "taken" in message and "different" in message
    assert caught.value.seat == 0
    # The refused action changed nothing: seat 0 still holds four cards and must discard.
    assert len(game.observation(0).hand) == 4 and game.current_seat == 0


def test_a_drawn_stock_card_may_be_discarded_at_once() -> None:
    """Drawing 4♦ and discarding it is legal and leaves the hand as it was."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.apply(DRAW)
    assert game.is_legal(discard("4D"))
    game.apply(discard("4D"))
    assert set(game.observation(0).hand) == cards_set("QS 9H 3C")
    assert game.observation(1).discard_top == card("4D")


def test_there_is_no_pass_on_a_normal_turn() -> None:
    """Pass is refused with a reason on a normal turn."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    assert not game.is_legal(PASS)
    with pytest.raises(IllegalActionError) as caught:
        game.apply(PASS)
    assert "pass" in caught.value.reason
    assert game.current_seat == 0 and game.phase is Phase.NORMAL


def test_a_turn_cannot_start_with_a_discard_nor_draw_twice() -> None:
    """A discard needs four cards in hand; a second draw needs the first card discarded."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    for refused in (discard("QS"), KNOCK):
        with pytest.raises(IllegalActionError):
            game.apply(refused)
    game.apply(DRAW)
    for refused in (DRAW, TAKE, STOP):
        with pytest.raises(IllegalActionError):
            game.apply(refused)


# ----- stopping and final turns -----------------------------------------------------------------


def test_stop_is_allowed_on_the_very_first_turn_of_a_hand() -> None:
    """Ruling: the first player may stop before anyone has drawn."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    assert game.turns_this_hand == 0 and game.is_legal(STOP)
    game.apply(STOP)
    assert game.phase is Phase.FINAL and game.ender == 0
    assert game.current_seat == 1
    assert game.events[-1] == Event(EventKind.STOP, 1, seat=0)


def test_nobody_may_stop_in_a_final_turn() -> None:
    """After a stop, stop is refused with a reason naming the stopper."""
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[STRIDED_DECK])
    game.apply(STOP)
    assert not game.is_legal(STOP)
    with pytest.raises(IllegalActionError) as caught:
        game.apply(STOP)
    assert "stopped" in caught.value.reason and "seat 0" in caught.value.reason
    game.apply(DRAW)
    assert all(act.kind is ActionKind.DISCARD for act in game.legal_actions())


def test_final_turns_run_from_the_stoppers_left_and_the_stopper_does_not_act_again() -> None:
    """Seat 2 stops: seats 3, 0 and 1 each get one final turn (take, draw, pass), then the showdown."""
    # Dealer 0, so seat 1 starts; seat 2 stops on the second turn of the hand.
    hands = {1: "2C 5D 9H", 2: "KS KH 4D", 3: "7C 8C JD", 0: "3S 6H TD"}
    deck = arranged_deck(4, 0, hands, discard="QC", stock="AS 2H")
    game = StopTheBus(4, seed=1, first_dealer=0, decks=then_seeded([deck]))
    game.apply(DRAW)  # seat 1 draws A♠
    game.apply(discard("2C"))
    assert game.current_seat == 2
    game.apply(STOP)

    deciders = []
    script = [TAKE, discard("JD"), DRAW, discard("2H"), PASS]
    for act in script:
        assert game.hand_number == 1
        deciders.append(game.current_seat)
        if act in (DRAW, TAKE, PASS):
            assert game.legal_actions() == (DRAW, TAKE, PASS)
        game.apply(act)
    assert deciders == [3, 3, 0, 0, 1]
    assert game.hand_number == 2  # the showdown came right after seat 1's final turn

    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOP and result.ender == 2
    assert set(result.hands[3]) == cards_set("7C 8C 2C")  # took 2♣, discarded J♦
    assert set(result.hands[0]) == cards_set("3S 6H TD")  # drew 2♥ and let it go
    assert set(result.hands[1]) == cards_set("5D 9H AS")
    assert set(result.hands[2]) == cards_set("KS KH 4D")  # the stopper's hand is compared too
    hand_kinds = kinds(events_of_hand(game, 1))
    assert hand_kinds == [
        EventKind.DEAL,
        EventKind.DRAW,
        EventKind.DISCARD,  # seat 1
        EventKind.STOP,  # seat 2
        EventKind.TAKE,
        EventKind.DISCARD,  # seat 3
        EventKind.DRAW,
        EventKind.DISCARD,  # seat 0
        EventKind.PASS,  # seat 1
        EventKind.SHOWDOWN,
    ]


def test_the_stopper_can_lose() -> None:
    """A player who stops with the worst hand loses a token."""
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([losing_deck(3, 2, loser=0)]))
    stop_then_pass(game, dealer=2)
    result = game.hand_results[0]
    assert result.ender == 0 and result.loser == 0
    assert result.lives_after == (2, 3, 3)


# ----- empty stock --------------------------------------------------------------------------------

# Two players, dealer 1, and a short deck: 6 dealt, 2♣ face up, a stock of 4.
RECYCLE_DECK = arranged_deck(2, 1, {0: "AS KD 9C", 1: "QH JC 7D"}, discard="2C", stock="3D 4H 6S 8C", fill=False)


def test_empty_stock_at_the_start_of_a_normal_turn_recycles_all_discards_but_the_top() -> None:
    """Four draws empty the stock; before the next turn 2♣ 3♦ 4♥ 6♠ become the stock and 8♣ stays up."""
    game = StopTheBus(2, seed=3, first_dealer=1, decks=[RECYCLE_DECK])
    for drawn in ("3D", "4H", "6S", "8C"):
        game.apply(DRAW)
        assert game.observation(game.current_seat).drawn_card == card(drawn)
        game.apply(discard(drawn))
    assert game.hand_events[-2:] == (
        Event(EventKind.DISCARD, 1, seat=1, card=card("8C")),
        Event(EventKind.RECYCLE, 1, count=4),
    )
    view = game.observation(0)
    assert game.current_seat == 0 and view.legal_actions == (DRAW, TAKE, STOP)
    assert view.stock_count == 4 and view.discard_count == 1 and view.discard_top == card("8C")
    assert game.cards_in_play() == len(RECYCLE_DECK)

    drawn_after = []
    for _ in range(4):
        seat = game.current_seat
        game.apply(DRAW)
        drawn_after.append(game.observation(seat).drawn_card)
        game.apply(action(ActionKind.DISCARD, drawn_after[-1]))
    assert set(drawn_after) == cards_set("2C 3D 4H 6S")
    # The seeded shuffle documented in stop_the_bus.py: old discards oldest first, drawn from index 0.
    expected = shuffle(list(parse_cards("2C 3D 4H 6S")), SeedStream.derive(3, "hand", 1, "recycle"))
    assert drawn_after == expected


def test_empty_stock_at_the_start_of_a_final_turn_recycles_before_that_player_acts() -> None:
    """Seat 0 stops, seat 1 draws the last stock card; the stock is rebuilt before seat 2's final turn."""
    hands = {0: "AS KD 9C", 1: "QH JC 7D", 2: "TS 8H 6C"}
    deck = arranged_deck(3, 2, hands, discard="2C", stock="3D", fill=False)
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[deck])
    game.apply(STOP)
    game.apply(DRAW)
    game.apply(discard("JC"))
    assert game.hand_events[-1] == Event(EventKind.RECYCLE, 1, count=1)
    assert game.current_seat == 2 and game.phase is Phase.FINAL
    view = game.observation(2)
    assert view.stock_count == 1 and view.discard_top == card("JC")
    game.apply(DRAW)
    assert game.observation(2).drawn_card == card("2C")


def test_nothing_to_recycle_at_the_start_of_a_hand_means_an_immediate_showdown() -> None:
    """A deck of exactly 3 x 3 + 1 cards leaves no stock and nothing to recycle: compare at once."""
    hands = {0: "AS AH AD", 1: WORST, 2: "KS KH KD"}
    deck = arranged_deck(3, 2, hands, discard="9C", fill=False)
    assert len(deck) == 10
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([deck]))
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOCK_EXHAUSTED
    assert result.turns == 0 and result.ender is None
    assert result.loser == 1 and set(result.hands) == {0, 1, 2}
    assert kinds(events_of_hand(game, 1)) == [EventKind.DEAL, EventKind.STOCK_EXHAUSTED, EventKind.SHOWDOWN]
    assert game.hand_number == 2  # the game goes on with the next deal


def test_nothing_to_recycle_in_final_turns_skips_the_remaining_final_turns() -> None:
    """Seat 0 stops; seat 1 draws the only stock card and forfeits holding it; seats 2 and 3 never act."""
    # Stock plus discard pile can only shrink when cards leave play, so a
    # forfeit mid-turn is what leaves an empty stock and a one-card pile here.
    hands = {0: "AS AH AD", 1: "QH JC 7D", 2: "KS KH KD", 3: WORST}
    deck = arranged_deck(4, 3, hands, discard="2S", stock="3C", fill=False)
    game = StopTheBus(4, seed=1, first_dealer=3, decks=then_seeded([deck]))
    game.apply(STOP)
    game.apply(DRAW)
    game.forfeit(1, "test")
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOCK_EXHAUSTED and result.ender == 0
    assert set(result.hands) == {0, 2, 3} and result.loser == 3
    hand_kinds = kinds(events_of_hand(game, 1))
    assert hand_kinds == [
        EventKind.DEAL,
        EventKind.STOP,
        EventKind.DRAW,
        EventKind.FORFEIT,
        EventKind.STOCK_EXHAUSTED,
        EventKind.SHOWDOWN,
    ]


# ----- the showdown ---------------------------------------------------------------------------------


def test_only_the_single_worst_hand_loses_one_token() -> None:
    """Pair, flush, high card and run: only the high card loses, by exactly one token."""
    hands = {0: "9S 9D 4C", 1: "2H 7H JH", 2: "KC 8D 3S", 3: "5C 6D 7S"}
    game = StopTheBus(4, seed=1, first_dealer=3, decks=then_seeded([arranged_deck(4, 3, hands, discard="AC")]))
    stop_then_pass(game)
    result = game.hand_results[0]
    assert result.loser == 2
    assert result.lives_after == (3, 3, 2, 3)
    assert result.floating_after == (False, False, False, False)
    assert [e.seat for e in events_of_hand(game, 1) if e.kind is EventKind.SHOWDOWN] == [2]


# Each case: two hands of identical rank; the third names the one that loses by suit.
EXACT_TIES = [
    # High card K-9-5: K♥ beats K♣.
    ("KH 9C 5D", "KC 9D 5H", "KC 9D 5H"),
    # Pair of eights, 4 kicker: each hand's best eight decides (8♠ over 8♥), not its first one.
    ("8C 8S 4D", "8H 8D 4C", "8H 8D 4C"),
    # Run A-2-3: the ace is the highest-ranked card, so A♦ loses to A♥ despite the 3♠.
    ("AH 2C 3D", "AD 2H 3S", "AD 2H 3S"),
    # Flush Q-10-6: spades over clubs.
    ("QS TS 6S", "QC TC 6C", "QC TC 6C"),
]


@pytest.mark.parametrize("swap", [False, True], ids=["in-order", "swapped"])
@pytest.mark.parametrize(("first", "second", "loser_hand"), EXACT_TIES)
def test_suit_breaks_an_exact_tie_for_worst(first: str, second: str, loser_hand: str, swap: bool) -> None:
    """Two identical ranks at the bottom: the hand whose highest-ranked card has the lower suit loses."""
    if swap:
        first, second = second, first
    # Seat 2's prial of jacks puts the tied pair at the bottom; no tie case uses a jack or 2♠.
    hands = {0: first, 1: second, 2: "JC JD JS"}
    assert hand_rank(parse_cards(first))[:2] == hand_rank(parse_cards(second))[:2]
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([arranged_deck(3, 2, hands, discard="2S")]))
    stop_then_pass(game)
    expected_loser = 0 if cards_set(first) == cards_set(loser_hand) else 1
    assert game.hand_results[0].loser == expected_loser


# ----- lives, floating, elimination, the winner ----------------------------------------------------


def test_third_loss_floats_and_a_loss_while_floating_eliminates() -> None:
    """Seat 2 loses four hands: 2, 1, then 0 tokens floating (still dealt in), then out."""
    # Nobody is eliminated before hand 4, so the deal moves left each time: dealers 0, 1, 2, 0.
    dealers = [0, 1, 2, 0]
    game = StopTheBus(3, seed=1, first_dealer=0, decks=then_seeded([losing_deck(3, d, loser=2) for d in dealers]))
    expected = [(2, False), (1, False), (0, True)]
    for dealer, (lives, floating) in zip(dealers, expected, strict=False):
        stop_then_pass(game, dealer)
        result = game.hand_results[-1]
        assert result.loser == 2 and result.lives_after[2] == lives and result.floating_after[2] is floating
        assert result.eliminated == ()
        assert game.in_game[2]
    # Floating: still playing, dealt three cards in hand 4.
    assert game.observation(2).in_hand[2] and len(game.observation(2).hand) == 3
    stop_then_pass(game, dealers[3])
    result = game.hand_results[-1]
    assert result.loser == 2 and result.eliminated == (2,)
    assert not game.in_game[2]
    assert Event(EventKind.ELIMINATED, 4, seat=2) in game.events
    assert not game.is_over
    assert game.observation(2).hand == () and not game.observation(2).in_hand[2]


def test_last_survivor_wins_and_placements_reverse_the_eliminations() -> None:
    """Seat 2 goes out first, then seat 0: seat 1 wins, seat 0 is second, seat 2 third."""
    # Hands 1-4 (dealers 0, 1, 2, 0) eliminate seat 2; the deal then moves to seat 1
    # and alternates 1, 0, 1, 0 between the two left, skipping seat 2.
    plan = [(0, 2), (1, 2), (2, 2), (0, 2), (1, 0), (0, 0), (1, 0), (0, 0)]
    decks = []
    for number, (dealer, loser) in enumerate(plan, start=1):
        seats = [0, 1, 2] if number <= 4 else [0, 1]
        decks.append(losing_deck(3, dealer, loser, seats))
    game = StopTheBus(3, seed=1, first_dealer=0, decks=decks)
    for dealer, _ in plan:
        stop_then_pass(game, dealer)
    assert game.is_over and game.current_seat is None
    result = game.result()
    assert result.winner == 1
    assert result.placements == (1, 0, 2)
    assert result.hands_played == 8 and result.forfeited == ()
    assert game.events[-1] == Event(EventKind.GAME_OVER, 8, seat=1)


# ----- the next deal ---------------------------------------------------------------------------------


def test_deal_moves_one_seat_left_each_hand() -> None:
    """With no elimination the dealers go 2, 3, 0 and the first turn follows each dealer's left."""
    decks = [losing_deck(4, d, loser=(d + 2) % 4) for d in (2, 3, 0)]
    game = StopTheBus(4, seed=1, first_dealer=2, decks=then_seeded(decks))
    for dealer in (2, 3, 0):
        assert game.current_seat == (dealer + 1) % 4
        assert game.hand_events[0] == Event(EventKind.DEAL, game.hand_number, seat=dealer, card=card("4S"))
        stop_then_pass(game, dealer)
    assert game.dealer == 1


def test_when_the_next_dealer_was_just_eliminated_the_dealer_deals_again() -> None:
    """Seat 1 is eliminated in a hand dealt by seat 0: seat 0 deals again, seat 2 keeps the first turn."""
    # Seat 1 loses hands 1-4 (dealers 1, 2, 3, 0) and is out after hand 4.
    # Then seat 0 deals again; later deals skip seat 1: 0 -> 2 -> 3 -> 0 -> 2.
    plan = [(1, 1), (2, 1), (3, 1), (0, 1), (0, 3), (2, 3), (3, 0), (0, 0), (2, 0)]
    decks = []
    for number, (dealer, loser) in enumerate(plan, start=1):
        seats = [0, 1, 2, 3] if number <= 4 else [0, 2, 3]
        decks.append(losing_deck(4, dealer, loser, seats))
    game = StopTheBus(4, seed=1, first_dealer=1, decks=then_seeded(decks))
    for number, (dealer, _) in enumerate(plan, start=1):
        assert game.hand_number == number
        if number == 5:
            assert game.hand_results[-1].eliminated == (1,)
            assert game.dealer == 0 and game.current_seat == 2
        if number == 6:
            assert game.dealer == 2 and game.current_seat == 3  # seat 1, out since hand 4, is skipped
        stop_then_pass(game, dealer)


def test_dealer_who_forfeits_passes_the_deal_left() -> None:
    """The dealer leaving alone does not change the rotation: the seat on its left deals next."""
    game = StopTheBus(4, seed=1, first_dealer=0, decks=then_seeded([losing_deck(4, 0, loser=3)]))
    game.forfeit(0, "test")
    stop_then_pass(game)
    assert game.dealer == 1 and game.current_seat == 2


def test_dealer_forfeits_and_next_dealer_eliminated_in_the_same_hand() -> None:
    """Dealer 0 forfeits and seat 1 is eliminated: seat 3 deals so that seat 2 keeps the first turn."""
    # Seat 1 loses hands 1-3 (dealers 1, 2, 3) and floats; in hand 4 (dealer 0)
    # seat 0 forfeits and seat 1 loses again. Had the deal simply moved left,
    # seat 1 would deal and seat 2 would start: seat 2 must still start.
    decks = [losing_deck(4, d, loser=1) for d in (1, 2, 3, 0)]
    game = StopTheBus(4, seed=1, first_dealer=1, decks=then_seeded(decks))
    for dealer in (1, 2, 3):
        stop_then_pass(game, dealer)
    assert game.floating[1]
    assert game.dealer == 0 and game.current_seat == 1
    game.forfeit(0, "test")
    stop_then_pass(game)
    assert game.hand_results[-1].eliminated == (0, 1)
    assert game.hand_number == 5
    assert game.dealer == 3 and game.current_seat == 2


# ----- the turn limit -------------------------------------------------------------------------------


def test_turn_limit_ends_the_hand_with_an_immediate_showdown() -> None:
    """With a limit of 3, draw+discard, take+discard and draw+discard end the hand: no stop, so no final turns."""
    hands = {0: "AS AH AD", 1: "KS KH KD", 2: WORST}
    deck = arranged_deck(3, 2, hands, discard="4C", stock="9D 8S")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([deck]), turn_limit=3)
    game.apply(DRAW)
    assert game.turns_this_hand == 0  # half a turn is not a turn
    game.apply(discard("9D"))
    assert game.turns_this_hand == 1
    game.apply(TAKE)
    game.apply(discard("KS"))
    assert game.turns_this_hand == 2 and game.hand_number == 1
    game.apply(DRAW)
    game.apply(discard("8S"))
    result = game.hand_results[0]
    assert result.ended_by is EndReason.TURN_LIMIT and result.turns == 3 and result.ender is None
    assert result.loser == 2
    assert kinds(events_of_hand(game, 1))[-2:] == [EventKind.TURN_LIMIT, EventKind.SHOWDOWN]
    assert Event(EventKind.TURN_LIMIT, 1, count=3) in game.events
    assert game.hand_number == 2


def test_a_stop_on_the_limit_th_turn_still_gives_every_other_player_a_final_turn() -> None:
    """RULES.md's example: 3 players, dealer 2, turn_limit=1; seat 0 stops on the first turn.

    The stop is a normal turn, so it is allowed on the limit-th turn; seats 1 and
    2 each still get their one final turn, past the limit, and the hand ends by
    the stop, not by the limit.
    """
    deck = arranged_deck(3, 2, {0: "AS AH AD", 1: "KS KH KD", 2: WORST}, discard="4C", stock="9D 8S")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([deck]), turn_limit=1)
    assert game.legal_actions() == (DRAW, TAKE, STOP)  # the limit-th turn is a normal turn
    game.apply(STOP)
    # Past the limit: the observation counts the stop, and says the final turns have begun.
    view = game.observation(1)
    assert (view.phase, view.ender, view.current_seat) == (Phase.FINAL, 0, 1)
    assert (view.turns_this_hand, view.turn_limit) == (1, 1)
    assert view.legal_actions == (DRAW, TAKE, PASS)
    game.apply(DRAW)
    game.apply(discard("9D"))
    view = game.observation(2)
    assert (view.phase, view.current_seat, view.turns_this_hand) == (Phase.FINAL, 2, 2)
    assert game.hand_number == 1 and view.legal_actions == (DRAW, TAKE, PASS)
    game.apply(PASS)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOP and result.ender == 0 and result.turns == 3
    assert result.loser == 2
    assert [(event.kind, event.seat) for event in events_of_hand(game, 1)][1:] == [
        (EventKind.STOP, 0),
        (EventKind.DRAW, 1),
        (EventKind.DISCARD, 1),
        (EventKind.PASS, 2),
        (EventKind.SHOWDOWN, 2),
    ]
    assert game.hand_number == 2 and game.turns_this_hand == 0  # the count starts afresh


def test_a_stop_on_a_later_limit_th_turn_gives_the_players_before_the_stopper_their_final_turns() -> None:
    """turn_limit=3: seats 0 and 1 draw, seat 2 stops on the third (limit-th) turn; seats 0 and 1 play again."""
    deck = arranged_deck(3, 2, {0: "AS AH AD", 1: "KS KH KD", 2: WORST}, discard="4C", stock="9D 8S 7S 6S")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([deck]), turn_limit=3)
    for drawn in ("9D", "8S"):
        game.apply(DRAW)
        game.apply(discard(drawn))
    assert game.current_seat == 2 and game.turns_this_hand == 2 and STOP in game.legal_actions()
    game.apply(STOP)
    assert (game.phase, game.current_seat, game.turns_this_hand) == (Phase.FINAL, 0, 3)
    game.apply(DRAW)
    game.apply(discard("7S"))
    assert (game.current_seat, game.turns_this_hand) == (1, 4)
    game.apply(PASS)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOP and result.ender == 2 and result.turns == 5
    assert EventKind.TURN_LIMIT not in kinds(events_of_hand(game, 1))


def test_a_limit_passed_in_final_turns_does_not_cut_them_short() -> None:
    """turn_limit=2, 4 players: seat 0 stops on turn 1; seats 1, 2 and 3 all play their final turns (turns 2-4)."""
    game = StopTheBus(4, seed=1, first_dealer=3, decks=then_seeded([losing_deck(4, 3, loser=3)]), turn_limit=2)
    game.apply(STOP)
    for seat in (1, 2, 3):
        assert game.current_seat == seat and game.phase is Phase.FINAL
        game.apply(PASS)
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOP and result.turns == 4 and result.loser == 3
    assert [event.seat for event in events_of_hand(game, 1) if event.kind is EventKind.PASS] == [1, 2, 3]


def test_a_forfeit_is_not_a_turn() -> None:
    """turn_limit=2: seat 0 plays, seat 1 draws then forfeits (no turn), so seat 2's turn is the second and last."""
    hands = {0: "AS AH AD", 1: "KS KH KD", 2: WORST}
    deck = arranged_deck(3, 2, hands, discard="4C", stock="9D 8S 7S")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([deck]), turn_limit=2)
    game.apply(DRAW)
    game.apply(discard("9D"))
    game.apply(DRAW)
    game.forfeit(1, "timed out")
    assert game.turns_this_hand == 1 and game.current_seat == 2
    assert game.observation(2).turns_this_hand == 1
    game.apply(DRAW)
    game.apply(discard("7S"))
    result = game.hand_results[0]
    assert result.ended_by is EndReason.TURN_LIMIT and result.turns == 2 and result.loser == 2


# ----- players leaving (forfeit) ----------------------------------------------------------------------


def test_forfeit_removes_the_seat_and_its_cards_at_once() -> None:
    """Seat 1 leaves before its turn: cards out of play, no more turns, not compared though it held the worst."""
    hands = {0: "9S 9D 4C", 1: WORST, 2: "KC 8D 3S"}
    game = StopTheBus(3, seed=1, first_dealer=2, decks=then_seeded([arranged_deck(3, 2, hands, discard="AC")]))
    game.forfeit(1, "timed out")
    assert game.events[-1] == Event(EventKind.FORFEIT, 1, seat=1)
    assert game.cards_in_play() == 52
    assert game.observation(1).hand == ()
    assert not game.in_game[1] and not game.in_hand[1]
    assert game.current_seat == 0
    game.apply(DRAW)
    game.apply(discard(str(game.observation(0).drawn_card)))
    assert game.current_seat == 2  # seat 1 is skipped
    game.apply(STOP)
    assert game.current_seat == 0
    game.apply(PASS)
    result = game.hand_results[0]
    assert set(result.hands) == {0, 2}
    assert result.loser == 2  # K-8-3 is worse than the nines; the forfeiter's 5-3-2 is not compared
    assert game.dealer == 0 and game.current_seat == 2  # hand 2: dealt by 0, seat 1 skipped
    assert not game.in_hand[1] and game.observation(1).hand == ()


def test_forfeiter_ranks_below_everyone_still_in_the_game() -> None:
    """Seat 1 forfeits in hand 1; seat 0 then loses four hands; seat 0 still places above seat 1."""
    # After the forfeit the deal goes 2 -> 0 -> 2 -> 0, skipping seat 1.
    first = arranged_deck(3, 2, {0: WORST, 1: "2D 3H 6C", 2: "AS AH AD"}, discard="KC")
    decks = [first] + [losing_deck(3, d, loser=0, seats=[0, 2]) for d in (0, 2, 0)]
    game = StopTheBus(3, seed=1, first_dealer=2, decks=decks)
    game.forfeit(1, "crashed")
    for dealer in (2, 0, 2, 0):
        stop_then_pass(game, dealer)
    result = game.result()
    assert result.placements == (2, 0, 1)
    assert result.forfeited == (1,)


def test_forfeit_mid_turn_holding_four_cards() -> None:
    """Seat 0 draws then forfeits: its four cards leave play and seat 1 starts a normal turn."""
    deck = arranged_deck(3, 2, {0: "9S 9D 4C", 1: WORST, 2: "KC 8D 3S"}, discard="AC", stock="6H 7H")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[deck])
    game.apply(DRAW)
    game.forfeit(0, "timed out")
    assert game.cards_in_play() == 52
    assert game.current_seat == 1
    view = game.observation(1)
    assert view.legal_actions == (DRAW, TAKE, STOP) and view.drawn_card is None and view.discard_top == card("AC")
    game.apply(DRAW)
    # 6♥ left play with seat 0; the stock goes on with 7♥.
    assert game.observation(1).drawn_card == card("7H")


def test_final_turns_still_run_when_the_stopper_forfeits() -> None:
    """Seat 0 stops then leaves: seats 1, 2 and 3 still play final turns and seat 0 is not compared."""
    hands = {0: WORST, 1: "AS AH AD", 2: "KS KH KD", 3: "9C 6D 4H"}
    game = StopTheBus(4, seed=1, first_dealer=3, decks=then_seeded([arranged_deck(4, 3, hands, discard="QC")]))
    game.apply(STOP)
    game.forfeit(0, "crashed")
    deciders = []
    while game.hand_number == 1:
        deciders.append(game.current_seat)
        game.apply(PASS)
    assert deciders == [1, 2, 3]
    result = game.hand_results[0]
    assert result.ended_by is EndReason.STOP and result.ender == 0
    assert set(result.hands) == {1, 2, 3} and result.loser == 3


def test_one_player_left_after_a_forfeit_wins_at_once() -> None:
    """Two players: seat 1 leaves and seat 0 wins without a showdown."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.forfeit(1, "crashed")
    assert game.is_over
    assert kinds(game.events) == [EventKind.DEAL, EventKind.FORFEIT, EventKind.GAME_OVER]
    assert game.events[-1].seat == 0
    result = game.hand_results[0]
    assert result.ended_by is EndReason.FORFEIT and result.loser is None
    assert game.result().placements == (0, 1)


def test_placements_after_two_forfeits_follow_their_order() -> None:
    """Three players: seat 2 leaves, then seat 0: seat 1 wins, seat 0 second, seat 2 last."""
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[STRIDED_DECK])
    game.forfeit(2, "crashed")
    assert not game.is_over
    game.forfeit(0, "crashed")
    assert game.is_over
    assert game.result().placements == (1, 0, 2)
    assert game.result().forfeited == (2, 0)


# ----- the public record --------------------------------------------------------------------------


def test_event_record_and_hand_result_of_a_final_hand() -> None:
    """Hand 4 of a two-player game where seat 1 floats: every event, then the HandResult."""
    # Hands 1-3 (dealers 0, 1, 0) leave seat 1 floating; seat 1 deals hand 4.
    decks = [losing_deck(2, d, loser=1) for d in (0, 1, 0)]
    decks.append(arranged_deck(2, 1, {0: "QS QH 4C", 1: "2D 6C 9H"}, discard="7S", stock="8D TC"))
    game = StopTheBus(2, seed=1, first_dealer=0, decks=decks)
    for dealer in (0, 1, 0):
        stop_then_pass(game, dealer)
    third = game.hand_results[2]
    assert third.lives_after == (3, 0) and third.floating_after == (False, True) and third.eliminated == ()

    for act in (DRAW, discard("4C"), TAKE, discard("9H"), STOP, PASS):
        game.apply(act)
    assert game.hand_events == (
        Event(EventKind.DEAL, 4, seat=1, card=card("7S")),
        Event(EventKind.DRAW, 4, seat=0),  # the drawn 8♦ stays hidden
        Event(EventKind.DISCARD, 4, seat=0, card=card("4C")),
        Event(EventKind.TAKE, 4, seat=1, card=card("4C")),
        Event(EventKind.DISCARD, 4, seat=1, card=card("9H")),
        Event(EventKind.STOP, 4, seat=0),
        Event(EventKind.PASS, 4, seat=1),
        Event(EventKind.SHOWDOWN, 4, seat=1),
        Event(EventKind.ELIMINATED, 4, seat=1),
        Event(EventKind.GAME_OVER, 4, seat=0),
    )
    result = game.hand_results[3]
    assert result.hand_number == 4 and result.dealer == 1 and result.turns == 4
    assert result.ended_by is EndReason.STOP and result.ender == 0
    assert {seat: set(cards) for seat, cards in result.hands.items()} == {
        0: cards_set("QS QH 8D"),
        1: cards_set("2D 4C 6C"),
    }
    assert result.ranks == {seat: hand_rank(cards) for seat, cards in result.hands.items()}
    assert result.ranks[0].category is Category.PAIR and result.ranks[1].category is Category.HIGH_CARD
    assert result.loser == 1
    assert result.lives_after[0] == 3 and result.floating_after[0] is False
    assert result.eliminated == (1,)
    assert game.result().placements == (0, 1)


def _play_scripted(seed: int, num_players: int = 3, check=None) -> StopTheBus:
    """Play a whole seeded game with a fixed, state-driven choice of action, calling ``check`` after each."""
    game = StopTheBus(num_players, seed=seed, turn_limit=15)
    for _ in range(5000):
        if game.is_over:
            return game
        legal = game.legal_actions()
        game.apply(legal[(game.hand_number * 7 + game.turns_this_hand) % len(legal)])
        if check is not None:
            check(game)
    raise AssertionError("the scripted game did not finish")


def _check_invariants(game: StopTheBus) -> None:
    """Three cards per player between turns, four for the player mid-turn, and 52 cards accounted for."""
    assert game.cards_in_play() == 52
    if game.is_over:
        return
    mid_turn = game.observation(game.current_seat).drawn_card is not None
    for seat in range(game.num_players):
        expected = 0 if not game.in_hand[seat] else 4 if mid_turn and seat == game.current_seat else 3
        assert len(game.observation(seat).hand) == expected


@pytest.mark.parametrize("num_players", [2, 5, 9])
def test_scripted_play_keeps_the_card_counts_and_one_loser_per_showdown(num_players: int) -> None:
    """Whole seeded games: card counts hold after every decision, and each showdown has one loser."""
    game = _play_scripted(num_players * 101, num_players, check=_check_invariants)
    for result in game.hand_results:
        assert result.loser in result.hands
        worst = min(result.ranks.values())
        assert [seat for seat, rank in result.ranks.items() if rank == worst] == [result.loser]
        showdowns = [e for e in game.events if e.hand_number == result.hand_number and e.kind is EventKind.SHOWDOWN]
        assert [e.seat for e in showdowns] == [result.loser]
    assert len(game.result().placements) == num_players


def test_same_seed_gives_the_identical_record() -> None:
    """Two games with one seed and the same choices produce the same events, hands and placements."""
    first, second = _play_scripted(11), _play_scripted(11)
    assert first.events == second.events
    assert first.hand_results == second.hand_results
    assert first.result() == second.result()
    assert _play_scripted(12).events != first.events  # the seed does matter


def test_no_action_after_the_game_is_over() -> None:
    """Once the game is over, apply, check_action and forfeit raise GameOverError; nothing is legal."""
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[TWO_SEAT_DECK])
    game.forfeit(1, "crashed")
    assert game.legal_actions() == () and game.current_seat is None
    assert not game.is_legal(DRAW)
    for act in (DRAW, TAKE, STOP, PASS, discard("QS")):
        with pytest.raises(GameOverError):
            game.apply(act)
        with pytest.raises(GameOverError):
            game.check_action(act)
    with pytest.raises(GameOverError):
        game.forfeit(0, "late")
