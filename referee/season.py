"""A bot's standing in a season, as a league file sets it and league.json records it.

A withdrawn bot plays no new game and its games count; a disqualified bot's games count for no one; an active
bot plays. The league file's reader (:mod:`referee.config`), the standings, the duel and the ladder read these
names from here alone.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["ACTIVE", "BOT_STATUSES", "DISQUALIFIED", "WITHDRAWN", "BotStatus"]

BotStatus = Literal["active", "withdrawn", "disqualified"]
BOT_STATUSES: tuple[BotStatus, ...] = get_args(BotStatus)
ACTIVE: Final = "active"
WITHDRAWN: Final = "withdrawn"
DISQUALIFIED: Final = "disqualified"
