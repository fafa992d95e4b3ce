"""The heuristic bot with noise: one decision in ``--every`` (on average) a uniformly random legal move instead.

A close opponent for the heuristic bot, to measure what a duel needs to tell two bots apart that differ a
little (bench/luck.py, bench/search_duels.py). As the random sample bot, its random choices are a pure
function of what it sees, so a league replays identically.

    python bench/noisy_bot.py --every 8     # a random move one time in eight, as the bot "noisy8"
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

# The heuristic bot's way of playing, brag_heuristic.py: beside this file in a submission folder of its own
# (bench/luck.py makes one, as a sandboxed bot sees its folder alone), else in sample_bots/python.
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "sample_bots" / "python")]

import brag_heuristic  # noqa: E402

from referee.botkit import run_bot  # noqa: E402
from referee.games import Action, Observation  # noqa: E402
from referee.play.kit import DecideFunction  # noqa: E402


def noisy_decide(every: int) -> DecideFunction:
    """The heuristic's ``decide``, replaced one time in ``every`` by a random legal move drawn from the view."""
    if every < 1:
        raise ValueError(f"--every must be 1 or more (1: every move random), got {every}")

    def decide(obs: Observation) -> Action:
        draw = random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand, obs.hand, obs.hand_events)))
        if draw.random() * every < 1:
            return draw.choice(obs.legal_actions)
        return brag_heuristic.decide(obs)

    return decide


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--every", type=int, default=8, help="one decision in this many (on average) is random")
    arguments = parser.parse_args()
    run_bot(noisy_decide(arguments.every), name=f"noisy{arguments.every}", version="1.0")
