"""Actions of both games: their kinds, their text form, and the one shared object for each.

Every possible action exists once (see :func:`action`), so legal lists hold
shared objects and a known action needs no further check.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from referee.common.errors import CardParseError, GameArgumentError, MalformedActionError
from referee.engine.cards import DECK, Card

__all__ = [
    "CENTRE_SLOTS",
    "DECK_CARDS",
    "DRAW",
    "KNOCK",
    "PASS",
    "SHARED_ACTION_IDS",
    "STOP",
    "TAKE",
    "Action",
    "ActionKind",
    "action",
    "check_action_form",
    "require_int",
]


class ActionKind(enum.Enum):
    """Every kind of decision in either game. The value is the action's text form."""

    DRAW = "draw"  # Stop the Bus: take the top of the stock
    TAKE = "take"  # Stop the Bus: take the top of the discard pile
    DISCARD = "discard"  # Stop the Bus: discard one of the four cards held
    STOP = "stop"  # Stop the Bus: call "stop the bus"
    PASS = "pass"  # Stop the Bus: pass a final turn
    EXCHANGE = "exchange"  # Bastard Brag: swap one card for one centre slot
    EXCHANGE_ALL = "exchange-all"  # Bastard Brag: swap the hand for the centre
    KNOCK = "knock"  # Bastard Brag: knock


class Action(NamedTuple):
    """One decision, with a text form: ``draw``, ``discard QS``, ``exchange QS 2``, ``exchange-all 7H``.

    ``card`` is the card discarded (``discard``), the card given to the
    centre (``exchange``) or the given card that will lie face up
    (``exchange-all``). ``slot`` is the centre slot taken (``exchange``).
    """

    kind: ActionKind
    card: Card | None = None
    slot: int | None = None

    def __str__(self) -> str:
        kind = getattr(self.kind, "value", self.kind)  # a malformed action still prints, for its error message
        if self.card is None:
            return str(kind)
        if self.slot is None:
            return f"{kind} {self.card}"
        return f"{kind} {self.card} {self.slot}"

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read an action from its text form; raise :class:`MalformedActionError` naming what is allowed."""
        if not isinstance(text, str):
            raise MalformedActionError(text, f"an action's text form is a str, not {type(text).__name__}")
        parts = text.split()
        if not parts:
            raise MalformedActionError(text, "empty action; expected one of: " + ", ".join(_ACTION_FORMS.values()))
        try:
            kind = ActionKind(parts[0].lower())
        except ValueError:
            raise MalformedActionError(
                text, f"unknown action {parts[0]!r}; expected one of: " + ", ".join(_ACTION_FORMS.values())
            ) from None
        expected = _ACTION_ARITY[kind]
        if len(parts) - 1 != expected:
            raise MalformedActionError(text, f"{kind.value!r} is written {_ACTION_FORMS[kind]!r}")
        try:
            card = Card.parse(parts[1]) if expected >= 1 else None
        except CardParseError as error:
            raise MalformedActionError(text, str(error)) from None
        slot = None
        if expected == 2:
            if parts[2] not in ("0", "1", "2"):
                raise MalformedActionError(text, f"centre slot must be 0, 1 or 2, got {parts[2]!r}")
            slot = int(parts[2])
        return action(kind, card, slot)


_ACTION_FORMS = {
    ActionKind.DRAW: "draw",
    ActionKind.TAKE: "take",
    ActionKind.DISCARD: "discard CARD",
    ActionKind.STOP: "stop",
    ActionKind.PASS: "pass",
    ActionKind.EXCHANGE: "exchange CARD SLOT",
    ActionKind.EXCHANGE_ALL: "exchange-all CARD",
    ActionKind.KNOCK: "knock",
}
_ACTION_ARITY = {kind: form.count(" ") for kind, form in _ACTION_FORMS.items()}

CENTRE_SLOTS = (0, 1, 2)  # Bastard Brag: slots 0 and 1 face down, slot 2 face up

# Every possible action exists once, made here, so legal lists hold shared
# objects, membership tests hit the identity fast path, and an action known
# by its identity needs no further check.
_INTERNED: dict[tuple[ActionKind, Card | None, int | None], Action] = {}
for _kind, _arity in _ACTION_ARITY.items():
    for _card in DECK if _arity else (None,):
        for _slot in CENTRE_SLOTS if _arity == 2 else (None,):
            _INTERNED[_kind, _card, _slot] = Action(_kind, _card, _slot)
del _kind, _arity, _card, _slot
SHARED_ACTION_IDS = frozenset(map(id, _INTERNED.values()))
DECK_CARDS = frozenset(DECK)


def action(kind: ActionKind, card: Card | None = None, slot: int | None = None) -> Action:
    """Return the shared :class:`Action` object for ``kind``, ``card`` and ``slot``.

    Raises :class:`MalformedActionError` unless ``kind`` is an
    :class:`ActionKind`, ``card`` a :class:`Card` (exactly when the kind
    names one) and ``slot`` the ``int`` 0, 1 or 2 (exactly for ``exchange``):
    ``1.0`` and ``True`` are not slots, though they compare equal to 1.
    """
    try:
        found = _INTERNED.get((kind, card, slot))
    except TypeError:  # an unhashable part: certainly not an action
        found = None
    if found is not None and found.card is card and found.slot is slot:
        return found
    problem = _form_problem(kind, card, slot)
    if problem is not None:
        raise MalformedActionError(Action(kind, card, slot), problem)
    return found  # type: ignore[return-value]  # well formed, with an equal card made anew


def _form_problem(kind: object, card: object, slot: object) -> str | None:
    """Say what makes ``(kind, card, slot)`` no possible action, or return ``None`` if it is one."""
    if kind.__class__ is not ActionKind:
        kinds = ", ".join(kind.value for kind in ActionKind)
        return f"kind must be an ActionKind ({kinds}), got {kind!r} ({type(kind).__name__})"
    form = _ACTION_FORMS[kind]
    arity = _ACTION_ARITY[kind]
    if card is None:
        if arity:
            return f"{kind.value!r} needs a card: it is written {form!r}"
    elif not arity:
        return f"{kind.value!r} takes no card: it is written {form!r}"
    elif not (
        isinstance(card, Card) and card.rank.__class__ is int and card.suit.__class__ is int and card in DECK_CARDS
    ):
        return (
            f"card must be a Card of the deck (Card.parse('QS'), or one of referee.engine.cards.DECK), "
            f"got {card!r} ({type(card).__name__})"
        )
    if slot is None:
        if arity == 2:
            return f"{kind.value!r} needs a centre slot: it is written {form!r}"
    elif arity != 2:
        return f"{kind.value!r} takes no slot: it is written {form!r}"
    elif slot.__class__ is not int:
        return f"the centre slot must be the int 0, 1 or 2, got {slot!r} ({type(slot).__name__})"
    elif slot not in CENTRE_SLOTS:
        return f"the centre slot must be 0, 1 or 2, got {slot}"
    return None


def check_action_form(act: object, seat: int | None = None) -> None:
    """Raise :class:`MalformedActionError` unless ``act`` is a possible action of either game.

    Possible means an :class:`Action` whose kind, card and slot have the
    right types and shape (see :func:`action`); whether it is legal now is
    the game's question.
    """
    if id(act) in SHARED_ACTION_IDS:
        return
    if not isinstance(act, Action):
        raise MalformedActionError(
            act,
            f"an action is an Action (Action.parse('discard QS'), or referee.engine.games.game.action(kind, card, slot)), "
            f"not {type(act).__name__}",
            seat,
        )
    problem = _form_problem(act.kind, act.card, act.slot)
    if problem is not None:
        raise MalformedActionError(act, problem, seat)


def require_int(name: str, value: object, allowed: str) -> None:
    """Raise :class:`GameArgumentError` unless ``value`` is an ``int`` (``True`` and ``1.0`` are not)."""
    if value.__class__ is not int:
        raise GameArgumentError(f"{name} must be an int ({allowed}), got {value!r} ({type(value).__name__})")


DRAW = action(ActionKind.DRAW)
TAKE = action(ActionKind.TAKE)
STOP = action(ActionKind.STOP)
PASS = action(ActionKind.PASS)
KNOCK = action(ActionKind.KNOCK)
