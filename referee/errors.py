"""Error types of the referee. Each message names the bad value, where it came from and what is allowed."""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of every error the referee raises on purpose."""


class CardParseError(RefereeError, ValueError):
    """A card's text form could not be read."""

    def __init__(self, token: str, position: int | None = None, source: str | None = None) -> None:
        self.token = token
        self.position = position
        self.source = source
        where = f"token {position} of {source!r}: " if position is not None else ""
        super().__init__(
            f"{where}{token!r} is not a card; write a rank (A K Q J T or 10, 9 ... 2) "
            f"then a suit (S H D C or ♠ ♥ ♦ ♣), for example 'QS', '10D' or 'A♠'"
        )


class IllegalActionError(RefereeError, ValueError):
    """An action was offered that the rules do not allow in the current state."""

    def __init__(self, action: object, reason: str, seat: int | None = None) -> None:
        self.action = action
        self.reason = reason
        self.seat = seat
        who = f"seat {seat}: " if seat is not None else ""
        super().__init__(f"{who}illegal action {str(action)!r}: {reason}")


class GameOverError(RefereeError):
    """An action or query needs a game in progress, but the game has ended."""


class LeagueError(RefereeError, ValueError):
    """A league file (or a bot submission it names) is not valid; the message names the file, line and key."""
