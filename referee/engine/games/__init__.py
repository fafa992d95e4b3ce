"""The two games, behind one interface (:class:`referee.engine.games.game.Game`)."""

from __future__ import annotations

from referee.common.errors import GameArgumentError
from referee.engine.games.bastard_brag import BastardBrag, BastardBragObservation
from referee.engine.games.game import (
    SPECTATOR,
    Action,
    ActionKind,
    EndReason,
    Event,
    EventKind,
    Game,
    GameResult,
    HandResult,
    Observation,
    Phase,
)
from referee.engine.games.stop_the_bus import StopTheBus, StopTheBusObservation

GAMES: dict[str, type[Game]] = {StopTheBus.name: StopTheBus, BastardBrag.name: BastardBrag}


def game_class(name: str) -> type[Game]:
    """Return the game called ``name``; raise :class:`GameArgumentError` naming the games there are."""
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise GameArgumentError(f"unknown game {name!r}; the games are: {', '.join(GAMES)}") from None


__all__ = [
    "GAMES",
    "SPECTATOR",
    "Action",
    "ActionKind",
    "BastardBrag",
    "BastardBragObservation",
    "EndReason",
    "Event",
    "EventKind",
    "Game",
    "GameResult",
    "HandResult",
    "Observation",
    "Phase",
    "StopTheBus",
    "StopTheBusObservation",
    "game_class",
]
