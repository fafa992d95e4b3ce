"""The luck of the cards (referee.records.luck): its value function's parts, and a game's log gives the luck its play
gave. That each chance event's term has mean zero (its pool is the cards that could truly come), and a deal's, is
tested in tests/test_luck_pools.py."""

from __future__ import annotations

import random
import statistics

import pytest

from referee.engine.cards import parse_cards
from referee.engine.games import GAMES
from referee.records.gamelog import log_path
from referee.records.luck import (
    MODEL,
    LuckMeter,
    _final_loss_chances,
    luck_of_log,
    strength,
)

from . import game_logs


def test_strength_is_the_percentile_among_all_hands_and_a_drawn_card_counts_the_best_three() -> None:
    assert strength(parse_cards("2C 3D 5H")) < 0.002  # among the worst hands there are (suits break ties)
    assert strength(parse_cards("3C 3D 3H")) > 0.9998  # a prial of threes beats every other hand but its like
    assert strength(parse_cards("2C 3D 5H 3H")) == strength(parse_cards("3D 5H 3H"))  # the pair of threes, 5 kicker


def test_the_chance_of_ending_worst_in_the_final_turns_is_the_product_over_the_other_seats() -> None:
    # The plain definition, which the referee computes leaner (it runs for every card of every draw): a seat ends
    # worst when every other seat ends above it; a fixed seat is above a value or not, a seat still to play with the
    # share of its ends above it. Strengths come from a few values, so that ties (never above) are common.
    def plain(strengths: dict[int, float], to_play: dict[int, list[float]]) -> dict[int, float]:
        chances = {}
        for seat, fixed in strengths.items():
            outcomes = to_play.get(seat, [fixed])
            total = 0.0
            for value in outcomes:
                product = 1.0
                for other, strength_of_other in strengths.items():
                    if other == seat:
                        continue
                    ends = to_play.get(other)
                    if ends is None:
                        product *= float(strength_of_other > value)
                    else:
                        product *= sum(end > value for end in ends) / len(ends)
                total += product
            chances[seat] = total / len(outcomes)
        norm = sum(chances.values()) or 1.0
        return {seat: chance / norm for seat, chance in chances.items()}

    chooser = random.Random(30)
    values = [0.0, 0.2, 0.5, 0.7, 1.0]
    for _ in range(3000):
        seats = chooser.sample(range(9), chooser.randint(2, 6))
        strengths = {seat: chooser.choice(values) for seat in seats}
        to_play = {
            seat: sorted(chooser.choice(values) for _ in range(chooser.randint(1, 5)))
            for seat in seats
            if chooser.random() < 0.5
        }
        assert _final_loss_chances(strengths, to_play) == plain(strengths, to_play), (strengths, to_play)


@pytest.mark.parametrize("name", ["stop_the_bus", "bastard_brag", "faults"])
def test_a_games_log_gives_the_luck_its_play_gave(name: str) -> None:
    """A real game's log (real bot processes, a fault policy's default actions in one) replayed through the engine
    gives the luck measured while the same moves are played."""
    records = game_logs.records(name)
    start = records[0]
    game = GAMES[start["game"]](start["num_players"], int(start["seed"]), first_dealer=start["first_dealer"])
    meter = LuckMeter(game)
    from referee.engine.games.actions import Action

    for record in records[1:]:
        if record["type"] == "decision":
            meter.apply(Action.parse(record["action"]))
        elif record["type"] == "forfeit":
            meter.forfeit(record["seat"], record["reason"])
    assert game.is_over
    assert luck_of_log(records) == meter.luck
    assert any(abs(value) > 1e-6 for value in meter.luck)


def test_the_adjusted_score_has_less_spread_in_stop_the_bus() -> None:
    """Random bots, 300 games at tables of 3: a score with the luck taken out varies less than the raw score (the
    value function follows the games). The luck's mean is checked too, but 300 games see only a bias of 0.05 a game
    or more: its tests with the power to see 0.01 are in tests/test_luck_pools.py."""
    from referee.records.stats import placement_score

    rng = random.Random(3)
    raw, adjusted, lucks = [], [], []
    for seed in range(300):
        game = GAMES["stop_the_bus"](3, seed=seed)
        meter = LuckMeter(game)
        while not game.is_over:
            meter.apply(rng.choice(game.legal_actions()))
        order = game.result().placements
        score = float(placement_score(order.index(0) + 1, 3))
        raw.append(score)
        lucks.append(meter.luck[0])
        adjusted.append(score - meter.luck[0])
    assert abs(statistics.mean(lucks)) < 3 * statistics.stdev(lucks) / len(lucks) ** 0.5
    assert statistics.variance(adjusted) < statistics.variance(raw)


def test_the_model_is_named_with_a_digest_of_its_parameters() -> None:
    described = MODEL.describe()
    assert described["name"] == MODEL.name and len(described["digest"]) == 16
    changed = type(MODEL)(MODEL.name, {**MODEL.sharpness, "stop_the_bus": (1.0,)})
    assert changed.digest != MODEL.digest


def test_compare_shows_the_score_difference_with_the_luck_taken_out_of_a_real_league(tmp_path) -> None:
    """A league of real bot processes; `referee compare --adjust-for-luck` replays each shared game's log and shows
    the difference less the luck beside the raw one, as worked out here from the logs' own records."""
    import json
    import re
    import subprocess

    from referee.records.gamelog import read_log

    from .conftest import PYTHON

    league_file = game_logs.write_league(tmp_path / "league.yaml", seed=5)
    out = tmp_path / "out"
    run = [PYTHON, "-m", "referee.cli", "run", str(league_file), "--output", str(out), "--no-progress"]
    subprocess.run(run, check=True, capture_output=True, timeout=300)
    compared = subprocess.run(
        [PYTHON, "-m", "referee.cli", "compare", str(out), "alpha", "bravo", "--adjust-for-luck"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert compared.returncode == 0, compared.stderr
    raw_total = adjusted_total = 0.0
    games = 0
    for line in (out / "games.jsonl").read_text().splitlines():
        record = json.loads(line)
        seats = record["seats"]
        if record.get("void") or "alpha" not in seats or "bravo" not in seats:
            continue
        log = read_log(log_path(out / "games", record["game_id"]))
        order = log[-1]["placements"]
        a, b = seats.index("alpha"), seats.index("bravo")
        difference = (order.index(b) - order.index(a)) / (len(seats) - 1)
        luck = luck_of_log(log)
        raw_total += difference
        adjusted_total += difference - luck[a] + luck[b]
        games += 1
    assert games >= 3
    found = re.search(r"with the luck taken out: ([+-]\d\.\d{3}) .*raw, the same way: ([+-]\d\.\d{3})", compared.stdout)
    assert found, compared.stdout
    assert float(found[1]) == pytest.approx(adjusted_total / games, abs=0.0006)
    assert float(found[2]) == pytest.approx(raw_total / games, abs=0.0006)
    assert f"{MODEL.name} (digest {MODEL.digest})" in compared.stdout
