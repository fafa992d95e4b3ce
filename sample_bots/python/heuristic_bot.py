"""A heuristic bot for both games: keep the best hand, stop or knock when waiting costs more than it gains.

How it plays is in ``brag_heuristic.py`` beside this file (read it: its docstring says how it thinks), a module
of its own so that the search bot plays its way too.
"""

from __future__ import annotations

import sys
from pathlib import Path

from referee.botkit import run_bot

# brag_heuristic.py is beside this file, whether it runs as a program or is loaded by path (check-bot's opponents).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from brag_heuristic import decide

__all__ = ["decide"]

if __name__ == "__main__":
    run_bot(decide, name="heuristic", version="1.0")
