"""Cards and decks, by the name bots and docs import them: ``from referee.cards import Card``.

A public path: its code is :mod:`referee.engine.cards`, where the layers of docs/architecture.md put it; this name
stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.engine.cards import *  # noqa: F403 - every public name, as it is there
from referee.engine.cards import __all__  # noqa: F401
