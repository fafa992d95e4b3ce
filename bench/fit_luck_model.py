"""Fit the luck model's sharpness (``referee.records.luck.SHARPNESS``) on the heuristic bot's self-play, never on a league's.

    python bench/fit_luck_model.py [GAMES_PER_TABLE_SIZE]

Wherever the luck is measured before a hand's final turns (its deal, a draw
from the stock, a centre card nobody had seen), the potentials of the hands in
it (``referee.records.luck.potential``) are noted with the hand's eventual loser. For
each game and round of turns, the sharpness that makes the softmax of
``-sharpness * potential`` most likely to name the loser is found by maximum
likelihood. Seeds from 1,000,000: bench/luck.py measures on others.
Prints the table to put in referee/records/luck.py.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict

from referee.engine.games import GAMES, Game, Phase
from referee.play.inprocess import sample_decide
from referee.records.luck import MODEL, LuckMeter, potential

SEED_BASE = 1_000_000
TABLE_SIZES = (3, 4, 5)
Sample = tuple[list[float], int]  # the potentials of the seats in the hand, and the index of its loser among them


def round_of(game: Game) -> int | None:
    """The round of turns the hand is in (the model's last for any later one); None in the final turns."""
    if game.phase is Phase.FINAL:
        return None
    return min(game.turns_this_hand // max(1, sum(game.in_hand)), len(MODEL.sharpness[game.name]) - 1)


def potentials_now(game: Game) -> dict[int, float]:
    """The potential of each hand in play (a seat that has just drawn: of its best three of four)."""
    return {seat: potential(game.hands[seat]) for seat in range(game.num_players) if game.in_hand[seat]}


def samples(game_name: str, players: int, games: int) -> dict[int, list[Sample]]:
    """By round: the hands' potentials where the luck is measured (after a deal, a draw, a centre card nobody had
    seen), each with the loser of its hand."""
    decide = sample_decide("heuristic")
    found: dict[int, list[Sample]] = defaultdict(list)
    for seed in range(SEED_BASE, SEED_BASE + games):
        game = GAMES[game_name](players, seed=seed)
        meter = LuckMeter(game)
        hand = game.hand_number
        pending: list[tuple[int | None, dict[int, float]]] = [(round_of(game), potentials_now(game))]
        while not game.is_over:
            seat = game.current_seat
            assert seat is not None
            act = decide(game.observation(seat))
            if meter.is_chance(act):
                after = game.clone()
                after.apply(act)
                if after.hand_number == hand:
                    pending.append((round_of(game), potentials_now(after)))
            meter.apply(act)
            if game.hand_number != hand or game.is_over:
                loser = game.hand_results[-1].loser
                for bucket, potentials in pending:
                    if loser is not None and bucket is not None:
                        seats = sorted(potentials)
                        found[bucket].append(([potentials[other] for other in seats], seats.index(loser)))
                hand = game.hand_number
                pending = [] if game.is_over else [(round_of(game), potentials_now(game))]
    return found


def log_likelihood(sharpness: float, data: list[Sample]) -> float:
    total = 0.0
    for potentials, loser in data:
        logits = [-sharpness * value for value in potentials]
        top = max(logits)
        total += logits[loser] - top - math.log(sum(math.exp(value - top) for value in logits))
    return total


def fit(data: list[Sample]) -> float:
    """The most likely sharpness: golden-section search (the log-likelihood is concave in it)."""
    low, high = 0.0, 100.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if log_likelihood(a, data) < log_likelihood(b, data):
            low = a
        else:
            high = b
    return round((low + high) / 2, 2)


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    table: dict[str, tuple[float, ...]] = {}
    for game_name in GAMES:
        merged: dict[int, list[Sample]] = defaultdict(list)
        for players in TABLE_SIZES:
            for bucket, data in samples(game_name, players, games).items():
                merged[bucket].extend(data)
        rounds = len(MODEL.sharpness[game_name])
        table[game_name] = tuple(fit(merged[index]) if merged[index] else 0.0 for index in range(rounds))
        print(f"# {game_name}: samples by round {[len(merged[index]) for index in range(rounds)]}", file=sys.stderr)
    print(table)


if __name__ == "__main__":
    main()
