"""The sample heuristic bot: good choices on fixed decks, wins over the random bot, legal moves whatever others do."""

from __future__ import annotations

import importlib.util
import itertools
import random
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from referee.engine.cards import DECK, Card, parse_cards
from referee.engine.games import BastardBrag, Game, Observation, Phase, StopTheBus
from referee.engine.games.game import DRAW, PASS, STOP, TAKE, Action, ActionKind
from referee.engine.hands import hand_rank
from referee.play.kit import BotServicer
from referee.protocol.messages import action_to_pb
from tests.conftest import PYTHON, Bots, read_log
from tests.reference_encoder import decision_request_to_pb

SAMPLE_BOTS = Path(__file__).resolve().parent.parent / "sample_bots" / "python"

Decide = Callable[[Observation], Action]


def load_bot(name: str) -> ModuleType:
    """Import ``sample_bots/python/<name>.py`` by path (sample_bots is not a package)."""
    spec = importlib.util.spec_from_file_location(f"sample_{name}", SAMPLE_BOTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Importing must not start a server: run_bot sits behind `if __name__ == "__main__"`.
heuristic = load_bot("brag_heuristic")  # how the heuristic bot plays
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


# ----- hand strength ------------------------------------------------------------


def test_a_hands_strength_is_its_place_among_all_hands_by_rank_then_by_its_cards():
    # The plain definition the bot's lean table must equal: every hand sorted by its rank (hand_rank, with its
    # checks), equal ranks by the hand's cards as a mask of their indices; a hand's strength is its place over all.
    def mask(hand: tuple[Card, ...]) -> int:
        return sum(1 << card.index for card in hand)

    ordered = sorted(itertools.combinations(DECK, 3), key=lambda hand: (hand_rank(hand), mask(hand)))
    for place, hand in enumerate(ordered):
        assert heuristic.strength(hand) == place / len(ordered), hand


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
        request = decision_request_to_pb(game, "kit", decision_number, seen[seat], 1000, 0)
        seen[seat] = len(game.events)
        reply = servicers[seat].answer(request).decision
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


# ----- an opponent who forfeits holding the only discard ------------------------------------------
# A player who takes the discard pile's only card and then forfeits takes it out of play: the next
# player finds no discard to take (observation.discard_top is None). The bot used to look that card
# up anyway and fail with KeyError: None, which the referee counts as a fault against it.

# Issue 10's game: the random bot, a bot that plays an illegal move on its second decision, the heuristic bot.
FORFEIT_SEED = 7376372304206968780


def _remove_kept_bot_logs(stderr: str) -> None:
    """`referee play` keeps the bots' output when a bot failed; remove it."""
    if "bot output is kept in " in stderr:
        shutil.rmtree(stderr.split("bot output is kept in ", 1)[1].split()[0], ignore_errors=True)


def test_heuristic_bot_plays_on_without_fault_after_an_opponent_forfeits_holding_the_only_discard(
    bots: Bots, tmp_path: Path
) -> None:
    """Real processes over real gRPC, as `referee play` runs them: only the illegal move is a fault."""
    log_path = tmp_path / "game.jsonl"
    players = [
        bots.command(SAMPLE_BOTS / "random_bot.py"),
        bots.command("bad_reply.py", "--mode", "illegal", "--at", "2"),
        bots.command(SAMPLE_BOTS / "heuristic_bot.py"),
    ]
    command = [
        PYTHON,
        "-m",
        "referee.cli",
        "play",
        "--game",
        "stop_the_bus",
        "--seed",
        str(FORFEIT_SEED),
        "--quiet",
        "--log",
        str(log_path),
    ]
    for player in players:
        command += ["--bot", shlex.join(player)]
    done = subprocess.run(command, env=bots.subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # the bot that played illegally failed
    _remove_kept_bot_logs(done.stderr)
    log = read_log(log_path)
    decisions = [record for record in log if record["type"] == "decision"]
    # The situation of the issue: seat 1 takes the only discard, then forfeits for its illegal move.
    assert (decisions[0]["seat"], decisions[0]["action"]) == (1, "take"), decisions[0]
    assert [(record["seat"], record["kind"]) for record in log if record["type"] == "fault"] == [(1, "illegal")], (
        "the heuristic bot (seat 2) made a fault"
    )
    heuristic_decisions = [record for record in decisions if record["seat"] == 2]
    assert "take" not in heuristic_decisions[0]["legal"], "seat 2's first turn should find no discard to take"
    assert len(heuristic_decisions) > 1 and all(record["action"] in record["legal"] for record in decisions)
    assert log[-1]["type"] == "game_end" and sorted(log[-1]["placements"]) == [0, 1, 2]


def stop_the_bus_with_no_discard(final_turn: bool) -> StopTheBus:
    """Three players, dealer 2; the only discard is taken by a player who then forfeits.

    On a normal turn: seat 0 takes and forfeits, so seat 1 starts a normal turn.
    On a final turn: seat 0 stops, seat 1 takes and forfeits, so seat 2 starts its final turn.
    """
    game = StopTheBus(3, seed=5, first_dealer=2)
    if final_turn:
        game.apply(STOP)
    taker = game.current_seat
    game.apply(TAKE)
    game.forfeit(taker, "illegal")
    return game


@pytest.mark.parametrize("final_turn", [False, True], ids=["normal-turn", "final-turn"])
def test_no_discard_to_take_leaves_a_legal_choice(final_turn: bool) -> None:
    game = stop_the_bus_with_no_discard(final_turn)
    seat = game.current_seat
    observation = game.observation(seat)
    assert observation.discard_top is None and observation.discard_count == 0
    assert observation.legal_actions == ((DRAW, PASS) if final_turn else (DRAW, STOP))
    assert observation.phase is (Phase.FINAL if final_turn else Phase.NORMAL)
    chosen = heuristic.decide(observation)
    assert chosen in observation.legal_actions
    # The rest of the game, every seat the heuristic bot: every decision is legal (apply checks).
    play_out(game, [heuristic.decide] * 3)
    assert game.is_over


def test_the_discard_that_left_play_is_not_counted_as_a_possible_draw() -> None:
    game = stop_the_bus_with_no_discard(final_turn=False)
    observation = game.observation(game.current_seat)
    taken = observation.hand_events[0].card  # the deal's face-up card, which seat 0 took out of play
    assert taken in game.out_of_play
    pile, taken_by_others = heuristic.stop_the_bus_knowledge(observation)
    assert pile == [] and taken_by_others == {taken}
    assert taken not in heuristic.stop_the_bus_unknown(observation)


def test_no_opponent_and_no_unknown_card_do_not_divide_by_zero() -> None:
    # An observation in which the bot is alone in the hand (a referee could ask after forfeits).
    observation = replace(StopTheBus(3, seed=1, first_dealer=2).observation(0), in_hand=(True, False, False))
    assert heuristic.ending_margin(observation, own_turns=0) == 0.0
    assert heuristic.Safety([]).mean_value([]) == 0.0
    assert heuristic.Safety([2.0]).mean_value(iter(())) == 0.0


def test_find_falls_back_to_a_legal_action() -> None:
    legal = (DRAW, PASS)
    assert heuristic._find(legal, ActionKind.PASS) is PASS
    assert heuristic._find(legal, ActionKind.TAKE) is DRAW  # never no answer at all


@pytest.mark.parametrize("game_class", [StopTheBus, BastardBrag])
def test_every_decision_is_legal_when_seats_forfeit_at_any_moment(game_class: type[Game]) -> None:
    """Forfeits mid-turn and out of turn, often right after a take, so that piles empty and seats leave.

    Every observation the bot is given must get a legal action back (apply raises on any other).
    """
    chooser = random.Random("heuristic-forfeits")
    for seed in range(12):
        game = game_class(4, seed=seed, turn_limit=chooser.choice([3, 30, 200]))
        while not game.is_over:
            seat = game.current_seat
            observation = game.observation(seat)
            chosen = heuristic.decide(observation)
            assert chosen in observation.legal_actions, f"seed {seed}: {chosen} is not legal"
            game.apply(chosen)
            took = chosen.kind is ActionKind.TAKE
            if not game.is_over and chooser.random() < (0.5 if took else 0.02):
                game.forfeit(game.current_seat if took else chooser.choice(game.seats_in_game), "test")
