"""The luck of the cards (referee.records.luck): each chance event's term has mean zero, exactly, whatever the value function,
so a luck-adjusted score keeps the raw score's mean; a game's log gives the luck its play gave."""

from __future__ import annotations

import random
import statistics

import pytest

from referee.engine.cards import parse_cards
from referee.engine.games import GAMES, ActionKind, Phase
from referee.records.gamelog import log_path
from referee.records.luck import (
    MODEL,
    LuckMeter,
    _final_loss_chances,
    deal_luck,
    draw_luck,
    luck_of_log,
    strength,
)

from . import game_logs

GAME_NAMES = tuple(GAMES)


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


def _draw_positions(game_name: str, players: int, games: int) -> list:
    """Games stopped where a seat is about to draw from the stock (normal and final turns), played at random."""
    positions = []
    rng = random.Random(7)
    for seed in range(games):
        game = GAMES[game_name](players, seed=seed)
        while not game.is_over:
            legal = game.legal_actions()
            draws = [act for act in legal if act.kind is ActionKind.DRAW]
            if draws and game.stock and rng.random() < 0.3:
                positions.append(game.clone())
            game.apply(rng.choice(legal))
    return positions


@pytest.mark.parametrize("players", [2, 3, 6])
def test_a_draws_luck_has_mean_zero_over_the_cards_the_stock_could_give(players: int) -> None:
    """Each card of the stock put on top in turn: the luck of drawing it, averaged over them, is zero exactly."""
    positions = _draw_positions("stop_the_bus", players, 40)
    assert any(game.phase is Phase.FINAL for game in positions) and any(
        game.phase is Phase.NORMAL for game in positions
    )
    for game in positions[:60]:
        seat = game.current_seat
        totals = [0.0] * players
        for card in game.stock:
            stock = [other for other in game.stock if other != card] + [card]  # this card drawn next
            for index, value in enumerate(draw_luck(game, seat, stock)):
                totals[index] += value / len(stock)
        assert totals == pytest.approx([0.0] * players, abs=1e-12)


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_deals_luck_has_mean_zero_over_deals(game_name: str) -> None:
    """Over many deals each seat's luck averages zero (a few standard errors), and it is not always zero."""
    seats = 4
    lucks = [deal_luck(GAMES[game_name](seats, seed=seed)) for seed in range(3000)]
    for seat in range(seats):
        values = [luck[seat] for luck in lucks]
        error = statistics.stdev(values) / len(values) ** 0.5
        assert error > 0.0
        assert abs(statistics.mean(values)) < 4 * error
    assert [sum(luck) for luck in lucks[:50]] == pytest.approx([0.0] * 50, abs=1e-12)  # placements are shared out


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


def test_the_adjusted_score_keeps_the_mean_and_has_less_spread_in_stop_the_bus() -> None:
    """Random bots, 300 games at tables of 3: the luck averages zero within its error, and a score with it taken
    out varies less than the raw score (the value function follows the games)."""
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


@pytest.mark.parametrize("kind", [ActionKind.EXCHANGE, ActionKind.EXCHANGE_ALL])
def test_taking_a_centre_card_nobody_has_seen_has_mean_zero_luck_over_the_cards_it_could_be(kind: ActionKind) -> None:
    """Bastard Brag: each card nobody has seen (the centre's unseen ones, the set-aside rest) put in the slots taken
    in turn, the luck the meter counts for the exchange averages zero exactly. Tables of 10: fewer cards set aside."""
    from itertools import combinations

    rng = random.Random(11)
    checked = 0
    players = 10
    for seed in range(30):
        game = GAMES["bastard_brag"](players, seed=seed)
        follower = LuckMeter(game)
        while not game.is_over and checked < 3:
            chances = [act for act in game.legal_actions() if act.kind is kind and follower.is_chance(act)]
            if chances and rng.random() < 0.5:
                act = chances[0]
                slots = sorted(follower._unseen_slots) if kind is ActionKind.EXCHANGE_ALL else [act.slot]
                pool = [game.centre[slot] for slot in sorted(follower._unseen_slots)] + list(game.set_aside)
                outcomes = list(combinations(pool, len(slots)))
                totals = [0.0] * players
                for cards in outcomes:
                    trial = game.clone()
                    rest = [card for card in pool if card not in cards]
                    others = [slot for slot in sorted(follower._unseen_slots) if slot not in slots]
                    for slot, card in zip(slots, cards, strict=True):
                        trial.centre[slot] = card
                    for slot in others:
                        trial.centre[slot] = rest.pop()
                    trial.set_aside = rest
                    meter = LuckMeter(trial)
                    meter._unseen_slots = set(follower._unseen_slots)
                    before = list(meter.luck)
                    meter.apply(act)
                    for seat in range(players):
                        totals[seat] += (meter.luck[seat] - before[seat]) / len(outcomes)
                assert totals == pytest.approx([0.0] * players, abs=1e-12)
                checked += 1
            follower.apply(rng.choice(game.legal_actions()))
    assert checked == 3
