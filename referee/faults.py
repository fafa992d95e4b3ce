"""Bot faults: every way a bot can fail, each its own kind, and the policy that answers them.

The rules engine only says whether an action is legal; what happens to a bot
that faults is policy, set by the league file (see :class:`FaultPolicy`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from referee.errors import RefereeError
from referee.printable import printable


class FaultKind(enum.Enum):
    """Kinds of bot fault, counted separately on every report."""

    TIMEOUT = "timeout"  # no reply before the deadline
    CRASH = "crash"  # the process exited (the detail names any resource limit in force) or the connection was lost
    MALFORMED = "malformed"  # a reply that is not a valid action (garbage, empty, unknown, error status)
    ILLEGAL = "illegal"  # a valid action that the rules do not allow now
    STALE = "stale"  # a reply to another decision (wrong decision_number)
    STARTUP = "startup"  # the bot could not be started, or did not listen in time
    HANDSHAKE = "handshake"  # the handshake failed: protocol version, game, or no reply


class BotFault(RefereeError):
    """A bot failed: ``kind`` says how, the message says what happened in plain words.

    The detail may quote the bot (its error text, its server's status): it is made printable here, once.
    """

    def __init__(self, kind: FaultKind, detail: str, bot: str = "") -> None:
        self.kind = kind
        detail = printable(detail)
        self.detail = detail
        self.bot = bot
        super().__init__(f"{bot + ': ' if bot else ''}{kind.value}: {detail}")


@dataclass(frozen=True)
class Forfeit:
    """Why a seat left a game: the kind of fault, and what happened (its text form is ``kind: detail``)."""

    kind: FaultKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}"

    @classmethod
    def of(cls, fault: BotFault) -> Forfeit:
        return cls(fault.kind, fault.detail)


class PolicyMode(enum.Enum):
    FORFEIT = "forfeit"
    DEFAULT_ACTION = "default_action"


@dataclass(frozen=True)
class FaultPolicy:
    """What the referee does when a bot faults during a game.

    ``forfeit`` (the default): the bot leaves the game at once. ``default_action``:
    the game's :meth:`~referee.games.base.Game.default_action` is played for it, and after ``max_faults`` faults
    in one game it forfeits.
    """

    mode: PolicyMode = PolicyMode.FORFEIT
    max_faults: int = 3
