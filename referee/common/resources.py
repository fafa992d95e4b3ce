"""Files the referee ships with: the sample bots (check-bot's opponents), the protocol, the tournaments.

They live at the top of the source tree (``sample_bots/``, ``proto/``,
``tournaments/``); an installed referee carries copies inside its package,
under ``referee/_shipped/``. These functions find them either way.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # referee/, where a wheel carries _shipped/
_SHIPPED = _PACKAGE / "_shipped"
_SOURCE_TREE = _PACKAGE.parent


def shipped(relative: str) -> Path:
    """The shipped file or folder ``relative`` (``sample_bots/python``, ``proto/referee/v2/bot.proto``)."""
    for root in (_SHIPPED, _SOURCE_TREE):
        candidate = root / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"{relative} is not shipped with this referee (looked in {_SHIPPED} and {_SOURCE_TREE})")


# The Python sample bots a player may be named by (check-bot --opponent NAME, play --bot NAME, the environments'
# opponents): each is sample_bots/python/NAME_bot.py.
SAMPLE_BOT_NAMES = ("random", "heuristic", "search")
# Who a bot or a person plays when no opponent is named (check-bot, play, the site's /play/): these, in turn.
SAMPLE_OPPONENTS = ("heuristic", "random")


def sample_bot_path(file_name: str) -> Path:
    """A Python sample bot's script (``random_bot.py``, ``heuristic_bot.py``, ``search_bot.py``)."""
    return shipped(f"sample_bots/python/{file_name}")
