"""The Python bot kit, by the name bots and docs import it: ``from referee.botkit import run_bot``.

A public path: its code is :mod:`referee.play.kit`, where the layers of docs/architecture.md put it; this name
stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.play.kit import *  # noqa: F403 - every public name, as it is there
from referee.play.kit import __all__  # noqa: F401
