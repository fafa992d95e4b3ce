"""A heuristic bot for both games: keep the best hand, stop or knock when waiting costs more than it gains.

How it plays is in ``brag_heuristic.py`` beside this file (read it: its docstring says how it thinks), a module
of its own so that the search bot plays its way too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from referee.botkit import note, run_bot
from referee.engine.games import Action, Observation
from referee.hands import hand_rank

# brag_heuristic.py is beside this file, whether it runs as a program or is loaded by path (check-bot's opponents).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import brag_heuristic

__all__ = ["decide"]


def decide(obs: Observation) -> Action:
    """The heuristic's choice, with a note for its author's replay: the hand it held and what it chose."""
    chosen = brag_heuristic.decide(obs)
    held = " ".join(str(card) for card in obs.hand)
    rank = f" ({hand_rank(obs.hand).name})" if len(obs.hand) == 3 else ""
    note(f"held {held}{rank}; chose {chosen}")
    return chosen


if __name__ == "__main__":
    run_bot(decide, name="heuristic", version="1.0")
