"""The search bot (sample_bots/python/search_bot.py): its sampled worlds stay worlds its seat cannot tell from the
real one, its values, its clock, and whole games, in process and as a real process through check-bot.
(Its strength against the heuristic bot is a benchmark: bench/search_strength.py.)"""

from __future__ import annotations

import json
import random
import subprocess
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from referee.engine.cards import Card
from referee.engine.games import GAMES, Game, Observation
from referee.play.kit import MoveClock
from tests.bot_kits import REFEREE
from tests.conftest import PYTHON
from tests.test_heuristic_bot import SAMPLE_BOTS, load_bot

heuristic = load_bot("brag_heuristic")
search = load_bot("search_bot")

TABLES = [("stop_the_bus", 2), ("stop_the_bus", 4), ("bastard_brag", 3), ("bastard_brag", 5)]


def positions(game: Game, seed: int) -> Iterator[Observation]:
    """Observations of the seat on move at varied points of a game the heuristic bot plays."""
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.current_seat
        assert seat is not None
        obs = game.observation(seat)
        if rng.random() < 0.15:
            yield obs
        game.apply(heuristic.decide(obs))


def places(world: Game) -> list[tuple[Card, str, int]]:
    """Each card of ``world`` and where it lies: a hand (by seat) or a pile, and its index there."""
    where = [(card, f"hand {seat}", index) for seat, hand in enumerate(world.hands) for index, card in enumerate(hand)]
    for name in ("stock", "discard_pile", "centre", "set_aside", "out_of_play"):
        where += [(card, name, index) for index, card in enumerate(getattr(world, name, ()))]
    return where


@pytest.mark.parametrize(("game_name", "players"), TABLES)
def test_strengthened_worlds_move_only_cards_the_seat_never_saw_and_look_the_same_to_it(game_name, players) -> None:
    checked = strengthened = 0
    for seed in range(8):
        for obs in positions(GAMES[game_name](players, seed=seed), seed):
            unseen = search.never_seen(obs)
            seen_in_view = {*obs.hand, *(card for event in obs.hand_events for card in (event.card, event.taken))}
            assert not unseen & seen_in_view
            rng = random.Random(seed)
            worlds = GAMES[game_name].states_from_observation(obs, rng)
            powers = [(seat, 6.0) for seat, _ in search.opponent_powers(obs)]
            for _ in range(3):
                world = next(worlds)
                before = places(world)
                search.bias_world(world, obs.seat, unseen, powers, rng)
                after = places(world)
                assert Counter(card for card, *_ in before) == Counter(card for card, *_ in after)  # the same cards
                moved = {card for card, *_ in set(before) - set(after)}
                assert moved <= unseen, f"cards the seat saw were moved: {sorted(map(str, moved - unseen))}"
                assert world.observation(obs.seat) == obs
                checked += 1
                strengthened += bool(moved)
    assert checked > 30 and strengthened > checked // 3


def test_strengthened_opponents_hold_stronger_hands_than_dealt() -> None:
    game = GAMES["stop_the_bus"](4, seed=3)
    obs = game.observation(game.current_seat)
    rng = random.Random(1)
    worlds = GAMES["stop_the_bus"].states_from_observation(obs, rng)
    unseen = search.never_seen(obs)
    opponents = [seat for seat in range(4) if seat != obs.seat]

    def mean_strength(power: float) -> float:
        total = 0.0
        for _ in range(300):
            world = next(worlds)
            search.bias_world(world, obs.seat, unseen, [(seat, power) for seat in opponents], rng)
            total += sum(heuristic.strength(world.hands[seat]) for seat in opponents) / len(opponents)
        return total / 300

    # The best of 4 random hands has a mean strength of 4/5; one hand as dealt, 1/2.
    assert mean_strength(1.0) == pytest.approx(0.5, abs=0.05)
    assert mean_strength(4.0) == pytest.approx(0.8, abs=0.05)


@pytest.mark.parametrize(("game_name", "players"), TABLES)
def test_with_no_time_to_think_the_search_plays_the_heuristic_bots_choice(game_name, players) -> None:
    no_time = MoveClock(move_time_ms=0, time_bank_ms=0, arrived=0.0)
    decisions = 0
    for seed in range(4):
        for obs in positions(GAMES[game_name](players, seed=100 + seed), seed):
            assert search.decide(obs, no_time) == heuristic.decide(obs)
            decisions += 1
    assert decisions > 10


@pytest.mark.parametrize(("game_name", "players"), [("stop_the_bus", 3), ("bastard_brag", 4)])
def test_the_search_plays_whole_games_against_heuristic_bots(game_name, players) -> None:
    for seed in range(2):
        game = GAMES[game_name](players, seed=seed)
        while not game.is_over:
            seat = game.current_seat
            assert seat is not None
            obs = game.observation(seat)
            if seat == seed % players:
                chosen = search.decide(obs, MoveClock(move_time_ms=60, time_bank_ms=0, arrived=time.perf_counter()))
            else:
                chosen = heuristic.decide(obs)
            game.apply(chosen)  # an illegal action would raise here


@pytest.mark.parametrize("players", [2, 3, 5])
def test_the_stop_the_bus_rollouts_play_as_the_heuristic_bot_does(players) -> None:
    """The rollouts' seats decide from the sampled game what the heuristic bot decides from the observation: the
    search then weighs each action against how its opponents will actually play the hand out."""
    same = Counter[bool]()
    for seed in range(12):
        game = GAMES["stop_the_bus"](players, seed=seed)
        while not game.is_over:
            seat = game.current_seat
            assert seat is not None
            chosen = heuristic.decide(game.observation(seat))
            same[search._quick_stop_the_bus(game, seat) == chosen] += 1
            game.apply(chosen)
    assert same[True] >= 0.97 * same.total(), same


@pytest.mark.parametrize(("game_name", "players"), [("stop_the_bus", 3), ("bastard_brag", 3)])
def test_on_enough_evidence_the_search_overrules_the_heuristic_and_otherwise_keeps_its_choice(game_name, players):
    overruled = kept = 0
    observations = [obs for seed in (11, 12) for obs in positions(GAMES[game_name](players, seed=seed), seed)]
    for obs in observations:
        if len(obs.legal_actions) == 1:
            continue
        thinking = search.Search(obs, random.Random(0))
        assert thinking.choice_index() == thinking.default  # before the evidence: the heuristic's choice
        for _ in range(60):
            thinking.play_world()
        choice = thinking.choice_index()
        if choice == thinking.default:
            kept += 1
            continue
        overruled += 1
        gain, error = thinking.margins()[choice]
        assert gain > search.Z * error  # a change is always sure by Z standard errors
    assert overruled > 0 and kept > 0


def assert_no_problem_but_slow_decisions(checked: subprocess.CompletedProcess[str]) -> None:
    """check-bot found no problem, or only slow decisions (which a loaded machine makes), and said which."""
    problems = [line for line in checked.stdout.splitlines() if line.startswith("  - ")]  # under "N problems:"
    assert all("slow decision" in line for line in problems), checked.stdout + checked.stderr
    assert ("no problems found" in checked.stdout) != bool(problems), checked.stdout + checked.stderr
    assert checked.returncode == (1 if problems else 0), checked.stdout + checked.stderr


def test_the_search_bot_passes_check_bot_and_is_an_opponent_check_bot_names(tmp_path) -> None:
    """The search bot as a process, at both games, with no fault (its think times under a move time are measured by
    bench/search_strength.py: on a loaded machine a decision may be slow here), and `--opponent search` playing it
    inside the referee."""
    command = [PYTHON, str(SAMPLE_BOTS / "search_bot.py")]
    quick = ["--games", "1", "--seats", "3", "--move-time-ms", "100"]
    checked = subprocess.run(
        [*REFEREE, "check-bot", *quick, "--logs", str(tmp_path / "logs"), "--", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_no_problem_but_slow_decisions(checked)
    for game in GAMES:
        assert f"- {game} at 3 seats, game 1" in checked.stdout
    # check-bot shows the bot's private notes: under each game's line, how many and the first (its worlds searched).
    noted = [line for line in checked.stdout.splitlines() if line.startswith("  notes: ")]
    assert len(noted) == len(GAMES) and all(" worlds: " in line for line in noted), checked.stdout
    heuristic_command = [PYTHON, str(SAMPLE_BOTS / "heuristic_bot.py")]
    checked = subprocess.run(
        [*REFEREE, "check-bot", *quick, "--game", "stop_the_bus", "--opponent", "search", "--", *heuristic_command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    # The search bot thinks inside the referee, beside the other test worker: the heuristic bot may wait for a CPU.
    assert_no_problem_but_slow_decisions(checked)
    assert "opponents, the seats taking them in turn: search (the sample bot, in the referee)" in checked.stdout
    assert "  notes: " in checked.stdout and "held " in checked.stdout  # the heuristic's: what it held, what it chose


def test_the_search_bot_plays_a_league_beside_the_heuristic_bot_whose_file_is_hidden_from_it(tmp_path, bots) -> None:
    """A league that names both sample scripts hides heuristic_bot.py from the search bot (another bot's own file):
    the search bot plays the heuristic's way from brag_heuristic.py, which no bot's command names."""
    from tests.test_league import write_league

    entries = [
        ("search", bots.command(SAMPLE_BOTS / "search_bot.py")),
        ("heuristic", bots.command(SAMPLE_BOTS / "heuristic_bot.py")),
    ]
    path = write_league(tmp_path / "league.yaml", bots, entries=entries, rounds=1)
    run = subprocess.run([PYTHON, "-m", "referee", "run", str(path), "--no-progress"], capture_output=True, text=True,
                         timeout=300, env=bots.subprocess_env())  # fmt: skip
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in (tmp_path / "results" / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2  # the deal played in both seatings
    assert all(record["faults"] == [{}, {}] for record in records), records  # no seat's fault, of either bot
