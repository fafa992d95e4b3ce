"""The two games, by the name bots and docs import them: ``from referee.games import StopTheBus``.

A public path: its code is :mod:`referee.engine.games`, where the layers of docs/architecture.md put it; this name
stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.engine.games import *  # noqa: F403 - every public name, as it is there
from referee.engine.games import __all__  # noqa: F401
