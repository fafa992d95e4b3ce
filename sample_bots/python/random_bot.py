"""A bot that plays a uniformly random legal action.

Its choices are a pure function of what it sees, so a league replays
identically: the random generator is seeded from the observation.
"""

from __future__ import annotations

import random

from referee.botkit import run_bot
from referee.games import Action, Observation


def decide(obs: Observation) -> Action:
    """Pick one legal action at random, seeded by the seat's view of the game."""
    seed = repr((obs.seat, obs.hand_number, obs.turns_this_hand, obs.hand, obs.hand_events))
    return random.Random(seed).choice(obs.legal_actions)


if __name__ == "__main__":
    run_bot(decide, name="random", version="1.0")
