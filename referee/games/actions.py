"""The actions of both games, by the name bots import them: ``from referee.games.actions import DRAW``.

A public path: its code is :mod:`referee.engine.games.actions`, where the layers of docs/architecture.md put it; this name
stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.engine.games.actions import *  # noqa: F403 - every public name, as it is there
from referee.engine.games.actions import __all__  # noqa: F401
