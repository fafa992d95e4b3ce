"""A seat's lives as its expected place, by the name bots import it: ``from referee.placements import places_above``.

A public path: its code is :mod:`referee.engine.placements`, where the layers of docs/architecture.md put it; this
name stays whatever the layout (tests/test_public_paths.py holds it)."""

from referee.engine.placements import *  # noqa: F403 - every public name, as it is there
from referee.engine.placements import __all__  # noqa: F401
