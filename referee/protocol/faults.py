"""Bot faults: every way a bot can fail, each its own kind, and the policy that answers them.

The rules engine only says whether an action is legal; what happens to a bot
that faults is policy, set by the league file (see :class:`FaultPolicy`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from referee.common.errors import RefereeError
from referee.common.printable import printable


class FaultKind(enum.StrEnum):
    """Kinds of bot fault, counted separately on every report (each is its text: ``FaultKind.TIMEOUT == "timeout"``)."""

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


# The referee's words around what a bot itself sent, in a fault's detail (referee.play.session writes them).
COULD_NOT_DECIDE = "the bot could not decide"  # then ": " and its Decision's error text, to the end
STREAM_BROKE = "the stream broke"  # then ": CODE" of the final status, and ": " and its details, to the end
NOT_SERVED = "does not serve"  # a v1 bot: " METHOD (CODE: details its server gave): " and then V1_MOVED
V1_MOVED = "the bot protocol moved to version 2"
BOT_WORDS_LEFT_OUT = "(its own words left out)"
_BOT_WORDS = re.compile(
    rf"(?P<kept>{COULD_NOT_DECIDE}|{STREAM_BROKE}: [A-Z_]+): .*"
    rf"|(?P<served>{NOT_SERVED} \S+ \([A-Z_]+): .*(?=\): {V1_MOVED})",
    re.DOTALL,
)


def without_bot_words(text: str) -> str:
    """A fault's detail (or a text quoting one, as a void game's reason does) in the referee's words alone.

    What the bot itself sent, the error text of a decision it could not
    make and the details of the status its side ended a stream with, may be
    anything its author chose to write; a page published to the other
    authors leaves it out, and with it whatever follows it in ``text``
    (``the bot could not decide (its own words left out)``). The game's log
    keeps it, for the organiser.
    """
    return _BOT_WORDS.sub(
        lambda found: f"{found['kept']} {BOT_WORDS_LEFT_OUT}" if found["kept"] else found["served"], text
    )


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
    the game's :meth:`~referee.engine.games.game.Game.default_action` is played for it, and after ``max_faults`` faults
    in one game it forfeits.
    """

    mode: PolicyMode = PolicyMode.FORFEIT
    max_faults: int = 3
