"""A bot's standing in a season, as a league file sets it and league.json records it.

A withdrawn bot plays no new game and its games count; a disqualified bot's games count for no one; an active
bot plays. A *suspended* bot is a ladder's version that could not play (it reached its restart limit, or forfeited
too many games in a row): like a withdrawn one it plays no new game and its games count, but only the ladder sets
it, and it plays again as its author's new version or by the organiser's word (``--reinstate``). The league file's
reader (:mod:`referee.leaguefile.config`), the standings, the duel and the ladder read these names from here alone.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["ACTIVE", "BOT_STATUSES", "DISQUALIFIED", "SUSPENDED", "WITHDRAWN", "BotStatus"]

BotStatus = Literal["active", "withdrawn", "disqualified", "suspended"]
ACTIVE: Final = "active"
WITHDRAWN: Final = "withdrawn"
DISQUALIFIED: Final = "disqualified"
SUSPENDED: Final = "suspended"
# What a league file's ``status:`` may say: a suspension is the ladder's alone, never written by hand.
BOT_STATUSES: tuple[BotStatus, ...] = (ACTIVE, WITHDRAWN, DISQUALIFIED)
