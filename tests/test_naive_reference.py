"""The engine against the naive reference engine (bench/naive_reference.py), move for move.

The reference is written plainly from the rules, with nothing in common with
the engine but the cards, the seeded streams and the action values, so it is
an independent oracle: on seeded random games of both games at every table
size, dealt from the same decks and given the same random choices (forfeits
included), the two must agree on every legal-action list, on everything the
current seat and one other seat observe, on the whole table (hands, stock,
discard pile, centre), on every hand's result and on the game's result.
The random choices lean away from stopping and knocking in some games, and
some games have short decks or low turn limits, so that recycles, an
exhausted stock and the turn limit are reached too.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable
from typing import Any

import pytest

from bench.naive_reference import NAIVE_GAMES, NaiveBastardBrag, NaiveGame, NaiveStopTheBus
from referee.engine.cards import Card
from referee.engine.games import GAMES, BastardBrag, Event, Game, HandResult, Observation, StopTheBus
from referee.engine.games.decks import seeded_deck
from referee.engine.games.game import KNOCK, Action, ActionKind

GAMES_PER_SIZE = 6
ENDING = (ActionKind.STOP, ActionKind.KNOCK)


def event_fields(event: Event) -> dict[str, Any]:
    """An engine's event as the reference records it: the kind's name and the fields the kind uses."""
    fields = {"kind": event.kind.value, "hand_number": event.hand_number}
    for name in ("seat", "card", "taken", "slot", "count"):
        if getattr(event, name) is not None:
            fields[name] = getattr(event, name)
    return fields


@functools.cache
def field_names(observation_class: type[Observation]) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(observation_class))


def engine_view(observation: Observation, converted: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """An engine's observation as the reference builds it (each event converted once, kept in ``converted`` by
    its id: the game's record keeps every event alive)."""
    view = {name: getattr(observation, name) for name in field_names(type(observation))}
    view["phase"] = observation.phase.value
    events = []
    for event in observation.hand_events:
        fields = converted.get(id(event))
        if fields is None:
            fields = converted[id(event)] = event_fields(event)
        events.append(fields)
    view["hand_events"] = events
    for name, value in view.items():
        if type(value) is tuple:  # a card is a tuple too, and stays one
            view[name] = list(value)
    return view


def engine_hand_result(result: HandResult) -> dict[str, Any]:
    fields = {field.name: getattr(result, field.name) for field in dataclasses.fields(result)}
    fields["ended_by"] = result.ended_by.value
    fields["ranks"] = {seat: (rank.category.value, rank.values, rank.suit) for seat, rank in result.ranks.items()}
    return fields


def check_table(game: Game, naive: NaiveGame) -> None:
    """The whole table, seen by neither seat: every hand, and the piles or the centre."""
    assert game.hands == naive.hands
    assert game.out_of_play == naive.out_of_play
    if isinstance(game, StopTheBus):
        assert isinstance(naive, NaiveStopTheBus)
        assert game.stock_top_first() == tuple(naive.stock)
        assert game.discard_pile_top_first() == tuple(reversed(naive.discard_pile))
    else:
        assert isinstance(game, BastardBrag) and isinstance(naive, NaiveBastardBrag)
        assert game.centre_by_slot() == tuple(naive.centre)


def short_decks(seed: int, size: int) -> Callable[[int], list[Card]]:
    """Each hand's seeded deck cut to its first ``size`` cards."""
    return lambda hand_number: seeded_deck(seed, hand_number)[:size]


def play_both(name: str, players: int, seed: int, naive_class: type[NaiveGame] | None = None) -> set[str]:
    """Play one random game on the engine and the reference side by side, checking every step.

    Returns the kinds of event the game had. The seed picks one of five kinds of game: random choices
    with a full deck; the same with forfeits; choices that rarely stop or knock, under a low turn limit;
    the same with a short deck (recycles, and an exhausted stock when the deck is just long enough for
    the deal); and all of it at once.
    """
    rng = random.Random(f"naive:{name}:{players}:{seed}")
    game_class = GAMES[name]
    kind = seed % 5
    stubborn = kind >= 2  # rarely stops or knocks: long hands, recycles, the turn limit
    forfeits = kind in (1, 4)
    turn_limit = rng.choice((1, 6, 30)) if kind in (2, 4) else 200
    decks = None
    if kind >= 3:
        decks = short_decks(seed, game_class.cards_needed(players) + (5 if seed % 2 else 0))
    game = game_class(players, seed=seed, decks=decks, turn_limit=turn_limit)
    naive = (naive_class or NAIVE_GAMES[name])(players, seed=seed, decks=decks, turn_limit=turn_limit)
    converted: dict[int, dict[str, Any]] = {}
    hands_checked = decisions = 0
    first_forfeit = rng.randrange(1, 50)
    while True:
        check_table(game, naive)
        if len(game.hand_results) != hands_checked:
            assert [engine_hand_result(result) for result in game.hand_results[hands_checked:]] == (
                naive.hand_results[hands_checked:]
            )
            hands_checked = len(naive.hand_results)
        assert (game.lives, game.floating, game.in_game) == (naive.lives, naive.floating, naive.in_game)
        assert game.current_seat == naive.current_seat
        if game.is_over:
            break
        seat = game.current_seat
        assert seat is not None
        legal = game.legal_actions()
        assert list(legal) == naive.legal_actions()
        assert engine_view(game.observation(seat), converted) == naive.observation(seat)
        other = rng.randrange(players)
        assert engine_view(game.observation(other), converted) == naive.observation(other)
        if forfeits and (decisions == first_forfeit or rng.random() < 0.005):
            leaving = rng.choice([seat for seat in range(players) if game.in_game[seat]])
            game.forfeit(leaving)
            naive.forfeit(leaving)
            first_forfeit = -1
            continue
        if stubborn and legal[-1].kind in ENDING:  # it comes last
            act = legal[-1] if rng.random() < 0.04 else rng.choice(legal[:-1])
        else:
            act = rng.choice(legal)
        game.apply(act)
        naive.apply(act)
        decisions += 1
    assert engine_view(game.observation(0), converted) == naive.observation(0)
    assert dataclasses.asdict(game.result()) == naive.result()
    assert [event_fields(event) for event in game.events] == naive.events
    return {event.kind.value for event in game.events}


# What the games of each table size must reach between them, beyond the deal and the showdown.
REACHED = {
    "stop_the_bus": {"draw", "take", "discard", "stop", "pass", "recycle", "stock-exhausted", "turn-limit", "forfeit"},
    "bastard_brag": {"exchange", "exchange-all", "knock", "turn-limit", "eliminated", "forfeit", "game-over"},
}


@pytest.mark.parametrize(
    "name, players",
    [(name, players) for name, game in GAMES.items() for players in range(game.min_players, game.max_players + 1)],
)
def test_the_engine_and_the_naive_reference_agree_move_for_move(name: str, players: int) -> None:
    assert REACHED[name] <= play_games(name, players)


def play_games(name: str, players: int, naive_class: type[NaiveGame] | None = None) -> set[str]:
    """Play the games of one table size on both (see :func:`play_both`); return the kinds of event they had."""
    reached: set[str] = set()
    for seed in range(GAMES_PER_SIZE):
        reached |= play_both(name, players, seed, naive_class)
    return reached


class _KnockInRoundOne(NaiveBastardBrag):
    """A reference with a bug: a knock is offered in round one."""

    def legal_actions(self) -> list[Action]:
        actions = super().legal_actions()
        if self.phase == "normal" and KNOCK not in actions:
            actions.append(KNOCK)
        return actions


class _StopperPlaysAgain(NaiveStopTheBus):
    """A reference with a bug: the stopper takes a final turn too."""

    def begin_final_turns(self, seat: int) -> None:
        super().begin_final_turns(seat)
        self.final_turns_left.append(seat)


@pytest.mark.parametrize(
    "name, players, mutant", [("bastard_brag", 4, _KnockInRoundOne), ("stop_the_bus", 3, _StopperPlaysAgain)]
)
def test_a_bug_in_either_engine_is_found(name: str, players: int, mutant: type[NaiveGame]) -> None:
    """The reference with a bug planted: the games above tell it from the engine."""
    with pytest.raises(AssertionError):
        play_games(name, players, mutant)
