"""What a bot is told of a game before it starts: the game, the table size and the limits."""

from __future__ import annotations

from dataclasses import dataclass

from referee.engine.games.game import DEFAULT_TURN_LIMIT
from referee.protocol.clock import Timing


@dataclass(frozen=True)
class GameSetup:
    """What the handshake tells a bot: the game, the table size and the limits."""

    game: str
    num_players: int
    timing: Timing = Timing()
    turn_limit: int = DEFAULT_TURN_LIMIT
