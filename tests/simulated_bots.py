"""Simulated bots of known strength: N-seat games played in-process from a seeded generator, no processes.

They check the statistics (tests/test_stats.py, bench/calibration.py), so
every figure a statistic estimates has an exact true value here.

A **deal** seats bots at a table and plays every seat rotation on the same
cards. Each game is decided one of two ways:

- with probability ``luck``, by the cards: the deal ranks its seats once,
  uniformly at random, and that seat order is the result whoever sits
  where (so the rotations of a deal share their luck, as duplicate deals
  do);
- otherwise by skill: a Plackett-Luce draw from the bots' planted
  strengths (the winner is picked with probability proportional to
  strength, then second place from the rest, and so on).

Under Plackett-Luce the chance that A finishes above B is ``a / (a + b)``
(their strengths) whoever else sits at the table, so the truths are exact:
``P(A above B) = luck / 2 + (1 - luck) a / (a + b)``, and A's expected
score at a table of n is ``luck / 2 + (1 - luck) sum over the others j of
a / (a + j) / (n - 1)``. A strength is ``10 ** (elo / 400)``, so a planted
Elo difference d gives A above B with probability ``1 / (1 + 10 ** (-d /
400))`` when luck is 0.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence

from referee.records.sequential import SequentialTest, Verdict
from referee.records.stats import deal_outcome, elo_from_score, score_from_elo

Game = tuple[list[str], list[int]]  # (bot name by seat, seats from first place to last)


def strengths_from_elo(elos: Mapping[str, float]) -> dict[str, float]:
    """Plackett-Luce strengths for planted Elo ratings."""
    return {bot: 10.0 ** (elo / 400.0) for bot, elo in elos.items()}


def play_deal(rng: random.Random, strengths: Mapping[str, float], table: Sequence[str], luck: float) -> list[Game]:
    """Every seat rotation of ``table`` on one deal: rotation r seats ``table[r:] + table[:r]``."""
    size = len(table)
    cards_order = rng.sample(range(size), size)  # the seats, best cards first
    games = []
    for rotation in range(size):
        seats = list(table[rotation:]) + list(table[:rotation])
        if rng.random() < luck:
            placements = list(cards_order)
        else:
            # A Plackett-Luce draw: sort by log strength plus Gumbel noise.
            keys = [math.log(strengths[bot]) - math.log(-math.log(1.0 - rng.random())) for bot in seats]
            placements = sorted(range(size), key=lambda seat: -keys[seat])
        games.append((seats, placements))
    return games


def above_probability(strengths: Mapping[str, float], bot: str, other: str, luck: float) -> float:
    """The true chance that ``bot`` finishes above ``other`` in one game."""
    a, b = strengths[bot], strengths[other]
    return luck / 2.0 + (1.0 - luck) * a / (a + b)


def expected_score(strengths: Mapping[str, float], bot: str, table: Sequence[str], luck: float) -> float:
    """The true expected score ``(n - place) / (n - 1)`` of ``bot`` at ``table``."""
    own = strengths[bot]
    beaten = sum(own / (own + strengths[other]) for other in table if other != bot)
    return luck / 2.0 + (1.0 - luck) * beaten / (len(table) - 1)


def planted_difference(effective_elo: float, luck: float) -> float:
    """The Elo difference to plant so that A finishes above B with the chance ``effective_elo`` stands for."""
    skill_share = (score_from_elo(effective_elo) - luck / 2.0) / (1.0 - luck)
    return elo_from_score(skill_share)


def league_records(
    rng: random.Random, strengths: Mapping[str, float], table_size: int, rounds: int, luck: float
) -> list[dict]:
    """A simulated round-robin in the ``games.jsonl`` format: every table, every rotation, one seed per table."""
    records = []
    bots = sorted(strengths)
    for round_number in range(1, rounds + 1):
        for table_number, table in enumerate(itertools.combinations(bots, table_size), start=1):
            seed = rng.getrandbits(48)
            for rotation, (seats, placements) in enumerate(play_deal(rng, strengths, table, luck)):
                records.append(
                    {
                        "index": len(records),
                        "game_id": f"r{round_number}-t{table_number:03d}-s{rotation}",
                        "round": round_number,
                        "table": table_number,
                        "rotation": rotation,
                        "seed": seed,
                        "seats": seats,
                        "finish_order": placements,
                    }
                )
    return records


def run_sequential_test(
    test: SequentialTest,
    rng: random.Random,
    strengths: Mapping[str, float],
    table_size: int,
    luck: float,
    max_deals: int = 5000,
) -> SequentialTest:
    """Play deals of "A" and "B" with a field ("field-1", ...) until the test decides (or ``max_deals``).

    Each deal seats A, B and ``table_size - 2`` field bots in a random order
    and plays every rotation, as a duel between two bots would.
    """
    field = [f"field-{number}" for number in range(1, table_size - 1)]
    while test.verdict is Verdict.CONTINUE and test.deals < max_deals:
        table = ["A", "B", *field]
        rng.shuffle(table)
        test.add(deal_outcome(play_deal(rng, strengths, table, luck), "A", "B"))
    return test
