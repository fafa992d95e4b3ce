"""The fixed action index of each game: every action the game has, numbered once, and legal masks over it.

Stop the Bus (56 actions):

=========  ======================================================
index      action
=========  ======================================================
0          ``draw``
1          ``take``
2          ``stop``
3          ``pass``
4 + i      ``discard C`` where ``C`` is the card of index ``i``
=========  ======================================================

Bastard Brag (209 actions):

=============  ======================================================
index          action
=============  ======================================================
3 * i + s      ``exchange C s``: give card ``C`` (index ``i``), take slot ``s``
156 + i        ``exchange-all C``: swap the hand, ``C`` (index ``i``) face up
208            ``knock``
=============  ======================================================

A card's index is :attr:`referee.engine.cards.Card.index`, ``(rank - 2) * 4 + suit``:
``2C`` is 0, ``2D`` 1, ..., ``AS`` 51 (the order of :data:`referee.engine.cards.DECK`).
Only numpy is needed here (a dependency of the referee), so a bot can use the
index without PettingZoo or Gymnasium.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from referee.common.errors import EnvArgumentError
from referee.engine.cards import DECK
from referee.engine.games import BastardBrag, StopTheBus
from referee.engine.games.game import CENTRE_SLOTS, DRAW, KNOCK, PASS, STOP, TAKE, Action, ActionKind, action

Mask = npt.NDArray[np.int8]
_INT8 = np.dtype(np.int8)


class ActionIndex:
    """The actions of one game, each with a fixed index; masks of legal actions over them."""

    def __init__(self, game: str, actions: Sequence[Action]) -> None:
        self.game = game
        self.actions: tuple[Action, ...] = tuple(actions)
        self.size = len(self.actions)
        # By identity first: the engine hands out shared action objects (referee.engine.games.actions.action), which
        # live as long as the program, so their ids are stable; an equal action made anew is found by value.
        self._by_id = {id(act): index for index, act in enumerate(self.actions)}
        self._by_value = {act: index for index, act in enumerate(self.actions)}
        self._index_of_id = self._by_id.get
        self._no_actions = bytearray(self.size)  # copied, never written

    def __len__(self) -> int:
        return self.size

    def index(self, act: Action) -> int:
        """Return the index of ``act``; raise :class:`EnvArgumentError` for an action this game does not have."""
        found = self._by_id.get(id(act))
        if found is not None:
            return found
        try:
            return self._by_value[act]
        except (KeyError, TypeError):
            raise EnvArgumentError(f"{act!s} is not an action of {self.game}") from None

    def indices(self, actions: Iterable[Action]) -> list[int]:
        """Return the index of each of ``actions``, in order."""
        by_id = self._by_id
        found = [by_id.get(id(act)) for act in actions]
        if None in found:
            return [self.index(act) for act in actions]
        return found  # type: ignore[return-value]  # no None: checked above

    def action(self, index: object) -> Action:
        """Return the action at ``index`` (an int, numpy's included); raise :class:`EnvArgumentError` otherwise."""
        if index.__class__ is not int:
            if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
                raise EnvArgumentError(
                    f"an action is an int index 0..{self.size - 1} into {self.game}'s actions, "
                    f"got {index!r} ({type(index).__name__})"
                )
            index = int(index)
        if not 0 <= index < self.size:
            raise EnvArgumentError(f"action index {index} is out of range: {self.game} has actions 0..{self.size - 1}")
        return self.actions[index]

    def mask(self, legal: Iterable[Action]) -> Mask:
        """Return a new mask: 1 at the index of each action of ``legal``, 0 elsewhere (int8)."""
        # Written into a copy of a zeroed buffer, then handed to numpy without a copy: cheaper than numpy's own
        # indexing. An action the engine did not hand out has no index by identity (None: a TypeError as an
        # index) and is looked up by value instead.
        buffer = self._no_actions.copy()
        index_of_id = self._index_of_id
        try:
            for act in legal:
                buffer[index_of_id(id(act))] = 1  # type: ignore[index]  # None raises TypeError, taken below
        except TypeError:
            for act in legal:
                buffer[self.index(act)] = 1
        return np.frombuffer(buffer, _INT8)

    def describe(self, index: int) -> str:
        """The action at ``index`` in its text form, for messages."""
        return str(self.actions[index])


STOP_THE_BUS_ACTIONS = ActionIndex(
    StopTheBus.name, (DRAW, TAKE, STOP, PASS, *(action(ActionKind.DISCARD, card) for card in DECK))
)
BASTARD_BRAG_ACTIONS = ActionIndex(
    BastardBrag.name,
    (
        *(action(ActionKind.EXCHANGE, card, slot) for card in DECK for slot in CENTRE_SLOTS),
        *(action(ActionKind.EXCHANGE_ALL, card) for card in DECK),
        KNOCK,
    ),
)
ACTION_INDEXES = {index.game: index for index in (STOP_THE_BUS_ACTIONS, BASTARD_BRAG_ACTIONS)}


def action_index(game: str) -> ActionIndex:
    """Return the action index of ``game`` (``stop_the_bus`` or ``bastard_brag``)."""
    try:
        return ACTION_INDEXES[game]
    except (KeyError, TypeError):
        raise EnvArgumentError(f"unknown game {game!r}; the games are: {', '.join(ACTION_INDEXES)}") from None
