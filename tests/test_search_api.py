"""The engine for search: ``Game.clone`` and ``StopTheBus.from_observation``.

A clone plays on exactly as its original and independently of it. A state
sampled from a seat's observation gives that observation back, holds the
deck once and plays on by the rules, in thousands of positions (every table
size, mid-turn, final turns, after recycles and forfeits); and its hidden
cards are uniform where the seat cannot tell them apart (a chi-square test,
which a sampler that favours one place fails).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from referee.common.errors import GameArgumentError
from referee.engine.cards import DECK, Card
from referee.engine.games import BastardBrag, Game, StopTheBus
from referee.engine.games.game import ActionKind, EventKind, Phase
from referee.engine.games.stop_the_bus import StopTheBusObservation
from referee.engine.seeding import SeedStream

ALL_SIZES = [(StopTheBus, players) for players in range(2, 10)] + [(BastardBrag, players) for players in range(3, 11)]
NO_ENDING = (ActionKind.STOP, ActionKind.KNOCK)


def random_step(game: Game, rng: random.Random, end_rate: float = 0.03, forfeit_rate: float = 0.0) -> None:
    """One move of a random player that seldom stops or knocks (so that hands run long and stocks recycle)."""
    if forfeit_rate and rng.random() < forfeit_rate and game.current_seat is not None and sum(game.in_game) > 2:
        game.forfeit(game.current_seat)
        return
    legal = game.legal_actions()
    quiet = [action for action in legal if action.kind not in NO_ENDING]
    game.apply(rng.choice(list(legal) if rng.random() < end_rate or not quiet else quiet))


def state_of(game: Game) -> dict[str, object]:
    """Everything a game holds, lists copied, for comparing before and after."""
    return {name: shown(value) for name, value in vars(game).items() if name != "_deck_source"}


def shown(value: object) -> str:
    if isinstance(value, SeedStream):  # a stream by where it stands: the next numbers it gives
        return repr(value.copy().take(8))
    return repr(value)


def recycles(game: Game) -> int:
    return sum(event.kind is EventKind.RECYCLE for event in game.hand_events)


# ----- clone ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game_class", "players"), ALL_SIZES, ids=lambda value: getattr(value, "name", value))
def test_a_clone_plays_on_as_its_original_and_apart_from_it(game_class: type[Game], players: int) -> None:
    rng = random.Random(players)
    for trial in range(6):
        game = game_class(players, seed=1000 * players + trial)
        for _ in range(rng.randrange(0, 150)):
            if game.is_over:
                break
            random_step(game, rng, forfeit_rate=0.01)
        before = state_of(game)
        twin = game.clone()
        assert state_of(twin) == before
        # Played differently, the clone leaves the original as it was.
        other = random.Random(trial)
        for _ in range(80):
            if twin.is_over:
                break
            random_step(twin, other, end_rate=0.3, forfeit_rate=0.02)
        assert state_of(game) == before
        # Played the same way, a fresh clone and the original go through the same game, to its end.
        twin = game.clone()
        for _ in range(5000):
            if game.is_over:
                break
            seed = rng.random()
            random_step(game, random.Random(seed), end_rate=0.3)
            random_step(twin, random.Random(seed), end_rate=0.3)
        assert game.is_over and twin.is_over
        assert twin.events == game.events and twin.hand_results == game.hand_results
        assert twin.result() == game.result()


def test_a_clone_made_after_a_recycle_recycles_again_as_its_original() -> None:
    """A hand's recycles continue one stream; each copy has its own (shared, the second recycle would differ)."""
    rng = random.Random(7)
    game = StopTheBus(2, seed=11, turn_limit=10_000)
    while recycles(game) < 1:
        random_step(game, rng, end_rate=0)
    twin = game.clone()
    moves = random.Random(8)
    while recycles(game) < 2:
        random_step(game, moves, end_rate=0)
    twin_moves = random.Random(8)
    while recycles(twin) < 2:
        random_step(twin, twin_moves, end_rate=0)
    assert twin.stock_top_first() == game.stock_top_first()
    assert twin.hand_events == game.hand_events


# ----- from_observation: every sample gives the observation back ------------------------------------------------


def positions(count: int, seed: int) -> Iterator[StopTheBus]:
    """Games of Stop the Bus stopped at random points: every table size, some after forfeits and recycles."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        players = rng.randint(2, 9)
        game = StopTheBus(players, seed=rng.getrandbits(32), turn_limit=rng.choice([4, 40, 200]))
        for _ in range(rng.randrange(0, 500)):
            if game.is_over:
                break
            random_step(game, rng, end_rate=rng.choice([0.0, 0.02, 0.2]), forfeit_rate=0.01)
        if not game.is_over:
            made += 1
            yield game


def test_every_sampled_state_gives_back_the_observation_and_plays_on() -> None:
    rng = random.Random(2026)
    seen = Counter[str]()
    for game in positions(500, seed=3):
        for seat in range(game.num_players):
            observation = game.observation(seat)
            sampled = StopTheBus.from_observation(observation, rng)
            assert sampled.observation(seat) == observation
            cards = [card for hand in sampled.hands for card in hand]
            cards += sampled.stock + sampled.discard_pile + sampled.out_of_play
            assert sorted(cards) == sorted(DECK)  # every card once
            # What only the real game knows is kept too where the seat saw it.
            assert sampled.discard_pile == game.discard_pile
            # Mid-turn as the real game is, with a card drawn or taken as it was.
            assert (sampled.pending and sampled.pending[0]) == (game.pending and game.pending[0])
            seen["positions"] += 1
            seen["after a recycle"] += recycles(game) > 0
            seen["final turns"] += game.phase is Phase.FINAL
            seen["mid-turn"] += game.pending is not None
            seen["after a forfeit"] += any(event.kind is EventKind.FORFEIT for event in game.hand_events)
            seen["its own turn"] += seat == game.current_seat
            # The hand plays on to its showdown by the rules (the next hands are new deals).
            hand_number = sampled.hand_number
            for _ in range(3000):
                if sampled.is_over or sampled.hand_number != hand_number:
                    break
                random_step(sampled, rng, end_rate=0.5)
            assert sampled.is_over or sampled.hand_number != hand_number
    assert seen["positions"] > 2000
    assert min(seen.values()) >= 100, seen


def test_an_observation_no_game_shows_is_refused_saying_why() -> None:
    game = next(positions(1, seed=5))
    observation = game.observation(0)
    assert isinstance(observation, StopTheBusObservation)
    rng = random.Random(1)
    with pytest.raises(
        GameArgumentError,
        match=r"no game of Stop the Bus shows this observation: \d+ hidden cards of one kind for \d+ places",
    ):
        StopTheBus.from_observation(_replace(observation, stock_count=observation.stock_count + 1), rng)
    brag = BastardBrag(3, seed=1).observation(0)
    with pytest.raises(GameArgumentError, match="a StopTheBusObservation is needed, got BastardBragObservation"):
        StopTheBus.from_observation(brag, rng)
    over = StopTheBus(2, seed=1)
    while not over.is_over:
        random_step(over, rng, end_rate=0.5)
    with pytest.raises(GameArgumentError, match="the game is over"):
        StopTheBus.from_observation(over.observation(0), rng)


def _replace(observation: StopTheBusObservation, **changes: object) -> StopTheBusObservation:
    fields = {name: getattr(observation, name) for name in observation.__dataclass_fields__}
    return StopTheBusObservation(**{**fields, **changes})


# ----- from_observation: the hidden cards are uniform -----------------------------------------------------------


def chi_square_limit(degrees: int, z: float = 3.719) -> float:
    """The chi-square statistic exceeded with probability about 1e-4 (Wilson and Hilferty's approximation)."""
    term = 2 / (9 * degrees)
    return degrees * (1 - term + z * math.sqrt(term)) ** 3


def place_of(game: StopTheBus, card: Card) -> str:
    """Where ``card`` lies: a seat's hand, the stock's top (the next draw), the rest of the stock, out of play."""
    for seat, hand in enumerate(game.hands):
        if card in hand:
            return f"seat {seat}"
    if game.stock and card == game.stock[-1]:
        return "stock top"
    if card in game.stock:
        return "stock"
    if card in game.out_of_play:
        return "out of play"
    return "discard pile"


def uniformity_statistic(
    game: StopTheBus, seat: int, samples: int, sampler: Callable[[StopTheBusObservation], StopTheBus]
) -> tuple[float, int]:
    """The chi-square statistic of where the cards the seat cannot tell apart land, and its degrees of freedom.

    The cards tested are those never seen this hand: the seat knows only how
    many lie in each place, so each must lie in a place with probability
    proportional to its size. (After a recycle, the recycled cards are tested
    apart from them in the test below.)
    """
    observation = game.observation(seat)
    assert isinstance(observation, StopTheBusObservation)
    seen = {event.card for event in observation.hand_events if event.card is not None}
    unseen = [card for card in DECK if card not in seen and card not in observation.hand]
    counts: dict[Card, Counter[str]] = {card: Counter() for card in unseen}
    sizes = Counter[str]()
    for _ in range(samples):
        sampled = sampler(observation)
        for card in unseen:
            counts[card][place_of(sampled, card)] += 1
    for card in unseen:
        sizes[place_of(game, card)] += 1
    statistic = 0.0
    for card in unseen:
        for place, size in sizes.items():
            expected = samples * size / len(unseen)
            statistic += (counts[card][place] - expected) ** 2 / expected
    assert sum(sum(counter.values()) for counter in counts.values()) == samples * len(unseen)
    assert set().union(*(counter.keys() for counter in counts.values())) <= set(sizes), "a card landed out of place"
    return statistic, (len(unseen) - 1) * (len(sizes) - 1)


def position(players: int, seed: int, until: Callable[[Any], bool], game_class: type[Game] = StopTheBus) -> Any:
    """A position of random play (seldom ending a hand) where ``until`` holds."""
    rng = random.Random(seed)
    while True:
        game = game_class(players, seed=rng.getrandbits(32), turn_limit=10_000)
        for _ in range(400):
            if game.is_over or until(game):
                break
            random_step(game, rng, end_rate=0.01)
        if not game.is_over and until(game):
            return game


MID_HAND = position(4, 1, lambda game: game.turns_this_hand >= 6 and game.pending is None)
FINAL_TURNS = position(5, 2, lambda game: game.phase is Phase.FINAL and game.current_seat != game.ender)
AFTER_A_RECYCLE = position(3, 3, lambda game: recycles(game) >= 1 and len(game.stock) < 10)


@pytest.mark.parametrize(
    ("game", "seat"),
    [(MID_HAND, 0), (MID_HAND, 2), (FINAL_TURNS, 1), (AFTER_A_RECYCLE, 0)],
    ids=["mid-hand", "mid-hand-other-seat", "final-turns", "after-a-recycle"],
)
def test_the_cards_a_seat_has_not_seen_are_dealt_uniformly(game: StopTheBus, seat: int) -> None:
    rng = random.Random(seat)
    statistic, degrees = uniformity_statistic(game, seat, 400, lambda obs: StopTheBus.from_observation(obs, rng))
    assert statistic < chi_square_limit(degrees), (statistic, degrees)


def test_the_recycled_cards_are_dealt_uniformly_among_the_new_stock_and_the_hands_that_drew_from_it() -> None:
    game = AFTER_A_RECYCLE
    observation = game.observation(0)
    recycled_at = max(index for index, event in enumerate(observation.hand_events) if event.kind is EventKind.RECYCLE)
    shown_since = {event.card for event in observation.hand_events[recycled_at:] if event.card is not None}
    pile_before: list[Card] = []
    for event in observation.hand_events[:recycled_at]:
        if event.kind is EventKind.DEAL or event.kind is EventKind.DISCARD:
            pile_before.append(event.card)  # type: ignore[arg-type]
        elif event.kind is EventKind.TAKE:
            pile_before.pop()
    recycled = [card for card in pile_before[:-1] if card not in shown_since and card not in observation.hand]
    assert len(recycled) > len(game.stock) > 1  # some drawn by the hands, some still in the stock
    rng = random.Random(4)
    samples = 600
    counts = {card: Counter[str]() for card in recycled}
    for _ in range(samples):
        sampled = StopTheBus.from_observation(observation, rng)
        for card in recycled:
            counts[card][place_of(sampled, card)] += 1
    sizes = Counter(place_of(game, card) for card in recycled)
    statistic = sum(
        (counts[card][place] - samples * size / len(recycled)) ** 2 / (samples * size / len(recycled))
        for card in recycled
        for place, size in sizes.items()
    )
    assert statistic < chi_square_limit((len(recycled) - 1) * (len(sizes) - 1))


def test_a_sampler_that_favours_a_place_fails_the_uniformity_test() -> None:
    """The test above can fail: a sampler that leaves the lowest unseen cards in the stock more often is caught."""
    rng = random.Random(9)

    def biased(observation: StopTheBusObservation) -> StopTheBus:
        sampled = StopTheBus.from_observation(observation, rng)
        if rng.random() < 0.25:  # swap the stock's top with the lowest card another seat holds hidden
            seen = {event.card for event in observation.hand_events if event.card is not None}
            others = [
                (card, seat)
                for seat, hand in enumerate(sampled.hands)
                if seat != observation.seat
                for card in hand
                if card not in seen
            ]
            if others and sampled.stock:
                card, seat = min(others)
                top = sampled.stock[-1]
                sampled.hands[seat] = sorted([top if held == card else held for held in sampled.hands[seat]])
                sampled.stock[-1] = card
        return sampled

    statistic, degrees = uniformity_statistic(MID_HAND, 0, 400, biased)
    assert statistic > chi_square_limit(degrees), (statistic, degrees)


@pytest.mark.parametrize("game_class", [StopTheBus, BastardBrag], ids=lambda value: value.name)
def test_states_drawn_from_one_observation_are_each_their_own(game_class: type[Game]) -> None:
    """states_from_observation reads the observation once; what is played on one state leaves the next as drawn."""
    rng = random.Random(12)
    game = game_class(4, seed=5)
    for _ in range(9):
        random_step(game, rng, end_rate=0.0)
    observation = game.observation(1)
    states = game_class.states_from_observation(observation, rng)
    drawn = [next(states) for _ in range(20)]
    assert len({repr(state.hands) for state in drawn}) > 10  # each drawn afresh
    for state in drawn:
        before = state_of(state)
        played = state.clone()
        while not played.is_over:
            random_step(played, rng, end_rate=0.5)
        assert state_of(state) == before
        assert state.observation(1) == observation
    for state in drawn[:5]:
        while not state.is_over:
            random_step(state, rng, end_rate=0.5)
    assert all(next(states).observation(1) == observation for _ in range(20))
