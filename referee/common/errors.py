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


class InvalidHandError(RefereeError, ValueError):
    """Cards given to the hand ranking are not a Brag hand: not three, not all cards, or a card twice."""


class IllegalActionError(RefereeError, ValueError):
    """An action was offered that the rules do not allow in the current state."""

    def __init__(self, action: object, reason: str, seat: int | None = None) -> None:
        self.action = action
        self.reason = reason
        self.seat = seat
        who = f"seat {seat}: " if seat is not None else ""
        super().__init__(f"{who}illegal action {str(action)!r}: {reason}")


class MalformedActionError(IllegalActionError):
    """An action that is no action at all: a kind, card or slot of the wrong type or shape.

    Raised by :meth:`Game.apply`, :meth:`Game.check_action`, :meth:`Game.is_legal`
    and :func:`referee.engine.games.game.action` for, say, slot ``1.0`` or ``True``
    (a slot is the ``int`` 0, 1 or 2), a card given as text, or ``discard``
    without a card. It is an :class:`IllegalActionError`, so code that
    handles illegal actions handles these too.
    """

    def __init__(self, action: object, reason: str, seat: int | None = None) -> None:
        self.action = action
        self.reason = reason
        self.seat = seat
        who = f"seat {seat}: " if seat is not None else ""
        RefereeError.__init__(self, f"{who}malformed action {action!r}: {reason}")


class GameArgumentError(RefereeError, ValueError):
    """A game was given a value it cannot use: at setup (players, seed, dealer, turn limit, decks) or a seat.

    The message names the argument, the value given and what is allowed.
    """


class DecksExhaustedError(GameArgumentError):
    """A game set up with a fixed list of decks needs a deck for a hand past the end of that list."""

    def __init__(self, hand_number: int, decks_given: int) -> None:
        self.hand_number = hand_number
        self.decks_given = decks_given
        super().__init__(
            f"decks: hand {hand_number} needs a deck, but {decks_given} deck"
            f"{'' if decks_given == 1 else 's'} {'was' if decks_given == 1 else 'were'} given "
            f"(one per hand, from hand 1); give a deck for every hand the game may play, "
            f"or decks=callable(hand_number) -> deck (None for the seeded deck of that hand)"
        )


class GameOverError(RefereeError):
    """An action or query needs a game in progress, but the game has ended."""


class LeagueError(RefereeError, ValueError):
    """A league file (or a bot submission it names) is not valid; the message names the file, line and key."""


class OutputError(RefereeError):
    """A league's output folder cannot be used as it is: another league's results, a damaged file, a second run."""


class EnvArgumentError(RefereeError, ValueError):
    """A learning environment (:mod:`referee.env`) was given a value it cannot use: a table size, an action
    index, an opponent, an agent; the message names the value and what is allowed."""


class EnvUnavailableError(RefereeError, ImportError):
    """The learning environments need PettingZoo and Gymnasium, which are not installed: the message says how."""


class ExportError(RefereeError):
    """A league's games cannot be exported (``referee export``): no such folder, no game logs, a damaged log."""
