"""The three-card Brag ranking, by the name bots and docs import it: ``from referee.hands import rank_held``.

A public path: its code is :mod:`referee.engine.hands`, where the layers of docs/architecture.md put it; this name
stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.engine.hands import *  # noqa: F403 - every public name, as it is there
from referee.engine.hands import __all__  # noqa: F401
