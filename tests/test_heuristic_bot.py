"""The sample heuristic bot: sensible choices on fixed decks, and clear wins over the random bot, in process."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from referee.botkit import BotServicer
from referee.cards import DECK, Card, parse_cards
from referee.games import BastardBrag, Game, Observation, StopTheBus
from referee.games.base import Action
from referee.protocol import action_to_pb, fill_events, fill_observation
from referee.v1 import bot_pb2 as pb

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots" / "python"

Decide = Callable[[Observation], Action]


def load_bot(name: str) -> ModuleType:
    """Import ``sample_bots/python/<name>.py`` by path (sample_bots is not a package)."""
    spec = importlib.util.spec_from_file_location(f"sample_{name}", SAMPLE_BOTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Importing must not start a server: run_bot sits behind `if __name__ == "__main__"`.
heuristic = load_bot("heuristic_bot")
random_bot = load_bot("random_bot")


# ----- helpers ------------------------------------------------------------------


def act(text: str) -> Action:
    return Action.parse(text)


def cards(text: str) -> set[Card]:
    return set(parse_cards(text))


def arranged_deck(
    num_players: int, dealer: int, hands: dict[int, str], after: str = "", centre: str = ""
) -> list[Card]:
    """Lay out a deck dealing ``hands[seat]`` to each seat (and ``centre`` to the Bastard Brag centre), then ``after``.

    Three rounds, one card to each seat from the dealer's left, the dealer
    last, then (Bastard Brag) one centre card; centre slots 0, 1 face down,
    2 face up. In Stop the Bus ``after`` is the face-up discard and then the
    stock in drawing order. Every other card follows in canonical order.
    """
    order = [(dealer + step) % num_players for step in range(1, num_players + 1)]
    per_seat = {seat: parse_cards(text) for seat, text in hands.items()}
    centre_cards = parse_cards(centre)
    dealt: list[Card] = []
    for round_ in range(3):
        dealt.extend(per_seat[seat][round_] for seat in order)
        if centre_cards:
            dealt.append(centre_cards[round_])
    head = dealt + list(parse_cards(after))
    used = set(head)
    return head + [card for card in DECK if card not in used]


def play_out(game: Game, deciders: list[Decide]) -> None:
    """Play ``game`` to the end, each seat choosing with its own decide function."""
    while not game.is_over:
        seat = game.current_seat
        game.apply(deciders[seat](game.observation(seat)))


def heuristic_win_rate(game_class: type[Game], layout: str, games: int = 100) -> float:
    """Play ``games`` games with bots laid out as ``layout`` ("H" heuristic, "R" random), rotated one seat a game.

    Game ``i`` uses seed ``i``; returns the share of games a heuristic seat won.
    """
    wins = 0
    for number in range(games):
        shift = number % len(layout)
        seats = layout[-shift:] + layout[:-shift] if shift else layout
        deciders = [heuristic.decide if bot == "H" else random_bot.decide for bot in seats]
        game = game_class(len(seats), seed=number)
        play_out(game, deciders)
        wins += seats[game.result().winner] == "H"
    return wins / games


# ----- Stop the Bus on fixed decks -----------------------------------------------


def test_stop_the_bus_takes_the_discard_that_makes_a_prial_and_drops_the_odd_card():
    # Seat 0 (first to play: dealer 1) holds 7C 7D 2S and the face-up discard is 7H.
    deck = arranged_deck(2, 1, {0: "7C 7D 2S", 1: "AS KD 9H"}, after="7H")
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[deck])
    assert heuristic.decide(game.observation(0)) == act("take")
    game.apply(act("take"))
    assert heuristic.decide(game.observation(0)) == act("discard 2S")


def test_stop_the_bus_stops_at_once_with_the_best_hand_there_is():
    # 3-3-3 is the highest prial: nothing can beat it, so waiting only risks nothing and gains nothing.
    deck = arranged_deck(4, 3, {0: "3C 3D 3H", 1: "AS KD 9H", 2: "5C 8D JH", 3: "4C 6D TH"}, after="2S")
    game = StopTheBus(4, seed=1, first_dealer=3, decks=[deck])
    assert heuristic.decide(game.observation(0)) == act("stop")


def test_stop_the_bus_discards_a_drawn_card_that_does_not_help():
    # Pair of aces with a king; the stock's top 2S makes no flush, run or better pair.
    deck = arranged_deck(2, 1, {0: "AC AD KH", 1: "5S 8D 9H"}, after="3H 2S")
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[deck])
    game.apply(act("draw"))
    assert heuristic.decide(game.observation(0)) == act("discard 2S")


def test_stop_the_bus_draws_rather_than_passing_a_final_turn():
    # Seat 0 stops; seat 1's weak 9-5-3 can only gain from a draw (the drawn card may be discarded),
    # and taking 2S would only make it worse.
    deck = arranged_deck(2, 1, {0: "AC AD AH", 1: "3C 5D 9H"}, after="2S")
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[deck])
    game.apply(act("stop"))
    assert heuristic.decide(game.observation(1)) == act("draw")


def test_stop_the_bus_counts_the_discard_pile_and_the_cards_others_took_as_out_of_the_stock():
    # A 9-card deck: six dealt, 8S face up, a stock of two (KC then QC), so the stock runs out fast.
    deck = arranged_deck(2, 1, {0: "2C 5D 9H", 1: "3C 6D TH"}, after="8S KC QC")[:9]
    game = StopTheBus(2, seed=1, first_dealer=1, decks=[deck])
    game.apply(act("draw"))  # seat 0 draws KC
    game.apply(act("discard 2C"))
    game.apply(act("take"))  # seat 1 takes 2C: seat 0 knows seat 1 holds it
    game.apply(act("discard 3C"))
    unknown = set(heuristic.stop_the_bus_unknown(game.observation(0)))
    assert not unknown & cards("8S 3C 2C"), (
        "the discard pile (8S, 3C) and the card seat 1 took (2C) are not in the stock"
    )
    assert cards("QC TH") <= unknown  # the real stock card, and seat 1's unseen cards, are possible draws
    game.apply(act("draw"))  # seat 0 draws QC: the stock is now empty
    game.apply(act("discard 5D"))
    game.apply(act("draw"))  # seat 1: the discards under the top (8S, 3C) were shuffled into a new stock
    game.apply(act("discard 2C"))  # seat 1 gives back the card it took
    observation = game.observation(0)
    assert observation.hand_events[-3].kind.value == "recycle"
    unknown = set(heuristic.stop_the_bus_unknown(observation))
    assert cards("8S 3C") <= unknown, "recycled discards may be drawn again"
    assert not unknown & cards("2C 5D"), "the new discard pile is out of the stock"


# ----- Bastard Brag on fixed decks -----------------------------------------------


def bastard_brag_deck(seat_0: str, centre: str) -> list[Card]:
    """A three-player deck, dealer seat 2 (seat 0 plays first), seats 1 and 2 holding ordinary hands."""
    return arranged_deck(3, 2, {0: seat_0, 1: "AS KD 2H", 2: "5C 6D JH"}, centre=centre)


def test_bastard_brag_takes_the_face_up_card_that_makes_a_prial():
    # Face-up 9H matches the pair of nines; the centre's face-down cards are unknown.
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[bastard_brag_deck("9C 9D 4S", "2C 3D 9H")])
    assert heuristic.decide(game.observation(0)) == act("exchange 4S 2")


def test_bastard_brag_knocks_with_a_prial_once_round_one_is_over():
    # Seat 0 makes 3-3-3 (the best hand) from the face-up 3S, then may knock after seats 1 and 2 have played.
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[bastard_brag_deck("3C 3D KH", "2C 4D 3S")])
    assert heuristic.decide(game.observation(0)) == act("exchange KH 2")
    game.apply(act("exchange KH 2"))
    game.apply(act("exchange AS 0"))
    game.apply(act("exchange 5C 1"))
    assert heuristic.decide(game.observation(0)) == act("knock")


def test_bastard_brag_remembers_cards_taken_face_up_until_the_taker_hides_one():
    game = BastardBrag(3, seed=1, first_dealer=2, decks=[bastard_brag_deck("9C 9D 4S", "2C 3D 9H")])
    game.apply(act("exchange 4S 0"))  # seat 0 hides 4S face down: only seat 0 knows it
    game.apply(act("exchange 2H 2"))  # seat 1 takes 9H face up, shows 2H
    known = heuristic.bastard_brag_known_elsewhere(game.observation(0))
    assert known == cards("9H 2H 4S"), "seat 1 holds 9H; 2H is face up; seat 0's own 4S lies in slot 0"
    game.apply(act("exchange JH 1"))
    game.apply(act("exchange 9C 1"))
    game.apply(act("exchange 9H 0"))  # seat 1 swaps an unseen card for slot 0: it may have given 9H
    known = heuristic.bastard_brag_known_elsewhere(game.observation(0))
    assert known == cards("9C 2H"), "9H may be under slot 0 now; 9C is seat 0's own card in slot 1"


# ----- lives, determinism, speed, and the kit -----------------------------------------


def test_last_life_makes_ending_a_hand_harder_and_spare_lives_easier():
    # Seat 0 of a three-player Bastard Brag table, with even lives, on its last life, and with lives to spare.
    even = BastardBrag(3, seed=1, first_dealer=2).observation(0)
    last_life = replace(even, lives=(1, 3, 3))
    spare = replace(even, lives=(3, 1, 1))
    margin = heuristic.ending_margin
    assert margin(last_life, own_turns=0) < margin(even, own_turns=0) < margin(spare, own_turns=0)
    # However the lives stand, a long hand makes ending it ever easier, so every hand ends.
    assert margin(last_life, own_turns=60) > 1


@pytest.mark.parametrize("game_class, players", [(StopTheBus, 4), (BastardBrag, 4)])
def test_the_same_game_plays_out_identically_twice(game_class, players):
    logs = []
    for _ in range(2):
        game = game_class(players, seed=7)
        play_out(game, [heuristic.decide] * players)
        logs.append([str(event) for event in game.events])
    assert logs[0] == logs[1]


@pytest.mark.parametrize("game_class, players", [(StopTheBus, 6), (BastardBrag, 6)])
def test_decisions_are_fast(game_class, players):
    # Measured about 0.3 ms a decision on average; the bot is meant to stay well under 5 ms.
    spent, decisions = 0.0, 0
    for seed in range(3):
        game = game_class(players, seed=seed)
        while not game.is_over:
            observation = game.observation(game.current_seat)
            started = time.perf_counter()
            chosen = heuristic.decide(observation)
            spent += time.perf_counter() - started
            decisions += 1
            game.apply(chosen)
    assert spent / decisions < 0.005, f"{spent / decisions * 1000:.2f} ms a decision on average"


@pytest.mark.parametrize("game_class, players", [(StopTheBus, 3), (BastardBrag, 3)])
def test_the_kit_gives_the_bot_what_the_engine_gives(game_class, players):
    # Each decision is sent through the kit's servicer as the referee sends it (the events since that
    # seat's last decision); the action must equal the one chosen from the engine's own observation.
    # One servicer per seat, as the referee runs one bot process per seat: the kit keeps one history each.
    servicers = [
        BotServicer(heuristic.decide, "heuristic", "1.0", ("stop_the_bus", "bastard_brag")) for _ in range(players)
    ]
    game = game_class(players, seed=3)
    seen = [0] * players
    decision_number = 0
    while not game.is_over:
        decision_number += 1
        seat = game.current_seat
        request = pb.DecisionRequest(
            game_id="kit", hand_number=game.hand_number, decision_number=decision_number, seat=seat
        )
        fill_observation(request.observation, game.observation(seat))
        fill_events(request.events, game.events[seen[seat] :])
        seen[seat] = len(game.events)
        for legal in game.legal_actions():
            request.legal_actions.append(action_to_pb(legal))
        reply = servicers[seat].Decide(request, None)
        expected = heuristic.decide(game.observation(seat))
        assert reply.decision_number == decision_number
        assert reply.action == action_to_pb(expected), f"decision {decision_number}: kit and engine disagree"
        game.apply(expected)


# ----- against the random bot -----------------------------------------------------------
# Seeds 0..99, seats rotated each game. Chance is 1 / players per heuristic seat; measured
# rates are in each comment, and each threshold leaves a wide margin below it.


def test_beats_the_random_bot_heads_up_at_stop_the_bus():
    # Chance 50%; measured 99%.
    assert heuristic_win_rate(StopTheBus, "HR") >= 0.85


def test_beats_three_random_bots_at_stop_the_bus():
    # Chance 25%; measured 99%.
    assert heuristic_win_rate(StopTheBus, "HRRR") >= 0.75


def test_beats_two_random_bots_at_bastard_brag():
    # Chance 33%; measured 98%.
    assert heuristic_win_rate(BastardBrag, "HRR") >= 0.75


def test_beats_three_random_bots_at_bastard_brag():
    # Chance 25%; measured 100%.
    assert heuristic_win_rate(BastardBrag, "HRRR") >= 0.75


def test_only_legal_actions_are_chosen_in_long_mixed_games():
    # Two heuristic and two random seats; apply() raises on any illegal action.
    for game_class in (StopTheBus, BastardBrag):
        for seed in range(5):
            game = game_class(4, seed=100 + seed)
            play_out(game, [heuristic.decide, random_bot.decide] * 2)
            assert sorted(game.result().placements) == [0, 1, 2, 3]
