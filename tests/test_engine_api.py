"""The engine's API for people who build on it: the whole-table views, decks per hand, and values refused by type."""

from __future__ import annotations

import random

import pytest

from referee.common.errors import (
    CardParseError,
    DecksExhaustedError,
    GameArgumentError,
    IllegalActionError,
    InvalidHandError,
    MalformedActionError,
    RefereeError,
)
from referee.engine.cards import DECK, Card, parse_cards
from referee.engine.games import BastardBrag, StopTheBus, game_class
from referee.engine.games.decks import seeded_deck
from referee.engine.games.game import DRAW, PASS, STOP, Action, ActionKind, EndReason, Game, Phase, action
from referee.engine.hands import hand_rank

# Three players, dealer 2: the deal goes 0, 1, 2 for three rounds, so deck positions 0-8 are the hands.
THREE_SEAT_HEAD = "AS KS QS AH KH QH AD KD QD"


def three_seat_deck(after: str) -> list[Card]:
    """A Stop the Bus deck for 3 players, dealer 2: prials of aces, kings, queens, then ``after`` (discard, stock)."""
    head = list(parse_cards(f"{THREE_SEAT_HEAD} {after}"))
    return head + [card for card in DECK if card not in head]


def brag_game() -> BastardBrag:
    """Bastard Brag, 3 players, dealer 2, the canonical deck: centre slots hold deck positions 3, 7 and 11."""
    return BastardBrag(3, seed=1, first_dealer=2, decks=[list(DECK)])


# ----- the whole table, for the referee and tools ----------------------------------------------


def test_stock_top_first_lists_the_next_draws_in_order_and_is_a_copy() -> None:
    deck = three_seat_deck("2C 3C 4C 5C")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[deck])
    stock = game.stock_top_first()
    assert isinstance(stock, tuple) and stock == tuple(deck[10:]) and len(stock) == 42
    assert game.discard_pile_top_first() == (Card.parse("2C"),)
    game.apply(DRAW)
    assert game.observation(0).drawn_card == stock[0]  # the top is the next card drawn
    assert game.stock_top_first() == stock[1:]
    game.apply(action(ActionKind.DISCARD, stock[0]))
    assert game.discard_pile_top_first() == (Card.parse("3C"), Card.parse("2C"))
    assert game.observation(1).discard_top == game.discard_pile_top_first()[0]


def test_stock_top_first_after_a_recycle_is_the_order_the_new_stock_is_drawn_in() -> None:
    """A 13-card deck for two players: a stock of six, drawn out, then the discards recycled."""
    head = list(parse_cards("AS KS AH KH AD KD 2C 3C 4C 5C 6C 7C 8C"))
    game = StopTheBus(2, seed=4, first_dealer=1, decks=[head])
    for _ in range(6):
        drawn = game.stock_top_first()[0]
        game.apply(DRAW)
        game.apply(action(ActionKind.DISCARD, drawn))
    assert game.hand_events[-1].kind.value == "recycle"
    recycled = game.stock_top_first()
    assert sorted(recycled) == sorted(parse_cards("2C 3C 4C 5C 6C 7C")) and game.discard_pile_top_first() == (
        Card.parse("8C"),
    )
    for expected in recycled[:3]:
        seat = game.current_seat
        game.apply(DRAW)
        assert game.observation(seat).drawn_card == expected
        game.apply(action(ActionKind.DISCARD, expected))


def test_centre_by_slot_shows_every_centre_card_which_observations_hide() -> None:
    game = brag_game()
    assert game.centre_by_slot() == (DECK[3], DECK[7], DECK[11])
    assert [game.observation(seat).centre for seat in range(3)] == [(None, None, DECK[11])] * 3
    given = min(game.hands[0])
    game.apply(action(ActionKind.EXCHANGE, given, 0))  # seat 0 lays its lowest card face down in slot 0
    assert game.centre_by_slot() == (given, DECK[7], DECK[11])
    assert game.observation(0).centre == (given, None, DECK[11])
    assert game.observation(1).centre == (None, None, DECK[11])


# ----- decks for each hand --------------------------------------------------------------------


def play_one_hand(game: StopTheBus) -> None:
    """The first player stops and everyone else passes."""
    hand_number = game.hand_number
    game.apply(STOP)
    while game.hand_number == hand_number and not game.is_over:
        game.apply(PASS)


def test_a_fixed_list_of_decks_that_runs_out_raises_naming_the_hand_and_the_count() -> None:
    deck = three_seat_deck("2C")
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[deck])
    with pytest.raises(DecksExhaustedError) as caught:
        play_one_hand(game)
    error = caught.value
    assert isinstance(error, GameArgumentError) and isinstance(error, RefereeError)
    assert (error.hand_number, error.decks_given) == (2, 1)
    message = str(error)
    assert "hand 2 needs a deck" in message and "1 deck was given" in message and "callable" in message
    # Hand 1 ended before hand 2 needed its deck: its result is there, nothing of hand 2 was dealt.
    assert len(game.hand_results) == 1 and game.hand_results[0].ended_by is EndReason.STOP
    assert game.hand_number == 1


@pytest.mark.parametrize("kind_of_game", [StopTheBus, BastardBrag], ids=lambda value: value.name)
def test_a_hand_that_ends_as_its_last_player_forfeits_leaves_nobody_on_turn_when_no_deck_follows(
    kind_of_game: type[Game],
) -> None:
    """The table a hand ended on (a replay shows it, dealing no further) is whole: nobody is on turn."""
    game = kind_of_game(3, seed=4, decks=[seeded_deck(4, 1)])
    while game.phase is not Phase.FINAL:
        legal = game.legal_actions()
        ending = [action for action in legal if action.kind in (ActionKind.STOP, ActionKind.KNOCK)]
        game.apply(ending[0] if ending else legal[0])
    while game.final_queue:
        game.apply(game.legal_actions()[0])
    last = game.current_seat
    assert last is not None and last != game.ender
    with pytest.raises(DecksExhaustedError):
        game.forfeit(last)  # its final turn was the hand's last: the showdown, then no deck for hand 2
    assert len(game.hand_results) == 1 and game.current_seat is None
    views = [game.observation(seat) for seat in range(3)]  # the forfeited seat, on turn with no cards, raised
    assert all(view.legal_actions == () for view in views)


def test_two_fixed_decks_serve_exactly_two_hands() -> None:
    decks = [three_seat_deck("2C"), list(reversed(three_seat_deck("2C")))]
    game = StopTheBus(3, seed=1, first_dealer=2, decks=decks)
    play_one_hand(game)
    assert game.hand_number == 2 and game.stock_top_first() == tuple(decks[1][10:])
    with pytest.raises(DecksExhaustedError, match="hand 3 needs a deck, but 2 decks were given"):
        play_one_hand(game)


def test_a_callable_gives_each_hand_its_deck_and_none_means_the_seeded_deck() -> None:
    asked: list[int] = []
    fixed = three_seat_deck("2C")

    def decks(hand_number: int) -> list[Card] | None:
        asked.append(hand_number)
        return fixed if hand_number == 2 else None

    game = StopTheBus(3, seed=9, first_dealer=2, decks=decks)
    seeded = StopTheBus(3, seed=9, first_dealer=2)
    assert game.stock_top_first() == seeded.stock_top_first() == tuple(seeded_deck(9, 1)[10:])
    play_one_hand(game)
    assert game.dealer == 0  # the deal moved left: seat 1 plays first, seat 0 deals
    assert set(game.observation(1).hand) == set(parse_cards("AS AH AD"))  # deck positions 0, 3, 6 went to seat 1
    play_one_hand(game)
    assert game.stock_top_first() == tuple(seeded_deck(9, 3)[10:])
    assert asked == [1, 2, 3]  # once per hand, in order


def test_a_callable_deck_is_checked_as_its_hand_starts() -> None:
    def decks(hand_number: int) -> list[Card] | None:
        return None if hand_number == 1 else [*DECK[:20], DECK[5]]

    game = StopTheBus(3, seed=9, first_dealer=2, decks=decks)
    with pytest.raises(GameArgumentError, match=r"decks\(2\): card 3D appears more than once"):
        play_one_hand(game)
    short = StopTheBus(3, seed=9, first_dealer=2, decks=lambda hand_number: None if hand_number == 1 else DECK[:9])
    with pytest.raises(GameArgumentError, match=r"decks\(2\): the deck has 9 cards; 3 players need at least 10"):
        play_one_hand(short)


@pytest.mark.parametrize(
    ("decks", "message"),
    [
        ("AS KS QS", "a list of decks .* or a callable hand_number -> deck, got str"),
        ([list(DECK), "AS KS"], r"decks\[1\] \(hand 2\): a deck is a sequence of Card"),
        ([["AS", "KS"]], r"decks\[0\] \(hand 1\): position 0 holds 'AS' \(str\), not a Card"),
        ([[(14, 3), *DECK[:20]]], r"position 0 holds \(14, 3\) \(tuple\), not a Card"),
        ([[Card(15, 0), *DECK[:20]]], r"position 0 holds .*not a Card of the deck"),
        ([[DECK[0], DECK[1], DECK[0]]], "card 2C appears more than once"),
        ([DECK[:9]], r"decks\[0\] \(hand 1\): the deck has 9 cards; 3 players need at least 10"),
        ([], "hand 1 needs a deck, but 0 decks were given"),
    ],
)
def test_bad_decks_are_refused_with_where_and_what(decks: object, message: str) -> None:
    with pytest.raises(GameArgumentError, match=message):
        StopTheBus(3, seed=1, first_dealer=2, decks=decks)  # type: ignore[arg-type]


# ----- actions that are no actions -------------------------------------------------------------


def test_a_slot_that_is_not_an_int_is_refused_by_apply_check_action_and_is_legal() -> None:
    """1.0 and True compare equal to 1, so they used to pass the check (1.0 then raised TypeError)."""
    for bad_slot in (1.0, True, "1", None):
        game = brag_game()
        given = min(game.hands[0])
        bad = Action(ActionKind.EXCHANGE, given, bad_slot)
        events = list(game.events)
        for check in (game.apply, game.check_action, game.is_legal):
            with pytest.raises(MalformedActionError) as caught:
                check(bad)
            assert isinstance(caught.value, IllegalActionError) and caught.value.seat == 0
            message = str(caught.value)
            assert repr(bad_slot) in message
            assert ("0, 1 or 2" in message) if bad_slot is not None else ("needs a centre slot" in message)
        assert game.events == events and game.current_seat == 0 and game.centre_by_slot()[1] == DECK[7]
        game.apply(Action(ActionKind.EXCHANGE, given, 1))  # the same action, well formed, made anew
        assert game.centre_by_slot()[1] == given


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (Action(ActionKind.EXCHANGE, DECK[0], 3), "the centre slot must be 0, 1 or 2, got 3"),
        (Action(ActionKind.EXCHANGE, "2C", 0), r"card must be a Card of the deck .*got '2C' \(str\)"),
        (Action(ActionKind.EXCHANGE, (2, 0), 0), r"got \(2, 0\) \(tuple\)"),
        (Action(ActionKind.EXCHANGE, Card(2.0, 0), 0), r"card must be a Card of the deck"),
        (Action(ActionKind.EXCHANGE_ALL, Card(15, 1)), r"card must be a Card of the deck"),
        (Action("knock"), r"kind must be an ActionKind \(draw, take, .*knock\), got 'knock' \(str\)"),
        (Action(ActionKind.EXCHANGE_ALL), "'exchange-all' needs a card: it is written 'exchange-all CARD'"),
        (Action(ActionKind.KNOCK, DECK[0]), "'knock' takes no card"),
        (Action(ActionKind.EXCHANGE_ALL, DECK[0], 2), "'exchange-all' takes no slot"),
        ((ActionKind.KNOCK, None, None), "an action is an Action .*not tuple"),
        ("knock", "an action is an Action .*not str"),
    ],
)
def test_malformed_actions_are_refused_naming_the_bad_value(bad: object, message: str) -> None:
    game = brag_game()
    for check in (game.apply, game.check_action, game.is_legal):
        with pytest.raises(MalformedActionError, match=message):
            check(bad)  # type: ignore[arg-type]
    assert game.turns_this_hand == 0 and len(game.events) == 1


def test_the_action_factory_refuses_what_is_no_action() -> None:
    assert action(ActionKind.EXCHANGE, Card(14, 3), 1) is action(ActionKind.EXCHANGE, Card.parse("AS"), 1)
    for kind, card, slot in [
        (ActionKind.EXCHANGE, DECK[0], 1.0),
        (ActionKind.EXCHANGE, DECK[0], True),
        (ActionKind.DISCARD, "AS", None),
        (ActionKind.DISCARD, ["AS"], None),  # unhashable
        ("draw", None, None),
        (ActionKind.DISCARD, None, None),
    ]:
        with pytest.raises(MalformedActionError):
            action(kind, card, slot)  # type: ignore[arg-type]


def test_a_well_formed_action_that_is_not_legal_is_still_plainly_illegal() -> None:
    game = StopTheBus(3, seed=1, first_dealer=2, decks=[three_seat_deck("2C")])
    assert not game.is_legal(PASS)
    with pytest.raises(IllegalActionError) as caught:
        game.apply(PASS)
    assert not isinstance(caught.value, MalformedActionError)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty action"),
        ("jump", "unknown action 'jump'"),
        ("discard", "'discard' is written 'discard CARD'"),
        ("discard ZZ", "'ZZ' is not a card"),
        ("exchange AS 3", "centre slot must be 0, 1 or 2, got '3'"),
        ("exchange AS 1.0", "centre slot must be 0, 1 or 2, got '1.0'"),
    ],
)
def test_action_parse_refuses_bad_text_with_a_typed_error(text: str, message: str) -> None:
    with pytest.raises(MalformedActionError, match=message):
        Action.parse(text)


def test_action_parse_refuses_what_is_not_text() -> None:
    with pytest.raises(MalformedActionError, match="a str, not bytes"):
        Action.parse(b"draw")  # type: ignore[arg-type]


# ----- setup values and seats refused by type ----------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"num_players": 3.0}, r"num_players must be an int .* got 3.0 \(float\)"),
        ({"num_players": True}, r"num_players must be an int .* got True \(bool\)"),
        ({"num_players": 1}, "stop_the_bus is played by 2 to 9 players, not 1"),
        ({"seed": "7"}, r"seed must be an int .* got '7' \(str\)"),
        ({"seed": 1.5}, r"seed must be an int"),
        ({"first_dealer": 1.0}, r"first_dealer must be an int \(a seat 0..2, or None for a seeded choice\), got 1.0"),
        ({"first_dealer": True}, r"first_dealer must be an int .* got True \(bool\)"),
        ({"first_dealer": 3}, "first_dealer must be a seat 0..2, got 3"),
        ({"turn_limit": 0}, r"turn_limit must be at least 1 \(normal turns in a hand\), got 0"),
        ({"turn_limit": 1.5}, r"turn_limit must be an int .* got 1.5 \(float\)"),
        ({"turn_limit": "200"}, r"turn_limit must be an int .* got '200' \(str\)"),
    ],
)
def test_bad_setup_values_are_refused_with_what_is_allowed(arguments: dict, message: str) -> None:
    values = {"num_players": 3, "seed": 1, **arguments}
    with pytest.raises(GameArgumentError, match=message):
        StopTheBus(**values)


def test_seats_given_to_observation_and_forfeit_must_be_int_seats() -> None:
    game = StopTheBus(3, seed=1, first_dealer=2)
    for bad in (1.0, True, "1"):
        with pytest.raises(GameArgumentError, match=r"observation\(seat\) must be an int \(a seat 0..2\)"):
            game.observation(bad)  # type: ignore[arg-type]
        with pytest.raises(GameArgumentError, match=r"forfeit\(seat\) must be an int"):
            game.forfeit(bad)  # type: ignore[arg-type]
    with pytest.raises(GameArgumentError, match="seat must be 0..2, got 3"):
        game.observation(3)
    assert game.in_game == [True, True, True]
    game.forfeit(1)
    with pytest.raises(GameArgumentError, match="seat 1 is not in the game"):
        game.forfeit(1)


def test_place_of_takes_only_int_seats() -> None:
    game = StopTheBus(2, seed=1, first_dealer=1)
    game.forfeit(0)
    result = game.result()
    assert (result.place_of(1), result.place_of(0)) == (1, 2)
    for bad, message in ((1.0, r"must be an int \(a seat 0..1\), got 1.0 \(float\)"), (True, "got True"), (2, "got 2")):
        with pytest.raises(GameArgumentError, match=message):
            result.place_of(bad)  # type: ignore[arg-type]


def test_unknown_game_names_are_refused_with_the_games_there_are() -> None:
    for name in ("poker", None, ["stop_the_bus"]):
        with pytest.raises(GameArgumentError, match="the games are: stop_the_bus, bastard_brag"):
            game_class(name)  # type: ignore[arg-type]


def test_cards_and_hands_refuse_values_of_the_wrong_type() -> None:
    with pytest.raises(CardParseError, match="12 is not a card"):
        Card.parse(12)  # type: ignore[arg-type]
    with pytest.raises(CardParseError):
        parse_cards(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidHandError, match=r"a Brag hand holds Cards .*got 'AS' \(str\)"):
        hand_rank(["AS", "KS", "QS"])  # type: ignore[list-item]
    with pytest.raises(InvalidHandError, match="a Brag hand has 3 cards, got 2"):
        hand_rank(parse_cards("AS KS"))
    with pytest.raises(InvalidHandError, match="the same card twice"):
        hand_rank(parse_cards("AS AS KS"))


@pytest.mark.parametrize("game", [StopTheBus, BastardBrag])
def test_dealing_ahead_changes_nothing_the_game_does(game: type) -> None:
    import random

    picks, ahead_picks = random.Random(9), random.Random(9)
    plain, ahead = game(4, seed=77), game(4, seed=77)
    while not plain.is_over:
        ahead.deal_ahead()
        ahead.deal_ahead()  # twice: the second is a no-op
        assert ahead.legal_actions() == plain.legal_actions()
        plain.apply(picks.choice(plain.legal_actions()))
        ahead.apply(ahead_picks.choice(ahead.legal_actions()))
        assert ahead.hands == plain.hands and ahead.events == plain.events
    assert ahead.is_over and ahead.result() == plain.result()
    assert plain.hand_number > 2  # several hands were dealt from decks shuffled ahead
    given = game(3, seed=5, decks=[seeded_deck(1, 1)])
    given.deal_ahead()  # a game given its decks shuffles none
    assert given._next_deck is None


@pytest.mark.parametrize("game_class_", [StopTheBus, BastardBrag])
def test_the_default_action_is_legal_at_every_decision(game_class_: type[StopTheBus] | type[BastardBrag]) -> None:
    for seed in range(20):
        game = game_class_(game_class_.min_players + seed % 3, seed)
        picks = random.Random(seed)
        while not game.is_over:
            default = game.default_action()
            assert default in game.legal_actions(), (seed, str(default))
            game.apply(default if picks.random() < 0.3 else picks.choice(game.legal_actions()))
